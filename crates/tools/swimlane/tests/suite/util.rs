//! Shared helpers: records files in the original's raw layout, converting, and queries over
//! a parsed trace.

use std::path::{Path, PathBuf};

use serde_json::Value;
use simpler_swimlane::ConvertSummary;

/// The repository's `tests/interop/swimlane/` folder.
pub fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/interop/swimlane")
}

/// An `aicore_tasks` row and its `aicpu_tasks` row, in µs of a 1 GHz clock
/// (`[core, task, reg, start, end, receive_to_start]`, `[core, reg, dispatch, finish]`).
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub core: u32,
    pub task: u64,
    pub reg: u32,
    pub dispatch: f64,
    pub receive: f64,
    pub start: f64,
    pub end: f64,
    pub finish: f64,
}

fn cycles(us: f64) -> u64 {
    (us * 1000.0).round() as u64
}

/// A level-2 records file (1 GHz) with `core_types` and `rows`.
pub fn level2_records(core_types: &[&str], rows: &[Row]) -> String {
    let aicore: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "[{},{},{},{},{},{}]",
                r.core,
                r.task,
                r.reg,
                cycles(r.start),
                cycles(r.end),
                cycles(r.start) - cycles(r.receive)
            )
        })
        .collect();
    let aicpu: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "[{},{},{},{}]",
                r.core,
                r.reg,
                cycles(r.dispatch),
                cycles(r.finish)
            )
        })
        .collect();
    format!(
        "{{\"chip_swimlane_level\":2,\"metadata\":{{\"clock_freq_hz\":1000000000,\"core_types\":{}}},\n\"aicore_tasks\":[{}],\n\"aicpu_tasks\":[{}]}}\n",
        serde_json::to_string(core_types).unwrap(),
        aicore.join(","),
        aicpu.join(",")
    )
}

/// A deps.json with `tasks` (`(id, kernel_ids, block_num)`) and `edges`.
pub fn deps_json(tasks: &[(u64, [i32; 3], u32)], edges: &[(u64, u64)]) -> String {
    let tasks: Vec<String> = tasks
        .iter()
        .map(|(id, k, b)| {
            format!(
                "{{\"task_id\":\"{id}\",\"scope\":\"auto\",\"kernel_ids\":[{},{},{}],\"block_num\":{b},\"args\":[]}}",
                k[0], k[1], k[2]
            )
        })
        .collect();
    let edges: Vec<String> = edges
        .iter()
        .map(|(p, s)| format!("{{\"pred\":\"{p}\",\"succ\":\"{s}\",\"arg\":-1,\"source\":\"explicit\"}}"))
        .collect();
    format!(
        "{{\"tasks\":[{}],\"tensors\":[],\"edges\":[{}]}}\n",
        tasks.join(","),
        edges.join(",")
    )
}

/// Writes `records` (as `chip_swimlane_records.json`) and, if given, `deps` into `dir`,
/// converts, and parses the trace.
pub fn convert_in(dir: &Path, records: &str, deps: Option<&str>) -> (ConvertSummary, Trace) {
    let path = dir.join("chip_swimlane_records.json");
    std::fs::write(&path, records).unwrap();
    if let Some(deps) = deps {
        std::fs::write(dir.join("deps.json"), deps).unwrap();
    }
    let summary = simpler_swimlane::convert(&path, None, None, None).unwrap();
    let trace = Trace::read(&summary.output);
    (summary, trace)
}

/// A parsed trace.
pub struct Trace {
    pub events: Vec<Value>,
}

/// One flow: its `s` and `f` events.
#[derive(Debug, Clone)]
pub struct Flow {
    pub s: Value,
    pub f: Value,
}

impl Trace {
    pub fn read(path: &Path) -> Trace {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        Trace {
            events: v["traceEvents"].as_array().unwrap().clone(),
        }
    }

    /// Every flow named `name`, in id order.
    pub fn flows(&self, name: &str) -> Vec<Flow> {
        let ends = |ph: &str| -> Vec<&Value> {
            self.events
                .iter()
                .filter(|e| e["ph"] == ph && e["cat"] == "flow" && e["name"] == name)
                .collect()
        };
        let (s, f) = (ends("s"), ends("f"));
        assert_eq!(s.len(), f.len(), "{name}: every s has its f");
        s.iter()
            .map(|s| Flow {
                s: (*s).clone(),
                f: (*f.iter().find(|f| f["id"] == s["id"]).expect("an f per s")).clone(),
            })
            .collect()
    }

    /// Every `X` slice in process `pid` whose name is `name`.
    pub fn slices(&self, pid: u64, name: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["name"] == name)
            .collect()
    }

    /// The `process_name` of `pid`.
    pub fn process_name(&self, pid: u64) -> Option<&str> {
        self.events
            .iter()
            .find(|e| e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == pid)
            .and_then(|e| e["args"]["name"].as_str())
    }

    /// The `thread_name` of `(pid, tid)`.
    pub fn thread_name(&self, pid: u64, tid: u64) -> Option<&str> {
        self.events
            .iter()
            .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid && e["tid"] == tid)
            .and_then(|e| e["args"]["name"].as_str())
    }
}

/// `(pid, tid, ts)` of a flow end.
pub fn at(e: &Value) -> (u64, u64, f64) {
    (
        e["pid"].as_u64().unwrap(),
        e["tid"].as_u64().unwrap(),
        e["ts"].as_f64().unwrap(),
    )
}
