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

/// `vector_shape_deps.json` after `edit`, written to a file of `dir`.
fn edited(dir: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let text = std::fs::read_to_string(data("vector_shape_deps.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

/// A capture no dep_gen writer produces is refused with the file, the element (its index and
/// id) and the field; each of these was re-run and exited 0 (a ring-9 task on ring 3, a task
/// listed twice run twice, a reordered tasks[] blamed on "missing" tensors, a kernel id -7 as no
/// kernel, a duplicate tensor silently replaced), and 40 arguments stopped the run with fatal 5
/// naming no task.
#[test]
fn a_malformed_capture_is_refused_naming_the_file_task_and_field() {
    use serde_json::{json, Value};
    let dir = tempfile::tempdir().unwrap();
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit, String)> = vec![
        (
            "kernel_id.json",
            Box::new(|v| v["tasks"][0]["kernel_ids"] = json!([-1, -7, -1])),
            "tasks[0] (task_id 0): kernel_ids[1]: -7; a kernel id is -1 (an inactive subslot) or 0 and above".into(),
        ),
        (
            "ring9.json",
            Box::new(|v| v["tasks"][1]["task_id"] = json!((9u64 << 32).to_string())),
            "tasks[1] (task_id 38654705664): task_id: ring 9 (a task id is ring << 32 | local); the runtime has \
             rings 0 to 3"
                .into(),
        ),
        (
            "dup_task.json",
            Box::new(|v| {
                let t = v["tasks"][1].clone();
                v["tasks"].as_array_mut().unwrap().push(t);
            }),
            "tasks[5] (task_id 4294967296): task_id: repeats tasks[1]'s; a capture lists each task once".into(),
        ),
        (
            "reversed.json",
            Box::new(|v| v["tasks"].as_array_mut().unwrap().reverse()),
            "tasks[1] (task_id 4294967298): task_id: local id 2 of ring 1 comes after tasks[0]'s 3; dep_gen writes \
             tasks[] in submit order, in which a ring's local ids increase, and the re-run submits in file order, \
             so a reordered tasks[] cannot be re-run"
                .into(),
        ),
        (
            "root_last.json",
            Box::new(|v| {
                let t = v["tasks"].as_array_mut().unwrap().remove(0);
                v["tasks"].as_array_mut().unwrap().push(t);
            }),
            "edges[0] (creator edge, pred 0, succ 4294967296): its pred is tasks[4], not before its succ tasks[0]; \
             a task depends only on tasks submitted before it, so tasks[] is not in submit order"
                .into(),
        ),
        (
            "dup_tensor.json",
            Box::new(|v| {
                let mut t = v["tensors"][0].clone();
                t["buffer_numel"] = json!("99");
                v["tensors"].as_array_mut().unwrap().push(t);
            }),
            "tensors[7] (tensor_id 12295): tensor_id: repeats tensors[0]'s; a capture lists each tensor once".into(),
        ),
        (
            "many_args.json",
            Box::new(|v| {
                let arg = v["tasks"][0]["args"][0].clone();
                let args: Vec<Value> = (0..40)
                    .map(|k| {
                        let mut a = arg.clone();
                        a["idx"] = json!(k);
                        a
                    })
                    .collect();
                v["tasks"][0]["args"] = Value::Array(args);
            }),
            "tasks[0] (task_id 0): args: 40 tensor arguments; a task takes at most 32".into(),
        ),
        (
            "dup_slot.json",
            Box::new(|v| v["tasks"][0]["args"][1]["idx"] = json!(0)),
            "tasks[0] (task_id 0): args[1].idx: 0 repeats args[0]'s; each argument slot is listed once".into(),
        ),
    ];
    // Every case is checked before failing, so a failure lists all that do not hold.
    let mut wrong = Vec::new();
    for (name, edit, want) in cases {
        let path = edited(dir.path(), name, edit);
        let got = match run_from_deps(&path, &overrides(RuntimeKind::Tmr)) {
            Ok(_) => "re-ran".to_string(),
            Err(e) if matches!(e.kind(), simpler_workloads::ErrorKind::NotReproducible(_)) => e.to_string(),
            Err(e) => format!("other error: {e}"),
        };
        let want = format!("{}: {want}", path.display());
        if got != want {
            wrong.push(format!("{name}:\n  got  {got}\n  want {want}"));
        }
    }
    assert!(wrong.is_empty(), "{} case(s):\n{}", wrong.len(), wrong.join("\n"));
}

/// A dtype this runtime does not know (from a newer writer, say) is approximated and said, with
/// where the first one is; it was replaced silently.
#[test]
fn an_unknown_dtype_is_approximated_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited(dir.path(), "deps.json", |v| {
        v["tasks"][0]["args"][1]["dtype"] = "FLOAT99".into();
        v["tasks"][3]["args"][0]["dtype"] = "FLOAT99".into();
        v["tensors"][2]["dtype"] = "FLOAT77".into();
    });
    let out = run_from_deps(&path, &overrides(RuntimeKind::Hbg)).unwrap();
    let fd = out.from_deps.as_ref().unwrap();
    assert_eq!(
        fd.approximations,
        vec![
            "1 tensor(s) have a dtype this runtime does not know: their buffers are re-run as UINT8, one byte per \
             element of buffer_numel (first: tensors[2] (tensor_id 786439) dtype `FLOAT77`)"
                .to_string(),
            "2 argument(s) have a dtype this runtime does not know: their views are re-run in their buffer's dtype \
             (first: tasks[0] (task_id 0) args[1].dtype `FLOAT99`)"
                .to_string(),
        ]
    );
    // The graph itself is reproduced.
    assert!(fd.complete(), "{fd:?}");
    assert_eq!((fd.edges.captured, fd.edges.wired), (6, 6));
}

/// The capture-level refusals name the file, as its read errors do.
#[test]
fn capture_level_refusals_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edges_only.json");
    std::fs::write(&path, r#"{"edges": []}"#).unwrap();
    let e = run_from_deps(&path, &Overrides::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: deps.json has no tasks[]: task kinds, kernels (and so task names) and block counts are unknown: \
             there is nothing to re-run",
            path.display()
        )
    );
    let path = edited(dir.path(), "huge.json", |v| {
        v["tensors"][0]["buffer_numel"] = "4294967296".into()
    });
    let e = run_from_deps(&path, &Overrides::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: buffer 0x1000 needs 17179869184 bytes; the re-run allocates at most 4294967296 bytes per external buffer",
            path.display()
        )
    );
}

/// An argument that reads a buffer before the task that created it (through another tensor of
/// the buffer) is reported as that, not as a tensor missing from tensors[].
#[test]
fn a_read_before_the_creator_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deps.json");
    let view = r#""dtype": "FLOAT32", "shape": [16], "start_offset": "0", "strides": [1]"#;
    std::fs::write(
        &path,
        format!(
            r#"{{"tasks": [
  {{"task_id": "0", "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1, "args": [{{"idx": 0, "type": "INPUT", "tensor_id": "7", {view}}}]}},
  {{"task_id": "1", "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1, "args": [{{"idx": 0, "type": "OUTPUT"}}]}},
  {{"task_id": "2", "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1, "args": [{{"idx": 0, "type": "INPUT", "tensor_id": "8", {view}}}]}}],
 "tensors": [{{"tensor_id": "7", "buffer_addr": "4096", "version": 0, "dtype": "FLOAT32", "buffer_numel": "16"}},
             {{"tensor_id": "8", "buffer_addr": "4096", "version": 1, "dtype": "FLOAT32", "buffer_numel": "16"}}],
 "edges": [{{"pred": "1", "succ": "2", "arg": 0, "source": "creator", "flags": ["wait", "retain"], "tensor_id": "8", "consumer_dtype": "FLOAT32", "consumer_shape": [16], "consumer_start_offset": "0", "consumer_strides": [1]}}]}}"#
        ),
    )
    .unwrap();
    let out = run_from_deps(&path, &overrides(RuntimeKind::Hbg)).unwrap();
    let fd = out.from_deps.as_ref().unwrap();
    assert_eq!(
        fd.not_reproduced,
        vec![
            "1 argument(s) read a buffer before the task that created it (the pred of its creator edge) in tasks[] \
             and were left out (first: tasks[0] (task_id 0))"
                .to_string()
        ]
    );
}
