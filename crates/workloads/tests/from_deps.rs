//! `--from-deps` on hand-written captures: the re-run wires exactly the captured pairs (ids
//! mapped by submit order), and what a capture cannot tell is reported.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use simpler_artifacts::deps::read_deps_file;
use simpler_core::TaskId;
use simpler_runtime::config::Settings;
use simpler_runtime::{RuntimeEnv, RuntimeKind};
use simpler_workloads::{run_from_deps, Overrides};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
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

#[test]
fn vector_shaped_capture_reproduces_its_edge_set() {
    let path = data("vector_shape_deps.json");
    let file = read_deps_file(&path).unwrap();
    let captured: BTreeSet<(u64, u64)> = file.edges.iter().map(|e| (e.pred, e.succ)).collect();
    assert_eq!(captured.len(), 6);
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let out = run_from_deps(&path, &overrides(kind)).unwrap();
        let log = out.report.fanin_log.as_ref().unwrap();
        assert_eq!(log.len(), 5);
        // Map re-run ids back to the captured ones by submit order.
        let back = |id: TaskId| {
            let k = log.iter().position(|r| r.task == id).unwrap();
            file.tasks[k].task_id
        };
        let wired: BTreeSet<(u64, u64)> = log
            .iter()
            .flat_map(|r| r.producers.iter().map(move |&(p, _)| (back(p), back(r.task))))
            .collect();
        assert_eq!(wired, captured, "{kind:?}");
        let fd = out.from_deps.as_ref().unwrap();
        assert!(fd.complete(), "{fd:?}");
        assert_eq!((fd.external_buffers, fd.output_buffers), (3, 4));
        assert_eq!((fd.edges.captured, fd.edges.wired), (6, 6));
        if kind == RuntimeKind::Tmr {
            // Rings from the capture: t0 in the root scope, t1..t4 one scope deeper.
            let ids: Vec<u64> = log.iter().map(|r| r.task.raw()).collect();
            let want: Vec<u64> = file.tasks.iter().map(|t| t.task_id).collect();
            assert_eq!(ids, want);
            assert_eq!(out.report.tasks_per_ring, [1, 4, 0, 0]);
        }
    }
}

#[test]
fn alloc_task_preds_are_reported_as_not_reproduced() {
    let out = run_from_deps(&data("alloc_pred_deps.json"), &overrides(RuntimeKind::Tmr)).unwrap();
    let fd = out.from_deps.as_ref().unwrap();
    assert_eq!(
        fd.not_reproduced,
        vec![
            "task 4294967296 (ring 1, local 0) is not in tasks[] (an alloc_tensors task: dep_gen does not \
             capture them): its 1 creator/tensormap edge(s) and 2 explicit dep(s) are not reproduced, and \
             its buffers were allocated as external tensors"
                .to_string()
        ]
    );
    assert!(!fd.complete());
    assert!(!out.passed());
    // The explicit dep between the two captured manual tasks is kept (WAIT only).
    assert_eq!(fd.edges.captured, 1);
    assert_eq!(fd.edges.wired, 1);
    assert_eq!(fd.edges.missing, vec![]);
    assert_eq!(out.report.tasks, 3);
    assert_eq!(fd.external_buffers, 1);
}

#[test]
fn a_missing_file_names_its_path() {
    let e = run_from_deps(Path::new("/nonexistent/deps.json"), &Overrides::default()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/deps.json: cannot read deps.json: "),
        "{e}"
    );
}

/// A capture naming a buffer of more elements than a shape's `u32` holds is refused, output and
/// external alike; the output was re-created with 16 elements (2^32 + 16 truncated) and the run
/// went on.
#[test]
fn a_buffer_past_u32_elements_is_refused_not_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deps.json");
    let view = r#""dtype": "FLOAT32", "shape": [16], "start_offset": "0", "strides": [1]"#;
    let capture = |creator_edge: bool| {
        let edges = if creator_edge {
            r#"[{"pred": "0", "succ": "1", "arg": 0, "source": "creator", "flags": ["wait", "retain"], "tensor_id": "7", "consumer_dtype": "FLOAT32", "consumer_shape": [16], "consumer_start_offset": "0", "consumer_strides": [1]}]"#
        } else {
            "[]"
        };
        format!(
            r#"{{"tasks": [
  {{"task_id": "0", "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1, "args": [{{"idx": 0, "type": "OUTPUT"}}]}},
  {{"task_id": "1", "scope": "auto", "kernel_ids": [-1, 1, -1], "block_num": 1, "args": [{{"idx": 0, "type": "INPUT", "tensor_id": "7", {view}}}]}}],
 "tensors": [{{"tensor_id": "7", "buffer_addr": "4096", "version": 0, "dtype": "FLOAT32", "buffer_numel": "4294967312"}}],
 "edges": {edges}}}"#
        )
    };
    std::fs::write(&path, capture(true)).unwrap();
    let e = run_from_deps(&path, &Overrides::default()).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "buffer 0x1000 needs 4294967312 elements of FLOAT32; a re-run buffer holds at most 4294967295 (its shape is one u32)"
        ),
        "{e}"
    );
    std::fs::write(&path, capture(false)).unwrap();
    let e = run_from_deps(&path, &Overrides::default()).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "buffer 0x1000 needs 17179869248 bytes; the re-run allocates at most 4294967296 bytes per external buffer"
        ),
        "{e}"
    );
}

#[test]
fn a_flat_capture_larger_than_a_window_gets_a_wider_window_on_tmr() {
    // An hbg capture is all ring 0: re-run under tmr it is one root scope of 17000 tasks.
    let n = 17_000u64;
    let tasks: Vec<String> = (0..n)
        .map(|k| {
            format!(r#"{{"task_id":"{k}","scope":"auto","kernel_ids":[-1,6,-1],"block_num":1,"args":[]}}"#)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deps.json");
    std::fs::write(
        &path,
        format!(r#"{{"tasks":[{}],"tensors":[],"edges":[]}}"#, tasks.join(",")),
    )
    .unwrap();
    let out = run_from_deps(&path, &Overrides::default()).unwrap();
    let fd = out.from_deps.as_ref().unwrap();
    assert_eq!(out.report.completed, n);
    assert_eq!(out.report.sizes.task_window[0], 32768);
    assert_eq!(
        fd.approximations,
        vec![
            "ring 0's task window raised from 16384 to 32768: one re-run scope holds 17000 tasks (deps.json \
             does not show where sibling scopes began; --runtime-env ring_task_window=... overrides)"
                .to_string()
        ]
    );
    assert!(fd.complete());
    // An explicit window is the user's choice: the scope admission fatal says what to do.
    let o = Overrides {
        settings: Settings {
            runtime_env: RuntimeEnv::from_pairs(["ring_task_window=16384"]).unwrap(),
            ..Default::default()
        },
        ..Default::default()
    };
    let e = run_from_deps(&path, &o).unwrap_err();
    assert!(
        e.to_string().contains("raise runtime_env ring_task_window"),
        "{e}"
    );
}
