//! Pins the dependency semantics of reference §2 (tag table §2.6, INOUT-covered removal,
//! versions, manual scope, explicit deps, dedup) on the one dependency function.

use simpler_core::{
    compute_fanin, register_outputs, ArgTag, DType, DepFlags, Edge, EdgeSource, FaninSet, FaninSink, Overlap,
    TaskArgs, TaskId, Tensor, TensorArg, TensorCreateInfo, TensorMap, TensorMapConfig,
};

/// Records every edge (before dedup) as (producer, flags, source, arg, overlap).
#[derive(Default)]
struct Raw(Vec<RawEdge>);

type RawEdge = (TaskId, DepFlags, EdgeSource, Option<usize>, Option<Overlap>);

impl FaninSink for Raw {
    type Error = std::convert::Infallible;
    fn edge(&mut self, e: &Edge<'_>) -> Result<(), Self::Error> {
        self.0.push((e.producer, e.flags, e.source, e.arg, e.overlap));
        Ok(())
    }
}

/// A tiny orchestrator over the pure functions: submits in order, ids on ring 0.
struct Graph {
    map: TensorMap,
    next: u32,
}

impl Graph {
    fn new() -> Self {
        Graph {
            map: TensorMap::new(TensorMapConfig::unbounded()),
            next: 0,
        }
    }
    /// Submits and returns (id, raw edges, deduped fanin).
    fn submit(&mut self, args: &TaskArgs<'_>, manual: bool) -> (TaskId, Raw, Vec<(TaskId, DepFlags)>) {
        let id = TaskId::new(0, self.next);
        self.next += 1;
        let mut raw = Raw::default();
        compute_fanin(
            id,
            manual,
            args.tensors(),
            args.explicit_deps(),
            &mut self.map,
            &mut raw,
        )
        .unwrap();
        let mut set = FaninSet::new();
        for &(p, f, ..) in &raw.0 {
            set.add(p, f);
        }
        register_outputs(id, manual, args.tensors(), &mut self.map).unwrap();
        (id, raw, set.edges().to_vec())
    }
}

fn ext(addr: u64, n: u32) -> Tensor {
    Tensor::contiguous(addr, u64::from(n) * 4, &[n], DType::Float32, TaskId::INVALID).unwrap()
}

fn one(tag: ArgTag, t: Tensor) -> TaskArgs<'static> {
    let mut a = TaskArgs::new();
    a.arg(TensorArg::with_tag(tag, t).unwrap());
    a
}

/// Reference §2.6: for each tag, (creator edge?, lookup edge?, inserts entry?).
#[test]
fn tag_table() {
    let owner = TaskId::new(0, 0);
    for (tag, creator, lookup, inserts) in [
        (ArgTag::Input, true, true, false),
        (ArgTag::Inout, true, true, true),
        (ArgTag::OutputExisting, true, false, true),
        (ArgTag::NoDep, true, false, false),
    ] {
        let mut g = Graph::new();
        let (p0, ..) = g.submit(&TaskArgs::new(), false); // the creator, id 0
        assert_eq!(p0, owner);
        let buf = ext(0x1000, 64).with_owner(owner);
        // A prior writer of the buffer, through OUTPUT_EXISTING.
        let (writer, ..) = g.submit(&one(ArgTag::OutputExisting, buf), false);
        let (id, raw, _) = g.submit(&one(tag, buf), false);
        let sources: Vec<_> = raw.0.iter().map(|e| (e.0, e.2)).collect();
        let mut expect = Vec::new();
        if creator {
            expect.push((owner, EdgeSource::Creator));
        }
        if lookup {
            expect.push((writer, EdgeSource::TensorMap));
        }
        assert_eq!(sources, expect, "{tag:?}");
        // Did it insert? A later reader sees it iff so.
        let (_, raw, _) = g.submit(&one(ArgTag::Input, buf), false);
        let saw_it = raw.0.iter().any(|e| e.0 == id);
        assert_eq!(saw_it, inserts, "{tag:?} insert");
    }
}

#[test]
fn runtime_outputs_are_reached_only_through_their_creator() {
    let mut g = Graph::new();
    let ci = TensorCreateInfo::new(&[64], DType::Float32).unwrap();
    let mut a = TaskArgs::new();
    a.output(ci);
    let (p, ..) = g.submit(&a, false);
    assert_eq!(g.map.in_use(), 0, "OUTPUT is never inserted");
    let out = ci.materialize(0x9000, p);
    let (_, raw, fanin) = g.submit(&one(ArgTag::Input, out), false);
    assert_eq!(raw.0.len(), 1);
    assert_eq!(fanin, vec![(p, DepFlags::WAIT_RETAIN)]);
}

#[test]
fn output_existing_gets_no_waw_edge_and_entries_accumulate() {
    let mut g = Graph::new();
    let buf = ext(0x1000, 64);
    let (w1, ..) = g.submit(&one(ArgTag::OutputExisting, buf), false);
    let (w2, raw, _) = g.submit(&one(ArgTag::OutputExisting, buf), false);
    assert!(raw.0.is_empty(), "no WAW edge");
    let (_, _, fanin) = g.submit(&one(ArgTag::Input, buf), false);
    assert_eq!(
        fanin,
        vec![(w2, DepFlags::WAIT), (w1, DepFlags::WAIT)],
        "both writers, newest first"
    );
}

#[test]
fn inout_covered_removes_the_older_writer() {
    let mut g = Graph::new();
    let buf = ext(0x1000, 64);
    let (w_half, ..) = g.submit(
        &one(ArgTag::OutputExisting, buf.view(&[32], &[0]).unwrap()),
        false,
    );
    let (w_mid, ..) = g.submit(
        &one(ArgTag::OutputExisting, buf.view(&[32], &[16]).unwrap()),
        false,
    );
    // INOUT over the first half: covers w_half (removed), partially overlaps w_mid (kept).
    let (rmw, raw, _) = g.submit(&one(ArgTag::Inout, buf.view(&[32], &[0]).unwrap()), false);
    let hits: Vec<_> = raw.0.iter().map(|e| (e.0, e.4)).collect();
    assert_eq!(
        hits,
        vec![(w_mid, Some(Overlap::Other)), (w_half, Some(Overlap::Covered))]
    );
    let (_, _, fanin) = g.submit(&one(ArgTag::Input, buf), false);
    assert_eq!(
        fanin,
        vec![(rmw, DepFlags::WAIT), (w_mid, DepFlags::WAIT)],
        "w_half is gone"
    );
}

#[test]
fn a_newer_version_reader_overlaps_everything_and_removes_nothing() {
    let mut g = Graph::new();
    let buf = ext(0x1000, 64);
    let (w, ..) = g.submit(
        &one(ArgTag::OutputExisting, buf.view(&[32], &[0]).unwrap()),
        false,
    );
    // Disjoint slice, newer version: still an edge (OTHER), never COVERED.
    let v1 = buf.view(&[32], &[32]).unwrap().with_version(1);
    let (_, raw, _) = g.submit(&one(ArgTag::Inout, v1), false);
    assert_eq!(
        raw.0.iter().map(|e| (e.0, e.4)).collect::<Vec<_>>(),
        vec![(w, Some(Overlap::Other))]
    );
    // Even a full-buffer newer-version INOUT does not remove the entry.
    let (_, raw, _) = g.submit(&one(ArgTag::Inout, buf.with_version(1)), false);
    assert!(raw.0.iter().any(|e| e.0 == w));
    let (_, raw, _) = g.submit(&one(ArgTag::Input, buf.view(&[32], &[0]).unwrap()), false);
    assert!(raw.0.iter().any(|e| e.0 == w), "entry survived both INOUTs");
}

#[test]
fn manual_dep_views_skip_lookup_and_insert_but_keep_creator() {
    let mut g = Graph::new();
    let (owner, ..) = g.submit(&TaskArgs::new(), false);
    let buf = ext(0x1000, 64).with_owner(owner);
    g.submit(&one(ArgTag::OutputExisting, buf), false);
    let (_, raw, _) = g.submit(&one(ArgTag::Inout, buf.with_manual_dep(true)), false);
    assert_eq!(
        raw.0.iter().map(|e| (e.0, e.2)).collect::<Vec<_>>(),
        vec![(owner, EdgeSource::Creator)]
    );
}

#[test]
fn manual_scope_uses_explicit_deps_only() {
    let mut g = Graph::new();
    let (owner, ..) = g.submit(&TaskArgs::new(), false);
    let buf = ext(0x1000, 64).with_owner(owner);
    let (w, ..) = g.submit(&one(ArgTag::OutputExisting, buf), false);
    let mut a = one(ArgTag::Inout, buf);
    a.dep_wait(w);
    let (m, raw, fanin) = g.submit(&a, true);
    assert_eq!(raw.0.len(), 1);
    assert_eq!(fanin, vec![(w, DepFlags::WAIT)]);
    // Nothing was inserted by the manual submit.
    let (_, _, fanin) = g.submit(&one(ArgTag::Input, buf), false);
    assert!(!fanin.iter().any(|&(p, _)| p == m));
}

#[test]
fn explicit_deps_both_kinds_and_dedup_ors_flags() {
    let mut g = Graph::new();
    let (p, ..) = g.submit(&TaskArgs::new(), false);
    let (q, ..) = g.submit(&TaskArgs::new(), false);
    let buf = ext(0x1000, 64).with_owner(p);
    g.map.insert(&buf, q).unwrap();
    let mut a = one(ArgTag::Input, buf);
    a.dep_wait(q).dep_wait(p).dep(q);
    let (_, raw, fanin) = g.submit(&a, false);
    // Raw discovery order: explicit q(W), p(W), q(WR); creator p(WR); tensormap q(W).
    assert_eq!(
        raw.0.iter().map(|e| (e.0, e.1, e.2)).collect::<Vec<_>>(),
        vec![
            (q, DepFlags::WAIT, EdgeSource::Explicit),
            (p, DepFlags::WAIT, EdgeSource::Explicit),
            (q, DepFlags::WAIT_RETAIN, EdgeSource::Explicit),
            (p, DepFlags::WAIT_RETAIN, EdgeSource::Creator),
            (q, DepFlags::WAIT, EdgeSource::TensorMap),
        ]
    );
    assert_eq!(
        fanin,
        vec![(q, DepFlags::WAIT_RETAIN), (p, DepFlags::WAIT_RETAIN)]
    );
    let mut w = TaskArgs::new();
    w.dep_wait(q);
    assert_eq!(
        g.submit(&w, false).2,
        vec![(q, DepFlags::WAIT)],
        "a WAIT-only explicit dep stays WAIT-only"
    );
}

#[test]
fn explicit_deps_on_retired_tasks_are_skipped_and_invalid_ids_are_errors() {
    let mut map = TensorMap::new(TensorMapConfig::unbounded());
    map.set_watermark(0, 5);
    let mut a = TaskArgs::new();
    a.dep(TaskId::new(0, 4)).dep(TaskId::new(0, 5));
    let mut set = FaninSet::new();
    compute_fanin(
        TaskId::new(0, 9),
        false,
        a.tensors(),
        a.explicit_deps(),
        &mut map,
        &mut set,
    )
    .unwrap();
    assert_eq!(set.edges(), &[(TaskId::new(0, 5), DepFlags::WAIT_RETAIN)]);
    let mut b = TaskArgs::new();
    b.dep(TaskId::INVALID);
    let err = compute_fanin(
        TaskId::new(0, 9),
        false,
        b.tensors(),
        b.explicit_deps(),
        &mut map,
        &mut set,
    );
    assert_eq!(
        err.map_err(|e| e.to_string()),
        Err("explicit dependency #0 is not a task id (0xffffffffffffffff)".to_string())
    );
    let mut c = TaskArgs::new();
    c.dep(TaskId::new(0, 9));
    let err = compute_fanin(
        TaskId::new(0, 9),
        false,
        c.tensors(),
        c.explicit_deps(),
        &mut map,
        &mut set,
    );
    assert!(
        matches!(
            err,
            Err(simpler_core::FaninError::InvalidExplicitDep { index: 0, .. })
        ),
        "a self-dependency"
    );
}

#[test]
fn dedup_set_is_order_independent_beyond_the_linear_limit() {
    let mut a = FaninSet::new();
    let mut b = FaninSet::new();
    for i in 0..100u32 {
        a.add(
            TaskId::new(0, i % 40),
            if i % 3 == 0 {
                DepFlags::WAIT
            } else {
                DepFlags::WAIT_RETAIN
            },
        );
    }
    for i in (0..100u32).rev() {
        b.add(
            TaskId::new(0, i % 40),
            if i % 3 == 0 {
                DepFlags::WAIT
            } else {
                DepFlags::WAIT_RETAIN
            },
        );
    }
    let mut x = a.edges().to_vec();
    let mut y = b.edges().to_vec();
    x.sort_by_key(|e| e.0);
    y.sort_by_key(|e| e.0);
    assert_eq!(x.len(), 40);
    assert_eq!(x, y);
}
