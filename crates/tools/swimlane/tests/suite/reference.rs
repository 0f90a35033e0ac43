//! The original converter's dependency-flow tests (`../shared/reference/swimlane-format.md` §6,
//! "Tests"), on level-2 files. Times in the trace count from the file's earliest stamp, so each
//! test says which stamp that is.

use std::collections::BTreeSet;

use crate::util::{at, convert_in, deps_json, level2_records, Row};

fn row(core: u32, task: u64, reg: u32, dispatch: f64, receive: f64, end: f64, finish: f64) -> Row {
    Row {
        core,
        task,
        reg,
        dispatch,
        receive,
        start: receive + 0.5,
        end,
        finish,
    }
}

/// Pred (receive 10.5, end 20, finish 21) → succ (dispatch 15, receive 19): both views flag
/// `hb_violation`. The earliest stamp is the pred's dispatch at 10 µs.
#[test]
fn hb_violation_in_both_views() {
    let dir = tempfile::tempdir().unwrap();
    let records = level2_records(
        &["aiv", "aiv"],
        &[
            row(0, 0, 0, 10.0, 10.5, 20.0, 21.0),
            row(1, 1, 0, 15.0, 19.0, 25.0, 26.0),
        ],
    );
    let deps = deps_json(&[(0, [-1, 0, -1], 1), (1, [-1, 0, -1], 1)], &[(0, 1)]);
    let (summary, trace) = convert_in(dir.path(), &records, Some(&deps));
    let hb = trace.flows("hb_violation");
    assert_eq!(hb.len(), 2);
    assert_eq!((at(&hb[0].s), at(&hb[0].f)), ((4, 10_000, 0.5), (4, 10_010, 9.0)));
    assert_eq!((at(&hb[1].s), at(&hb[1].f)), ((3, 10_000, 0.0), (3, 10_010, 5.0)));
    assert!(trace.flows("dependency").is_empty());
    assert_eq!(
        (
            summary.flows.worker.hb_violation,
            summary.flows.scheduler.hb_violation
        ),
        (1, 1)
    );
    // Each end binds to its slice's event id.
    assert_eq!(
        (hb[0].s["bind_id"].as_u64(), hb[0].f["bind_id"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        (hb[1].s["bind_id"].as_u64(), hb[1].f["bind_id"].as_u64()),
        (Some(2), Some(3))
    );
}

/// An SPMD pred of 4 blocks → one succ: one flow per view, `output_task_count` 4, anchored
/// on core 0 (the earliest receive, core 0 winning the tie with core 1). Earliest stamp: 1 µs.
#[test]
fn spmd_pred_gives_one_flow_per_view_on_its_earliest_block() {
    let dir = tempfile::tempdir().unwrap();
    let p = 7;
    let records = level2_records(
        &["aiv"; 5],
        &[
            row(2, p, 0, 1.2, 2.0, 5.0, 5.5),
            row(1, p, 0, 1.0, 1.5, 5.0, 5.5),
            row(0, p, 0, 1.1, 1.5, 5.0, 5.5),
            row(3, p, 0, 1.3, 2.5, 5.0, 5.5),
            row(4, 8, 0, 6.0, 6.5, 8.0, 8.5),
        ],
    );
    let deps = deps_json(&[(p, [-1, 3, -1], 4), (8, [-1, 4, -1], 1)], &[(p, 8)]);
    let (_, trace) = convert_in(dir.path(), &records, Some(&deps));
    let flows = trace.flows("dependency");
    assert_eq!(flows.len(), 2);
    assert_eq!(
        at(&flows[0].s),
        (4, 10_000, 0.5),
        "Worker View: core 0 at its receive"
    );
    assert_eq!(
        at(&flows[1].s),
        (3, 10_010, 0.0),
        "Scheduler View: the earliest dispatch"
    );
    for f in &flows {
        assert_eq!(
            (
                f.s["output_task_count"].as_u64(),
                f.s["input_task_count"].as_u64()
            ),
            (Some(4), Some(1))
        );
    }
    assert_eq!(trace.slices(4, "func_3_d_spmd(t7)").len(), 4);
}

/// MIX tasks (one AIC and two AIV rows each): a plain one gives 3×3 flows per view with counts
/// 1; an SPMD one contributes one anchor per kernel.
#[test]
fn mix_tasks_give_n_by_m_flows_unless_spmd() {
    let dir = tempfile::tempdir().unwrap();
    let mix = |task, t: f64| {
        [
            row(0, task, task as u32, t, t + 0.5, t + 2.0, t + 2.5),
            row(2, task, task as u32, t, t + 0.6, t + 2.0, t + 2.5),
            row(3, task, task as u32, t, t + 0.7, t + 2.0, t + 2.5),
        ]
    };
    let rows: Vec<Row> = [mix(0, 1.0), mix(1, 4.0)].concat();
    let deps = deps_json(&[(0, [0, 1, 1], 1), (1, [0, 1, 1], 1)], &[(0, 1)]);
    let (_, trace) = convert_in(
        dir.path(),
        &level2_records(&["aic", "aic", "aiv", "aiv"], &rows),
        Some(&deps),
    );
    let flows = trace.flows("dependency");
    assert_eq!(flows.len(), 18);
    assert!(flows
        .iter()
        .all(|f| f.s["output_task_count"] == 1 && f.s["input_task_count"] == 1));

    // SPMD MIX (block_num 3, AIC kernel 0 + AIV kernel 1) → SPMD MIX: 2 × 2 anchors per view.
    // The succ's earliest AIC row is on core 1, its earliest AIV row on core 5.
    let dir = tempfile::tempdir().unwrap();
    let mut rows = Vec::new();
    for (core, receive) in [(0, 1.0), (1, 1.1), (2, 1.2), (3, 1.0), (4, 1.3), (5, 1.4)] {
        rows.push(row(core, 0, 0, 0.9, receive, 2.0, 2.5));
    }
    for (core, receive) in [(0, 4.2), (1, 4.0), (2, 4.1), (3, 4.6), (4, 4.5), (5, 4.3)] {
        rows.push(row(core, 1, 1, 3.9, receive, 5.2, 5.5)); // ends after its latest start (5.1)
    }
    let deps = deps_json(&[(0, [0, 1, -1], 3), (1, [2, 3, -1], 3)], &[(0, 1)]);
    let (_, trace) = convert_in(
        dir.path(),
        &level2_records(&["aic", "aic", "aic", "aiv", "aiv", "aiv"], &rows),
        Some(&deps),
    );
    let worker: Vec<_> = trace
        .flows("dependency")
        .into_iter()
        .filter(|f| f.s["pid"] == 4)
        .collect();
    assert_eq!(worker.len(), 4);
    let to: BTreeSet<u64> = worker.iter().map(|f| at(&f.f).1).collect();
    assert_eq!(to, BTreeSet::from([10_010, 10_050]));
    let from: BTreeSet<u64> = worker.iter().map(|f| at(&f.s).1).collect();
    assert_eq!(
        from,
        BTreeSet::from([10_000, 10_030]),
        "core 0 wins the tie with core 3 per kernel"
    );
    assert!(worker
        .iter()
        .all(|f| f.s["output_task_count"] == 3 && f.s["input_task_count"] == 3));
}

/// Without a block map, a task with several rows of one core type is SPMD (one flow); rows of
/// two types are a MIX task (every row).
#[test]
fn without_a_block_map_same_type_rows_are_spmd() {
    let dir = tempfile::tempdir().unwrap();
    let rows = [
        row(1, 0, 0, 1.0, 1.5, 3.0, 3.5),
        row(2, 0, 0, 1.0, 1.6, 3.0, 3.5),
        row(0, 1, 0, 4.0, 4.5, 6.0, 6.5),
        row(1, 1, 1, 4.0, 4.6, 6.0, 6.5),
    ];
    let deps = "{\"tasks\":[],\"tensors\":[],\"edges\":[{\"pred\":\"0\",\"succ\":\"1\",\"arg\":-1,\"source\":\"explicit\"}]}";
    let (_, trace) = convert_in(
        dir.path(),
        &level2_records(&["aic", "aiv", "aiv"], &rows),
        Some(deps),
    );
    let worker: Vec<_> = trace
        .flows("dependency")
        .into_iter()
        .filter(|f| f.s["pid"] == 4)
        .collect();
    assert_eq!(worker.len(), 2, "one SPMD anchor × two MIX rows");
    assert!(worker
        .iter()
        .all(|f| f.s["output_task_count"] == 2 && f.s["input_task_count"] == 1));
    assert_eq!(trace.slices(4, "task_spmd(t0)").len(), 2);
    assert_eq!(trace.slices(4, "task(t1)").len(), 2);
}

/// `--overhead` on the original's readiness example
/// (`../shared/reference/timing-analysis.md` §3): P (dispatch 0, start 0, end 5, finish 6) →
/// C (8, 8, 15, 16) on one AIC core. C is ready at 5 and dispatched at 8: the core is idle
/// with ready work for 3 µs.
#[test]
fn overhead_counters_mark_an_idle_core_with_ready_work() {
    let dir = tempfile::tempdir().unwrap();
    let at = |task, reg, t: [f64; 4]| Row {
        core: 0,
        task,
        reg,
        dispatch: 1.0 + t[0],
        receive: 1.0 + t[1],
        start: 1.0 + t[1],
        end: 1.0 + t[2],
        finish: 1.0 + t[3],
    };
    let records = level2_records(
        &["aic"],
        &[at(0, 0, [0.0, 0.0, 5.0, 6.0]), at(1, 1, [8.0, 8.0, 15.0, 16.0])],
    );
    let path = dir.path().join("chip_swimlane_records.json");
    std::fs::write(&path, records).unwrap();
    std::fs::write(
        dir.path().join("deps.json"),
        deps_json(&[(0, [0, -1, -1], 1), (1, [0, -1, -1], 1)], &[(0, 1)]),
    )
    .unwrap();
    let args = simpler_swimlane::Args {
        overhead: true,
        ..Default::default()
    };
    let summary = simpler_swimlane::convert_with(&path, &args).unwrap();
    let trace = crate::util::Trace::read(&summary.output);
    let samples: Vec<(String, u64, f64, i64)> = trace
        .events
        .iter()
        .filter(|e| e["cat"] == "overhead")
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            let v = e["args"][&name].as_i64().unwrap();
            (name, e["tid"].as_u64().unwrap(), e["ts"].as_f64().unwrap(), v)
        })
        .collect();
    let expect = |ts: f64, v: [i64; 5]| {
        [
            ("oh_aic_idle", 9101),
            ("oh_aic_ready", 9102),
            ("oh_aic_overhead", 9103),
            ("oh_all_overhead", 9121),
            ("oh_has_overhead", 9122),
        ]
        .into_iter()
        .zip(v)
        .map(move |((n, tid), v)| (n.to_string(), tid, ts, v))
    };
    let expected: Vec<_> = expect(0.0, [0, 0, 0, 0, 0])
        .chain(expect(5.0, [1, 1, 1, 1, 1]))
        .chain(expect(8.0, [0, 0, 0, 0, 0]))
        .collect();
    assert_eq!(samples, expected);
    assert!(samples.iter().all(|s| s.0.starts_with("oh_")));
    assert_eq!(summary.overhead_samples, 15);
}

/// Found by a review: a trace converted without a deps.json has no arrows, and only stderr
/// said why; opened later in Perfetto, it read as a run whose tasks had no dependencies. The
/// trace now says so itself, in its `simpler: WARNING` process; a trace with arrows does not.
#[test]
fn a_trace_without_deps_json_says_inside_that_it_has_no_arrows() {
    let dir = tempfile::tempdir().unwrap();
    let records = level2_records(
        &["aiv", "aiv"],
        &[
            row(0, 0, 0, 10.0, 10.5, 20.0, 21.0),
            row(1, 1, 0, 22.0, 23.0, 25.0, 26.0),
        ],
    );
    let (_, trace) = convert_in(dir.path(), &records, None);
    let warning = format!(
        "no dependency arrows: no deps.json was found next to {}",
        dir.path().join("chip_swimlane_records.json").display()
    );
    assert_eq!(trace.process_name(12), Some("simpler: WARNING"));
    assert_eq!(
        trace.thread_name(12, 0),
        Some("this trace may not show what its run did")
    );
    let slices: Vec<&serde_json::Value> = trace
        .events
        .iter()
        .filter(|e| e["pid"] == 12 && e["ph"] == "X")
        .collect();
    assert_eq!(slices.len(), 1);
    assert_eq!(slices[0]["name"], warning.as_str());
    assert_eq!(slices[0]["args"]["warning"], warning.as_str());
    assert!(trace.flows("dependency").is_empty());

    let deps = deps_json(&[(0, [-1, 0, -1], 1), (1, [-1, 0, -1], 1)], &[(0, 1)]);
    let (_, trace) = convert_in(dir.path(), &records, Some(&deps));
    assert_eq!(trace.flows("dependency").len(), 2);
    assert!(
        !trace.events.iter().any(|e| e["pid"] == 12),
        "no warnings process"
    );
}
