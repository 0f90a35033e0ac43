//! The vector_example shape: five AIV tasks, six creator edges, no violation.

use std::collections::BTreeSet;

use crate::check::at_start_of;
use crate::util::{convert_into, testdata};

const T0: &str = "0";
const T1: &str = "4294967296";
const T2: &str = "4294967297";
const T3: &str = "4294967298";
const T4: &str = "4294967299";

#[test]
fn five_aiv_slices_and_six_dependency_flows_at_slice_starts() {
    let dir = tempfile::tempdir().unwrap();
    let records = testdata("vector_example/l2_swimlane_records.json");
    let (summary, trace) = convert_into(&records, dir.path());

    assert_eq!(summary.deps, Some(testdata("vector_example/deps.json")));
    assert_eq!(
        summary.func_names,
        Some(testdata("vector_example/name_map_vector_example.json"))
    );
    assert_eq!(
        (
            summary.flows.dependency,
            summary.flows.hb_violation,
            summary.flows.without_row
        ),
        (6, 0, 0)
    );

    let tasks = trace.slices("Worker View");
    assert_eq!(tasks.len(), 5);
    assert!(tasks.iter().all(|s| trace.track(s).starts_with("AIV_")));
    let named: BTreeSet<(String, String)> = tasks
        .iter()
        .map(|s| {
            (
                s["args"]["task_id"].as_str().unwrap().to_string(),
                s["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected_names = [
        (T0, "kernel_add"),
        (T1, "kernel_add_scalar"),
        (T2, "kernel_add_scalar"),
        (T3, "kernel_mul"),
        (T4, "kernel_add"),
    ];
    assert_eq!(
        named,
        expected_names
            .iter()
            .map(|(t, n)| (t.to_string(), n.to_string()))
            .collect()
    );

    assert!(trace.flows_named("hb_violation").is_empty());
    let flows = trace.flows_named("dependency");
    assert_eq!(flows.len(), 6);
    let mut drawn = BTreeSet::new();
    for flow in &flows {
        let from: Vec<&str> = [T0, T1, T2, T3, T4]
            .into_iter()
            .filter(|t| at_start_of(&flow.s, trace.task_slices(t)[0]))
            .collect();
        let to: Vec<&str> = [T0, T1, T2, T3, T4]
            .into_iter()
            .filter(|t| at_start_of(&flow.f, trace.task_slices(t)[0]))
            .collect();
        assert_eq!((from.len(), to.len()), (1, 1), "flow {flow:?}");
        drawn.insert((from[0], to[0]));
    }
    let expected: BTreeSet<(&str, &str)> =
        [(T0, T1), (T0, T2), (T1, T3), (T2, T3), (T3, T4), (T0, T4)].into();
    assert_eq!(drawn, expected);
}

#[test]
fn slices_carry_task_ids_durations_and_degrees_and_other_processes_are_filled() {
    let dir = tempfile::tempdir().unwrap();
    let (_, trace) = convert_into(&testdata("vector_example/l2_swimlane_records.json"), dir.path());
    let args = |t: &str| trace.task_slices(t)[0]["args"].clone();
    assert_eq!(
        (args(T0)["fanin"].as_u64(), args(T0)["fanout"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(
        (args(T3)["fanin"].as_u64(), args(T3)["fanout"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (args(T4)["fanin"].as_u64(), args(T4)["fanout"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(args(T0)["duration_us"].as_f64(), Some(2.0));
    assert_eq!(args(T1)["task"], "r1t0");
    let t0 = trace.task_slices(T0)[0];
    assert_eq!((t0["ts"].as_f64(), t0["dur"].as_f64()), (Some(1.2), Some(2.0)));
    assert_eq!(trace.track(t0), "AIV_2");

    let sched = trace.slices("Schedulers");
    assert_eq!(sched.len(), 5);
    let tracks: BTreeSet<&str> = sched.iter().map(|s| trace.track(s)).collect();
    assert_eq!(tracks, ["Scheduler 0", "Scheduler 1"].into());
    let submits = trace.slices("Orchestrator");
    assert_eq!(submits.len(), 5);
    assert!(submits
        .iter()
        .all(|s| s["name"] == "submit" && trace.track(s) == "Orchestrator"));
}

#[test]
fn report_lists_kernel_statistics_and_flows() {
    let dir = tempfile::tempdir().unwrap();
    let (summary, _) = convert_into(&testdata("vector_example/l2_swimlane_records.json"), dir.path());
    let mut out = Vec::new();
    summary.write_report(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let expected = format!(
        "Source: l2_swimlane_records.json (dispatch, start, end and finish of every block: the original's level 2)\n\
         Func_ID  Func_Name            Count   Avg Exec(us)   Avg Latency(us)    Exec%   Avg Head OH(us)   Avg Tail OH(us)   Avg Prop(us)   Avg Local(us)\n\
         \x20     0  kernel_add               2           1.50              1.75    85.71              0.15              0.10              -               -\n\
         \x20     1  kernel_add_scalar        2           1.12              1.32    84.91              0.10              0.10              -               -\n\
         \x20     2  kernel_mul               1           1.00              1.20    83.33              0.10              0.10              -               -\n\
         TOTAL  count 5  exec 6.25 us  latency 7.35 us\n\
         Total Test Time: 6.50 us\n\
         Average Exec 1.25 us, Average Latency 1.47 us, Exec/Latency 85.03%\n\
         Flows: 6 dependency, 0 hb_violation (6 unique pairs in {})\n\
         Wrote {} (5 task slices, 5 dispatch slices, 0 dummy markers, 5 submit slices, 6 flows)\n",
        testdata("vector_example/deps.json").display(),
        dir.path().join("merged_swimlane.json").display()
    );
    assert_eq!(text, expected);
}
