//! Shipped workloads end to end: checks under both runtimes, the vector example against the
//! Rust one (wired edges and deps.json), `--from-deps` round trips, and the 100k-task file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use simpler_artifacts::deps::{read_deps_file, DepsFile};
use simpler_core::{DepFlags, TaskId};
use simpler_runtime::config::Settings;
use simpler_runtime::{CallConfig, RuntimeEnv, RuntimeKind};
use simpler_workloads::{load, run_from_deps, run_workload, Outcome, Overrides};

const SHIPPED: [&str; 4] = [
    "vector_example",
    "chain_barrier",
    "paged_attention_decode",
    "synthetic_100k",
];

fn file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads")
        .join(format!("{name}.json"))
}

fn overrides(kind: RuntimeKind) -> Overrides {
    Overrides {
        settings: Settings {
            runtime: Some(kind),
            record_fanin: Some(true),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn run(name: &str, o: &Overrides) -> Outcome {
    let w = load(&file(name)).unwrap();
    run_workload(&w, o).unwrap()
}

/// (pred, succ, flags) of the wired fanin, sorted.
fn wired(report: &simpler_runtime::RunReport) -> Vec<(TaskId, TaskId, DepFlags)> {
    report.wired_edges().unwrap()
}

#[test]
fn every_shipped_workload_passes_its_checks_on_both_runtimes() {
    for name in SHIPPED {
        for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
            let o = Overrides {
                settings: Settings {
                    runtime: Some(kind),
                    ..Default::default()
                },
                ..Default::default()
            };
            let out = run(name, &o);
            assert!(!out.checks.is_empty(), "{name} carries a golden");
            for c in &out.checks {
                assert!(c.passed(), "{name} on {kind:?}: {}", c.describe());
                assert!(c.checked > 0);
            }
            assert_eq!(out.report.completed, out.report.tasks, "{name} on {kind:?}");
            assert_eq!(out.report.runtime, kind);
        }
    }
}

#[test]
fn a_failing_golden_is_reported_with_the_first_mismatch() {
    let text = std::fs::read_to_string(file("vector_example"))
        .unwrap()
        .replace("\"constant\": 47.0", "\"constant\": 48.0");
    let w = simpler_workloads::load_str(&text, "wrong").unwrap();
    let out = run_workload(&w, &Overrides::default()).unwrap();
    assert!(!out.passed());
    assert_eq!(
        out.checks[0].describe(),
        "f: FAILED, 16384 of 16384 elements differ; first at [0]: got 47, expected 48"
    );
}

fn rust_vector_example(kind: RuntimeKind, prefix: Option<&Path>) -> simpler_examples::Outcome {
    let ex = simpler_examples::find("vector_example").unwrap();
    let params = simpler_examples::Params::parse(ex.name(), &[], ex.params()).unwrap();
    let cfg = CallConfig {
        runtime: kind,
        record_fanin: true,
        enable_dep_gen: prefix.is_some(),
        output_prefix: prefix.map(Path::to_path_buf),
        ..Default::default()
    };
    ex.run(&cfg, &params).unwrap()
}

#[test]
fn vector_workload_gives_47_and_the_rust_examples_exact_edges() {
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let out = run("vector_example", &overrides(kind));
        assert_eq!(out.checks.len(), 1);
        assert!(out.checks[0].passed(), "{}", out.checks[0].describe());
        assert_eq!(out.checks[0].checked, 16384);
        let rust = rust_vector_example(kind, None);
        assert_eq!(wired(&out.report), wired(&rust.report), "{kind:?}");
        assert_eq!(out.report.tasks_per_ring, rust.report.tasks_per_ring);
    }
    let out = run("vector_example", &overrides(RuntimeKind::Tmr));
    let [t0, t1, t2, t3, t4] = [
        TaskId::new(0, 0),
        TaskId::new(1, 0),
        TaskId::new(1, 1),
        TaskId::new(1, 2),
        TaskId::new(1, 3),
    ];
    let mut want: Vec<_> = [(t0, t1), (t0, t2), (t1, t3), (t2, t3), (t3, t4), (t0, t4)]
        .map(|(p, s)| (p, s, DepFlags::WAIT_RETAIN))
        .to_vec();
    want.sort();
    assert_eq!(wired(&out.report), want);
    let tasks: Vec<TaskId> = out
        .report
        .fanin_log
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| r.task)
        .collect();
    assert_eq!(tasks, [t0, t1, t2, t3, t4]);
}

#[test]
fn deps_json_of_the_vector_workload_equals_the_rust_examples() {
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let dir = tempfile::tempdir().unwrap();
        let (json_dir, rust_dir) = (dir.path().join("json"), dir.path().join("rust"));
        std::fs::create_dir_all(&json_dir).unwrap();
        std::fs::create_dir_all(&rust_dir).unwrap();
        let o = Overrides {
            settings: Settings {
                runtime: Some(kind),
                enable_dep_gen: Some(true),
                output_prefix: Some(json_dir.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        run("vector_example", &o);
        rust_vector_example(kind, Some(&rust_dir));
        let a = std::fs::read_to_string(json_dir.join("deps.json")).unwrap();
        let b = std::fs::read_to_string(rust_dir.join("deps.json")).unwrap();
        assert_eq!(a, b, "{kind:?}");
        assert_eq!(
            read_deps_file(&json_dir.join("deps.json")).unwrap().edges.len(),
            6
        );
    }
}

/// A deps.json with task ids replaced by submit positions and tensor ids by their order of
/// first appearance in `tasks[]`, so two captures of the same graph compare equal.
fn canonical(f: &DepsFile) -> (Vec<String>, Vec<String>) {
    let pos: BTreeMap<u64, usize> = f.tasks.iter().enumerate().map(|(i, t)| (t.task_id, i)).collect();
    let mut tid: BTreeMap<u64, usize> = BTreeMap::new();
    for t in &f.tasks {
        for a in &t.args {
            if let Some(id) = a.tensor_id {
                let n = tid.len();
                tid.entry(id).or_insert(n);
            }
        }
    }
    let tasks = f
        .tasks
        .iter()
        .map(|t| {
            let args: Vec<String> = t
                .args
                .iter()
                .map(|a| {
                    format!(
                        "{}:{}:{:?}:{:?}:{:?}:{:?}:{:?}",
                        a.idx,
                        a.arg_type.as_str(),
                        a.tensor_id.map(|i| tid[&i]),
                        a.dtype,
                        a.shape,
                        a.start_offset,
                        a.strides
                    )
                })
                .collect();
            format!(
                "{:?} {:?} {:?} [{}]",
                t.scope,
                t.kernel_ids,
                t.block_num,
                args.join(" ")
            )
        })
        .collect();
    let mut edges: Vec<String> = f
        .edges
        .iter()
        .map(|e| {
            format!(
                "{}->{} arg {:?} {} {:?} {:?} t{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                pos[&e.pred],
                pos[&e.succ],
                e.arg,
                e.source.as_str(),
                e.flags,
                e.overlap,
                e.tensor_id.map(|i| tid[&i]),
                e.consumer_dtype,
                e.consumer_shape,
                e.consumer_start_offset,
                e.consumer_strides,
                e.producer_shape,
                e.producer_start_offset,
                e.producer_strides
            )
        })
        .collect();
    edges.sort();
    (tasks, edges)
}

#[test]
fn from_deps_on_each_shipped_workloads_deps_json_reproduces_its_edges() {
    for name in SHIPPED {
        for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
            let dir = tempfile::tempdir().unwrap();
            let (cap, re) = (dir.path().join("capture"), dir.path().join("rerun"));
            std::fs::create_dir_all(&cap).unwrap();
            std::fs::create_dir_all(&re).unwrap();
            // The 100k-task file at 3 of its 100 scopes: same shapes, a test-sized deps.json.
            let params = if name == "synthetic_100k" {
                vec!["S=3".to_string()]
            } else {
                Vec::new()
            };
            let o = Overrides {
                settings: Settings {
                    runtime: Some(kind),
                    enable_dep_gen: Some(true),
                    output_prefix: Some(cap.clone()),
                    ..Default::default()
                },
                params,
                ..Default::default()
            };
            let first = run(name, &o);
            assert!(first.passed());
            let o2 = Overrides {
                settings: Settings {
                    runtime: Some(kind),
                    enable_dep_gen: Some(true),
                    output_prefix: Some(re.clone()),
                    ..Default::default()
                },
                ..Default::default()
            };
            let second = run_from_deps(&cap.join("deps.json"), &o2).unwrap();
            let fd = second.from_deps.as_ref().unwrap();
            assert!(fd.not_reproduced.is_empty(), "{name}: {:?}", fd.not_reproduced);
            assert!(fd.approximations.is_empty(), "{name}: {:?}", fd.approximations);
            let a = read_deps_file(&cap.join("deps.json")).unwrap();
            let b = read_deps_file(&re.join("deps.json")).unwrap();
            assert!(!a.edges.is_empty(), "{name}");
            assert_eq!(canonical(&a), canonical(&b), "{name} on {kind:?}");
            // The live runtime wires a subset of the logical graph (tmr drops producers that
            // retired before the consumer's submit); hbg retires nothing, so it wires all.
            assert_eq!(fd.edges.extra, vec![], "{name} on {kind:?}");
            if kind == RuntimeKind::Hbg {
                assert_eq!(fd.edges.missing, vec![], "{name} on {kind:?}");
            }
        }
    }
}

#[test]
fn the_100k_task_synthetic_file_is_under_2_kb_and_completes() {
    let path = file("synthetic_100k");
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 2048, "{size} bytes");
    let w = load(&path).unwrap();
    assert_eq!(w.task_count(), 100_000);
    let out = run_workload(&w, &Overrides::default()).unwrap();
    assert_eq!((out.report.tasks, out.report.completed), (100_000, 100_000));
    assert!(out.passed());
}

/// Found by a review: every scope of a workload file had the runner's own call site
/// (`runner.rs:99`) as its site, so scope stats, the plan's "set by" column and a fatal could
/// not say which scope of the file drove a resource. A scope's site is now its statement's
/// place in the file (`<workload>:<path>.scope`), the root scope's `<workload>:body`, and every
/// iteration of a `repeat` shares its scope statement's site.
#[test]
fn a_workload_scope_is_named_by_its_statement_in_the_file() {
    let text = r#"{ "runtime_env": { "ring_task_window": 4 },
        "body": [ { "dummy": {} },
                  { "repeat": { "var": "i", "count": 2, "body": [
                      { "scope": { "body": [ { "dummy": {} } ] } } ] } },
                  { "scope": { "body": [ { "repeat": { "var": "j", "count": 8, "body": [ { "dummy": {} } ] } } ] } } ] }"#;
    let w = simpler_workloads::load_str(text, "sites").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = Overrides {
        settings: Settings {
            enable_scope_stats: Some(true),
            output_prefix: Some(dir.path().join("run")),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = run_workload(&w, &o).unwrap_err();
    assert!(
        e.to_string()
            .contains("scope at sites:body[2].scope already holds 3 tasks on ring 1"),
        "{e:#}"
    );
    let samples = std::fs::read_to_string(dir.path().join("run/scope_stats/scope_stats.jsonl")).unwrap();
    let sites: Vec<String> = samples
        .lines()
        .skip(1)
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["site"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        sites,
        [
            "sites:body",
            "sites:body[1].repeat.body[0].scope",
            "sites:body[1].repeat.body[0].scope",
            "sites:body[1].repeat.body[0].scope",
            "sites:body[1].repeat.body[0].scope",
            "sites:body[2].scope",
        ]
    );
}

#[test]
fn file_settings_apply_unless_overridden() {
    let text = r#"{ "runtime": "hbg", "runtime_env": { "ring_dep_pool": [64, 128, 256, 512] },
        "clusters": 2, "constants": { "N": 4 },
        "tensors": [ { "name": "x", "shape": ["N"], "fill": { "iota": { "start": 1, "step": 2 } } },
                     { "name": "y", "shape": ["N"] } ],
        "body": [ { "submit": { "kernel": "copy", "args": [ { "input": "x" }, { "output_existing": "y" } ] } } ],
        "checks": [ { "tensor": "y", "expect": { "formula": "2*k + 1" } } ] }"#;
    let w = simpler_workloads::load_str(text, "settings").unwrap();
    let out = run_workload(&w, &Overrides::default()).unwrap();
    assert_eq!(out.report.runtime, RuntimeKind::Hbg);
    assert_eq!(out.config.clusters, 2);
    assert_eq!(out.report.sizes.dep_pool, [64, 128, 256, 512]);
    assert!(out.passed());
    let o = Overrides {
        settings: Settings {
            runtime: Some(RuntimeKind::Tmr),
            runtime_env: RuntimeEnv::from_pairs(["ring_dep_pool=32"]).unwrap(),
            ..Default::default()
        },
        params: vec!["N=6".into()],
        ..Default::default()
    };
    let out = run_workload(&w, &o).unwrap();
    assert_eq!(out.report.runtime, RuntimeKind::Tmr);
    assert_eq!(out.report.sizes.dep_pool, [32; 4]);
    assert_eq!(out.checks[0].checked, 6);
    assert!(out.passed());
    // Diagnostics from the file.
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("from_file");
    let with_diag = text.replace(
        "\"clusters\": 2,",
        &format!(
            "\"clusters\": 2, \"diagnostics\": {{ \"enable_dep_gen\": true, \"output_prefix\": {:?} }},",
            prefix.display().to_string()
        ),
    );
    std::fs::create_dir_all(&prefix).unwrap();
    let wd = simpler_workloads::load_str(&with_diag, "diag").unwrap();
    let out = run_workload(&wd, &Overrides::default()).unwrap();
    assert!(out.config.enable_dep_gen);
    assert_eq!(read_deps_file(&prefix.join("deps.json")).unwrap().tasks.len(), 1);
    let bad = Overrides {
        params: vec!["M=1".into()],
        ..Default::default()
    };
    assert_eq!(
        run_workload(&w, &bad).unwrap_err().to_string(),
        "the workload has no constant `M`; constants: N"
    );
}

/// Found by a review: `copy`, `add`, `mul` and `add_scalar` refused an input shorter than
/// their output but took a longer one's first elements without a word (X[16] copied into
/// Y[8] passed its check). Any difference is now an error with both counts: at the load for
/// a workload (`errors.rs`), and the kernel's own when a Rust caller submits it.
#[test]
fn an_elementwise_input_longer_than_its_output_is_an_error_not_a_truncation() {
    let text = r#"{ "tensors": [ { "name": "x", "shape": [16], "fill": { "constant": 1.0 } },
                                 { "name": "y", "shape": [8] } ],
        "body": [ { "submit": { "kernel": "copy", "args": [ { "input": "x" }, { "output_existing": "y" } ] } } ] }"#;
    let e = simpler_workloads::load_str(text, "longer").unwrap_err();
    assert_eq!(
        e.to_string(),
        "body[0].submit.args: kernel `copy` takes [IN x, OUT y]: input x has 16 elements but the output has 8"
    );
    // The kernel checks too, for a caller without a file.
    let mut w = simpler_runtime::Worker::new();
    simpler_workloads::kernels::register_library(&mut w).unwrap();
    let x = w.alloc_tensor(&[16], simpler_core::DType::Float32).unwrap();
    let y = w.alloc_tensor(&[8], simpler_core::DType::Float32).unwrap();
    let copy = simpler_workloads::kernels::by_name("copy").unwrap().func_id;
    let e = w
        .run(&CallConfig::default(), move |o| {
            let mut args = simpler_core::TaskArgs::new();
            args.input(x).output_existing(y);
            o.submit_aiv(copy, &args)?;
            Ok(())
        })
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("input x has 16 elements but the output has 8"),
        "{e}"
    );
}
