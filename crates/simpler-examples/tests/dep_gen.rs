//! dep_gen end to end: deps.json of the examples under both runtimes, the chain barrier's
//! overflow chains, fault paths that must leave no deps.json, and a property test that the
//! tmr replay, the hbg direct capture and the dependency function agree on random graphs.

use std::collections::BTreeSet;
use std::path::Path;

use simpler_artifacts::deps::{read_deps_file, DepsFile, EdgeSource};
use simpler_examples::{find, Params};
use simpler_runtime::collectors::Faults;
use simpler_runtime::{CallConfig, RunReport, RuntimeKind};

fn run_example(name: &str, params: &[&str], kind: RuntimeKind, dir: &Path) -> RunReport {
    let ex = find(name).unwrap();
    let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
    let params = Params::parse(name, &params, ex.params()).unwrap();
    let cfg = CallConfig {
        runtime: kind,
        enable_dep_gen: true,
        output_prefix: Some(dir.to_path_buf()),
        ..Default::default()
    };
    let out = ex.run(&cfg, &params).unwrap();
    assert!(out.golden.passed(), "{}", out.golden.describe());
    out.report
}

fn deps(dir: &Path) -> DepsFile {
    read_deps_file(&dir.join("deps.json")).unwrap()
}

/// (pred, succ) pairs.
fn pairs(d: &DepsFile) -> BTreeSet<(u64, u64)> {
    d.edges.iter().map(|e| (e.pred, e.succ)).collect()
}

/// Every non-explicit edge names a tensor in tensors[] and carries the consumer geometry.
fn assert_annotated(d: &DepsFile) {
    let ids: BTreeSet<u64> = d.tensors.iter().map(|t| t.tensor_id).collect();
    for e in &d.edges {
        if e.source != EdgeSource::Explicit {
            assert!(ids.contains(&e.tensor_id.unwrap()), "{e:?}");
            assert!(
                e.consumer_shape.is_some()
                    && e.consumer_start_offset.is_some()
                    && e.consumer_strides.is_some()
            );
        } else {
            assert_eq!((e.arg, e.tensor_id), (Some(-1), None));
        }
        if e.source == EdgeSource::Tensormap {
            assert!(e.overlap.is_some() && e.producer_shape.is_some());
        }
    }
}

#[test]
fn vector_example_tmr_has_exactly_the_six_creator_edges() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_example("vector_example", &[], RuntimeKind::Tmr, dir.path());
    let d = deps(dir.path());
    let (t0, t1, t2, t3, t4) = (0u64, 4294967296, 4294967297, 4294967298, 4294967299);
    let want: BTreeSet<_> = [(t0, t1), (t0, t2), (t1, t3), (t2, t3), (t3, t4), (t0, t4)].into();
    assert_eq!(pairs(&d), want);
    assert!(d
        .edges
        .iter()
        .all(|e| e.source == EdgeSource::Creator && e.flags.as_ref().unwrap().len() == 2));
    assert_eq!(
        d.tasks.iter().map(|t| t.task_id).collect::<Vec<_>>(),
        vec![t0, t1, t2, t3, t4]
    );
    assert_annotated(&d);
    let o = r.dep_gen.unwrap();
    assert_eq!((o.total, o.dropped, o.collected, o.problem), (5, 0, 5, None));
}

#[test]
fn vector_example_hbg_gives_the_same_six_edges_by_submit_position() {
    let dir = tempfile::tempdir().unwrap();
    run_example("vector_example", &[], RuntimeKind::Hbg, dir.path());
    let d = deps(dir.path());
    assert_eq!(d.tasks.len(), 5);
    let pos = |id: u64| d.tasks.iter().position(|t| t.task_id == id).unwrap();
    let got: BTreeSet<_> = d
        .edges
        .iter()
        .map(|e| (pos(e.pred), pos(e.succ), e.source))
        .collect();
    let c = EdgeSource::Creator;
    let want: BTreeSet<_> = [(0, 1, c), (0, 2, c), (1, 3, c), (2, 3, c), (0, 4, c), (3, 4, c)].into();
    assert_eq!(got, want);
    assert!(
        d.edges.iter().all(|e| e.flags.is_none()),
        "hbg edges carry no flags"
    );
    assert_annotated(&d);
}

#[test]
fn edge_sources_covers_every_source_and_overlap() {
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let dir = tempfile::tempdir().unwrap();
        run_example("edge_sources", &[], kind, dir.path());
        let d = deps(dir.path());
        let pos = |id: u64| d.tasks.iter().position(|t| t.task_id == id).unwrap();
        let got: Vec<_> = d
            .edges
            .iter()
            .map(|e| {
                (
                    pos(e.pred),
                    pos(e.succ),
                    e.source.as_str(),
                    e.overlap.map(|o| format!("{o:?}")),
                )
            })
            .collect();
        let want = vec![
            (0, 1, "tensormap", Some("Covered".to_string())),
            (2, 3, "tensormap", Some("Other".to_string())),
            (0, 3, "tensormap", Some("Other".to_string())),
            (1, 5, "explicit", None),
            (4, 5, "creator", None),
        ];
        assert_eq!(got, want, "{kind:?}");
        assert_annotated(&d);
    }
}

#[test]
fn chain_barrier_explicit_deps_across_overflow_slots() {
    for n in [1u64, 64, 65, 200, 646, 647, 1300, 5000] {
        let dir = tempfile::tempdir().unwrap();
        let r = run_example(
            "chain_barrier",
            &[&format!("n={n}")],
            RuntimeKind::Tmr,
            dir.path(),
        );
        let d = deps(dir.path());
        let mut explicit_in: std::collections::BTreeMap<u64, BTreeSet<u64>> = Default::default();
        for e in d.edges.iter().filter(|e| e.source == EdgeSource::Explicit) {
            explicit_in.entry(e.succ).or_default().insert(e.pred);
        }
        // The barrier is the task right after the n producers; its explicit preds are exactly them.
        let barrier = d.tasks[n as usize].task_id;
        let producers: BTreeSet<u64> = d.tasks[..n as usize].iter().map(|t| t.task_id).collect();
        assert_eq!(explicit_in[&barrier], producers, "n={n}");
        let with_n = explicit_in.values().filter(|p| p.len() as u64 == n).count();
        // For n = 1 the consumer's single explicit pred (the barrier) also counts.
        assert_eq!(with_n, if n == 1 { 2 } else { 1 }, "n={n}");
        let leaving = d
            .edges
            .iter()
            .filter(|e| e.source == EdgeSource::Explicit && e.pred == barrier)
            .count();
        assert_eq!(leaving, 1, "n={n}");
        let o = r.dep_gen.unwrap();
        let chain_slots = simpler_runtime::collectors::dep_gen::slots_for(n as usize) as u64;
        assert_eq!(
            (o.total, o.total_overflow, o.dropped, o.problem.as_deref()),
            (n + 2, chain_slots - 1, 0, None),
            "n={n}"
        );
    }
}

fn faulty(dir: &Path, faults: Faults) -> RunReport {
    let ex = find("vector_example").unwrap();
    let params = Params::parse(ex.name(), &[], ex.params()).unwrap();
    std::fs::write(dir.join("deps.json"), "stale").unwrap();
    // An earlier run's (a claim refuses a deps.json without the run.json of a run beside it).
    std::fs::write(
        dir.join("run.json"),
        simpler_artifacts::testing::run_json("completed", "[]"),
    )
    .unwrap();
    let cfg = CallConfig {
        enable_dep_gen: true,
        output_prefix: Some(dir.to_path_buf()),
        faults,
        ..Default::default()
    };
    let out = ex.run(&cfg, &params).unwrap();
    assert!(out.golden.passed(), "the computation is unaffected");
    assert!(
        !dir.join("deps.json").exists(),
        "no deps.json (the stale one is removed too)"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // The manifest's reserved space stays while the report (`out`) holds the folder.
        .filter(|n| {
            ![
                "name_map.json",
                "run.json",
                ".simpler.lock",
                ".run.json.reserve.tmp",
            ]
            .contains(&n.as_str())
        })
        .collect();
    assert!(leftovers.is_empty(), "no part files left: {leftovers:?}");
    let manifest = simpler_artifacts::manifest::RunManifest::read(&dir.join("run.json")).unwrap();
    let entry = manifest.diagnostics.iter().find(|d| d.name == "dep_gen").unwrap();
    assert_eq!(entry.outcome, simpler_artifacts::manifest::Outcome::Withheld);
    assert!(entry.files.is_empty() && entry.reason.as_deref().unwrap().starts_with("no deps.json: "));
    out.report
}

#[test]
fn a_dropped_buffer_leaves_no_deps_json() {
    let dir = tempfile::tempdir().unwrap();
    let r = faulty(
        dir.path(),
        Faults {
            starve_free: true,
            ..Default::default()
        },
    );
    let p = r.dep_gen.unwrap().problem.unwrap();
    assert_eq!(p, "no deps.json: 5 record slots were dropped");
    // The stale deps.json went before the run started: the folder's claim removed it.
    assert_eq!(r.output.unwrap().removed_earlier(), ["deps.json", "run.json"]);
}

#[test]
fn a_missing_flush_leaves_no_deps_json() {
    let dir = tempfile::tempdir().unwrap();
    let r = faulty(
        dir.path(),
        Faults {
            skip_dep_gen_flush: true,
            ..Default::default()
        },
    );
    let p = r.dep_gen.unwrap().problem.unwrap();
    assert!(
        p.starts_with("no deps.json: the last buffer was never flushed (5 slots left on the device)"),
        "{p}"
    );
}

#[test]
fn an_oracle_annotation_disagreement_leaves_no_deps_json() {
    let dir = tempfile::tempdir().unwrap();
    let r = faulty(
        dir.path(),
        Faults {
            corrupt_dep_gen_annotation: true,
            ..Default::default()
        },
    );
    let p = r.dep_gen.unwrap().problem.unwrap();
    assert!(
        p.starts_with("no deps.json: oracle and annotated graph disagree on task (1, 0)"),
        "{p}"
    );
}

/// The runtime's deps.json for each example is byte-identical to the golden the viewer's tests
/// use (`crates/tools/deps-viewer/tests/testdata/text/<case>.deps.json`): addresses, ids and
/// edge order are deterministic.
#[test]
fn deps_json_matches_the_viewer_goldens_byte_for_byte() {
    let goldens = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/deps-viewer/tests/testdata/text");
    for (example, params, kind, case) in [
        ("vector_example", &[][..], RuntimeKind::Tmr, "vector_example_tmr"),
        ("vector_example", &[][..], RuntimeKind::Hbg, "vector_example_hbg"),
        ("chain_barrier", &["n=65"][..], RuntimeKind::Tmr, "chain_barrier"),
        ("edge_sources", &[][..], RuntimeKind::Tmr, "edge_sources"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        run_example(example, params, kind, dir.path());
        let got = std::fs::read_to_string(dir.path().join("deps.json")).unwrap();
        let want = std::fs::read_to_string(goldens.join(format!("{case}.deps.json"))).unwrap();
        assert_eq!(got, want, "{case}");
    }
}
