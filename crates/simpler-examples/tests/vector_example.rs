//! The vector example end to end under both runtimes: results, task ids and the exact edges.

use simpler_core::{DepFlags, TaskId};
use simpler_examples::{find, Params};
use simpler_runtime::{CallConfig, RuntimeKind};

fn run(kind: RuntimeKind) -> simpler_examples::Outcome {
    let ex = find("vector_example").unwrap();
    let params = Params::parse(ex.name(), &[], ex.params()).unwrap();
    let cfg = CallConfig {
        runtime: kind,
        record_fanin: true,
        ..Default::default()
    };
    ex.run(&cfg, &params).unwrap()
}

/// (consumer, producer) pairs of the wired fanin, with flags.
fn edges(o: &simpler_examples::Outcome) -> Vec<(TaskId, TaskId, DepFlags)> {
    o.report.wired_edges().unwrap()
}

fn expected(ids: [TaskId; 5]) -> Vec<(TaskId, TaskId, DepFlags)> {
    let [t0, t1, t2, t3, t4] = ids;
    let mut v: Vec<_> = [(t0, t1), (t0, t2), (t1, t3), (t2, t3), (t3, t4), (t0, t4)]
        .map(|(p, s)| (p, s, DepFlags::WAIT_RETAIN))
        .to_vec();
    v.sort();
    v
}

#[test]
fn tmr_gives_47_ids_and_the_six_creator_edges() {
    let o = run(RuntimeKind::Tmr);
    assert!(o.golden.passed(), "{}", o.golden.describe());
    assert_eq!(o.golden.checked, 16384);
    let tasks: Vec<TaskId> = o
        .report
        .fanin_log
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| r.task)
        .collect();
    let ids = [
        TaskId::new(0, 0),
        TaskId::new(1, 0),
        TaskId::new(1, 1),
        TaskId::new(1, 2),
        TaskId::new(1, 3),
    ];
    assert_eq!(tasks, ids);
    assert_eq!(
        tasks.iter().map(|t| t.raw()).collect::<Vec<_>>(),
        vec![0, 4294967296, 4294967297, 4294967298, 4294967299]
    );
    assert_eq!(edges(&o), expected(ids));
    assert_eq!(o.report.tasks_per_ring, [1, 4, 0, 0]);
    assert_eq!(o.report.completed, 5);
}

#[test]
fn hbg_gives_47_and_the_same_edges_on_ring_0() {
    let o = run(RuntimeKind::Hbg);
    assert!(o.golden.passed(), "{}", o.golden.describe());
    let ids = [0, 1, 2, 3, 4].map(|l| TaskId::new(0, l));
    let tasks: Vec<TaskId> = o
        .report
        .fanin_log
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| r.task)
        .collect();
    assert_eq!(tasks, ids);
    assert_eq!(edges(&o), expected(ids));
    assert_eq!(o.report.tasks_per_ring, [5, 0, 0, 0]);
}

#[test]
fn the_root_scope_site_is_where_the_run_started() {
    let o = run(RuntimeKind::Tmr);
    assert_eq!(o.report.root_site.split(':').next(), Some("vector_example.rs"));
}
