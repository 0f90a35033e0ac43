//! The `simpler` binary end to end: the README's main job with every diagnostic on, and the
//! errors users see.

use std::collections::HashMap;

use serde_json::Value;

mod common;
use common::{dep_gen_run, every_diagnostic, read_json, simpler, text};

#[test]
fn the_main_job_writes_every_artifact_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let out = simpler(&every_diagnostic("vector_example", &prefix));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("golden OK (16384 elements)"), "{stdout}");

    // Scope stats: metadata + exactly 4 samples, and the HTML report.
    let jsonl = std::fs::read_to_string(prefix.join("scope_stats/scope_stats.jsonl")).unwrap();
    assert_eq!(jsonl.lines().count(), 5);
    assert!(jsonl.starts_with("{\"fatal\":false,\"dropped\":0,\"total\":4,"));
    assert!(prefix.join("scope_stats/scope_stats.html").exists());

    // dep_gen: 6 edges, and the text view.
    let deps = read_json(&prefix.join("deps.json"));
    assert_eq!(deps["edges"].as_array().unwrap().len(), 6);
    let view = std::fs::read_to_string(prefix.join("deps_viewer.txt")).unwrap();
    assert!(view.contains("SUMMARY") && view.contains("TASK INDEX") && view.contains("func_name_map: yes"));

    // Swimlane: the original converter's layout. 5 Worker View slices (pid 4) on AIV tracks,
    // named by the name map, and 6 Worker View dependency flows from slice start to slice
    // start.
    let trace = read_json(&prefix.join("merged_swimlane.json"));
    let events = trace["traceEvents"].as_array().unwrap();
    let mut names: HashMap<(u64, u64), String> = HashMap::new();
    for e in events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
    {
        names.insert(
            (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()),
            e["args"]["name"].as_str().unwrap().into(),
        );
    }
    let slices: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 4 && e["cat"] == "event")
        .collect();
    assert_eq!(slices.len(), 5);
    for s in &slices {
        let track = &names[&(s["pid"].as_u64().unwrap(), s["tid"].as_u64().unwrap())];
        assert!(track.starts_with("AIV_"), "{track}");
    }
    let mut slice_names: Vec<&str> = slices.iter().map(|s| s["name"].as_str().unwrap()).collect();
    slice_names.sort_unstable();
    assert_eq!(
        slice_names,
        [
            "kernel_add(r1t3)",
            "kernel_add(t0)",
            "kernel_add_scalar(r1t0)",
            "kernel_add_scalar(r1t1)",
            "kernel_mul(r1t2)"
        ]
    );
    let starts: Vec<(u64, u64, f64)> = slices
        .iter()
        .map(|s| {
            (
                s["pid"].as_u64().unwrap(),
                s["tid"].as_u64().unwrap(),
                s["ts"].as_f64().unwrap(),
            )
        })
        .collect();
    let flows: Vec<&Value> = events
        .iter()
        .filter(|e| e["cat"] == "flow" && e["pid"] == 4 && e["name"] != "complete" && e["name"] != "dispatch")
        .collect();
    assert_eq!(flows.len(), 12);
    assert!(flows.iter().all(|f| f["name"] == "dependency"), "no hb_violation");
    for f in flows {
        let at = (
            f["pid"].as_u64().unwrap(),
            f["tid"].as_u64().unwrap(),
            f["ts"].as_f64().unwrap(),
        );
        assert!(starts.contains(&at), "every flow end sits at a slice start: {f}");
    }
    // The bare flag records level 4: scheduler phases and the orchestrator's submits too.
    assert_eq!(
        names.get(&(2, 30_000)).map(String::as_str),
        Some("Sched_0"),
        "the AICPU Scheduler process"
    );
    assert!(
        events
            .iter()
            .any(|e| e["pid"] == 1 && e["ph"] == "X" && e["name"] == "submit(t0)"),
        "the orchestrator's submit of t0"
    );
    assert!(
        stdout.contains("Source chip_swimlane_level: 4 (full collection with orchestrator phases; recorded in l2_swimlane_records.json)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(6 dependency flows, 0 hb_violation in the Worker View)"),
        "{stdout}"
    );
}

#[test]
fn html_only_viewer_flags_are_rejected_in_text_mode() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    dep_gen_run(&prefix);
    let deps = prefix.join("deps.json");
    for flag in [
        &["--direction", "LR"][..],
        &["--engine", "dot"][..],
        &["--show-tensor-info"][..],
    ] {
        let mut args = vec!["deps-viewer", deps.to_str().unwrap()];
        args.extend_from_slice(flag);
        let out = simpler(&args);
        assert_eq!(out.status.code(), Some(2), "{flag:?}");
        assert!(
            text(&out.stderr).contains(&format!("{} is only valid with --format html", flag[0])),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn user_errors_are_clear_and_exit_non_zero() {
    // Exit statuses (README): 1 bad input, 2 usage (an invalid --runtime-env), 64 + code for an
    // orchestrator fatal.
    let cases: &[(&[&str], &str, i32)] = &[
        (
            &["run", "vector_exmple"],
            "unknown example `vector_exmple`; built-in examples: vector_example, chain_barrier, edge_sources",
            1,
        ),
        (
            &["run", "vector_example", "--runtime-env", "ring_heap=12"],
            "ring_heap must be at least 1024 bytes",
            2,
        ),
        (
            &["run", "vector_example", "--param", "sizes=3"],
            "vector_example has no parameter `sizes`; valid parameters: size",
            1,
        ),
        (
            &[
                "run",
                "chain_barrier",
                "--param",
                "n=8",
                "--runtime-env",
                "ring_task_window=4",
            ],
            "fatal 1 (SCOPE_DEADLOCK): scope at chain_barrier.rs:",
            65,
        ),
    ];
    for (args, want, code) in cases {
        let out = simpler(args);
        assert_eq!(out.status.code(), Some(*code), "{args:?}");
        assert!(
            text(&out.stderr).contains(want),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn the_diagnostics_comparison_runs_only_the_chosen_settings_after_off() {
    let out = simpler(&[
        "bench",
        "--compare-diagnostics",
        "--workload",
        "scopes",
        "--tasks",
        "2000",
        "--diagnostic",
        "ss_probe",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("scopes "))
        .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_string())
        .collect();
    assert_eq!(rows, ["off", "ss_probe"]);
    assert!(
        !text(&out.stdout).contains("replay alone"),
        "no dep_gen setting chosen"
    );

    let bad = simpler(&["bench", "--compare-diagnostics", "--diagnostic", "ss_prob"]);
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("invalid value 'ss_prob' for '--diagnostic <SETTING>'"),
        "{}",
        text(&bad.stderr)
    );
    let alone = simpler(&["bench", "--diagnostic", "ss_probe"]);
    assert!(
        !alone.status.success(),
        "--diagnostic needs --compare-diagnostics"
    );
}
