//! SPMD and MIX tasks: one flow per pair, attached to the earliest block; the hb check uses
//! the predecessor's latest end over all its rows.

use simpler_artifacts::swimlane::CoreType;

use crate::check::{at_start_of, Trace};
use crate::util::{convert_into, row, write_deps, write_records};

/// The Worker View slice of `task` that starts at `ts_ns`.
fn slice_at<'t>(trace: &'t Trace, task: &str, ts_ns: u64) -> &'t serde_json::Value {
    let found: Vec<_> = trace
        .task_slices(task)
        .into_iter()
        .filter(|s| s["ts"].as_f64() == Some(ts_ns as f64 / 1000.0))
        .collect();
    assert_eq!(found.len(), 1, "{task} at {ts_ns}");
    found[0]
}

#[test]
fn spmd_pairs_get_one_flow_each_to_and_from_the_earliest_block() {
    let (b, a, c, d) = (10, 11, 12, 13);
    let spmd = |task, block, core, start, end| {
        row(task, [-1, 3, -1], 3, (block, 4), core, CoreType::Aiv, start, end)
    };
    let tasks = [
        row(b, [-1, 1, -1], 1, (0, 1), 2, CoreType::Aiv, 100, 200),
        spmd(a, 0, 2, 320, 400),
        spmd(a, 1, 3, 310, 420),
        spmd(a, 2, 4, 300, 410),
        spmd(a, 3, 5, 330, 450),
        row(c, [-1, 1, -1], 1, (0, 1), 3, CoreType::Aiv, 460, 500),
        spmd(d, 0, 2, 430, 470),
        spmd(d, 1, 3, 435, 458),
        spmd(d, 2, 4, 440, 480),
        spmd(d, 3, 5, 460, 490),
    ];
    let dir = tempfile::tempdir().unwrap();
    let records = write_records(dir.path(), 2, &tasks, &[], &[]);
    write_deps(dir.path(), &[(b, a), (a, c), (a, d), (b, a)]);
    let (summary, trace) = convert_into(&records, dir.path());

    assert_eq!(trace.slices("Worker View").len(), 10);
    assert_eq!(trace.task_slices("11").len(), 4);
    assert_eq!(trace.flows().len(), 3);
    assert_eq!((summary.flows.dependency, summary.flows.hb_violation), (2, 1));

    let a_first = slice_at(&trace, "11", 300);
    assert_eq!(
        (trace.track(a_first), &a_first["args"]["block_idx"]),
        ("AIV_4", &2.into())
    );
    let dep = trace.flows_named("dependency");
    let into_a = dep
        .iter()
        .find(|f| at_start_of(&f.s, slice_at(&trace, "10", 100)))
        .unwrap();
    assert!(at_start_of(&into_a.f, a_first));
    let a_to_c = dep
        .iter()
        .find(|f| at_start_of(&f.f, slice_at(&trace, "12", 460)))
        .unwrap();
    assert!(at_start_of(&a_to_c.s, a_first));
    // A's last block ends at 450 ns, after D's earliest block starts at 430 ns.
    let hb = trace.flows_named("hb_violation");
    assert_eq!(hb.len(), 1);
    assert!(at_start_of(&hb[0].s, a_first));
    assert!(at_start_of(&hb[0].f, slice_at(&trace, "13", 430)));
    assert_eq!(trace.task_slices("11")[0]["args"]["fanout"], 2);
}

#[test]
fn mix_tasks_get_one_flow_per_pair_from_their_earliest_subslot() {
    let (x, m, y, m2) = (20, 21, 22, 23);
    let mix = [5, 6, 7];
    let mix2 = [5, 6, -1];
    let tasks = [
        row(x, [5, -1, -1], 5, (0, 1), 0, CoreType::Aic, 100, 200),
        row(m, mix, 5, (0, 1), 0, CoreType::Aic, 300, 400),
        row(m, mix, 6, (0, 1), 1, CoreType::Aiv, 290, 380),
        row(m, mix, 7, (0, 1), 2, CoreType::Aiv, 310, 520),
        row(y, [-1, 6, -1], 6, (0, 1), 1, CoreType::Aiv, 500, 600),
        row(m2, mix2, 5, (0, 2), 0, CoreType::Aic, 700, 800),
        row(m2, mix2, 6, (0, 2), 1, CoreType::Aiv, 690, 780),
        row(m2, mix2, 5, (1, 2), 0, CoreType::Aic, 810, 900),
        row(m2, mix2, 6, (1, 2), 1, CoreType::Aiv, 805, 880),
    ];
    let dir = tempfile::tempdir().unwrap();
    let records = write_records(dir.path(), 1, &tasks, &[], &[]);
    write_deps(dir.path(), &[(x, m), (m, y), (m, m2), (x, m2)]);
    let (summary, trace) = convert_into(&records, dir.path());

    assert_eq!(trace.slices("Worker View").len(), 9);
    let tracks: std::collections::BTreeSet<&str> = trace
        .slices("Worker View")
        .iter()
        .map(|s| trace.track(s))
        .collect();
    assert_eq!(tracks, ["AIC_0", "AIV_1", "AIV_2"].into());
    assert_eq!(trace.flows().len(), 4);
    assert_eq!((summary.flows.dependency, summary.flows.hb_violation), (3, 1));

    let m_first = slice_at(&trace, "21", 290);
    assert_eq!(trace.track(m_first), "AIV_1");
    assert_eq!(m_first["name"], "func_6");
    // M's AIV_2 row ends at 520 ns, after Y starts at 500 ns: the latest end decides.
    let hb = trace.flows_named("hb_violation");
    assert_eq!(hb.len(), 1);
    assert!(at_start_of(&hb[0].s, m_first));
    assert!(at_start_of(&hb[0].f, slice_at(&trace, "22", 500)));
    let into_m2: Vec<_> = trace
        .flows_named("dependency")
        .into_iter()
        .filter(|f| at_start_of(&f.f, slice_at(&trace, "23", 690)))
        .collect();
    assert_eq!(into_m2.len(), 2);
}
