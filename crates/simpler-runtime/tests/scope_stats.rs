//! Scope stats end to end: samples, metadata, metric sanity, and every close path and verdict
//! driven by fault injection, asserting the exact metadata line and which files exist.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use simpler_artifacts::manifest::{FileEntry, Outcome, RunManifest};
use simpler_artifacts::scope_stats::{Phase, Reader, Sample};
use simpler_core::{DType, TaskArgs, TensorCreateInfo};
use simpler_runtime::collectors::Faults;
use simpler_runtime::{
    CallConfig, CoreType, OrchResult, Orchestrator, RunError, RuntimeEnv, RuntimeKind, Worker,
};

const KEYS: [&str; 13] = [
    "site",
    "phase",
    "depth",
    "ring",
    "task_window_start",
    "task_window_end",
    "heap_start",
    "heap_end",
    "dep_pool_start",
    "dep_pool_end",
    "tensormap",
    "run_epoch",
    "buf_seq",
];

fn worker() -> Worker {
    let mut w = Worker::new();
    w.register_kernel(0, "noop", CoreType::Aiv, |_| Ok(())).unwrap();
    w.register_kernel(1, "slow", CoreType::Aiv, |_| {
        std::thread::sleep(Duration::from_secs(3));
        Ok(())
    })
    .unwrap();
    w
}

fn cfg(dir: &Path) -> CallConfig {
    CallConfig {
        enable_scope_stats: true,
        output_prefix: Some(dir.to_path_buf()),
        ..Default::default()
    }
}

fn artifact(dir: &Path) -> PathBuf {
    dir.join("scope_stats/scope_stats.jsonl")
}

fn first_line(dir: &Path) -> String {
    std::fs::read_to_string(artifact(dir))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string()
}

fn samples(dir: &Path) -> Vec<Sample> {
    let mut r = Reader::open(&artifact(dir)).unwrap();
    let mut v = Vec::new();
    while let Some(s) = r.next_sample() {
        v.push(s.unwrap());
    }
    v
}

/// The vector example's shape: one task in the root scope, four in a nested scope.
fn vector_shape(o: &mut Orchestrator) -> OrchResult {
    let ci = TensorCreateInfo::new(&[16384], DType::Float32)?;
    let mut a = TaskArgs::new();
    a.output(ci);
    let c = o.submit_aiv(0, &a)?.output(0);
    o.scope(|o| {
        for _ in 0..4 {
            let mut t = TaskArgs::new();
            t.input(c).output(ci);
            o.submit_aiv(0, &t)?;
        }
        Ok(())
    })
}

fn empty_scopes(o: &mut Orchestrator, n: usize) {
    for _ in 0..n {
        o.scope(|_| ());
    }
}

const DEFAULT_CAPS: &str = "\"task_window_max\":[16384,16384,16384,16384],\"heap_max\":[268435456,268435456,268435456,268435456],\"dep_pool_max\":[16384,16384,16384,16384],\"tensormap_max\":65536";

#[test]
fn four_samples_with_the_configured_capacities() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let mut c = cfg(dir.path());
    let mut env = RuntimeEnv::default();
    env.set("ring_task_window", "1024,2048,4096,8192").unwrap();
    env.set("ring_heap", "1048576,2097152,4194304,8388608").unwrap();
    env.set("ring_dep_pool", "64,128,256,512").unwrap();
    c.runtime_env = env;
    let report = w.run(&c, vector_shape).unwrap();
    assert_eq!(
        first_line(dir.path()),
        "{\"fatal\":false,\"dropped\":0,\"total\":4,\"task_window_max\":[1024,2048,4096,8192],\
         \"heap_max\":[1048576,2097152,4194304,8388608],\"dep_pool_max\":[64,128,256,512],\"tensormap_max\":65536}"
    );
    let s = samples(dir.path());
    let shape: Vec<_> = s.iter().map(|x| (x.phase, x.depth, x.ring)).collect();
    assert_eq!(
        shape,
        vec![
            (Phase::Begin, 0, 0),
            (Phase::Begin, 1, 1),
            (Phase::End, 1, 1),
            (Phase::End, 0, 0)
        ]
    );
    assert_eq!(s[0].site, s[3].site);
    assert!(s[1].site.starts_with("scope_stats.rs:"), "{}", s[1].site);
    assert_eq!(
        (s[2].task_window_start, s[2].task_window_end),
        (0, 4),
        "four tasks on ring 1, none retired yet"
    );
    assert_eq!(s[2].heap_end, 4 * 65536);
    assert_eq!(s[3].task_window_end, 1);
    // Every sample line has exactly the spec's keys, in order, plus run_epoch and buf_seq.
    let text = std::fs::read_to_string(artifact(dir.path())).unwrap();
    for line in text.lines().skip(1) {
        let v: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
        assert_eq!(v.len(), KEYS.len(), "{line}");
        // Keys in spec order: each key appears after the previous one in the raw line.
        let mut at = 0;
        for k in KEYS {
            let needle = format!("\"{k}\":");
            let pos = line[at..]
                .find(&needle)
                .unwrap_or_else(|| panic!("{k} missing or out of order: {line}"));
            at += pos + needle.len();
        }
    }
    let out = report.scope_stats.unwrap();
    assert_eq!(
        (out.verdict.as_str(), out.received, out.retained),
        ("published", 4, 4)
    );
}

#[test]
fn metrics_are_sane_and_heap_counters_monotonic_across_wraps() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let mut c = cfg(dir.path());
    let mut env = RuntimeEnv::default();
    env.set("ring_heap", "16384").unwrap();
    env.set("ring_task_window", "64").unwrap();
    c.runtime_env = env;
    w.run(&c, |o| {
        for _ in 0..20 {
            o.scope(|o| {
                for _ in 0..3 {
                    o.scope(|o| {
                        for _ in 0..5 {
                            let mut a = TaskArgs::new();
                            a.output(TensorCreateInfo::new(&[200], DType::Float32)?);
                            o.submit_aiv(0, &a)?;
                        }
                        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                    })?;
                    let mut a = TaskArgs::new();
                    a.output(TensorCreateInfo::new(&[700], DType::Float32)?);
                    o.submit_aiv(0, &a)?;
                }
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })?;
        }
        Ok(())
    })
    .unwrap();
    let s = samples(dir.path());
    assert_eq!(s.len(), 2 * (1 + 20 + 60));
    let caps = [64i64, 16384, 16384];
    let mut stack: Vec<&Sample> = Vec::new();
    let mut last_heap = [(0u64, 0u64); 4];
    for x in &s {
        let r = x.ring as usize;
        assert!(
            x.heap_start >= last_heap[r].0 && x.heap_end >= last_heap[r].1,
            "heap counters never go back"
        );
        last_heap[r] = (x.heap_start, x.heap_end);
        match x.phase {
            Phase::Begin => stack.push(x),
            Phase::End => {
                let b = stack.pop().expect("paired");
                assert_eq!((b.site.as_str(), b.ring), (x.site.as_str(), x.ring));
                let heads_tails = [
                    (
                        x.task_window_end,
                        b.task_window_start,
                        x.task_window_start,
                        caps[0],
                    ),
                    (
                        x.heap_end as i64,
                        b.heap_start as i64,
                        x.heap_start as i64,
                        caps[1],
                    ),
                    (
                        x.dep_pool_end.unwrap(),
                        b.dep_pool_start.unwrap(),
                        x.dep_pool_start.unwrap(),
                        caps[2],
                    ),
                ];
                for (end_head, begin_tail, end_tail, cap) in heads_tails {
                    let high_water = end_head - begin_tail;
                    let live = end_head - end_tail;
                    assert!(
                        high_water >= live && live >= 0 && live <= cap,
                        "{high_water} {live} {cap}"
                    );
                }
            }
        }
    }
    assert!(stack.is_empty());
    // Ring 2 pushed 300 × 1 KiB through a 16 KiB heap: many wraps, still monotonic.
    assert!(last_heap[2].1 >= 300 * 1024, "{:?}", last_heap[2]);
}

#[test]
fn a_fatal_run_keeps_its_samples_and_unpaired_begins() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let mut c = cfg(dir.path());
    c.runtime_env.set("ring_task_window", "4").unwrap();
    let err = w
        .run(&c, |o| {
            o.scope(|o| {
                for _ in 0..8 {
                    o.submit_dummy(&TaskArgs::new())?;
                }
                Ok(())
            })
        })
        .unwrap_err();
    assert_eq!(err.code(), Some(simpler_runtime::FatalCode::ScopeDeadlock));
    assert_eq!(
        first_line(dir.path()),
        format!(
            "{{\"fatal\":true,\"dropped\":0,\"total\":2,{}}}",
            DEFAULT_CAPS.replace("16384,16384,16384,16384],\"heap", "4,4,4,4],\"heap")
        )
    );
    let phases: Vec<_> = samples(dir.path()).iter().map(|x| (x.phase, x.depth)).collect();
    assert_eq!(
        phases,
        vec![(Phase::Begin, 0), (Phase::Begin, 1)],
        "no end samples after the fatal"
    );
}

#[test]
fn free_queue_dry_drops_everything_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let mut c = cfg(dir.path());
    c.faults = Faults {
        starve_free: true,
        ..Default::default()
    };
    let r = w.run(&c, vector_shape).unwrap();
    assert_eq!(
        first_line(dir.path()),
        format!("{{\"fatal\":false,\"dropped\":4,\"total\":4,{DEFAULT_CAPS}}}")
    );
    assert!(samples(dir.path()).is_empty());
    assert_eq!(r.scope_stats.unwrap().verdict, "partial_safe");
}

#[test]
fn ready_queue_refusal_drops_every_buffer_the_last_one_included() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let mut c = cfg(dir.path());
    c.faults = Faults {
        refuse_ready: true,
        ..Default::default()
    };
    w.run(&c, |o| {
        empty_scopes(o, 599);
        Ok(())
    })
    .unwrap();
    // 1200 records: buffers of 512 are refused twice (1024 dropped), and the partial last
    // buffer's hand-over at orchestration exit is refused too (176 more): counted like a full one.
    assert_eq!(
        first_line(dir.path()),
        format!("{{\"fatal\":false,\"dropped\":1200,\"total\":1200,{DEFAULT_CAPS}}}")
    );
    assert_eq!(samples(dir.path()).len(), 0);
}

#[test]
fn saturated_counters_make_the_counts_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let mut c = cfg(dir.path());
    c.faults = Faults {
        saturate_counters: true,
        ..Default::default()
    };
    let r = w.run(&c, vector_shape).unwrap();
    assert_eq!(
        first_line(dir.path()),
        format!("{{\"fatal\":false,\"dropped\":null,\"total\":null,{DEFAULT_CAPS}}}")
    );
    assert_eq!(r.scope_stats.unwrap().verdict, "partial_cut_unknown");
}

fn hang_after(o: &mut Orchestrator, scopes: usize) -> OrchResult {
    last_task_after(o, scopes, 1)
}

/// `scopes` empty scopes, then one scope with one task of kernel `func_id` (1 = slow).
fn last_task_after(o: &mut Orchestrator, scopes: usize, func_id: u32) -> OrchResult {
    empty_scopes(o, scopes);
    o.scope(|o| {
        o.submit_aiv(func_id, &TaskArgs::new())?;
        Ok(())
    })
}

fn hanging(dir: &Path) -> CallConfig {
    let mut c = cfg(dir);
    c.timeout = Duration::from_millis(300);
    c.faults = Faults {
        abandon_grace: Some(Duration::from_millis(50)),
        ..Default::default()
    };
    c
}

#[test]
fn unproven_close_without_host_samples_removes_only_the_stale_artifact() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("scope_stats")).unwrap();
    std::fs::write(artifact(dir.path()), "stale\n").unwrap();
    // An earlier run's (a claim refuses a recording without the run.json of a run beside it).
    std::fs::write(
        dir.path().join("run.json"),
        simpler_artifacts::testing::run_json("completed", "[]"),
    )
    .unwrap();
    std::fs::write(dir.path().join("scope_stats/keep.txt"), "mine").unwrap();
    let w = worker();
    // The ready queue refuses the hand-over at orchestration exit: no sample reaches the host.
    let mut c = hanging(dir.path());
    c.faults.refuse_ready = true;
    let err = w.run(&c, |o| hang_after(o, 0)).unwrap_err();
    let report = err.report().unwrap();
    assert!(!report.stop_proven);
    assert_eq!(report.scope_stats.as_ref().unwrap().verdict, "not_written");
    assert!(!artifact(dir.path()).exists(), "the stale artifact is gone");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("scope_stats/keep.txt")).unwrap(),
        "mine"
    );
}

/// (phase, depth) of every sample of `hang_after(o, n - 1)`: the root, `n - 1` empty scopes,
/// then the scope of the last task, in the order they were recorded.
fn expected_order(n: usize) -> Vec<(String, u32)> {
    let mut v = vec![("begin".to_string(), 0)];
    for _ in 0..n {
        v.push(("begin".into(), 1));
        v.push(("end".into(), 1));
    }
    v.push(("end".into(), 0));
    v
}

fn order(dir: &Path) -> Vec<(String, u32)> {
    samples(dir)
        .into_iter()
        .map(|s| {
            let phase = if s.phase == Phase::Begin { "begin" } else { "end" };
            (phase.to_string(), s.depth)
        })
        .collect()
}

#[test]
fn the_orchestrations_last_buffer_reaches_the_host_even_when_the_run_hangs() {
    // N scopes well below one buffer (512 records), and above one.
    for n in [10usize, 600] {
        let want = expected_order(n);
        assert_eq!(want.len(), 2 * n + 2);
        let dir = tempfile::tempdir().unwrap();
        let w = worker();
        let err = w
            .run(&hanging(dir.path()), move |o| hang_after(o, n - 1))
            .unwrap_err();
        assert!(!err.report().unwrap().stop_proven);
        let records = want.len();
        assert_eq!(
            first_line(dir.path()),
            format!(
                "{{\"fatal\":null,\"dropped\":null,\"total\":null,\"task_window_max\":null,\"heap_max\":null,\
                 \"dep_pool_max\":null,\"tensormap_max\":null,\"collection_verdict\":\"partial_cut_unknown\",\
                 \"counts_unknown\":true,\"host_received_records\":{records},\"host_retained_records\":{records}}}"
            ),
            "n={n}"
        );
        assert_eq!(order(dir.path()), want, "n={n}: every sample, in order");

        // The same run without the hang: the proven path exports the same samples.
        let proven = tempfile::tempdir().unwrap();
        let r = w
            .run(&cfg(proven.path()), move |o| last_task_after(o, n - 1, 0))
            .unwrap();
        assert_eq!(r.scope_stats.unwrap().verdict, "published");
        assert_eq!(order(proven.path()), want, "n={n}");
        // Same scope sites (the root's is where each run was started).
        let sites = |d: &Path| samples(d).into_iter().map(|s| s.site).collect::<Vec<_>>();
        let (a, b) = (sites(proven.path()), sites(dir.path()));
        assert_eq!(a[1..a.len() - 1], b[1..b.len() - 1]);
    }
}

#[test]
fn hbg_samples_the_growth_of_its_graph_build_on_ring_0() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let mut c = cfg(dir.path());
    c.runtime = RuntimeKind::Hbg;
    let r = w.run(&c, vector_shape).unwrap();
    assert_eq!(
        first_line(dir.path()),
        format!("{{\"fatal\":false,\"dropped\":0,\"total\":4,{DEFAULT_CAPS}}}")
    );
    // Every scope is on ring 0 and nothing is reclaimed while the graph is built: the tails
    // stay at 0 while the heads grow by the scope's tasks and their 65536-byte outputs.
    let got: Vec<_> = samples(dir.path())
        .iter()
        .map(|s| {
            (
                s.depth,
                s.ring,
                s.task_window_start,
                s.task_window_end,
                s.heap_start,
                s.heap_end,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (0, 0, 0, 0, 0, 0),
            (1, 0, 0, 1, 0, 65536),
            (1, 0, 0, 5, 0, 327680),
            (0, 0, 0, 5, 0, 327680),
        ]
    );
    assert_eq!(r.scope_stats.unwrap().verdict, "published");
}

fn background_worker() -> Worker {
    let mut w = worker();
    w.set_collect_across_runs(true);
    w
}

#[test]
fn background_mode_publishes_at_flush_with_eleven_keys() {
    let dir = tempfile::tempdir().unwrap();
    let w = background_worker();
    w.hold_background_writer(true);
    let r = w.run(&cfg(dir.path()), vector_shape).unwrap();
    assert!(r.scope_stats.unwrap().background);
    assert!(
        !artifact(dir.path()).exists(),
        "run() returned before the file exists"
    );
    w.hold_background_writer(false);
    w.flush_diagnostics().unwrap();
    assert_eq!(
        first_line(dir.path()),
        format!(
            "{{\"fatal\":false,\"dropped\":0,\"total\":4,{DEFAULT_CAPS},\"collection_verdict\":\"published\",\
             \"counts_unknown\":false,\"host_received_records\":4,\"host_retained_records\":4}}"
        )
    );
    assert_eq!(samples(dir.path()).len(), 4);
}

#[test]
fn a_background_publication_lands_in_run_json_and_keeps_its_folder_until_then() {
    let dir = tempfile::tempdir().unwrap();
    let w = background_worker();
    w.hold_background_writer(true);
    w.run(&cfg(dir.path()), vector_shape).unwrap();
    let manifest = |dir: &Path| RunManifest::read(&dir.join("run.json")).unwrap();
    let entry = |m: &RunManifest| {
        m.diagnostics
            .iter()
            .find(|d| d.name == "scope_stats")
            .cloned()
            .unwrap()
    };
    let before = manifest(dir.path());
    assert_eq!(entry(&before).outcome, Outcome::Withheld);
    // The file is still to come: a run into the folder is refused, not let remove it.
    match w.run(
        &CallConfig {
            enable_scope_stats: false,
            enable_dep_gen: true,
            ..cfg(dir.path())
        },
        vector_shape,
    ) {
        Err(RunError::OutputFolder(e)) => assert!(e.to_string().contains("is in use by another run"), "{e}"),
        other => panic!("a run took the folder of a pending publication: {other:?}"),
    }
    w.hold_background_writer(false);
    w.flush_diagnostics().unwrap();
    let after = manifest(dir.path());
    assert_eq!(after.run_id, before.run_id);
    let e = entry(&after);
    assert_eq!((e.outcome, e.reason), (Outcome::Written, None));
    let bytes = std::fs::metadata(artifact(dir.path())).unwrap().len();
    assert_eq!(
        e.files,
        vec![FileEntry {
            name: "scope_stats/scope_stats.jsonl".into(),
            bytes
        }]
    );
    assert_eq!(
        simpler_artifacts::manifest::check(&artifact(dir.path())),
        None,
        "no false warning"
    );
    // Published: the folder is free again.
    w.run(
        &CallConfig {
            enable_scope_stats: false,
            enable_dep_gen: true,
            ..cfg(dir.path())
        },
        vector_shape,
    )
    .unwrap();
}

#[test]
fn background_never_overwrites_and_failures_are_sticky() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("scope_stats")).unwrap();
    std::fs::write(artifact(dir.path()), b"someone else's file\n").unwrap();
    let w = background_worker();
    w.run(&cfg(dir.path()), vector_shape).unwrap();
    let err = w.flush_diagnostics().unwrap_err().to_string();
    assert!(
        err.starts_with("scope stats: published=0 partial=0 cut_unknown=0 write_failed=1 quarantined=0"),
        "{err}"
    );
    assert!(err.contains("already exists; it was left untouched"), "{err}");
    assert_eq!(
        std::fs::read(artifact(dir.path())).unwrap(),
        b"someone else's file\n"
    );
    // A later clean run publishes, but the flush keeps failing.
    let dir2 = tempfile::tempdir().unwrap();
    w.run(&cfg(dir2.path()), vector_shape).unwrap();
    let err2 = w.flush_diagnostics().unwrap_err().to_string();
    assert!(
        err2.starts_with("scope stats: published=1 partial=0 cut_unknown=0 write_failed=1"),
        "{err2}"
    );
    assert!(artifact(dir2.path()).exists());
}

#[test]
fn background_loss_is_published_but_fails_the_flush() {
    let dir = tempfile::tempdir().unwrap();
    let w = background_worker();
    let mut c = cfg(dir.path());
    c.faults = Faults {
        host_storage_limit: Some(2),
        ..Default::default()
    };
    w.run(&c, vector_shape).unwrap();
    let err = w.flush_diagnostics().unwrap_err().to_string();
    assert!(err.starts_with("scope stats: published=0 partial=1"), "{err}");
    assert!(first_line(dir.path()).ends_with(
        "\"collection_verdict\":\"partial_safe\",\"counts_unknown\":false,\"host_received_records\":4,\"host_retained_records\":2}"
    ));
    assert_eq!(samples(dir.path()).len(), 2);
}

#[test]
fn a_third_unpublished_run_is_refused_before_it_starts() {
    let w = background_worker();
    w.hold_background_writer(true);
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    w.run(&cfg(dirs[0].path()), vector_shape).unwrap();
    w.run(&cfg(dirs[1].path()), vector_shape).unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let s2 = started.clone();
    match w.run(&cfg(dirs[2].path()), move |_| {
        s2.store(true, Ordering::SeqCst);
        Ok(())
    }) {
        Err(RunError::Refused(why)) => {
            assert_eq!(
                why.message(),
                "2 runs' scope stats are not yet published; call Worker::flush_diagnostics() first"
            );
            assert_eq!(
                why.kind(),
                &simpler_runtime::DiagnosticsErrorKind::Backlog { unpublished: 2 }
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!started.load(Ordering::SeqCst), "refused before it started");
    assert!(
        !dirs[2].path().join("run.json").exists(),
        "no manifest claims a run that never ran"
    );
    w.hold_background_writer(false);
    w.flush_diagnostics().unwrap();
    assert!(artifact(dirs[0].path()).exists() && artifact(dirs[1].path()).exists());
    assert!(!artifact(dirs[2].path()).exists());
}

#[test]
fn background_unproven_close_quarantines() {
    let dir = tempfile::tempdir().unwrap();
    let w = background_worker();
    let err = w.run(&hanging(dir.path()), |o| hang_after(o, 300)).unwrap_err();
    assert_eq!(
        err.report().unwrap().scope_stats.as_ref().unwrap().verdict,
        "quarantined"
    );
    assert!(!artifact(dir.path()).exists(), "nothing is written");
    let flush = w.flush_diagnostics().unwrap_err().to_string();
    assert!(flush.contains("quarantined=1"), "{flush}");
    let dir2 = tempfile::tempdir().unwrap();
    match w.run(&cfg(dir2.path()), vector_shape) {
        Err(RunError::Refused(why)) => {
            assert!(why.message().starts_with("scope stats are quarantined"), "{why}");
            assert_eq!(why.kind(), &simpler_runtime::DiagnosticsErrorKind::Quarantined);
        }
        other => panic!("{other:?}"),
    }
    // Runs without scope stats still work.
    w.run(&CallConfig::default(), vector_shape).unwrap();
}

#[test]
fn a_million_scopes_stream_without_loss() {
    let dir = tempfile::tempdir().unwrap();
    let w = worker();
    let r = w
        .run(&cfg(dir.path()), |o| {
            empty_scopes(o, 999_999);
            Ok(())
        })
        .unwrap();
    let out = r.scope_stats.unwrap();
    assert_eq!(
        (out.verdict.as_str(), out.total, out.dropped, out.retained),
        ("published", Some(2_000_000), Some(0), 2_000_000)
    );
    let text = std::fs::read_to_string(artifact(dir.path())).unwrap();
    assert_eq!(text.lines().count(), 2_000_001);
    assert!(text
        .lines()
        .next()
        .unwrap()
        .starts_with("{\"fatal\":false,\"dropped\":0,\"total\":2000000,"));
}
