//! `CPM_static.json` / `CPM_observed.json` from a crafted merged trace, and whole run folders
//! through `simpler_critical_path::run`: the reference's 1 MHz case, a stale trace, discovery.

mod support;

use simpler_artifacts::provenance::Provenance;
use simpler_artifacts::testing::names_in;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use simpler_critical_path::trace::{write_cpm_traces, TraceError, OBSERVED_TRACE, STATIC_TRACE};
use simpler_critical_path::{Args, Error, ErrorKind};

/// A merged trace in the original converter's layout: pids 2, 3, 4; Worker View bars for t1,
/// t2 (its taskId a string) and t3; a `dummy(t99)` marker without `taskId`; three flows.
fn merged(with_t2: bool) -> Value {
    let mut events = vec![
        json!({"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "AICPU Scheduler"}}),
        json!({"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "Scheduler View"}}),
        json!({"name": "process_name", "ph": "M", "pid": 4, "args": {"name": "Worker View"}}),
        json!({"name": "kernel_add(t1)", "cat": "event", "ph": "X", "pid": 4, "tid": 10000, "ts": 0.0, "dur": 10.0,
               "args": {"event-hint": "Task:t1, FuncId:0, CoreId:0", "taskId": 1}}),
        json!({"name": "kernel_add(t3)", "cat": "event", "ph": "X", "pid": 4, "tid": 10010, "ts": 20.0, "dur": 10.0,
               "args": {"taskId": 3}}),
        json!({"name": "dummy(t99)", "cat": "event", "ph": "X", "pid": 4, "tid": 19000, "ts": 30.0, "dur": 0.02,
               "args": {"task_id": 99, "phase": "dummy_task"}}),
        json!({"name": "kernel_add(t1)", "cat": "event", "ph": "X", "pid": 3, "tid": 10000, "ts": 0.0, "dur": 11.0,
               "args": {"taskId": 1}}),
        json!({"name": "dependency", "cat": "flow", "ph": "s", "id": 100, "pid": 4, "tid": 10000, "ts": 0.0}),
        json!({"name": "dependency", "cat": "flow", "ph": "f", "bp": "e", "id": 101, "pid": 4, "tid": 10010, "ts": 20.0}),
        json!({"name": "dispatch", "cat": "flow", "ph": "s", "id": 102, "pid": 2, "tid": 30000, "ts": 0.0}),
    ];
    if with_t2 {
        events.insert(
            4,
            json!({"name": "kernel_add(t2)", "cat": "event", "ph": "X", "pid": 4, "tid": 10010, "ts": 0.0, "dur": 19.0,
                   "args": {"taskId": "2"}}),
        );
    }
    json!({"displayTimeUnit": "ms", "traceEvents": events, "source": "crafted"})
}

/// `trace` with the `name` of each event at `renamed` indexes replaced.
fn renamed(trace: &Value, renamed: &[(usize, &str)]) -> Value {
    let mut t = trace.clone();
    for (i, name) in renamed {
        t["traceEvents"][*i]["name"] = json!(name);
    }
    t
}

fn read(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn off_path_worker_bars_are_renamed_and_everything_else_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let trace = merged(true);
    let path = dir.path().join("merged_swimlane.json");
    // The original writes its traces indented; ours one event a line. Either reads the same.
    fs::write(&path, serde_json::to_string_pretty(&trace).unwrap()).unwrap();
    let written =
        write_cpm_traces(&path, None, dir.path(), &[1, 3], &[2, 3], &Provenance::default()).unwrap();
    assert_eq!(read(&written[1]), renamed(&trace, &[(3, "\u{b7}(t1)")]));
    fs::write(&path, trace.to_string()).unwrap();
    let written =
        write_cpm_traces(&path, None, dir.path(), &[1, 3], &[2, 3], &Provenance::default()).unwrap();
    assert_eq!(
        written,
        [dir.path().join(STATIC_TRACE), dir.path().join(OBSERVED_TRACE)]
    );
    // Events: 0-2 metadata, 3 t1, 4 t2, 5 t3, 6 dummy, 7 Scheduler View t1, 8-10 flows.
    assert_eq!(read(&written[0]), renamed(&trace, &[(4, "\u{b7}(t2)")]));
    assert_eq!(read(&written[1]), renamed(&trace, &[(3, "\u{b7}(t1)")]));
    let text = fs::read_to_string(&written[1]).unwrap();
    // The top-level keys in their order (serde_json writes them sorted here), one event a line.
    assert!(
        text.starts_with(
            "{\n  \"displayTimeUnit\": \"ms\",\n  \"source\": \"crafted\",\n  \"traceEvents\": [\n    {"
        ),
        "{text}"
    );
    assert!(text.ends_with("}\n  ]\n}\n"), "{text}");
    // A renamed event keeps its keys in their order, `name` in the middle.
    assert!(
        text.contains(concat!(
            r#"    {"args":{"event-hint":"Task:t1, FuncId:0, CoreId:0","taskId":1},"cat":"event","dur":10.0,"#,
            r#""name":"·(t1)","ph":"X","pid":4,"tid":10000,"ts":0.0},"#
        )),
        "{text}"
    );
}

#[test]
fn a_trace_missing_a_path_task_writes_neither_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("merged_swimlane.json");
    fs::write(&path, merged(false).to_string()).unwrap();
    let err =
        write_cpm_traces(&path, None, dir.path(), &[1, 3], &[2, 3], &Provenance::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "merged Worker View is missing 1 critical task(s): 2"
    );
    assert!(!dir.path().join(STATIC_TRACE).exists() && !dir.path().join(OBSERVED_TRACE).exists());

    fs::write(&path, r#"{"traceEvents": [1]}"#).unwrap();
    let err = write_cpm_traces(&path, None, dir.path(), &[1], &[1], &Provenance::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("must contain a traceEvents list of objects (traceEvents[0] is not one)"),
        "{err}"
    );
    fs::write(&path, r#"{"events": []}"#).unwrap();
    let err = write_cpm_traces(&path, None, dir.path(), &[1], &[1], &Provenance::default()).unwrap_err();
    assert!(
        err.to_string().contains("must contain a traceEvents list"),
        "{err}"
    );
}

/// A run folder of the reference's graph (times in ns here): t1 on AIC 0 [0,10], t2 on AIV 1
/// [0,19], t3 on AIV 1 [20,30], edge t1 → t3, with a name map and a merged trace.
fn reference_run(dir: &Path, with_t2_bar: bool) {
    fs::create_dir_all(dir).unwrap();
    support::write_records(
        &dir.join("l2_swimlane_records.json"),
        1,
        [(1, 0, 0, 10), (2, 1, 0, 19), (3, 1, 20, 30)],
    );
    support::write_deps(
        &dir.join("deps.json"),
        [(1, [0, -1, -1]), (2, [-1, 1, -1]), (3, [-1, 1, -1])],
        [(1, 3)],
    );
    fs::write(
        dir.join("name_map.json"),
        r#"{"level":2,"orchestrator_name":null,"callable_id_to_name":{"0":"kernel_add","1":"kernel_exp_0_aiv"}}"#,
    )
    .unwrap();
    fs::write(dir.join("merged_swimlane.json"), merged(with_t2_bar).to_string()).unwrap();
}

fn args(input: PathBuf) -> Args {
    Args {
        input,
        report: "critical_path_report.md".into(),
        top: 25,
        tol: 2,
        stdout: false,
    }
}

#[test]
fn every_run_folder_gets_its_report_and_a_stale_trace_fails_only_its_own_traces() {
    let root = tempfile::tempdir().unwrap();
    let healthy = root.path().join("outputs/case");
    let stale = root.path().join("build_output/case/dfx_outputs");
    reference_run(&healthy, true);
    reference_run(&stale, false);
    let err = simpler_critical_path::run(args(root.path().to_path_buf())).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            ErrorKind::TracesNotWritten {
                invalid: 1,
                unreadable: 0,
                unwritable: 0
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "1 run(s) had an invalid merged_swimlane*.json; their CPM_*.json files were not written"
    );
    let base = [
        "critical_path_report.md",
        "deps.json",
        "l2_swimlane_records.json",
        "merged_swimlane.json",
        "name_map.json",
    ];
    let mut with_traces: Vec<&str> = base
        .iter()
        .copied()
        .chain(["CPM_observed.json", "CPM_static.json"])
        .collect();
    with_traces.sort();
    assert_eq!(names_in(&healthy), with_traces);
    assert_eq!(names_in(&stale), base);
    assert_eq!(names_in(root.path()), ["build_output", "outputs"]);
    let report = fs::read_to_string(healthy.join("critical_path_report.md")).unwrap();
    assert!(report.contains("\n## Rank `outputs/case`\n"), "{report}");
    assert!(
        report.contains("| 1 | kernel_exp_0_aiv | 0.0 | 0.0 (33.33%) | 0.0 (3.33%) | core-wait |"),
        "{report}"
    );
    assert!(
        report.contains("| kernel_exp | 0.000 | 96.7% | 0.000 | 2 |"),
        "{report}"
    );
    assert_eq!(
        read(&healthy.join(OBSERVED_TRACE)),
        renamed(&merged(true), &[(3, "\u{b7}(t1)")])
    );

    // A file in the folder stands for the folder.
    fs::remove_file(healthy.join(STATIC_TRACE)).unwrap();
    simpler_critical_path::run(args(healthy.join("deps.json"))).unwrap();
    assert!(healthy.join(STATIC_TRACE).is_file());

    // A folder without deps.json is no run.
    fs::remove_file(stale.join("deps.json")).unwrap();
    let err = simpler_critical_path::run(args(stale.clone())).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "no l2_swimlane_records.json, chip_swimlane_records.json or l2_perf_records.json with a deps.json beside it under {}; \
             did the run use --enable-l2-swimlane and --enable-dep-gen?",
            stale.display()
        )
    );
    let err = simpler_critical_path::run(args(root.path().join("nowhere"))).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("path not found: {}", root.path().join("nowhere").display())
    );
}

/// A run.json that is there but cannot be read (a folder, not JSON, a later schema) is not taken
/// for none: the analysis warns, for the records and for deps.json, that the run manifest
/// cannot be read and why (on stderr and at the top of the run's report), and goes on: the
/// report and the CPM traces are written.
#[test]
fn an_unreadable_run_json_is_warned_about_and_the_analysis_goes_on() {
    let root = tempfile::tempdir().unwrap();
    for case in ["folder", "not_json", "later_schema"] {
        let dir = root.path().join(case);
        reference_run(&dir, true);
        let manifest = dir.join("run.json");
        let why = match case {
            "folder" => {
                fs::create_dir(&manifest).unwrap();
                format!(
                    "{}: cannot read run.json: Is a directory (os error 21)",
                    manifest.display()
                )
            }
            "not_json" => {
                fs::write(&manifest, r#"{"schema": 1, "run_id": "#).unwrap();
                format!(
                    "{}:1:24: invalid run.json: EOF while parsing a value",
                    manifest.display()
                )
            }
            _ => {
                fs::write(&manifest, r#"{"schema": 2, "run_id": 7}"#).unwrap();
                format!(
                    "{}: invalid run.json: schema 2 is not one this build reads (it reads 1)",
                    manifest.display()
                )
            }
        };
        let expected: Vec<String> = ["l2_swimlane_records.json", "deps.json"]
            .iter()
            .map(|f| {
                format!(
                    "{}: the run manifest cannot be read ({why}); whether this file is current is unknown",
                    dir.join(f).display()
                )
            })
            .collect();
        let runs = simpler_critical_path::input::discover(&dir).unwrap();
        let analysis = simpler_critical_path::analyze_run(&runs[0], 2).unwrap();
        assert_eq!(analysis.warnings, expected, "{case}");

        simpler_critical_path::run(args(dir.clone())).unwrap();
        let report = fs::read_to_string(dir.join("critical_path_report.md")).unwrap();
        for w in &expected {
            assert!(
                report.contains(&format!("> **Warning:** {w}\n")),
                "{case}: {report}"
            );
        }
        assert!(
            dir.join(STATIC_TRACE).is_file() && dir.join(OBSERVED_TRACE).is_file(),
            "{case}"
        );
    }
}

/// `run_logged` on `dir`: its result and what it logged.
fn run_logged(dir: &Path) -> (Result<(), Error>, String) {
    let mut log = Vec::new();
    let result = simpler_critical_path::run_logged(args(dir.to_path_buf()), &mut log);
    (result, String::from_utf8(log).unwrap())
}

/// Found by a review: a CPM trace that could not be written (a full disk) was reported as an
/// invalid merged trace, and the static trace this same analysis had just written was removed
/// as "left by an earlier analysis: it showed another path than this report". A write failure
/// is now said as one, and the removal of the lone static trace says why.
#[test]
fn a_cpm_trace_that_cannot_be_written_is_not_an_invalid_trace() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("case");
    reference_run(&dir, true);
    fs::write(dir.join(STATIC_TRACE), "an earlier analysis's trace").unwrap();
    // The observed trace cannot be published: its name is taken by a folder.
    fs::create_dir(dir.join(OBSERVED_TRACE)).unwrap();
    let (result, log) = run_logged(&dir);
    let err = result.unwrap_err();
    assert_eq!(
        err.to_string(),
        "1 run(s) had a CPM_*.json that could not be written; their CPM_*.json files were not written"
    );
    assert_eq!(
        log,
        format!(
            "error: cannot write {observed}: not a regular file (a device, a pipe, a folder, or a link to \
             one); name a file: the output is written to a temporary and renamed into place\n\
             warning: removed {static_}, which this analysis wrote: its companion {observed} was not \
             written (see above), and the two are kept only as a pair\n",
            observed = dir.join(OBSERVED_TRACE).display(),
            static_ = dir.join(STATIC_TRACE).display(),
        )
    );
    assert!(!dir.join(STATIC_TRACE).exists());
    assert!(dir.join("critical_path_report.md").is_file());
}

/// The traces an earlier analysis left are removed, as such, when this one writes none (here,
/// its merged trace lacks a path task).
#[test]
fn cpm_traces_of_an_earlier_analysis_are_removed_as_such() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("case");
    reference_run(&dir, true);
    let (result, log) = run_logged(&dir);
    result.unwrap();
    assert_eq!(log, "");
    fs::write(dir.join("merged_swimlane.json"), merged(false).to_string()).unwrap();
    let (result, log) = run_logged(&dir);
    assert_eq!(
        result.unwrap_err().to_string(),
        "1 run(s) had an invalid merged_swimlane*.json; their CPM_*.json files were not written"
    );
    let earlier = |name: &str| {
        format!(
            "warning: removed {}, left by an earlier analysis: this analysis wrote none to replace it, \
             and it may show another path than the files analysed now\n",
            dir.join(name).display()
        )
    };
    assert_eq!(
        log,
        format!(
            "error: invalid merged_swimlane.json in {}: merged Worker View is missing 1 critical task(s): 2\n{}{}",
            dir.display(),
            earlier(STATIC_TRACE),
            earlier(OBSERVED_TRACE)
        )
    );
    assert_eq!(
        names_in(&dir),
        [
            "critical_path_report.md",
            "deps.json",
            "l2_swimlane_records.json",
            "merged_swimlane.json",
            "name_map.json"
        ]
    );
}

/// Found by a review: a merged trace that could not be read (gone under the tool) was called
/// invalid. It is a read failure, said as one; and the command's error counts it as such.
#[test]
fn a_merged_trace_that_cannot_be_read_is_not_an_invalid_trace() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("merged_swimlane.json");
    let failure = write_cpm_traces(&gone, None, dir.path(), &[1], &[1], &Provenance::default()).unwrap_err();
    assert!(matches!(failure.error, TraceError::Read { .. }), "{failure}");
    assert!(!failure.error.is_invalid_trace());
    assert_eq!(
        failure.to_string(),
        format!(
            "cannot read {}: No such file or directory (os error 2)",
            gone.display()
        )
    );
    // Not a regular file: refused before it is opened.
    let folder = dir.path().join("folder");
    fs::create_dir(&folder).unwrap();
    let failure =
        write_cpm_traces(&folder, None, dir.path(), &[1], &[1], &Provenance::default()).unwrap_err();
    assert!(!failure.error.is_invalid_trace());
    assert_eq!(
        failure.to_string(),
        format!(
            "cannot read {}: is a folder, expected a regular file",
            folder.display()
        )
    );
    assert!(failure.written.is_empty());
    // Not a trace: invalid.
    fs::write(&gone, "{").unwrap();
    let failure = write_cpm_traces(&gone, None, dir.path(), &[1], &[1], &Provenance::default()).unwrap_err();
    assert!(failure.error.is_invalid_trace(), "{failure}");
    let err = Error::from(ErrorKind::TracesNotWritten {
        invalid: 2,
        unreadable: 1,
        unwritable: 0,
    });
    assert_eq!(
        err.to_string(),
        "2 run(s) had an invalid merged_swimlane*.json, 1 run(s) had a merged_swimlane*.json that \
         could not be read; their CPM_*.json files were not written"
    );
}
