//! The structural check every test runs on its trace, and queries over a parsed trace.
//!
//! [`check_structure`] enforces: every event has a `ph`; every `ts`/`dur` present is a number;
//! every `X` slice has `ts`, `dur` and numeric `pid`/`tid`; flows come as exactly one `s` and
//! one `f` per numeric id, with the same name and category, and the `f` has `bp:"e"`; each
//! flow end lies at the start of a slice on its track; metadata events name every pid and every
//! `(pid, tid)` used by other events, and no tid is used by two processes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

/// A parsed trace that passed [`check_structure`].
pub struct Trace {
    events: Vec<Value>,
    process_names: HashMap<u64, String>,
    thread_names: HashMap<(u64, u64), String>,
}

/// One flow: its id, name and both ends.
#[derive(Debug, Clone)]
pub struct Flow {
    #[allow(dead_code)]
    pub id: u64,
    pub name: String,
    pub s: Value,
    pub f: Value,
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn int(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not an integer in {v}"))
}

/// Returns every structural problem of `trace` (empty when it is well-formed).
pub fn check_structure(trace: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(events) = trace.get("traceEvents").and_then(Value::as_array) else {
        return vec!["no traceEvents array".into()];
    };
    let mut named_pids = HashSet::new();
    let mut named_tracks = HashSet::new();
    let mut used_pids = HashSet::new();
    let mut used_tracks = HashSet::new();
    let mut slice_starts: HashSet<(u64, u64, String)> = HashSet::new();
    let mut flows: BTreeMap<String, (Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
    let mut pid_of_tid: HashMap<u64, u64> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let Some(ph) = e.get("ph").and_then(Value::as_str) else {
            problems.push(format!("event {i} has no ph: {e}"));
            continue;
        };
        for key in ["ts", "dur"] {
            if let Some(v) = e.get(key) {
                if !v.is_number() {
                    problems.push(format!("event {i}: {key} is not a number: {e}"));
                }
            }
        }
        let pid = e.get("pid").and_then(Value::as_u64);
        let tid = e.get("tid").and_then(Value::as_u64);
        if ph == "M" {
            match (e["name"].as_str(), pid, tid, e["args"]["name"].as_str()) {
                (Some("process_name"), Some(p), _, Some(_)) => {
                    named_pids.insert(p);
                }
                (Some("thread_name"), Some(p), Some(t), Some(_)) => {
                    named_tracks.insert((p, t));
                }
                (Some("process_sort_index" | "thread_sort_index"), Some(_), _, _) => {}
                _ => problems.push(format!("event {i}: unexpected metadata event {e}")),
            }
            continue;
        }
        let (Some(pid), Some(tid)) = (pid, tid) else {
            problems.push(format!("event {i}: pid/tid missing or not numbers: {e}"));
            continue;
        };
        if num(e, "ts").is_none() {
            problems.push(format!("event {i}: no numeric ts: {e}"));
        }
        if let Some(other) = pid_of_tid.insert(tid, pid) {
            if other != pid {
                problems.push(format!("tid {tid} is used by pids {other} and {pid}"));
            }
        }
        used_pids.insert(pid);
        used_tracks.insert((pid, tid));
        match ph {
            "X" => {
                if num(e, "dur").is_none() {
                    problems.push(format!("event {i}: slice without numeric dur: {e}"));
                }
                slice_starts.insert((pid, tid, e["ts"].to_string()));
            }
            "s" | "f" => {
                let Some(id) = e.get("id").and_then(Value::as_u64) else {
                    problems.push(format!("event {i}: flow without numeric id: {e}"));
                    continue;
                };
                if ph == "f" && e["bp"] != "e" {
                    problems.push(format!("event {i}: flow end without bp \"e\": {e}"));
                }
                let entry = flows.entry(id.to_string()).or_default();
                if ph == "s" {
                    entry.0.push(e);
                } else {
                    entry.1.push(e);
                }
            }
            other => problems.push(format!("event {i}: unexpected ph {other:?}")),
        }
    }
    for (id, (s, f)) in &flows {
        if s.len() != 1 || f.len() != 1 {
            problems.push(format!("flow id {id}: {} s and {} f events", s.len(), f.len()));
            continue;
        }
        if s[0]["name"] != f[0]["name"] || s[0]["cat"] != f[0]["cat"] {
            problems.push(format!("flow id {id}: s and f differ in name or cat"));
        }
        for end in [s[0], f[0]] {
            let key = (int(end, "pid"), int(end, "tid"), end["ts"].to_string());
            if !slice_starts.contains(&key) {
                problems.push(format!("flow id {id}: no slice starts at {end}"));
            }
        }
    }
    for pid in used_pids.difference(&named_pids) {
        problems.push(format!("pid {pid} has no process_name"));
    }
    for (pid, tid) in used_tracks.difference(&named_tracks) {
        problems.push(format!("pid {pid} tid {tid} has no thread_name"));
    }
    problems
}

impl Trace {
    /// Parses the trace at `path` and panics with every problem if the structure is broken.
    pub fn load(path: &Path) -> Trace {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let value: Value = serde_json::from_str(&text).expect("trace is JSON");
        let problems = check_structure(&value);
        assert!(
            problems.is_empty(),
            "structural problems:\n{}",
            problems.join("\n")
        );
        let events = value["traceEvents"].as_array().unwrap().clone();
        let mut process_names = HashMap::new();
        let mut thread_names = HashMap::new();
        for e in events.iter().filter(|e| e["ph"] == "M") {
            let name = e["args"]["name"].as_str().map(str::to_string);
            match (e["name"].as_str(), name) {
                (Some("process_name"), Some(n)) => {
                    process_names.insert(int(e, "pid"), n);
                }
                (Some("thread_name"), Some(n)) => {
                    thread_names.insert((int(e, "pid"), int(e, "tid")), n);
                }
                _ => {}
            }
        }
        Trace {
            events,
            process_names,
            thread_names,
        }
    }

    /// Name of the process of event `e`.
    pub fn process(&self, e: &Value) -> &str {
        &self.process_names[&int(e, "pid")]
    }

    /// Name of the track of event `e`.
    pub fn track(&self, e: &Value) -> &str {
        &self.thread_names[&(int(e, "pid"), int(e, "tid"))]
    }

    /// Every `X` slice in process `process`.
    pub fn slices(&self, process: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["ph"] == "X" && self.process(e) == process)
            .collect()
    }

    /// Worker View slices of task `task_id`.
    pub fn task_slices(&self, task_id: &str) -> Vec<&Value> {
        self.slices("Worker View")
            .into_iter()
            .filter(|e| e["args"]["task_id"] == task_id)
            .collect()
    }

    /// Every flow, by id.
    pub fn flows(&self) -> Vec<Flow> {
        let mut by_id: BTreeMap<u64, Flow> = BTreeMap::new();
        for e in self.events.iter().filter(|e| e["ph"] == "s" || e["ph"] == "f") {
            let id = int(e, "id");
            let flow = by_id.entry(id).or_insert_with(|| Flow {
                id,
                name: e["name"].as_str().unwrap().to_string(),
                s: Value::Null,
                f: Value::Null,
            });
            if e["ph"] == "s" {
                flow.s = e.clone();
            } else {
                flow.f = e.clone();
            }
        }
        by_id.into_values().collect()
    }

    /// Flows named `name`.
    pub fn flows_named(&self, name: &str) -> Vec<Flow> {
        self.flows().into_iter().filter(|f| f.name == name).collect()
    }
}

/// Returns true if and only if flow end `end` is at the start of `slice` on its track.
pub fn at_start_of(end: &Value, slice: &Value) -> bool {
    end["pid"] == slice["pid"] && end["tid"] == slice["tid"] && end["ts"] == slice["ts"]
}

#[test]
fn the_checker_finds_broken_traces() {
    let ok = serde_json::json!({"traceEvents": [
        {"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "Worker View"}},
        {"name": "thread_name", "ph": "M", "pid": 3, "tid": 1, "args": {"name": "AIV_2"}},
        {"name": "k", "ph": "X", "pid": 3, "tid": 1, "ts": 1.0, "dur": 2.0},
        {"name": "dependency", "cat": "flow", "ph": "s", "id": 1, "pid": 3, "tid": 1, "ts": 1.0},
        {"name": "dependency", "cat": "flow", "ph": "f", "bp": "e", "id": 1, "pid": 3, "tid": 1, "ts": 1.0}
    ]});
    assert_eq!(check_structure(&ok), Vec::<String>::new());

    let mut missing_f = ok.clone();
    missing_f["traceEvents"].as_array_mut().unwrap().pop();
    assert_eq!(check_structure(&missing_f), ["flow id 1: 1 s and 0 f events"]);

    let mut dup = ok.clone();
    let extra = dup["traceEvents"][3].clone();
    dup["traceEvents"].as_array_mut().unwrap().push(extra);
    assert_eq!(check_structure(&dup), ["flow id 1: 2 s and 1 f events"]);

    let mut string_ts = ok.clone();
    string_ts["traceEvents"][2]["dur"] = Value::from("2.0");
    assert_eq!(
        check_structure(&string_ts),
        [
            r#"event 2: dur is not a number: {"dur":"2.0","name":"k","ph":"X","pid":3,"tid":1,"ts":1.0}"#,
            r#"event 2: slice without numeric dur: {"dur":"2.0","name":"k","ph":"X","pid":3,"tid":1,"ts":1.0}"#
        ]
    );

    let mut unnamed = ok.clone();
    unnamed["traceEvents"].as_array_mut().unwrap().remove(1);
    assert_eq!(check_structure(&unnamed), ["pid 3 tid 1 has no thread_name"]);

    let mut off_start = ok.clone();
    off_start["traceEvents"][4]["ts"] = Value::from(1.5);
    assert_eq!(check_structure(&off_start).len(), 1);
}
