//! Arrows to tasks that did not run on a core, pairs without rows, and runs without deps.json.

use simpler_artifacts::swimlane::DummyRow;

use crate::check::at_start_of;
use crate::util::{aiv, convert_into, write_deps, write_records};

#[test]
fn dummy_and_submit_only_tasks_anchor_flows_and_missing_rows_are_counted() {
    let (p, q, r, alloc, ghost) = (30, 31, 32, 33, 99);
    let dir = tempfile::tempdir().unwrap();
    let dummy = DummyRow {
        task_id: q,
        sched_thread: 0,
        finish_ns: 250,
    };
    let records = write_records(
        dir.path(),
        1,
        &[aiv(p, 0, 1, 100, 200), aiv(r, 0, 2, 300, 400)],
        &[dummy],
        &[alloc],
    );
    write_deps(dir.path(), &[(p, q), (q, r), (alloc, r), (r, ghost), (ghost, p)]);
    let (summary, trace) = convert_into(&records, dir.path());

    assert_eq!(
        (
            summary.flows.dependency,
            summary.flows.hb_violation,
            summary.flows.without_row
        ),
        (3, 0, 2)
    );
    assert_eq!(summary.flows.first_without_row, Some((r, ghost)));
    assert_eq!(summary.slices.dummy, 1);

    let marker = trace
        .slices("Schedulers")
        .into_iter()
        .find(|s| s["name"] == "dummy")
        .unwrap();
    assert_eq!(
        (trace.track(marker), marker["ts"].as_f64()),
        ("Scheduler 0", Some(0.25))
    );
    let flows = trace.flows();
    let to_dummy = flows.iter().find(|f| at_start_of(&f.f, marker)).unwrap();
    assert!(at_start_of(&to_dummy.s, trace.task_slices("30")[0]));
    let from_dummy = flows.iter().find(|f| at_start_of(&f.s, marker)).unwrap();
    assert!(at_start_of(&from_dummy.f, trace.task_slices("32")[0]));

    let submit = trace
        .slices("Orchestrator")
        .into_iter()
        .find(|s| s["args"]["task_id"] == "33")
        .unwrap();
    let from_alloc = flows.iter().find(|f| at_start_of(&f.s, submit)).unwrap();
    assert!(at_start_of(&from_alloc.f, trace.task_slices("32")[0]));

    let mut out = Vec::new();
    summary.write_report(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("Not drawn: 2 pair(s) with an endpoint that has no timing row (first: t32 -> t99)\n"),
        "{text}"
    );
}

#[test]
fn without_deps_json_there_are_no_flows_and_no_degrees() {
    let dir = tempfile::tempdir().unwrap();
    let records = write_records(
        dir.path(),
        1,
        &[aiv(1, 0, 1, 100, 200), aiv(2, 0, 1, 300, 400)],
        &[],
        &[],
    );
    let (summary, trace) = convert_into(&records, dir.path());
    assert_eq!((summary.deps.as_deref(), summary.unique_pairs), (None, 0));
    assert!(trace.flows().is_empty());
    let slices = trace.slices("Worker View");
    assert_eq!(slices.len(), 2);
    assert!(slices.iter().all(|s| s["args"].get("fanin").is_none()));
    let mut out = Vec::new();
    summary.write_report(&mut out).unwrap();
    assert!(String::from_utf8(out)
        .unwrap()
        .contains("\nFlows: none (no deps.json)\n"));
}

#[test]
fn overlapping_slices_of_one_core_go_to_an_overlap_lane() {
    let dir = tempfile::tempdir().unwrap();
    let records = write_records(
        dir.path(),
        1,
        &[aiv(1, 0, 1, 100, 300), aiv(2, 0, 1, 200, 400)],
        &[],
        &[],
    );
    write_deps(dir.path(), &[(1, 2)]);
    let (summary, trace) = convert_into(&records, dir.path());
    let tracks: Vec<&str> = ["1", "2"]
        .iter()
        .map(|t| trace.track(trace.task_slices(t)[0]))
        .collect();
    assert_eq!(tracks, ["AIV_1", "AIV_1 (overlap 1)"]);
    assert_eq!(summary.flows.hb_violation, 1);
}
