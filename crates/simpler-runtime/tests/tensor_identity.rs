//! A tensor names its buffer in its worker and run: a run's output kept past its run, or an
//! external tensor of one worker handed to another, is refused with a message that says so,
//! never read or written as whatever the other run or worker keeps at the same place.

use simpler_core::{DType, TaskArgs, TensorCreateInfo};
use simpler_runtime::{CallConfig, CoreType, FatalCode, RunError, RuntimeKind, Worker};
use std::sync::{Arc, Mutex};

/// `fill`: out[k] = 4; `add1`: out[k] = in[k] + 1.
fn worker() -> Worker {
    let mut w = Worker::new();
    w.register_kernel(0, "fill", CoreType::Aiv, |ctx| {
        let out = ctx.view::<f32>(0)?;
        for k in 0..out.len() {
            out.set(k, 4.0);
        }
        Ok(())
    })
    .unwrap();
    w.register_kernel(1, "add1", CoreType::Aiv, |ctx| {
        let (i, o) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?);
        for k in 0..o.len() {
            o.set(k, i.get(k) + 1.0);
        }
        Ok(())
    })
    .unwrap();
    w
}

fn config(kind: RuntimeKind) -> CallConfig {
    CallConfig {
        runtime: kind,
        ..Default::default()
    }
}

fn an_output_kept_past_its_run_is_refused_in_the_next(kind: RuntimeKind) {
    let w = worker();
    let out = w.alloc_tensor(&[16], DType::Float32).unwrap();
    let kept = Arc::new(Mutex::new(None));
    let k = kept.clone();
    w.run(&config(kind), move |o| {
        let mut a = TaskArgs::new();
        a.output(TensorCreateInfo::new(&[16], DType::Float32).unwrap());
        *k.lock().unwrap() = Some(o.submit_aiv(0, &a)?.output(0));
        Ok(())
    })
    .unwrap();
    let stale = kept.lock().unwrap().expect("the first run kept its output");
    // The second run's first output takes the same place in the heap as the first run's.
    let r = w.run(&config(kind), move |o| {
        let mut a = TaskArgs::new();
        a.output(TensorCreateInfo::new(&[16], DType::Float32).unwrap());
        o.submit_aiv(0, &a)?;
        let mut b = TaskArgs::new();
        b.input(stale).output_existing(out);
        o.submit_aiv(1, &b)?;
        Ok(())
    });
    let Err(RunError::Fatal { fatal, .. }) = r else {
        panic!(
            "a kept output was used in a later run: {r:?}, read {:?}",
            w.read::<f32>(&out)
        );
    };
    assert_eq!(fatal.code, FatalCode::InvalidArgs);
    assert!(
        fatal
            .message
            .contains("argument 0 is an output of an earlier run"),
        "{}",
        fatal.message
    );
    assert_eq!(w.read::<f32>(&out).unwrap(), vec![0.0; 16], "nothing was written");
}

#[test]
fn an_output_kept_past_its_run_is_refused_in_the_next_tmr() {
    an_output_kept_past_its_run_is_refused_in_the_next(RuntimeKind::Tmr);
}

#[test]
fn an_output_kept_past_its_run_is_refused_in_the_next_hbg() {
    an_output_kept_past_its_run_is_refused_in_the_next(RuntimeKind::Hbg);
}

#[test]
fn a_tensor_of_another_worker_is_refused_by_reads_writes_and_runs() {
    let (w1, w2) = (worker(), worker());
    let a1 = w1.alloc_tensor(&[4], DType::Float32).unwrap();
    w1.write(&a1, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let a2 = w2.alloc_tensor(&[4], DType::Float32).unwrap();
    w2.write(&a2, &[100.0f32; 4]).unwrap();
    let other = "belongs to another Worker";
    let e = w2.read::<f32>(&a1).unwrap_err().to_string();
    assert!(e.contains(other), "{e}");
    let e = w2.write(&a1, &[0.0f32; 4]).unwrap_err().to_string();
    assert!(e.contains(other), "{e}");
    let e = w2.free_tensor(&a1).unwrap_err().to_string();
    assert!(e.contains(other), "{e}");
    assert_eq!(w1.read::<f32>(&a1).unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    assert_eq!(w2.read::<f32>(&a2).unwrap(), vec![100.0; 4]);

    let out = w2.alloc_tensor(&[4], DType::Float32).unwrap();
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let r = w2.run(&config(kind), move |o| {
            let mut b = TaskArgs::new();
            b.input(a1).output_existing(out);
            o.submit_aiv(1, &b)?;
            Ok(())
        });
        let Err(RunError::Fatal { fatal, .. }) = r else {
            panic!(
                "another worker's tensor was used: {r:?}, read {:?}",
                w2.read::<f32>(&out)
            );
        };
        assert_eq!(fatal.code, FatalCode::InvalidArgs);
        assert!(
            fatal.message.contains("argument 0 belongs to another Worker"),
            "{}",
            fatal.message
        );
    }
    assert_eq!(w2.read::<f32>(&out).unwrap(), vec![0.0; 4]);
}

#[test]
fn an_empty_view_at_the_end_of_a_buffer_reads_as_empty() {
    let w = worker();
    let t = w.alloc_tensor(&[4, 6], DType::Float32).unwrap();
    let empty = t.view(&[0, 2], &[4, 1]).unwrap();
    assert_eq!(w.read::<f32>(&empty).unwrap(), Vec::<f32>::new());
    w.write::<f32>(&empty, &[]).unwrap();
}

#[test]
fn the_same_orchestration_writes_the_same_deps_json_in_every_run_and_worker() {
    let dir = std::env::temp_dir().join(format!("simpler-identity-{}", std::process::id()));
    let mut files = Vec::new();
    for (i, w) in [worker(), worker()].iter().enumerate() {
        let x = w.alloc_tensor(&[16], DType::Float32).unwrap();
        for run in 0..2 {
            let cfg = CallConfig {
                enable_dep_gen: true,
                output_prefix: Some(dir.join(format!("w{i}-r{run}"))),
                ..Default::default()
            };
            let r = w
                .run(&cfg, move |o| {
                    let mut a = TaskArgs::new();
                    a.output(TensorCreateInfo::new(&[16], DType::Float32).unwrap());
                    let made = o.submit_aiv(0, &a)?.output(0);
                    let mut b = TaskArgs::new();
                    b.input(made).output_existing(x);
                    o.submit_aiv(1, &b)?;
                    Ok(())
                })
                .unwrap();
            let folder = r.output.expect("a run with dep_gen has an output folder");
            files.push(std::fs::read_to_string(folder.path().join("deps.json")).unwrap());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(files[0].contains("\"buffer_addr\""), "{}", files[0]);
    for f in &files[1..] {
        assert_eq!(f, &files[0], "a later run or worker wrote another deps.json");
    }
}
