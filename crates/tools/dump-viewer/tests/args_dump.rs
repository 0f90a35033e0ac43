//! The args dump end to end: runs on both runtimes with `dump_args` at every level, read back
//! through the viewer's library (selection, values, `.npy` export, comparisons), with exact
//! counts for the selections and the losses.

use std::path::Path;

use simpler_artifacts::args_dump::{ArgsDumpManifest, BIN_FILE};
use simpler_artifacts::manifest::Outcome;
use simpler_core::{DType, TaskArgs, Tensor, TensorCreateInfo};
use simpler_dump_viewer::{self as viewer, Args, ErrorKind, Format};
use simpler_examples::vector_example::{add, add_scalar, mul};
use simpler_runtime::config::DumpArgsLevel;
use simpler_runtime::{CallConfig, CoreType, KernelCtx, KernelError, RunReport, RuntimeKind, Worker};

const N: u32 = 4096;

/// A deliberately wrong `mul`: element 1000 is off by one.
fn wrong_mul(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    mul(ctx)?;
    let out = ctx.view::<f32>(2)?;
    out.set(1000, out.get(1000) + 1.0);
    Ok(())
}

/// Each SPMD block adds 1 to its own quarter of the inout tensor (blocks write disjoint slices).
fn bump_slice(ctx: &KernelCtx<'_>) -> Result<(), KernelError> {
    let x = ctx.view::<f32>(0)?;
    let per = x.len() / u64::from(ctx.block_num());
    let from = per * u64::from(ctx.block_idx());
    for k in from..from + per {
        x.set(k, x.get(k) + 1.0);
    }
    Ok(())
}

type Kernel = fn(&KernelCtx<'_>) -> Result<(), KernelError>;

fn cfg(runtime: RuntimeKind, level: DumpArgsLevel, dir: &Path) -> CallConfig {
    CallConfig {
        runtime,
        dump_args: level,
        output_prefix: Some(dir.to_path_buf()),
        ..CallConfig::default()
    }
}

/// The vector example's graph (f = (a+b+1)·(a+b+2) + (a+b) = 47) with the given `mul`;
/// `select` marks the dump selection of each task (by task number 0..5).
fn vector_run(
    cfg: &CallConfig,
    mul_kernel: Kernel,
    select: fn(usize, &mut TaskArgs<'_>),
) -> (RunReport, Vec<f32>) {
    let mut w = Worker::new();
    w.register_kernel(0, "kernel_add", CoreType::Aiv, add).unwrap();
    w.register_kernel(1, "kernel_add_scalar", CoreType::Aiv, add_scalar)
        .unwrap();
    w.register_kernel(2, "kernel_mul", CoreType::Aiv, mul_kernel)
        .unwrap();
    let a = w.alloc_tensor(&[N], DType::Float32).unwrap();
    let b = w.alloc_tensor(&[N], DType::Float32).unwrap();
    let f = w.alloc_tensor(&[N], DType::Float32).unwrap();
    w.fill_with(&a, |_| 2.0).unwrap();
    w.fill_with(&b, |_| 3.0).unwrap();
    let report = w
        .run(cfg, move |orch| {
            let ci = TensorCreateInfo::new(&[N], DType::Float32)?;
            let mut t0 = TaskArgs::new();
            t0.input(a).input(b).output(ci);
            select(0, &mut t0);
            let c = orch.submit_aiv(0, &t0)?.output(0);
            orch.scope(|o| {
                let mut t1 = TaskArgs::new();
                t1.input(c).output(ci).scalar_f32(1.0).scalar_u32(3);
                select(1, &mut t1);
                let d = o.submit_aiv(1, &t1)?.output(0);
                let mut t2 = TaskArgs::new();
                t2.input(c).output(ci).scalar_f32(2.0).scalar_u32(3);
                select(2, &mut t2);
                let e = o.submit_aiv(1, &t2)?.output(0);
                let mut t3 = TaskArgs::new();
                t3.input(d).input(e).output(ci).scalar_u32(3);
                select(3, &mut t3);
                let g = o.submit_aiv(2, &t3)?.output(0);
                let mut t4 = TaskArgs::new();
                t4.input(g).input(c).output_existing(f);
                select(4, &mut t4);
                o.submit_aiv(0, &t4)?;
                Ok(())
            })
        })
        .unwrap();
    let got = w.read::<f32>(&f).unwrap();
    (report, got)
}

fn no_selection(_: usize, _: &mut TaskArgs<'_>) {}

fn manifest(dir: &Path) -> ArgsDumpManifest {
    viewer::open(&dir.join("args_dump")).unwrap().manifest
}

/// (task, stage, role, arg, bin_size) of every entry, sorted.
fn entries(m: &ArgsDumpManifest) -> Vec<(String, String, String, u32, u64)> {
    let mut v: Vec<_> = m
        .args
        .iter()
        .map(|e| {
            (
                e.task_id.clone(),
                e.stage.clone(),
                e.role.clone(),
                e.arg_index,
                e.bin_size,
            )
        })
        .collect();
    v.sort();
    v
}

fn read_npy_f32(path: &Path) -> (String, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + hlen) % 64, 0, "the header is padded to 64 bytes");
    let header = String::from_utf8(bytes[10..10 + hlen].to_vec()).unwrap();
    let data = bytes[10 + hlen..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (header, data)
}

const F_TASK: &str = "0x0000000100000003";

/// The id of vector task `n` (0..5): tmr puts t0 in ring 0 and the inner scope in ring 1, hbg
/// has one ring.
fn tid(runtime: RuntimeKind, n: u32) -> String {
    match (runtime, n) {
        (RuntimeKind::Tmr, 0) => "0x0000000000000000".into(),
        (RuntimeKind::Tmr, n) => format!("0x{:016x}", (1u64 << 32) | u64::from(n - 1)),
        (RuntimeKind::Hbg, n) => format!("0x{n:016x}"),
    }
}
const G_TASK: &str = "0x0000000100000002";

#[test]
fn level_2_dumps_every_argument_and_f_exports_as_the_golden_on_both_runtimes() {
    for runtime in RuntimeKind::ALL {
        let dir = tempfile::tempdir().unwrap();
        let (report, got) = vector_run(&cfg(runtime, DumpArgsLevel::Full, dir.path()), mul, no_selection);
        assert!(got.iter().all(|&x| x == 47.0));
        let o = report.args_dump.as_ref().unwrap();
        assert_eq!(
            (o.records, o.dropped_records, o.truncated_args),
            (18, 0, 0),
            "{runtime:?}"
        );
        let m = manifest(dir.path());
        let size = u64::from(N) * 4;
        let mut expected = Vec::new();
        let t = |n: u32| tid(runtime, n);
        for (task, ins, out, scalars) in [
            (0u32, 2u32, 2u32, 0u32),
            (1, 1, 1, 2),
            (2, 1, 1, 2),
            (3, 2, 2, 1),
            (4, 2, 2, 0),
        ] {
            for i in 0..ins {
                expected.push((
                    t(task),
                    "before_dispatch".to_string(),
                    "input".to_string(),
                    i,
                    size,
                ));
            }
            expected.push((t(task), "after_completion".into(), "output".into(), out, size));
            let nt = if ins == 2 { 3 } else { 2 };
            for j in 0..scalars {
                let idx = if task == 3 { nt } else { nt + j };
                expected.push((t(task), "before_dispatch".into(), "input".into(), idx, 0));
            }
        }
        expected.sort();
        assert_eq!(entries(&m), expected, "{runtime:?}");
        assert_eq!(
            (
                m.dump_args_level,
                m.total_args,
                m.before_dispatch,
                m.after_completion
            ),
            (2, 18, 13, 5)
        );
        assert_eq!((m.input_args, m.output_args, m.inout_args), (13, 5, 0));
        assert_eq!(m.complete, Some(true));
        assert_eq!(m.bin_file.as_deref(), Some(BIN_FILE));
        let bin_len = std::fs::metadata(dir.path().join("args_dump").join(BIN_FILE))
            .unwrap()
            .len();
        assert_eq!(bin_len, 13 * size);
        // Scalars are captured once, with their dtype and value.
        let s = m
            .args
            .iter()
            .find(|e| e.task_id == t(2) && e.arg_index == 2)
            .unwrap();
        assert_eq!(
            (s.kind.as_str(), s.dtype.as_str(), s.value.clone()),
            ("scalar", "FLOAT32", Some(serde_json::json!(2.0)))
        );
        let s = m
            .args
            .iter()
            .find(|e| e.task_id == t(2) && e.arg_index == 3)
            .unwrap();
        assert_eq!(
            (s.dtype.as_str(), s.value.clone()),
            ("UINT32", Some(serde_json::json!(3)))
        );
        assert!(m.args.iter().all(|e| e.func_id.len() == 1));

        // f through the viewer: --task … --role output --export.
        let out = dir.path().join("exported");
        let args = Args {
            dir: Some(dir.path().to_path_buf()),
            task: Some(t(4)),
            role: Some("output".into()),
            export: true,
            format: "npy".into(),
            out: Some(out.clone()),
            ..Args::default()
        };
        let mut text = Vec::new();
        viewer::run_to(&args, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("Filtered: 1/18 args"), "{text}");
        let npy = out.join(format!("task_{}_after_out2.npy", t(4)));
        let (header, f) = read_npy_f32(&npy);
        assert!(
            header.starts_with(&format!(
                "{{'descr': '<f4', 'fortran_order': False, 'shape': ({N},), }}"
            )),
            "{header}"
        );
        assert_eq!(f.len(), N as usize);
        assert!(
            f.iter().all(|&x| x == 47.0),
            "f read back from the dump equals the golden"
        );
        numpy_loads(&npy);
        // The raw export is the payload bytes.
        let raw = viewer::export(
            &viewer::open(&dir.path().join("args_dump")).unwrap(),
            &[m.args
                .iter()
                .position(|e| e.task_id == t(4) && e.role == "output")
                .unwrap()],
            Format::Raw,
            &out,
        )
        .unwrap();
        let bytes = std::fs::read(&raw[0]).unwrap();
        assert_eq!(bytes.len(), N as usize * 4);
        assert!(bytes
            .chunks_exact(4)
            .all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) == 47.0));
    }
}

/// NumPy opens the export and sees 47.0 everywhere; skipped (with the reason) only when NumPy
/// is not installed and cannot be.
fn numpy_loads(npy: &Path) {
    let has = |py: &str| {
        std::process::Command::new(py)
            .args(["-c", "import numpy"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has("python3") {
        let _ = std::process::Command::new("python3")
            .args(["-m", "pip", "install", "-q", "numpy"])
            .status();
        if !has("python3") {
            eprintln!(
                "SKIPPED the NumPy check: python3 with numpy is not available and pip could not install it"
            );
            return;
        }
    }
    let script = format!(
        "import numpy as np; a = np.load({:?}); assert a.dtype == np.float32, a.dtype; \
         assert a.shape == ({N},), a.shape; assert (a == 47.0).all(); print('numpy ok')",
        npy.display().to_string()
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "numpy failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "numpy ok");
}

#[test]
fn a_wrong_kernel_shows_its_first_wrong_element() {
    let good = tempfile::tempdir().unwrap();
    let bad = tempfile::tempdir().unwrap();
    let (_, _) = vector_run(
        &cfg(RuntimeKind::Tmr, DumpArgsLevel::Full, good.path()),
        mul,
        no_selection,
    );
    let (_, got) = vector_run(
        &cfg(RuntimeKind::Tmr, DumpArgsLevel::Full, bad.path()),
        wrong_mul,
        no_selection,
    );
    assert_eq!(got[1000], 48.0);
    // Against the golden: f is wrong at element 1000 only.
    let args = Args {
        dir: Some(bad.path().to_path_buf()),
        task: Some(F_TASK.into()),
        role: Some("output".into()),
        expect: Some("47".parse().unwrap()),
        format: "npy".into(),
        ..Args::default()
    };
    let mut text = Vec::new();
    let err = viewer::run_to(&args, &mut text).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Differs { count: 1, .. }));
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("DIFFERS in 1 of 4096 elements; first at [1000] (flat 1000): got 48 vs expected 47"),
        "{text}"
    );
    // Against a good run: the first task whose output differs is the wrong kernel's (g), and
    // its inputs are equal.
    let args = Args {
        dir: Some(bad.path().to_path_buf()),
        task: Some(G_TASK.into()),
        diff_with: Some(good.path().to_path_buf()),
        format: "npy".into(),
        ..Args::default()
    };
    let mut text = Vec::new();
    let err = viewer::run_to(&args, &mut text).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Differs { count: 1, .. }));
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains(&format!(
            "before task {G_TASK} input arg 0: equal (4096 elements)"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "before task {G_TASK} input arg 1: equal (4096 elements)"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "after task {G_TASK} output arg 2: DIFFERS in 1 of 4096 elements; first at [1000] (flat 1000): this 43 vs other 42"
        )),
        "{text}"
    );
    // One element by index.
    let m = manifest(bad.path());
    let i = m
        .args
        .iter()
        .position(|e| e.task_id == G_TASK && e.role == "output")
        .unwrap();
    let mut text = Vec::new();
    viewer::values(
        &viewer::open(&bad.path().join("args_dump")).unwrap(),
        i,
        Some("1000"),
        &mut text,
    )
    .unwrap();
    assert!(String::from_utf8(text)
        .unwrap()
        .contains("element [1000] (flat 1000) = 43"));
}

/// t0 unmarked; t1 `dump_args()` (tensors 0,1 and scalars 2,3); t2 `dump_arg(2)` (scalar 2
/// only); t3 `dump_arg(0).dump_arg(2)` (input d and output g); t4 unmarked.
fn partial_selection(task: usize, a: &mut TaskArgs<'_>) {
    match task {
        1 => {
            a.dump_args();
        }
        2 => {
            a.dump_arg(2);
        }
        3 => {
            a.dump_arg(0).dump_arg(2);
        }
        _ => {}
    }
}

#[test]
fn level_1_dumps_exactly_the_selection_and_level_3_every_record_with_selected_payloads() {
    let size = u64::from(N) * 4;
    for runtime in RuntimeKind::ALL {
        let (t1, t2, t3) = (tid(runtime, 1), tid(runtime, 2), tid(runtime, 3));
        let (t1, t2, t3) = (t1.as_str(), t2.as_str(), t3.as_str());
        let dir = tempfile::tempdir().unwrap();
        vector_run(
            &cfg(runtime, DumpArgsLevel::Partial, dir.path()),
            mul,
            partial_selection,
        );
        let m = manifest(dir.path());
        let b = |t: &str, role: &str, arg, bytes| {
            let stage = if role == "output" {
                "after_completion"
            } else {
                "before_dispatch"
            };
            (t.to_string(), stage.to_string(), role.to_string(), arg, bytes)
        };
        let mut expected = vec![
            b(t1, "input", 0, size),
            b(t1, "output", 1, size),
            b(t1, "input", 2, 0),
            b(t1, "input", 3, 0),
            b(t2, "input", 2, 0),
            b(t3, "input", 0, size),
            b(t3, "output", 2, size),
        ];
        expected.sort();
        assert_eq!(entries(&m), expected, "level 1 on {runtime:?}");
        assert_eq!(m.dump_args_level, 1);

        let dir = tempfile::tempdir().unwrap();
        vector_run(
            &cfg(runtime, DumpArgsLevel::Hybrid, dir.path()),
            mul,
            partial_selection,
        );
        let m = manifest(dir.path());
        assert_eq!(
            (m.total_args, m.dump_args_level),
            (18, 3),
            "level 3 keeps every record"
        );
        let mut with_payload: Vec<_> = m
            .args
            .iter()
            .filter(|e| e.bin_size > 0)
            .map(|e| (e.task_id.clone(), e.arg_index))
            .collect();
        with_payload.sort();
        assert_eq!(
            with_payload,
            [
                (t1.to_string(), 0),
                (t1.to_string(), 1),
                (t3.to_string(), 0),
                (t3.to_string(), 2)
            ],
            "level 3: payload exactly for the selected tensors"
        );
        let bin = std::fs::metadata(dir.path().join("args_dump").join(BIN_FILE))
            .unwrap()
            .len();
        assert_eq!(bin, 4 * size);
    }
    // Level 3 without any selection: records only, no payload file.
    let dir = tempfile::tempdir().unwrap();
    vector_run(
        &cfg(RuntimeKind::Tmr, DumpArgsLevel::Hybrid, dir.path()),
        mul,
        no_selection,
    );
    let m = manifest(dir.path());
    assert_eq!((m.total_args, m.bin_file.clone()), (18, None));
    assert!(!dir.path().join("args_dump").join(BIN_FILE).exists());
}

#[test]
fn a_buffer_starved_run_reports_its_losses_exactly() {
    let size = u64::from(N) * 4;
    // No buffer ever: every record (13 tensors, 5 scalars) and every payload byte is lost.
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg(RuntimeKind::Tmr, DumpArgsLevel::Full, dir.path());
    c.faults.starve_free = true;
    let (report, _) = vector_run(&c, mul, no_selection);
    let o = report.args_dump.as_ref().unwrap();
    assert_eq!(
        (o.records, o.dropped_records, o.dropped_bytes),
        (0, 18, 13 * size)
    );
    let entry = report.diagnostics.iter().find(|d| d.name == "args_dump").unwrap();
    assert_eq!(entry.outcome, Outcome::Partial);
    assert!(entry
        .reason
        .as_deref()
        .unwrap()
        .contains(&format!("18 records ({} payload bytes) were dropped", 13 * size)));
    let m = manifest(dir.path());
    assert_eq!(
        (m.total_args, m.dropped_records, m.dropped_bytes, m.complete),
        (0, 18, 13 * size, Some(false))
    );

    // The ready queue refuses every buffer: the same exact losses, counted at hand-over.
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg(RuntimeKind::Hbg, DumpArgsLevel::Full, dir.path());
    c.faults.refuse_ready = true;
    let (report, _) = vector_run(&c, mul, no_selection);
    let o = report.args_dump.as_ref().unwrap();
    assert_eq!(
        (o.records, o.dropped_records, o.dropped_bytes),
        (0, 18, 13 * size)
    );

    // Buffers of 4096 bytes: every 16 KiB payload keeps its first 4096 bytes.
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg(RuntimeKind::Hbg, DumpArgsLevel::Full, dir.path());
    c.faults.args_dump_buffer_bytes = Some(4096);
    let (report, _) = vector_run(&c, mul, no_selection);
    let o = report.args_dump.as_ref().unwrap();
    assert_eq!(
        (o.records, o.dropped_records, o.truncated_args, o.truncated_bytes),
        (18, 0, 13, 13 * (size - 4096))
    );
    let m = manifest(dir.path());
    assert_eq!(
        (m.truncated_args, m.truncated_bytes, m.complete),
        (13, 13 * (size - 4096), Some(false))
    );
    assert!(m
        .args
        .iter()
        .filter(|e| !e.is_scalar())
        .all(|e| e.truncated && e.bin_size == 4096));
    assert_eq!(
        report
            .diagnostics
            .iter()
            .find(|d| d.name == "args_dump")
            .unwrap()
            .outcome,
        Outcome::Partial
    );
}

#[test]
fn spmd_inout_is_captured_once_per_stage_and_diffs_before_against_after() {
    for runtime in RuntimeKind::ALL {
        let dir = tempfile::tempdir().unwrap();
        let mut w = Worker::new();
        w.register_kernel(0, "bump_slice", CoreType::Aiv, bump_slice)
            .unwrap();
        let x: Tensor = w.alloc_tensor(&[64, 16], DType::Float32).unwrap();
        w.fill_with(&x, |k| k as f64).unwrap();
        let report = w
            .run(&cfg(runtime, DumpArgsLevel::Full, dir.path()), move |o| {
                let mut a = TaskArgs::new();
                a.inout(x).block_num(4);
                o.submit_aiv(0, &a)?;
                Ok(())
            })
            .unwrap();
        assert_eq!(report.args_dump.as_ref().unwrap().records, 2);
        let m = manifest(dir.path());
        assert_eq!(m.inout_args, 2);
        let dump = viewer::open(&dir.path().join("args_dump")).unwrap();
        let before = viewer::decode(
            &dump,
            &m.args
                .iter()
                .find(|e| e.stage == "before_dispatch")
                .unwrap()
                .clone(),
        )
        .unwrap()
        .unwrap();
        let after = viewer::decode(
            &dump,
            &m.args
                .iter()
                .find(|e| e.stage == "after_completion")
                .unwrap()
                .clone(),
        )
        .unwrap()
        .unwrap();
        assert_eq!(before, (0..1024).map(f64::from).collect::<Vec<_>>());
        assert_eq!(
            after,
            (0..1024).map(|k| f64::from(k) + 1.0).collect::<Vec<_>>(),
            "every block's slice is in"
        );
        let mut text = Vec::new();
        let (pairs, differ) = viewer::diff_inout(&dump, &[0, 1], 0.0, &mut text).unwrap();
        assert_eq!((pairs, differ), (1, 1));
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.contains("DIFFERS in 1024 of 1024 elements; first at [0, 0] (flat 0): before 0 vs after 1; max |diff| 1"),
            "{text}"
        );
    }
}

#[test]
fn viewer_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    vector_run(
        &cfg(RuntimeKind::Tmr, DumpArgsLevel::Full, dir.path()),
        mul,
        no_selection,
    );
    let run = |args: Args| viewer::run_to(&args, &mut Vec::new()).unwrap_err().to_string();
    let base = || Args {
        dir: Some(dir.path().to_path_buf()),
        format: "npy".into(),
        ..Args::default()
    };
    let e = run(Args {
        task: Some("0x99".into()),
        ..base()
    });
    assert!(
        e.starts_with("task 0x99 is not in the dump; some that are: 0x0000000000000000"),
        "{e}"
    );
    assert_eq!(
        run(Args {
            index: Some(18),
            ..base()
        }),
        "--index 18 is out of range: the dump has 18 entries"
    );
    assert_eq!(
        run(Args {
            stage: Some("during".into()),
            ..base()
        }),
        "--stage \"during\": expected before or after"
    );
    assert_eq!(
        run(Args {
            role: Some("inout".into()),
            ..base()
        }),
        "no entry matches the filters"
    );
    std::fs::write(
        dir.path().join("args_dump/args_dump.json"),
        "{\"args\": [ {\"task_id\": 1} ]}",
    )
    .unwrap();
    let e = run(base());
    assert!(e.contains("args_dump.json:1:"), "{e}");
}

/// A dump written as the original writes it (no `numel`, none of our counters, entries under
/// `tensors`): read, listed and exported; bf16 exports as float32 and a scalar as a 0-d array.
#[test]
fn an_original_dump_reads_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("args_dump");
    std::fs::create_dir_all(&d).unwrap();
    // bf16 1.0, 2.0, 3.0, -0.5 (the top halves of the f32 bits).
    let bf16: Vec<u8> = [1.0f32, 2.0, 3.0, -0.5]
        .iter()
        .flat_map(|x| ((x.to_bits() >> 16) as u16).to_le_bytes())
        .collect();
    std::fs::write(d.join("args.bin"), &bf16).unwrap();
    let manifest = serde_json::json!({
        "run_dir": "args_dump",
        "bin_format": {"type": "logical_contiguous", "byte_order": "little_endian"},
        "dump_args_level": 2, "total_args": 2, "before_dispatch": 2, "after_completion": 0,
        "input_args": 2, "output_args": 0, "inout_args": 0, "truncated_args": 0,
        "dropped_records": 0, "dropped_overwrite": 0, "bin_file": "args.bin",
        "tensors": [
            {"task_id": "0x0000000100000000", "func_id": [0], "arg_index": 0, "role": "input",
             "stage": "before_dispatch", "kind": "tensor", "dtype": "BFLOAT16", "is_contiguous": true,
             "shape": [2, 2], "strides": [2, 1], "start_offset": 0, "bin_offset": 0, "bin_size": 8,
             "truncated": false, "overwritten": false},
            {"task_id": "0x0000000100000000", "func_id": [0], "arg_index": 1, "role": "input",
             "stage": "before_dispatch", "kind": "scalar", "dtype": "INT32", "value": -7,
             "is_contiguous": true, "shape": [], "strides": [], "start_offset": 0, "bin_offset": 0,
             "bin_size": 0, "truncated": false, "overwritten": false}
        ]
    });
    std::fs::write(d.join("args_dump.json"), manifest.to_string()).unwrap();
    let dump = viewer::open(&d).unwrap();
    assert_eq!(dump.manifest.args.len(), 2);
    assert_eq!(
        viewer::decode(&dump, &dump.manifest.args[0]).unwrap().unwrap(),
        [1.0, 2.0, 3.0, -0.5]
    );
    let out = dir.path().join("x");
    let files = viewer::export(&dump, &[0, 1], Format::Npy, &out).unwrap();
    let (header, vals) = read_npy_f32(&files[0]);
    assert!(
        header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"),
        "{header}"
    );
    assert_eq!(vals, [1.0, 2.0, 3.0, -0.5]);
    let bytes = std::fs::read(&files[1]).unwrap();
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(
        header.starts_with("{'descr': '<i4', 'fortran_order': False, 'shape': (), }"),
        "{header}"
    );
    assert_eq!(i32::from_le_bytes(bytes[10 + hlen..].try_into().unwrap()), -7);
    let mut text = Vec::new();
    viewer::run_to(
        &Args {
            dir: Some(d.clone()),
            format: "npy".into(),
            ..Args::default()
        },
        &mut text,
    )
    .unwrap();
    let text = String::from_utf8(text).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(
        text.contains("0x0000000100000000  before  input     0  BFLOAT16  [2, 2]"),
        "{text}"
    );
}
