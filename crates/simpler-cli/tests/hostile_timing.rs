//! Hostile input to the timing tools (`swimlane`, `sched-overhead`, `critical-path`,
//! `deps-viewer`), from a review: records in an impossible order, names that inject rows or
//! terminal codes, absurd clocks and counters, a name map's unusable entries. Each case gives a
//! clear error or warning naming the file, the row or entry and the field, or works; never a
//! panic, and never figures that are silently wrong.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::run_checked as run;
use serde_json::{json, Value};

/// A timed run of vector_example with its dependencies, into `dir/run`.
fn timed_run(dir: &Path) -> PathBuf {
    let prefix = dir.join("run");
    let (code, _, stderr) = run(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--enable-l2-swimlane",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    prefix
}

/// A folder `dir/name` holding the run's deps.json and name map and its records as `edit`
/// leaves them, under `records_name`; returns the records file.
fn edited(run: &Path, name: &str, records_name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let folder = run.parent().unwrap().join(name);
    fs::create_dir_all(&folder).unwrap();
    for f in ["deps.json", "name_map.json"] {
        fs::copy(run.join(f), folder.join(f)).unwrap();
    }
    let mut records: Value =
        serde_json::from_str(&fs::read_to_string(run.join("l2_swimlane_records.json")).unwrap()).unwrap();
    edit(&mut records);
    let path = folder.join(records_name);
    fs::write(&path, serde_json::to_string(&records).unwrap()).unwrap();
    path
}

fn records(folder: &Path) -> PathBuf {
    folder.join("l2_swimlane_records.json")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The three tools that read the records, on the folder (or file) `records` is in.
fn every_timing_tool(records: &Path) -> Vec<(i32, String, String)> {
    let folder = records.parent().unwrap();
    vec![
        run(&["swimlane", s(records)]),
        run(&["sched-overhead", s(folder)]),
        run(&["critical-path", s(folder)]),
    ]
}

/// A change to a records file.
type Edit = dyn Fn(&mut Value);

/// F1: a kernel that started before its dispatch (start 1), one received before the clock's
/// zero (`receive_to_start` 2^64 − 1), one dispatched after its end, one that ended after its
/// finish: every tool refuses the file with the same message, naming both rows and the times.
#[test]
fn f1_a_row_in_an_impossible_order_is_refused_by_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let original: Value = serde_json::from_str(&fs::read_to_string(records(&run_dir)).unwrap()).unwrap();
    let core = |c: usize| original["aicore_tasks"][0][c].as_u64().unwrap();
    let cpu = |c: usize| original["aicpu_tasks"][0][c].as_u64().unwrap();
    let (start, end, dispatch, finish) = (core(3), core(4), cpu(2), cpu(3));
    let cases: Vec<(&str, Box<Edit>, String)> = vec![
        (
            "start1",
            Box::new(|r: &mut Value| r["aicore_tasks"][0][3] = json!(1)),
            format!(
                "aicore_tasks[0]: start 1 is before its dispatch {dispatch} (aicpu_tasks[0]): a core receives a task only after the scheduler dispatches it"
            ),
        ),
        (
            "r2s",
            Box::new(|r: &mut Value| r["aicore_tasks"][0][5] = json!(u64::MAX)),
            format!(
                "aicore_tasks[0]: receive_to_start 18446744073709551615 is more than start {start}: the core would have received the task before the clock's zero"
            ),
        ),
        (
            "late_dispatch",
            Box::new(move |r: &mut Value| r["aicpu_tasks"][0][2] = json!(end + 100)),
            format!(
                "aicore_tasks[0]: start {start} is before its dispatch {} (aicpu_tasks[0]): a core receives a task only after the scheduler dispatches it",
                end + 100
            ),
        ),
        (
            "early_finish",
            Box::new(move |r: &mut Value| r["aicpu_tasks"][0][3] = json!(end - 1)),
            format!(
                "aicore_tasks[0]: end {end} is after its finish {} (aicpu_tasks[0]): the scheduler sees a kernel finish only after it ends",
                end - 1
            ),
        ),
    ];
    assert!(dispatch < start && end < finish);
    for (name, edit, why) in cases {
        let path = edited(&run_dir, name, "l2_swimlane_records.json", edit);
        let expected = format!(
            "error: {}: invalid l2_swimlane_records.json: {why}",
            path.display()
        );
        for (code, stdout, stderr) in every_timing_tool(&path) {
            assert_eq!(code, 1, "{name}: {stdout}{stderr}");
            assert!(stderr.lines().any(|l| l == expected), "{name}: {stderr}");
        }
    }
}

/// F1, the original's layout (no `metadata.simpler`), where a 0 is "not recorded": a row that
/// starts at 0 is left out of swimlane's statistics and sched-overhead's model alike, and
/// said; critical-path, which works on raw ticks as the original's does, keeps it at tick 0.
#[test]
fn f1_a_row_without_its_start_in_the_originals_layout_is_left_out_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "orig", "l2_swimlane_records.json", |r| {
        r["metadata"].as_object_mut().unwrap().remove("simpler");
        r.as_object_mut().unwrap().remove("simpler_task_info");
        r["aicore_tasks"][1][3] = json!(0);
    });
    let folder = path.parent().unwrap();
    // critical-path first: it would check a trace written by swimlane, which leaves the row out.
    let (code, stdout, stderr) = run(&["critical-path", s(folder)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("start of 0"), "{stderr}");
    assert!(stdout.contains("Analyzed 1 run(s)"), "{stdout}");
    let note = format!(
        "warning: {}: 1 aicore_tasks rows have a start of 0 (not recorded, in the original's layout) and are left out of the trace and the statistics (aicore_tasks[1])",
        path.display()
    );
    let (code, stdout, stderr) = run(&["swimlane", s(&path)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.lines().any(|l| l == note), "{stderr}");
    // Four rows of five, every Exec% at most 100.
    let total = stdout.lines().find(|l| l.starts_with("TOTAL")).unwrap();
    assert_eq!(total.split_whitespace().nth(1), Some("4"), "{stdout}");
    let shares: Vec<f64> = (stdout.split_whitespace())
        .filter_map(|w| w.strip_suffix('%')?.parse().ok())
        .collect();
    assert!(
        shares.len() >= 3 && shares.iter().all(|&p| p <= 100.0),
        "{stdout}"
    );
    let (code, stdout, stderr) = run(&["sched-overhead", s(folder)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.lines().any(|l| l == note), "{stderr}");
    assert!(stdout.contains("\nTasks: 4 (4 rows)"), "{stdout}");
}

/// F2: names with a newline, `|`, CR, an ANSI escape or HTML reach neither a terminal nor the
/// Markdown report raw.
#[test]
fn f2_hostile_names_are_escaped_in_text_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "names", "l2_swimlane_records.json", |_| {});
    let folder = path.parent().unwrap();
    fs::write(
        folder.join("name_map.json"),
        json!({
            "0": "evil\n| 9 | fake | row |\r\u{1b}[31mRED",
            "1": "<img src=x onerror=alert(1)>|x",
            "2": "a\\b"
        })
        .to_string(),
    )
    .unwrap();

    let (code, stdout, stderr) = run(&["swimlane", s(&path)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains('\u{1b}') && !stdout.contains('\r'), "{stdout:?}");
    assert!(
        stdout.contains("\n0        evil\\n| 9 | fake | row |\\r\\u{1b}[31mRED     2 "),
        "{stdout}"
    );
    assert!(stdout.contains("\n2        a\\b              1 "), "{stdout}");

    let (code, stdout, stderr) = run(&["critical-path", s(folder)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    let report = fs::read_to_string(folder.join("critical_path_report.md")).unwrap();
    assert!(
        !report.contains('\u{1b}') && !report.contains('\r') && !report.contains("<img"),
        "{report}"
    );
    assert!(
        report.contains("\n| 0 | evil\\\\n\\| 9 \\| fake \\| row \\|\\\\r\\\\u{1b}\\[31mRED | "),
        "{report}"
    );
    assert!(
        report.contains("| &lt;img src=x onerror=alert(1)&gt;\\|x | "),
        "{report}"
    );
    // Every row of the path table has its six cells.
    let rows: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(" µs"))
        .collect();
    assert!(!rows.is_empty());
    for line in report
        .lines()
        .skip_while(|l| !l.starts_with("| # |"))
        .take_while(|l| l.starts_with('|'))
    {
        assert_eq!(line.replace("\\|", "").matches('|').count(), 7, "{line}");
    }

    let (code, stdout, stderr) = run(&["sched-overhead", s(folder)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
        "{stdout:?}"
    );
}

/// F4: a clock of 2^64 − 1 Hz made every time 0 (a total test time of 0.00 us).
#[test]
fn f4_a_clock_past_100_ghz_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "clock", "l2_swimlane_records.json", |r| {
        r["metadata"]["clock_freq_hz"] = json!(u64::MAX);
    });
    let expected = format!(
        "error: {}: invalid l2_swimlane_records.json: metadata.clock_freq_hz 18446744073709552000 is more than \
         100000000000 cycles per second (100 GHz): no device clock runs that fast, and every time would read as 0 ns",
        path.display()
    );
    for (code, _, stderr) in every_timing_tool(&path) {
        assert_eq!(code, 1, "{stderr}");
        assert!(stderr.lines().any(|l| l == expected), "{stderr}");
    }
}

/// F5: a scheduler phase or a host submit span that starts after it ends is refused as an
/// AICore row in that state is, naming it.
#[test]
fn f5_a_phase_that_ends_before_it_starts_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "phase", "l2_swimlane_records.json", |r| {
        let p = &mut r["aicpu_scheduler_phases"][0][1];
        p["start_cycles"] = json!(p["end_cycles"].as_u64().unwrap() + 5);
    });
    let original: Value = serde_json::from_str(&fs::read_to_string(records(&run_dir)).unwrap()).unwrap();
    let end = original["aicpu_scheduler_phases"][0][1]["end_cycles"]
        .as_u64()
        .unwrap();
    let why = format!(
        ": invalid l2_swimlane_records.json: aicpu_scheduler_phases[0][1]: start_cycles {} is after end_cycles {end}",
        end + 5
    );
    for (code, _, stderr) in every_timing_tool(&path) {
        assert_eq!(code, 1, "{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.ends_with(&why))
            .unwrap_or_else(|| panic!("{stderr}"));
        // The file, then the line and column of the phase.
        assert!(
            line.starts_with(&format!("error: {}:1:", path.display())),
            "{line}"
        );
    }

    let path = edited(&run_dir, "host", "l2_swimlane_records.json", |r| {
        let spans: Vec<Value> = r["aicpu_orchestrator_phases"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                json!({"submit_idx": o["submit_idx"], "task_id": o["task_id"],
                            "start_host_ns": o["start_cycles"], "end_host_ns": o["end_cycles"]})
            })
            .collect();
        let obj = r.as_object_mut().unwrap();
        obj.remove("aicpu_orchestrator_phases");
        obj.insert("host_orchestrator_phases".into(), json!([spans]));
        r["host_orchestrator_phases"][0][2]["start_host_ns"] = json!(9_000_000_000u64);
    });
    let (code, _, stderr) = run(&["swimlane", s(&path)]);
    assert_eq!(code, 1, "{stderr}");
    let end = original["aicpu_orchestrator_phases"][0][2]["end_cycles"]
        .as_u64()
        .unwrap();
    assert!(
        stderr.contains(&format!(
            ": invalid l2_swimlane_records.json: host_orchestrator_phases[0][2]: start_host_ns 9000000000 is after end_host_ns {end}\n"
        )),
        "{stderr}"
    );
}

/// F6: pop counters of 2^64 − 1 on every dispatch record printed a saturated hit count and a
/// hit rate of 100.0 %.
#[test]
fn f6_pop_counts_that_overflow_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "pops", "l2_swimlane_records.json", |r| {
        for p in r["aicpu_scheduler_phases"][0].as_array_mut().unwrap() {
            if p["kind"] == "dispatch" {
                p["pop_hit"] = json!(u64::MAX);
                p["pop_miss"] = json!(u64::MAX);
            }
        }
    });
    let (code, stdout, stderr) = run(&["sched-overhead", s(path.parent().unwrap())]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("\n  Pop: hit=overflowed, miss=overflowed, hit_rate=- (a count overflowed)\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("18446744073709551615"), "{stdout}");
}

/// F7: name map entries of the wrong type and keys that are no kernel id were dropped in
/// silence, their kernels shown as `func_<id>`.
#[test]
fn f7_unusable_name_map_entries_are_named_in_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "map", "l2_swimlane_records.json", |_| {});
    let folder = path.parent().unwrap();
    let map = folder.join("name_map.json");
    fs::write(
        &map,
        r#"{"0": 5, "1": null, "2": ["x"], "abc": "a", "-1": "b", "18446744073709551616": "c"}"#,
    )
    .unwrap();
    let expected = format!(
        "warning: {}: 6 name map entries are ignored, so their kernels show as func_<id>: \"-1\" (not a kernel id, 0 to 2147483647), \
         \"0\" (a number, not a name), \"1\" (null, not a name), \"18446744073709551616\" (not a kernel id, 0 to 2147483647), \
         \"2\" (an array, not a name), \"abc\" (not a kernel id, 0 to 2147483647)",
        map.display()
    );
    let deps = folder.join("deps.json");
    for args in [
        vec!["swimlane", s(&path)],
        vec!["critical-path", s(folder)],
        vec!["deps-viewer", s(&deps)],
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stderr.lines().any(|l| l == expected), "{args:?}: {stderr}");
    }
}

/// F12: a kernel name with a NUL, or of 20 000 characters, made Graphviz fail with an opaque
/// syntax error; with `--show-tensor-info` a name's `\\` showed as `\`.
#[test]
fn f12_hostile_names_reach_graphviz_escaped_and_cut() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let deps = run_dir.join("deps.json");
    let long = "k".repeat(20_000);
    let map = dir.path().join("names.json");
    fs::write(
        &map,
        json!({"0": "nul\u{0}here", "1": long, "2": "two\\\\slashes"}).to_string(),
    )
    .unwrap();
    for tensors in [false, true] {
        let page = dir.path().join(format!("page{tensors}.html"));
        let mut args = vec![
            "deps-viewer",
            s(&deps),
            "--format",
            "html",
            "--func-names",
            s(&map),
            "-o",
            s(&page),
        ];
        if tensors {
            args.push("--show-tensor-info");
        }
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stderr.contains(
                "warning: 2 task label(s) cut to their first 256 characters of kernel names (first: task (1, 0), 20000 characters): \
                 Graphviz refuses longer strings"
            ),
            "{stderr}"
        );
        let html = fs::read_to_string(&page).unwrap();
        // The graph's SVG (the page's icons are SVGs too); the page's data holds the names
        // whole, JSON-escaped.
        let node = html.find("id=\"T0_0\"").unwrap();
        let start = html[..node].rfind("<svg").unwrap();
        let svg = &html[start..node + html[node..].find("</svg>").unwrap()];
        assert!(svg.contains("nul\\0here"), "NUL written as an escape");
        assert!(
            svg.contains(&format!("{}…", "k".repeat(256))),
            "the long name cut"
        );
        assert!(!svg.contains(&"k".repeat(257)));
        assert!(svg.contains("two\\\\slashes"), "both backslashes shown");
    }
}

/// F14: an error in the original's `l2_perf_records.json` called it
/// `l2_swimlane_records.json`.
#[test]
fn f14_errors_name_the_records_file_by_its_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "perf", "l2_perf_records.json", |r| {
        r["aicore_tasks"][0] = json!([8, 0, 0]);
    });
    let (code, _, stderr) = run(&["swimlane", s(&path)]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(&format!(
            "error: {}:1:{}: invalid l2_perf_records.json: aicore_tasks[0]: 3 columns, expected [core_id, task_token, reg_task_id, start, end, receive_to_start]",
            path.display(),
            fs::read_to_string(&path).unwrap().find("[8,0,0]").unwrap() + 7
        )),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["sched-overhead", s(path.parent().unwrap())]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(": invalid l2_perf_records.json: aicore_tasks[0]: 3 columns"),
        "{stderr}"
    );
    assert!(!stderr.contains("l2_swimlane_records.json"), "{stderr}");
}

/// F15: two rows of one-block, one-kernel tasks under one task token were merged into one
/// task without a word (4 tasks analysed of 5).
#[test]
fn f15_rows_sharing_a_task_token_are_reported_by_critical_path() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = timed_run(dir.path());
    let path = edited(&run_dir, "token", "l2_swimlane_records.json", |r| {
        r["aicore_tasks"][4][1] = r["aicore_tasks"][0][1].clone();
    });
    let folder = path.parent().unwrap();
    let (code, _, stderr) = run(&["critical-path", s(folder)]);
    assert_eq!(code, 0, "{stderr}");
    let expected = format!(
        "{}: task t0 has 2 rows (aicore_tasks[0], aicore_tasks[4]) where its block count and kernels give 1: \
         its rows are analysed as one task, so the analysis has fewer tasks than the run (another task's rows under its token?)",
        path.display()
    );
    assert!(
        stderr.lines().any(|l| l == format!("warning: {expected}")),
        "{stderr}"
    );
    let report = fs::read_to_string(folder.join("critical_path_report.md")).unwrap();
    assert!(
        report.contains(&format!("> **Warning:** {expected}\n")),
        "{report}"
    );
    assert!(report.contains("- tasks: 4 |"), "{report}");
}
