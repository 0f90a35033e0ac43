//! Every fatal path of reference §9: its code, a message naming resource, ring, capacity and
//! scope site, no hang, and a worker that still runs the next orchestration correctly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use simpler_core::{DType, TaskArgs, TaskId, TensorCreateInfo};
use simpler_runtime::config::Faults;
use simpler_runtime::{
    CallConfig, CoreType, FatalCode, OrchResult, Orchestrator, RunError, RuntimeEnv, RuntimeKind, Worker,
};

fn worker() -> Worker {
    let mut w = Worker::new();
    w.register_kernel(0, "inc", CoreType::Aiv, |ctx| {
        let x = ctx.view::<f32>(0)?;
        for k in 0..x.len() {
            x.set(k, x.get(k) + 1.0);
        }
        Ok(())
    })
    .unwrap();
    w.register_kernel(1, "fails", CoreType::Aiv, |_| {
        Err(simpler_runtime::KernelError("bad tile".into()))
    })
    .unwrap();
    w.register_kernel(2, "slow", CoreType::Aiv, |_| {
        std::thread::sleep(Duration::from_millis(1500));
        Ok(())
    })
    .unwrap();
    w.register_kernel(3, "cube", CoreType::Aic, |_| Ok(())).unwrap();
    w
}

/// Registers kernel 4, which holds its core (and keeps the queued ones pending) until `gate`
/// opens.
fn add_gated_kernel(w: &mut Worker, gate: Arc<AtomicBool>) {
    w.register_kernel(4, "gated", CoreType::Aiv, move |_| {
        let start = std::time::Instant::now();
        while !gate.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    })
    .unwrap();
}

/// `n` producers of the gated kernel with one consumer of all of them, on a dep pool of 4.
fn gated_fanin(n: usize) -> (FatalCode, String) {
    let mut w = worker();
    let gate = Arc::new(AtomicBool::new(false));
    add_gated_kernel(&mut w, gate.clone());
    let r = fatal(&w, &cfg(&["ring_dep_pool=4"]), move |o| {
        let r = o.scope(|o| {
            let ids = (0..n)
                .map(|_| o.submit_aiv(4, &TaskArgs::new()).map(|t| t.id()))
                .collect::<Result<Vec<_>, _>>()?;
            let mut a = TaskArgs::new();
            a.set_dependencies(&ids);
            o.submit_dummy(&a)?;
            Ok(())
        });
        gate.store(true, Ordering::SeqCst);
        r
    });
    still_usable(&w);
    r
}

fn cfg(env: &[&str]) -> CallConfig {
    let mut e = RuntimeEnv::default();
    for p in env {
        e.set_pair(p).unwrap();
    }
    CallConfig {
        runtime_env: e,
        ..Default::default()
    }
}

fn fatal<F>(w: &Worker, c: &CallConfig, f: F) -> (FatalCode, String)
where
    F: FnOnce(&mut Orchestrator) -> OrchResult + Send + 'static,
{
    match w.run(c, f) {
        Err(RunError::Fatal { fatal, report }) => {
            assert!(report.stop_proven, "every thread was joined");
            (fatal.code, fatal.message)
        }
        other => panic!("expected a fatal, got {other:?}"),
    }
}

/// After any fatal the same worker must still run a graph correctly.
fn still_usable(w: &Worker) {
    three_increments(w, &CallConfig::default());
}

/// Three increments of a fresh tensor under `c` compute 3 in every element.
fn three_increments(w: &Worker, c: &CallConfig) {
    let x = w.alloc_tensor(&[8], DType::Float32).unwrap();
    w.run(c, move |o| {
        o.scope(|o| {
            for _ in 0..3 {
                let mut a = TaskArgs::new();
                a.inout(x);
                o.submit_aiv(0, &a)?;
            }
            Ok(())
        })
    })
    .unwrap();
    assert_eq!(w.read::<f32>(&x).unwrap(), vec![3.0; 8]);
}

fn dummies(o: &mut Orchestrator, n: usize) -> Result<Vec<TaskId>, simpler_runtime::Stopped> {
    (0..n)
        .map(|_| o.submit_dummy(&TaskArgs::new()).map(|t| t.id()))
        .collect()
}

#[test]
fn scope_deadlock_on_the_fourth_submit() {
    let w = worker();
    let submitted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let s2 = submitted.clone();
    let (code, msg) = fatal(&w, &cfg(&["ring_task_window=4"]), move |o| {
        o.scope(|o| {
            for _ in 0..8 {
                o.submit_dummy(&TaskArgs::new())?;
                s2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Ok(())
        })
    });
    assert_eq!(code, FatalCode::ScopeDeadlock);
    assert_eq!(
        submitted.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "the 4th submit fails"
    );
    assert!(msg.starts_with("scope at fatal_codes.rs:"), "{msg}");
    assert!(
        msg.contains("already holds 3 tasks on ring 1, whose task window is 4 slots"),
        "{msg}"
    );
    assert!(msg.contains("raise runtime_env ring_task_window"), "{msg}");
    still_usable(&w);
}

#[test]
fn heap_exhaustion() {
    let w = worker();
    let (code, msg) = fatal(&w, &cfg(&["ring_heap=1024"]), |o| {
        o.scope(|o| {
            let mut a = TaskArgs::new();
            a.output(TensorCreateInfo::new(&[8192], DType::Float32)?);
            o.submit_dummy(&a)?;
            Ok(())
        })
    });
    assert_eq!(code, FatalCode::HeapRingDeadlock);
    assert!(
        msg.starts_with("heap of ring 1 exhausted (capacity 1024 bytes): a task needs 32768 bytes"),
        "{msg}"
    );
    assert!(msg.contains("scope open at fatal_codes.rs:"), "{msg}");
    assert!(msg.ends_with("raise runtime_env ring_heap"), "{msg}");
    still_usable(&w);
}

#[test]
fn a_resource_fatal_carries_its_facts_as_values() {
    let w = worker();
    let r = w.run(&cfg(&["ring_heap=1024"]), |o| {
        o.scope(|o| {
            let mut a = TaskArgs::new();
            a.output(TensorCreateInfo::new(&[8192], DType::Float32)?);
            o.submit_dummy(&a)?;
            Ok(())
        })
    });
    let Err(RunError::Fatal { fatal, .. }) = r else {
        panic!("expected a fatal, got {r:?}")
    };
    let ctx = fatal.context.expect("a heap exhaustion has a context");
    assert_eq!(
        (ctx.resource, ctx.ring, ctx.capacity, ctx.key),
        ("heap", Some(1), 1024, Some("ring_heap"))
    );
    assert!(ctx.site.starts_with("fatal_codes.rs:"), "{}", ctx.site);
    // A fatal that is not about a resource has none.
    assert_eq!(fatal_of_kernel_failure(&w), (FatalCode::KernelFailed, None));
}

/// A run whose kernel fails: its code and context.
fn fatal_of_kernel_failure(w: &Worker) -> (FatalCode, Option<simpler_runtime::FatalContext>) {
    match w.run(&CallConfig::default(), |o| {
        o.submit_aiv(1, &TaskArgs::new())?;
        Ok(())
    }) {
        Err(RunError::Fatal { fatal, .. }) => (fatal.code, fatal.context),
        other => panic!("expected a fatal, got {other:?}"),
    }
}

#[test]
fn heap_full_behind_an_open_scope_is_a_structural_deadlock() {
    let w = worker();
    let (code, msg) = fatal(&w, &cfg(&["ring_heap=4096"]), |o| {
        o.scope(|o| {
            for _ in 0..8 {
                let mut a = TaskArgs::new();
                a.output(TensorCreateInfo::new(&[256], DType::Float32)?);
                o.submit_dummy(&a)?;
            }
            Ok(())
        })
    });
    assert_eq!(code, FatalCode::HeapRingDeadlock);
    assert!(
        msg.contains("the oldest task (1, 0) is held by the still-open scope at fatal_codes.rs:"),
        "{msg}"
    );
    still_usable(&w);
}

#[test]
fn flow_control_deadlock_when_nested_scopes_share_ring_3() {
    let w = worker();
    let (code, msg) = fatal(&w, &cfg(&["ring_task_window=4"]), |o| {
        fn nest(o: &mut Orchestrator, left: usize) -> OrchResult {
            if left == 0 {
                return Ok(());
            }
            o.scope(|o| {
                dummies(o, 3)?;
                nest(o, left - 1)
            })
        }
        nest(o, 8)
    });
    assert_eq!(code, FatalCode::FlowControlDeadlock);
    assert!(
        msg.starts_with("task window of ring 3 exhausted (capacity 4 slots): 3 tasks in flight"),
        "{msg}"
    );
    assert!(
        msg.contains("held by the still-open scope at fatal_codes.rs:"),
        "{msg}"
    );
    assert!(msg.contains("(depth 4)"), "{msg}");
    still_usable(&w);
}

#[test]
fn dep_pool_overflow_with_128_explicit_deps() {
    // Beyond the 64 inline fan-in entries the list spills into a pool sized by ring_dep_pool.
    let (code, msg) = gated_fanin(128);
    assert_eq!(code, FatalCode::DepPoolOverflow);
    assert!(
        msg.starts_with(
            "fanin spill pool (sized by ring_dep_pool) of ring 1 exhausted (capacity 4 entries): \
             one task needs 64 entries"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("raise runtime_env ring_dep_pool"), "{msg}");
}

#[test]
fn dep_pool_overflow_when_producers_stay_pending() {
    let (code, msg) = gated_fanin(32);
    assert_eq!(code, FatalCode::DepPoolOverflow);
    assert!(
        msg.starts_with(
            "dependency pool of ring 1 exhausted (capacity 4 entries): one task needs 32 entries \
             for its pending producers; none of them completed for 500 ms"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("raise runtime_env ring_dep_pool"), "{msg}");
}

#[test]
fn a_fanin_wider_than_the_dep_pool_waits_for_its_producers() {
    let w = worker();
    let x = w.alloc_tensor(&[8], DType::Float32).unwrap();
    w.run(&cfg(&["ring_dep_pool=4"]), move |o| {
        o.scope(|o| {
            // 32 producers: within the inline fan-in (64), so the spill pool is not involved.
            let ids = dummies(o, 32)?;
            // Their consumer names 32 > 4 producers: it waits until at most 4 are pending
            // (only pending producers take entries) instead of failing.
            let mut a = TaskArgs::new();
            a.set_dependencies(&ids);
            a.inout(x);
            o.submit_aiv(0, &a)?;
            Ok(())
        })
    })
    .unwrap();
    assert_eq!(w.read::<f32>(&x).unwrap(), vec![1.0; 8]);
}

/// The message a run of `f` stops with; the run must stop with INVALID_ARGS.
fn invalid_args_message<F>(w: &Worker, f: F) -> String
where
    F: FnOnce(&mut Orchestrator) -> OrchResult + Send + 'static,
{
    let (code, msg) = fatal(w, &CallConfig::default(), f);
    assert_eq!(code, FatalCode::InvalidArgs, "{msg}");
    msg
}

/// Admission remembers the last kernel ids that passed its check (`CheckedKernels`): a submit
/// with other ids is still checked, however many valid submits came before it.
#[test]
fn kernels_are_checked_after_valid_submits_of_other_kernels() {
    let w = worker();
    let msg = invalid_args_message(&w, |o| {
        for _ in 0..3 {
            o.submit_aic(3, &TaskArgs::new())?;
        }
        o.submit_aiv(3, &TaskArgs::new())?;
        Ok(())
    });
    assert!(
        msg.ends_with("kernel cube (func_id 3) runs on aic cores but was submitted to an aiv subslot"),
        "{msg}"
    );
    let msg = invalid_args_message(&w, |o| {
        o.submit_aic(3, &TaskArgs::new())?;
        o.submit_aic(3, &TaskArgs::new())?;
        o.submit_aic(9, &TaskArgs::new())?;
        Ok(())
    });
    assert!(msg.ends_with("kernel func_id 9 is not registered"), "{msg}");
}

#[test]
fn invalid_args() {
    let w = worker();
    let msg = invalid_args_message(&w, |o| {
        let mut a = TaskArgs::new();
        a.dep(TaskId::INVALID);
        o.submit_dummy(&a)?;
        Ok(())
    });
    assert!(
        msg.ends_with("explicit dependency #0 is not a task id (0xffffffffffffffff)"),
        "{msg}"
    );

    let msg = invalid_args_message(&w, |o| {
        let x = TensorCreateInfo::new(&[4], DType::Float32)?;
        let mut a = TaskArgs::new();
        a.scalar(1).output(x);
        o.submit_aiv(0, &a)?;
        Ok(())
    });
    assert!(msg.contains("a tensor was added after a scalar"), "{msg}");

    let msg = invalid_args_message(&w, |o| {
        o.submit_aiv(3, &TaskArgs::new())?;
        Ok(())
    });
    assert!(
        msg.ends_with("kernel cube (func_id 3) runs on aic cores but was submitted to an aiv subslot"),
        "{msg}"
    );

    let msg = invalid_args_message(&w, |o| {
        let mut a = TaskArgs::new();
        a.dep(TaskId::new(0, 99));
        o.submit_dummy(&a)?;
        Ok(())
    });
    assert!(
        msg.ends_with("dependency on task (0, 99), which has not been submitted"),
        "{msg}"
    );

    let (code, _) = fatal(&w, &CallConfig::default(), |o| {
        o.manual_scope(|o| o.scope(|_| Ok(())))
    });
    assert_eq!(code, FatalCode::InvalidArgs, "auto inside manual");
    still_usable(&w);
}

#[test]
fn sync_start_with_too_many_blocks() {
    let w = worker();
    let c = CallConfig {
        clusters: 2,
        ..Default::default()
    };
    let (code, msg) = fatal(&w, &c, |o| {
        let mut a = TaskArgs::new();
        a.block_num(5).require_sync_start(true);
        o.submit_aiv(0, &a)?;
        Ok(())
    });
    assert_eq!(code, FatalCode::RequireSyncStartInvalid);
    assert!(
        msg.starts_with("require_sync_start with block_num 5 but only 4 AIV cores"),
        "{msg}"
    );
    still_usable(&w);
}

#[test]
fn explicit_fatal_and_orchestration_errors() {
    let w = worker();
    let (code, msg) = fatal(&w, &CallConfig::default(), |o| {
        Err(o.report_fatal("bad shape").into())
    });
    assert_eq!(
        (code, msg.as_str()),
        (FatalCode::ExplicitOrchFatal, "orchestration reported: bad shape")
    );
    let (code, msg) = fatal(&w, &CallConfig::default(), |_| Err("user error".into()));
    assert_eq!(
        (code, msg.as_str()),
        (
            FatalCode::ExplicitOrchFatal,
            "orchestration returned an error: user error"
        )
    );
    let (code, msg) = fatal(&w, &CallConfig::default(), |_| panic!("boom"));
    assert_eq!(
        (code, msg.as_str()),
        (FatalCode::ExplicitOrchFatal, "orchestration panicked: boom")
    );
    still_usable(&w);
}

#[test]
fn first_fatal_wins_and_later_calls_are_no_ops() {
    let w = worker();
    let (code, _) = fatal(&w, &cfg(&["ring_task_window=4"]), |o| {
        let r = o.scope(|o| dummies(o, 8).map(|_| ()));
        assert!(r.is_err());
        assert!(o.is_fatal());
        let again = o.submit_dummy(&TaskArgs::new());
        assert_eq!(again.unwrap_err().0, FatalCode::ScopeDeadlock);
        let _ = o.report_fatal("ignored");
        Ok(())
    });
    assert_eq!(code, FatalCode::ScopeDeadlock);
}

#[test]
fn tensor_map_overflow() {
    let w = worker();
    let x = w.alloc_tensor(&[64], DType::Float32).unwrap();
    let c = CallConfig {
        tensormap_capacity: 8,
        ..Default::default()
    };
    let (code, msg) = fatal(&w, &c, move |o| {
        o.scope(|o| {
            for i in 0..16 {
                let mut a = TaskArgs::new();
                a.output_existing(x.view(&[1], &[i])?);
                o.submit_dummy(&a)?;
            }
            Ok(())
        })
    });
    assert_eq!(code, FatalCode::TensorMapOverflow);
    assert!(
        msg.starts_with(
            "tensor map (global) exhausted (capacity 8 entries): 1 inserts needed, 8 entries in use"
        ),
        "{msg}"
    );
    still_usable(&w);
}

/// Found by a review: a task that needs tensor-map room while its own RETAIN pin holds its
/// ring's oldest task (H, here, through an explicit dependency) waits for a reclaim that
/// cannot come until it is submitted. Its need cannot shrink (the original orders the steps
/// the same way), so the deadlock timeout still ends the run; the message now names the pin
/// and the way out.
#[test]
fn tensor_map_overflow_behind_the_tasks_own_pin_names_the_pin() {
    let mut w = worker();
    // H runs 50 ms: still pending when T links it, so T pins it whatever the timing.
    w.register_kernel(5, "slow50", CoreType::Aiv, |_| {
        std::thread::sleep(Duration::from_millis(50));
        Ok(())
    })
    .unwrap();
    let xs: Vec<_> = (0..4)
        .map(|_| w.alloc_tensor(&[4], DType::Float32).unwrap())
        .collect();
    let c = CallConfig {
        tensormap_capacity: 3,
        ..Default::default()
    };
    let (code, msg) = fatal(&w, &c, move |o| {
        let h = o.scope(|o| o.submit_aiv(5, &TaskArgs::new()))?.id();
        for x in &xs[..3] {
            o.scope(|o| {
                let mut a = TaskArgs::new();
                a.inout(*x);
                o.submit_aiv(0, &a)
            })?;
        }
        o.scope(|o| {
            let mut a = TaskArgs::new();
            a.inout(xs[3]).dep(h);
            o.submit_aiv(0, &a)
        })?;
        Ok(())
    });
    assert_eq!(code, FatalCode::TensorMapOverflow);
    assert!(
        msg.starts_with(
            "tensor map (global) exhausted (capacity 3 entries): 1 inserts needed, 3 entries in use; \
             no task of any ring retired for 500 ms; the oldest task (1, 0) of ring 1 is held by a RETAIN \
             pin of the task being submitted (an explicit dependency or an output it reads; a WAIT-only \
             dependency takes no pin); scope open at "
        ),
        "{msg}"
    );
    still_usable(&w);
}

#[test]
fn kernel_failure_and_timeout() {
    let w = worker();
    let (code, msg) = fatal(&w, &CallConfig::default(), |o| {
        o.submit_aiv(1, &TaskArgs::new())?;
        Ok(())
    });
    assert_eq!(code, FatalCode::KernelFailed);
    assert!(
        msg.starts_with("kernel fails (func_id 1) of task (0, 0) block 0 on AIV_"),
        "{msg}"
    );
    assert!(msg.ends_with(": bad tile"), "{msg}");

    let c = CallConfig {
        timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let (code, msg) = fatal(&w, &c, |o| {
        o.submit_aiv(2, &TaskArgs::new())?;
        Ok(())
    });
    assert_eq!(code, FatalCode::SchedulerTimeout);
    // The slow kernel ends in the grace period: the run's count has it, and so does the message
    // (found by a review: it said "0 of 1" beside a report of 1 completed).
    assert!(
        msg.starts_with(
            "the run did not finish within 300ms: 0 of 1 tasks completed (and 1 more while the run \
             stopped); a kernel may never return"
        ),
        "{msg}"
    );
    still_usable(&w);
}

/// Four increments of one tensor in a chain, on the given runtime and scheduler threads,
/// with `faults` set; the fatal's code and message.
fn chain_with_faults(
    w: &Worker,
    runtime: RuntimeKind,
    threads: usize,
    faults: impl FnOnce(&mut CallConfig),
) -> (FatalCode, String) {
    let mut c = CallConfig {
        runtime,
        scheduler_threads: threads,
        timeout: Duration::from_secs(60),
        ..Default::default()
    };
    faults(&mut c);
    let x = w.alloc_tensor(&[8], DType::Float32).unwrap();
    fatal(w, &c, move |o| {
        for _ in 0..4 {
            let mut a = TaskArgs::new();
            a.inout(x);
            o.submit_aiv(0, &a)?;
        }
        Ok(())
    })
}

const BUG: &str = "this is a bug in simpler (please report it with the run's settings)";

/// A scheduler thread that panics outside any kernel (a bug in the runtime, injected here)
/// stops the run at once with its own code. Before, the run waited for its timeout (here
/// 60 s) and then reported SCHEDULER_TIMEOUT with "a kernel may never return".
#[test]
fn a_scheduler_panic_outside_a_kernel_stops_the_run_at_once() {
    let w = worker();
    for (runtime, threads) in [
        (RuntimeKind::Tmr, 1),
        (RuntimeKind::Hbg, 1),
        (RuntimeKind::Tmr, 2),
    ] {
        let (code, msg) = chain_with_faults(&w, runtime, threads, |c| c.faults.panic_in_scheduler = true);
        assert_eq!(code, FatalCode::InternalPanic, "{runtime:?}: {msg}");
        let (what, why) = msg.split_once(": ").unwrap();
        assert_eq!(
            why,
            format!("injected scheduler panic (Faults::panic_in_scheduler); {BUG}"),
            "{runtime:?}"
        );
        if threads == 1 {
            // One thread: it ran the chain's first task and panicked; nothing ran after.
            assert_eq!(
                what,
                "scheduler thread 0 panicked outside any kernel after 1 tasks completed"
            );
        } else {
            assert!(what.starts_with("scheduler thread "), "{what}");
        }
    }
    still_usable(&w);
}

/// Likewise for the orchestrator, past the orchestration function: tmr's orchestrator thread
/// died and the run waited for its timeout; hbg's build panicked through `Worker::run` into
/// the caller.
#[test]
fn an_orchestrator_panic_outside_the_orchestration_stops_the_run_at_once() {
    let w = worker();
    for runtime in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let (code, msg) = chain_with_faults(&w, runtime, 1, |c| c.faults.panic_in_orchestrator = true);
        assert_eq!(code, FatalCode::InternalPanic, "{runtime:?}: {msg}");
        let (what, why) = msg.split_once(" after ").unwrap();
        assert_eq!(
            what,
            "the orchestrator panicked outside the orchestration function"
        );
        // tmr's scheduler may have run some of the chain meanwhile; hbg's never started.
        let (done, why) = why.split_once(" tasks completed: ").unwrap();
        if runtime == RuntimeKind::Hbg {
            assert_eq!(done, "0");
        }
        assert_eq!(
            why,
            format!("injected orchestrator panic (Faults::panic_in_orchestrator); {BUG}")
        );
    }
    still_usable(&w);
}

/// A panic inside a call into the runtime (here `alloc_tensors`, by a test fault) is the
/// runtime's bug, INTERNAL_PANIC naming the call; before, it was reported as the
/// orchestration's own panic (EXPLICIT_ORCH_FATAL, "orchestration panicked"), blaming the
/// user's code. A panic in the orchestration's own code stays EXPLICIT_ORCH_FATAL.
#[test]
fn a_panic_inside_a_runtime_call_is_the_runtimes_not_the_orchestrations() {
    let w = worker();
    for runtime in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let c = CallConfig {
            runtime,
            faults: Faults {
                panic_in_alloc_tensors: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let (code, msg) = fatal(&w, &c, |o| {
            let info = TensorCreateInfo::new(&[8], DType::Float32)?;
            o.scope(|o| o.alloc_tensors(&[info]))?;
            Ok(())
        });
        assert_eq!(code, FatalCode::InternalPanic, "{runtime:?}: {msg}");
        assert_eq!(
            msg,
            format!(
                "the runtime panicked inside alloc_tensors, called by the orchestration function: \
                 injected runtime panic (Faults::panic_in_alloc_tensors); {BUG}"
            )
        );
        // The orchestration's own panic, after a call into the runtime returned.
        let c = CallConfig {
            runtime,
            ..Default::default()
        };
        let (code, msg) = fatal(&w, &c, |o| {
            let info = TensorCreateInfo::new(&[8], DType::Float32)?;
            o.scope(|o| o.alloc_tensors(&[info]))?;
            panic!("boom");
        });
        assert_eq!(
            (code, msg.as_str()),
            (FatalCode::ExplicitOrchFatal, "orchestration panicked: boom")
        );
    }
    still_usable(&w);
}

/// A run thread the system refuses to start (here a test fault, as when the process is at its
/// limit of threads) stops the run with its own code; before, `Worker::run` panicked. A
/// refused prefault thread only costs an hbg build its help.
#[test]
fn a_thread_that_cannot_start_stops_the_run_with_its_own_code() {
    let w = worker();
    for (runtime, threads, name) in [
        (RuntimeKind::Tmr, 2, "simpler-sched-1"),
        (RuntimeKind::Tmr, 1, "simpler-orch"),
        (RuntimeKind::Hbg, 1, "simpler-sched-0"),
    ] {
        let (code, msg) = chain_with_faults(&w, runtime, threads, |c| {
            c.faults.refuse_thread_start = Some(name.into())
        });
        assert_eq!(code, FatalCode::ThreadStartFailed, "{runtime:?} {name}: {msg}");
        assert_eq!(
            msg,
            format!(
                "could not start thread {name}: refused by a test fault; the process may be at \
                 its limit of threads (ulimit -u, or a container's pids limit)"
            )
        );
    }
    let mut c = CallConfig {
        runtime: RuntimeKind::Hbg,
        ..Default::default()
    };
    c.faults.refuse_thread_start = Some("simpler-prefault".into());
    three_increments(&w, &c);
    still_usable(&w);
}

#[test]
fn diagnostics_without_output_prefix_are_refused() {
    let w = worker();
    let c = CallConfig {
        enable_scope_stats: true,
        ..Default::default()
    };
    match w.run(&c, |_| Ok(())) {
        Err(RunError::Config(e)) => {
            assert_eq!(
                e.to_string(),
                "enable_scope_stats needs an output_prefix to write its artifacts"
            );
            assert_eq!(
                e.kind(),
                &simpler_runtime::config::ConfigErrorKind::NoOutputPrefix
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unbalanced_manual_scopes_are_handled() {
    let w = worker();
    // Closing the root scope is refused.
    let (code, msg) = fatal(&w, &CallConfig::default(), |o| {
        o.end_scope();
        o.submit_dummy(&TaskArgs::new())?;
        Ok(())
    });
    assert_eq!(
        (code, msg.as_str()),
        (FatalCode::InvalidArgs, "end_scope without a matching begin_scope")
    );
    // A scope left open inside a closure scope is closed with it; the run completes.
    let r = w
        .run(&CallConfig::default(), |o| {
            o.scope(|o| {
                o.begin_scope(simpler_runtime::ScopeMode::Auto, std::panic::Location::caller());
                o.submit_dummy(&TaskArgs::new())?;
                Ok::<_, simpler_runtime::Stopped>(())
            })?;
            o.submit_dummy(&TaskArgs::new())?;
            Ok(())
        })
        .unwrap();
    assert_eq!((r.tasks, r.completed, r.tasks_per_ring), (2, 2, [1, 0, 1, 0]));
    still_usable(&w);
}
