//! Execution semantics: back-pressure through tiny rings, SPMD blocks, mixed kernels, dummy
//! and alloc tasks, manual scopes, and both runtimes computing the same numbers.

use simpler_core::{DType, TaskArgs, TensorCreateInfo};
use simpler_runtime::{CallConfig, CoreType, MixedKernels, RuntimeEnv, RuntimeKind, Worker};
use std::time::Duration;

fn worker() -> Worker {
    let mut w = Worker::new();
    // inc: x[k] += 1 over an INOUT view.
    w.register_kernel(0, "inc", CoreType::Aiv, |ctx| {
        let x = ctx.view::<f32>(0)?;
        for k in 0..x.len() {
            x.set(k, x.get(k) + 1.0);
        }
        Ok(())
    })
    .unwrap();
    // block_write: out[block_idx] = block_idx * 10 + core-type tag.
    w.register_kernel(1, "block_write", CoreType::Aiv, |ctx| {
        let out = ctx.view::<f32>(0)?;
        out.set(u64::from(ctx.block_idx()), ctx.block_idx() as f32 * 10.0);
        Ok(())
    })
    .unwrap();
    w.register_kernel(2, "cube_write", CoreType::Aic, |ctx| {
        let out = ctx.view::<f32>(0)?;
        out.set(u64::from(ctx.block_idx()) + 100, 1.0);
        Ok(())
    })
    .unwrap();
    // copy: out = in.
    w.register_kernel(3, "copy", CoreType::Aiv, |ctx| {
        let (i, o) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?);
        for k in 0..o.len() {
            o.set(k, i.get(k));
        }
        Ok(())
    })
    .unwrap();
    w
}

fn tiny(kind: RuntimeKind, window: &str) -> CallConfig {
    let mut env = RuntimeEnv::default();
    env.set("ring_task_window", window).unwrap();
    CallConfig {
        runtime: kind,
        runtime_env: env,
        ..Default::default()
    }
}

/// A config of `kind` that records every task's wired fanin (`RunReport::fanin_log`).
fn recording(kind: RuntimeKind) -> CallConfig {
    CallConfig {
        runtime: kind,
        record_fanin: true,
        ..Default::default()
    }
}

/// A tmr config with two scheduler threads and runtime_env `key` set to `value`.
fn two_schedulers_with(key: &str, value: &str) -> CallConfig {
    let mut env = RuntimeEnv::default();
    env.set(key, value).unwrap();
    CallConfig {
        runtime_env: env,
        scheduler_threads: 2,
        ..Default::default()
    }
}

#[test]
fn back_pressure_100k_tasks_through_a_window_of_64() {
    let w = worker();
    let n_elems = 1000u32;
    let x = w.alloc_tensor(&[n_elems], DType::Float32).unwrap();
    let report = w
        .run(&tiny(RuntimeKind::Tmr, "64"), move |o| {
            let mut i = 0u32;
            while i < 100_000 {
                o.scope(|o| {
                    for _ in 0..50 {
                        let mut a = TaskArgs::new();
                        a.inout(x.view(&[1], &[i % n_elems])?);
                        o.submit_aiv(0, &a)?;
                        i += 1;
                    }
                    Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                })?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(report.tasks, 100_000);
    assert_eq!(report.completed, 100_000);
    assert_eq!(w.read::<f32>(&x).unwrap(), vec![100.0; n_elems as usize]);
}

/// Scope ends of four tasks through a window of 256: the orchestrator hands their releases
/// to the schedulers in batches of 32 (an eighth of the window), and the 400 scopes' slots
/// are reclaimed (100 trips round the window) whether a scheduler or a wait for room applies
/// them. With the window at 64 (a batch would be 8, under the 16 worth a hand-over), every
/// scope end releases its own tasks.
#[test]
fn scope_ends_handed_to_the_schedulers_in_batches_reclaim_every_slot() {
    for (window, batched) in [("256", true), ("64", false)] {
        let w = worker();
        let x = w.alloc_tensor(&[64], DType::Float32).unwrap();
        let report = w
            .run(&tiny(RuntimeKind::Tmr, window), move |o| {
                for s in 0..6400u32 {
                    o.scope(|o| {
                        for k in 0..4 {
                            let mut a = TaskArgs::new();
                            a.inout(x.view(&[1], &[(s * 4 + k) % 64])?);
                            o.submit_aiv(0, &a)?;
                        }
                        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                    })?;
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(report.completed, 25_600, "window {window}");
        assert_eq!(w.read::<f32>(&x).unwrap(), vec![400.0; 64], "window {window}");
        if batched {
            // A batch fills every 8 scopes, unless a wait for room applied it first.
            assert!(
                (1..=800).contains(&report.scope_release_batches),
                "window {window}: {} batches",
                report.scope_release_batches
            );
        } else {
            assert_eq!(report.scope_release_batches, 0, "window {window}");
        }
    }
}

#[test]
fn runtime_outputs_wrap_a_small_heap_and_stay_correct() {
    let w = worker();
    let src = w.alloc_tensor(&[256], DType::Float32).unwrap();
    let dst = w.alloc_tensor(&[256], DType::Float32).unwrap();
    w.fill_with(&src, |k| k as f64).unwrap();
    let mut env = RuntimeEnv::default();
    env.set("ring_heap", "8192").unwrap();
    let cfg = CallConfig {
        runtime_env: env,
        ..Default::default()
    };
    w.run(&cfg, move |o| {
        for _ in 0..500 {
            o.scope(|o| {
                // src -> tmp (runtime output, 1 KiB) -> dst: the heap wraps every 8 tasks.
                let ci = TensorCreateInfo::new(&[256], DType::Float32)?;
                let mut a = TaskArgs::new();
                a.input(src).output(ci);
                let tmp = o.submit_aiv(3, &a)?.output(0);
                let mut b = TaskArgs::new();
                b.input(tmp).output_existing(dst);
                o.submit_aiv(3, &b)?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })?;
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(
        w.read::<f32>(&dst).unwrap(),
        (0..256).map(|k| k as f32).collect::<Vec<_>>()
    );
}

fn spmd_mix_dummy_alloc(kind: RuntimeKind) {
    let w = worker();
    let out = w.alloc_tensor(&[128], DType::Float32).unwrap();
    let copy = w.alloc_tensor(&[128], DType::Float32).unwrap();
    let cfg = CallConfig {
        runtime: kind,
        clusters: 2,
        ..Default::default()
    };
    w.run(&cfg, move |o| {
        o.scope(|o| {
            // SPMD: 40 blocks on 4 AIV cores (waves).
            let mut a = TaskArgs::new();
            a.output_existing(out).block_num(40);
            let spmd = o.submit_aiv(1, &a)?.id();
            // MIX: AIC + AIV on one cluster, 3 blocks.
            let mut m = TaskArgs::new();
            m.inout(out).block_num(3);
            let mix = o
                .submit(
                    MixedKernels {
                        aic: 2,
                        aiv0: 1,
                        aiv1: -1,
                    },
                    &m,
                )?
                .id();
            // A dummy barrier, then an alloc'd buffer copied into `copy`.
            let mut d = TaskArgs::new();
            d.dep(spmd).dep(mix);
            let barrier = o.submit_dummy(&d)?.id();
            let buf = o
                .alloc_tensors(&[TensorCreateInfo::new(&[128], DType::Float32)?])?
                .output(0);
            let mut c1 = TaskArgs::new();
            c1.input(out).output_existing(buf).dep(barrier);
            o.submit_aiv(3, &c1)?;
            let mut c2 = TaskArgs::new();
            c2.input(buf).output_existing(copy);
            o.submit_aiv(3, &c2)?;
            Ok(())
        })
    })
    .unwrap();
    let mut want = vec![0f32; 128];
    for (b, w) in want.iter_mut().enumerate().take(40) {
        *w = b as f32 * 10.0;
    }
    want[100..103].fill(1.0);
    assert_eq!(w.read::<f32>(&copy).unwrap(), want, "{kind:?}");
}

#[test]
fn spmd_mix_dummy_and_alloc_tmr() {
    spmd_mix_dummy_alloc(RuntimeKind::Tmr);
}

#[test]
fn spmd_mix_dummy_and_alloc_hbg() {
    spmd_mix_dummy_alloc(RuntimeKind::Hbg);
}

#[test]
fn manual_scope_orders_only_by_explicit_deps() {
    let w = worker();
    let x = w.alloc_tensor(&[4], DType::Float32).unwrap();
    let y = w.alloc_tensor(&[4], DType::Float32).unwrap();
    let report = w
        .run(
            &CallConfig {
                record_fanin: true,
                ..Default::default()
            },
            move |o| {
                o.manual_scope(|o| {
                    let mut a = TaskArgs::new();
                    a.inout(x);
                    let t1 = o.submit_aiv(0, &a)?.id();
                    let mut b = TaskArgs::new();
                    b.inout(x).dep_wait(t1);
                    let t2 = o.submit_aiv(0, &b)?.id();
                    let mut c = TaskArgs::new();
                    c.input(x).output_existing(y).dep(t2);
                    o.submit_aiv(3, &c)?;
                    Ok(())
                })
            },
        )
        .unwrap();
    assert_eq!(w.read::<f32>(&y).unwrap(), vec![2.0; 4]);
    let log = report.fanin_log.unwrap();
    let counts: Vec<usize> = log.iter().map(|r| r.producers.len()).collect();
    assert_eq!(counts, vec![0, 1, 1], "no tensor-map edges in a manual scope");
}

#[test]
fn hbg_refuses_a_graph_larger_than_its_window_at_once() {
    let w = worker();
    let err = w
        .run(&tiny(RuntimeKind::Hbg, "8"), |o| {
            for _ in 0..8 {
                o.submit_dummy(&TaskArgs::new())?;
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.code(), Some(simpler_runtime::FatalCode::FlowControlDeadlock));
    assert!(
        err.to_string()
            .contains("hbg reclaims nothing while it builds the graph"),
        "{err}"
    );
}

/// A consumer meets its producer first through the tensor map (a WAIT-only edge, which holds
/// no pin) and then as the creator of another argument (WAIT|RETAIN): the second edge must
/// still pin the producer, or its heap is reclaimed while the consumer waits to run. The first
/// round's consumer sleeps while more rounds go through a heap of eight outputs' room on the
/// other scheduler thread (the first output takes two); unpinned, the first output's room is
/// reclaimed and the seventh round's output overwrites it before it is copied.
#[test]
fn a_creator_met_again_after_a_wait_only_edge_is_retained_until_its_consumer_ran() {
    let mut w = worker();
    // fill_and_mark: out[k] = scalar 0 (a runtime output), mark[0] = 1.
    w.register_kernel(10, "fill_and_mark", CoreType::Aiv, |ctx| {
        let (mark, out) = (ctx.view::<f32>(0)?, ctx.view::<f32>(1)?);
        let v = ctx.scalar_f32(0)?;
        for k in 0..out.len() {
            out.set(k, v);
        }
        mark.set(0, 1.0);
        Ok(())
    })
    .unwrap();
    // slow_copy: out = in[..out.len()] (arguments mark, in, out), after 100 ms when scalar 0
    // is 1.
    w.register_kernel(11, "slow_copy", CoreType::Aiv, |ctx| {
        if ctx.scalar(0)? == 1 {
            std::thread::sleep(Duration::from_millis(100));
        }
        let (i, o) = (ctx.view::<f32>(1)?, ctx.view::<f32>(2)?);
        for k in 0..o.len() {
            o.set(k, i.get(k));
        }
        Ok(())
    })
    .unwrap();
    const ROUNDS: u32 = 12;
    let mark = w.alloc_tensor(&[ROUNDS], DType::Float32).unwrap();
    let dst = w.alloc_tensor(&[ROUNDS, 256], DType::Float32).unwrap();
    w.run(&two_schedulers_with("ring_heap", "8192"), move |o| {
        for r in 0..ROUNDS {
            o.scope(|o| {
                let mut p = TaskArgs::new();
                p.output_existing(mark.view(&[1], &[r])?)
                    .output(TensorCreateInfo::new(
                        &[if r == 0 { 512 } else { 256 }],
                        DType::Float32,
                    )?)
                    .scalar_f32(r as f32);
                let tmp = o.submit_aiv(10, &p)?.output(0);
                let mut c = TaskArgs::new();
                c.input(mark.view(&[1], &[r])?)
                    .input(tmp)
                    .output_existing(dst.view(&[1, 256], &[r, 0])?)
                    .scalar(u64::from(r == 0));
                o.submit_aiv(11, &c)?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })?;
        }
        Ok(())
    })
    .unwrap();
    let got = w.read::<f32>(&dst).unwrap();
    for (r, row) in got.chunks(256).enumerate() {
        assert!(
            row.iter().all(|&v| v == r as f32),
            "round {r} read {:?}",
            &row[..4]
        );
    }
}

/// Registers kernel 12, `slow_inc`: `inc` after 20 ms.
fn register_slow_inc(w: &mut Worker) {
    w.register_kernel(12, "slow_inc", CoreType::Aiv, |ctx| {
        std::thread::sleep(Duration::from_millis(20));
        let x = ctx.view::<f32>(0)?;
        for k in 0..x.len() {
            x.set(k, x.get(k) + 1.0);
        }
        Ok(())
    })
    .unwrap();
}

/// A task links more pending producers than its ring's dep pool holds (8 against 4), so the
/// orchestrator waits for them to complete; they retire as they do (their scope has ended),
/// and a retired producer's slot reads PENDING for its next task: it must count as done, or
/// the wait never ends (DEP_POOL exhausted after the deadlock timeout).
#[test]
fn a_task_waiting_for_dep_pool_room_counts_retired_producers_as_done() {
    let mut w = worker();
    register_slow_inc(&mut w);
    let x = w.alloc_tensor(&[8], DType::Float32).unwrap();
    let sum = w.alloc_tensor(&[8], DType::Float32).unwrap();
    w.run(&two_schedulers_with("ring_dep_pool", "4"), move |o| {
        o.scope(|o| {
            o.scope(|o| {
                for i in 0..8 {
                    let mut a = TaskArgs::new();
                    a.inout(x.view(&[1], &[i])?);
                    o.submit_aiv(12, &a)?;
                }
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })?;
            let mut c = TaskArgs::new();
            c.input(x).output_existing(sum);
            o.submit_aiv(3, &c)?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        })
    })
    .unwrap();
    assert_eq!(w.read::<f32>(&sum).unwrap(), vec![1.0; 8]);
}

/// Found by a review: a task that waits for dep-pool room can hold its own ring's head with the
/// RETAIN pin it took as it was linked (here T's explicit dependency on H, the ring's oldest
/// task). Then no reclaim can come, the other consumers' entries stay in use, and the wait
/// only ended on the deadlock timeout (DEP_POOL_OVERFLOW after 500 ms) though every producer
/// had completed, and T needed no entry at all. The wait now counts T's pending producers
/// again as it goes.
#[test]
fn a_task_waiting_for_dep_pool_room_behind_its_own_pin_goes_on_when_its_producers_complete() {
    let mut w = worker();
    register_slow_inc(&mut w);
    w.register_kernel(13, "sleep", CoreType::Aiv, |_| {
        std::thread::sleep(Duration::from_millis(20));
        Ok(())
    })
    .unwrap();
    let x = w.alloc_tensor(&[8], DType::Float32).unwrap();
    let copies = w.alloc_tensor(&[5, 8], DType::Float32).unwrap();
    w.run(&two_schedulers_with("ring_dep_pool", "4"), move |o| {
        // Ring 1, in order: H (20 ms: pending, so pinned, when T links it), Q (20 ms), four
        // readers of Q's x (one dep-pool entry each while Q runs: the pool is full), then T
        // (depends on H, reads x).
        let h = o.scope(|o| o.submit_aiv(13, &TaskArgs::new()))?.id();
        o.scope(|o| {
            let mut q = TaskArgs::new();
            q.inout(x);
            o.submit_aiv(12, &q)
        })?;
        o.scope(|o| {
            for r in 0..4 {
                let mut c = TaskArgs::new();
                c.input(x).output_existing(copies.view(&[1, 8], &[r, 0])?);
                o.submit_aiv(3, &c)?;
            }
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        })?;
        o.scope(|o| {
            let mut t = TaskArgs::new();
            t.input(x).output_existing(copies.view(&[1, 8], &[4, 0])?).dep(h);
            o.submit_aiv(3, &t)?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        })
    })
    .unwrap();
    assert_eq!(w.read::<f32>(&copies).unwrap(), vec![1.0; 40]);
}

/// Slots are reused as fast as they retire (window 16) while consumers hold RETAIN pins on
/// runtime outputs and WAIT-only pins on explicit deps; every value must still be right.
#[test]
fn fast_slot_reuse_with_mixed_pins_stays_correct() {
    let w = worker();
    let acc = w.alloc_tensor(&[4], DType::Float32).unwrap();
    let out = w.alloc_tensor(&[16], DType::Float32).unwrap();
    {
        let mut cfg = tiny(RuntimeKind::Tmr, "16");
        cfg.scheduler_threads = 2;
        w.run(&cfg, move |o| {
            let mut prev = None;
            for _ in 0..20_000 {
                o.scope(|o| {
                    // A runtime output (its reader holds a RETAIN creator pin) ...
                    let mut a = TaskArgs::new();
                    a.input(out).output(TensorCreateInfo::new(&[16], DType::Float32)?);
                    if let Some(p) = prev {
                        a.dep_wait(p);
                    }
                    let t = o.submit_aiv(3, &a)?;
                    // ... read back into `out`, and an INOUT accumulation on acc.
                    let mut b = TaskArgs::new();
                    b.input(t.output(0)).output_existing(out);
                    o.submit_aiv(3, &b)?;
                    let mut c = TaskArgs::new();
                    c.inout(acc.view(&[1], &[0])?).dep_wait(t.id());
                    prev = Some(o.submit_aiv(0, &c)?.id());
                    Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                })?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(w.read::<f32>(&acc).unwrap(), vec![20_000.0, 0.0, 0.0, 0.0]);
    }
}

#[test]
fn a_ready_task_runs_while_the_orchestration_does_host_work() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let ran = Arc::new(AtomicBool::new(false));
    let seen_during_host_work = Arc::new(AtomicBool::new(false));
    let mut w = worker();
    let r = ran.clone();
    w.register_kernel(9, "flag", CoreType::Aiv, move |_| {
        r.store(true, Ordering::SeqCst);
        Ok(())
    })
    .unwrap();
    let (r, seen) = (ran.clone(), seen_during_host_work.clone());
    w.run(&CallConfig::default(), move |o| {
        // Let the schedulers run out of work and park, as between bursts of a real run.
        std::thread::sleep(Duration::from_millis(300));
        o.submit_aiv(9, &TaskArgs::new())?;
        // Host work without another submit or a scope end: the task must not be held back in
        // the orchestrator's publication batch until then.
        let start = Instant::now();
        while !r.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        seen.store(r.load(Ordering::SeqCst), Ordering::SeqCst);
        Ok(())
    })
    .unwrap();
    assert!(ran.load(Ordering::SeqCst));
    assert!(
        seen_during_host_work.load(Ordering::SeqCst),
        "the task ran only after the orchestration ended"
    );
}

/// Six tensor arguments a task, of every tag: more than a slot holds, so an `hbg` graph keeps
/// them in its argument arena (blocks of 4096 tensors: 10,000 tasks fill 15 of them) and `tmr`
/// on the slot's heap. The kernel checks each tag and computes with every argument.
#[test]
fn tasks_with_six_arguments_compute_the_same_numbers_on_both_runtimes() {
    use simpler_core::ArgTag;
    const N: u32 = 5000;
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let mut w = worker();
        // tmp = x + y; acc += tmp; d = acc + z.
        w.register_kernel(9, "six", CoreType::Aiv, |ctx| {
            let want = [
                ArgTag::Input,
                ArgTag::Input,
                ArgTag::Output,
                ArgTag::Inout,
                ArgTag::OutputExisting,
                ArgTag::NoDep,
            ];
            let got: Vec<_> = (0..ctx.tensor_count()).map(|i| ctx.tag(i)).collect();
            if got != want.map(Some) {
                return Err(simpler_runtime::KernelError(format!("tags {got:?}")));
            }
            let [x, y, tmp, acc, d, z] = [0, 1, 2, 3, 4, 5].map(|i| ctx.view::<f32>(i));
            let (x, y, tmp, acc, d, z) = (x?, y?, tmp?, acc?, d?, z?);
            tmp.set(0, x.get(0) + y.get(0));
            acc.set(0, acc.get(0) + tmp.get(0));
            d.set(0, acc.get(0) + z.get(0));
            Ok(())
        })
        .unwrap();
        let t = || w.alloc_tensor(&[N], DType::Float32).unwrap();
        let (x, y, acc, d, z) = (t(), t(), t(), t(), t());
        w.fill_with(&x, |k| k as f64).unwrap();
        w.fill_with(&y, |k| 2.0 * k as f64).unwrap();
        w.fill_with(&acc, |_| 1.0).unwrap();
        w.fill_with(&z, |_| 100.0).unwrap();
        w.run(&tiny(kind, "16384"), move |o| {
            for _round in 0..2 {
                for i in 0..N {
                    let at = |t: &simpler_core::Tensor| t.view(&[1], &[i]);
                    let mut a = TaskArgs::new();
                    a.input(at(&x)?)
                        .input(at(&y)?)
                        .output(TensorCreateInfo::new(&[1], DType::Float32)?)
                        .inout(at(&acc)?)
                        .output_existing(at(&d)?)
                        .no_dep(at(&z)?);
                    o.submit_aiv(9, &a)?;
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let expect = |f: fn(f32) -> f32| (0..N).map(|i| f(i as f32)).collect::<Vec<_>>();
        assert_eq!(
            w.read::<f32>(&acc).unwrap(),
            expect(|i| 1.0 + 6.0 * i),
            "{kind:?}"
        );
        assert_eq!(
            w.read::<f32>(&d).unwrap(),
            expect(|i| 101.0 + 6.0 * i),
            "{kind:?}"
        );
    }
}

/// A host-built graph unpacks a task's tensors only when its kernel reads one: tasks whose
/// kernels read none (here every other one) must leave nothing behind for the next task, which
/// reads its own arguments, not a neighbour's, on either of two scheduler threads.
#[test]
fn hbg_tasks_that_read_no_tensor_leave_the_next_tasks_arguments_intact() {
    const N: u32 = 4000;
    let mut w = worker();
    w.register_kernel(8, "ignores_its_tensors", CoreType::Aiv, |ctx| {
        // The count alone needs no unpacking.
        match ctx.tensor_count() {
            2 => Ok(()),
            n => Err(simpler_runtime::KernelError(format!("{n} tensors"))),
        }
    })
    .unwrap();
    let src = w.alloc_tensor(&[N], DType::Float32).unwrap();
    let dst = w.alloc_tensor(&[N], DType::Float32).unwrap();
    let unused = w.alloc_tensor(&[N], DType::Float32).unwrap();
    w.fill_with(&src, |k| 3.0 * k as f64 + 1.0).unwrap();
    let cfg = CallConfig {
        runtime: RuntimeKind::Hbg,
        scheduler_threads: 2,
        ..Default::default()
    };
    w.run(&cfg, move |o| {
        for i in 0..N {
            let mut a = TaskArgs::new();
            a.input(src.view(&[1], &[i])?)
                .output_existing(dst.view(&[1], &[i])?);
            o.submit_aiv(3, &a)?;
            let mut b = TaskArgs::new();
            b.input(unused.view(&[1], &[i])?)
                .output_existing(unused.view(&[1], &[(i + 1) % N])?);
            o.submit_aiv(8, &b)?;
        }
        Ok(())
    })
    .unwrap();
    let got = w.read::<f32>(&dst).unwrap();
    let wrong = (0..N as usize).find(|&k| got[k] != 3.0 * k as f32 + 1.0);
    assert_eq!(
        wrong.map(|k| (k, got[k])),
        None,
        "the first wrong element (index, value)"
    );
}

/// A host-built graph's tasks ready at launch reach the schedulers in runs of 512 per shape
/// (`LAUNCH_RUN`), the last ones partial: three full runs and a partial one of AIV tasks,
/// one partial run of AIC tasks, and every third AIV task followed by a second one that its
/// completion readies. Each task must run exactly once, on two scheduler threads that share
/// what they took.
#[test]
fn hbg_tasks_ready_at_launch_run_once_each_from_full_and_partial_runs() {
    const N: u32 = 3 * 512 + 7;
    const AIC: u32 = 100;
    let mut w = worker();
    w.register_kernel(7, "inc_aic", CoreType::Aic, |ctx| {
        let y = ctx.view::<f32>(0)?;
        y.set(0, y.get(0) + 1.0);
        Ok(())
    })
    .unwrap();
    let x = w.alloc_tensor(&[N], DType::Float32).unwrap();
    let y = w.alloc_tensor(&[AIC], DType::Float32).unwrap();
    let cfg = CallConfig {
        runtime: RuntimeKind::Hbg,
        scheduler_threads: 2,
        ..Default::default()
    };
    let report = w
        .run(&cfg, move |o| {
            for i in 0..N {
                let mut a = TaskArgs::new();
                a.inout(x.view(&[1], &[i])?);
                o.submit_aiv(0, &a)?;
                if i % 3 == 0 {
                    o.submit_aiv(0, &a)?; // readied by the first one's completion
                }
            }
            for i in 0..AIC {
                let mut a = TaskArgs::new();
                a.inout(y.view(&[1], &[i])?);
                o.submit_aic(7, &a)?;
            }
            Ok(())
        })
        .unwrap();
    let tasks = u64::from(N + N.div_ceil(3) + AIC);
    assert_eq!((report.tasks, report.completed), (tasks, tasks));
    let want: Vec<f32> = (0..N).map(|i| if i % 3 == 0 { 2.0 } else { 1.0 }).collect();
    assert_eq!(w.read::<f32>(&x).unwrap(), want);
    assert_eq!(w.read::<f32>(&y).unwrap(), vec![1.0; AIC as usize]);
}

/// A host-built graph on two clusters and two scheduler threads (the tests of how those
/// threads share what they took).
fn hbg_on_two_threads() -> CallConfig {
    CallConfig {
        runtime: RuntimeKind::Hbg,
        clusters: 2,
        scheduler_threads: 2,
        ..Default::default()
    }
}

/// The name of the scheduler thread a kernel runs on.
fn this_thread() -> String {
    std::thread::current().name().unwrap_or("?").to_string()
}

/// Two tasks whose kernels hold their scheduler thread (a real computation, here a sleep) run
/// on the two scheduler threads at once, although a host-built graph publishes them in one
/// run that one thread takes: the idle thread makes the holder share what it has not run
/// yet. Before, the thread that took the batch ran both, one after the other, while the other
/// thread parked.
#[test]
fn tasks_one_thread_took_together_are_shared_with_an_idle_thread() {
    use std::sync::{Arc, Mutex};
    let ran_on = Arc::new(Mutex::new(Vec::new()));
    let mut w = Worker::new();
    let log = ran_on.clone();
    w.register_kernel(0, "hold_thread", CoreType::Aiv, move |_| {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let me = this_thread();
        log.lock().unwrap().push(me);
        Ok(())
    })
    .unwrap();
    let cfg = hbg_on_two_threads();
    let report = w
        .run(&cfg, |o| {
            for _ in 0..2 {
                o.submit_aiv(0, &TaskArgs::new())?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(report.completed, 2);
    let mut threads = ran_on.lock().unwrap().clone();
    threads.sort();
    assert_eq!(threads, ["simpler-sched-0", "simpler-sched-1"]);
}

/// A scheduler thread of a host-built graph claims tasks of its run to run without locking
/// its lane for each (`ready::Claimed`: 8 of a run that keeps 64 for its peers); here the 8
/// after the first task hold their thread (a sleep), and the peer, with the rest of the run
/// shared with it and run at once, parks. The holder must then give back what it has not run
/// of its claim, so that the parked peer runs some of it: before the holder checked for a
/// parked peer, it ran all 8 itself, one after the other.
#[test]
fn tasks_a_thread_claimed_are_shared_with_a_parked_peer() {
    use std::sync::{Arc, Mutex};
    const CLAIMED: u64 = 8;
    const N: u64 = 1 + CLAIMED + 64; // the first task, the claim, what it leaves in the run
    let ran = Arc::new(Mutex::new(Vec::new()));
    let mut w = Worker::new();
    let log = ran.clone();
    w.register_kernel(0, "hold_if_claimed", CoreType::Aiv, move |ctx| {
        let i = ctx.scalar(0)?;
        if (1..=CLAIMED).contains(&i) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let me = this_thread();
        log.lock().unwrap().push((i, me));
        Ok(())
    })
    .unwrap();
    let cfg = hbg_on_two_threads();
    let report = w
        .run(&cfg, |o| {
            for i in 0..N {
                let mut a = TaskArgs::new();
                a.scalar(i);
                o.submit_aiv(0, &a)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(report.completed, N);
    let ran = ran.lock().unwrap().clone();
    let mut once: Vec<u64> = ran.iter().map(|(i, _)| *i).collect();
    once.sort_unstable();
    assert_eq!(once, (0..N).collect::<Vec<_>>(), "every task once");
    let mut holders: Vec<&str> = ran
        .iter()
        .filter(|(i, _)| (1..=CLAIMED).contains(i))
        .map(|(_, thread)| thread.as_str())
        .collect();
    holders.sort_unstable();
    holders.dedup();
    assert_eq!(holders, ["simpler-sched-0", "simpler-sched-1"], "{ran:?}");
}

/// Claimed tasks (see the test above) whose kernels occupy their cores past their return: a
/// thread whose AIV cores are all held cannot place the next task it claimed and gives the
/// claim back to its lane, where it waits for a core or for the peer. Every task must run
/// exactly once, with its value right.
#[test]
fn claimed_tasks_that_find_their_threads_cores_held_run_once_each() {
    const N: u32 = 600;
    let mut w = worker();
    w.register_kernel(1, "inc_and_occupy", CoreType::Aiv, |ctx| {
        let x = ctx.view::<f32>(0)?;
        x.set(0, x.get(0) + 1.0);
        ctx.occupy(std::time::Duration::from_micros(20));
        Ok(())
    })
    .unwrap();
    let x = w.alloc_tensor(&[N], DType::Float32).unwrap();
    let cfg = hbg_on_two_threads();
    let report = w
        .run(&cfg, move |o| {
            for i in 0..N {
                let mut a = TaskArgs::new();
                a.inout(x.view(&[1], &[i])?);
                o.submit_aiv(1, &a)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(report.completed, u64::from(N));
    assert_eq!(w.read::<f32>(&x).unwrap(), vec![1.0; N as usize]);
}

/// Three scheduler threads on however many cores the machine has, both runtimes: fan-outs
/// whose consumers one completion readies into its thread's lanes, fan-ins behind dummy tasks,
/// SPMD tasks whose blocks are re-queued to the other threads, AIC and AIV shapes side by
/// side. Every value must come out right however the threads share the ready tasks.
#[test]
fn three_scheduler_threads_share_fan_outs_spmd_and_dummies_correctly() {
    const ROUNDS: u32 = 200;
    const FAN: u32 = 8;
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let w = worker();
        let x = w.alloc_tensor(&[ROUNDS], DType::Float32).unwrap();
        let out = w.alloc_tensor(&[ROUNDS * FAN], DType::Float32).unwrap();
        let blocks = w.alloc_tensor(&[ROUNDS * 256], DType::Float32).unwrap();
        let cfg = CallConfig {
            runtime: kind,
            scheduler_threads: 3,
            ..Default::default()
        };
        let report = w
            .run(&cfg, move |o| {
                for r in 0..ROUNDS {
                    // x[r] += 1 twice, the second behind a dummy that waits on the first.
                    let mut p = TaskArgs::new();
                    p.inout(x.view(&[1], &[r])?);
                    let first = o.submit_aiv(0, &p)?.id();
                    let mut d = TaskArgs::new();
                    d.dep_wait(first);
                    let gate = o.submit_dummy(&d)?.id();
                    let mut q = TaskArgs::new();
                    q.inout(x.view(&[1], &[r])?).dep_wait(gate);
                    o.submit_aiv(0, &q)?;
                    // FAN readers of x[r]: ready together when the second increment completes.
                    for k in 0..FAN {
                        let mut c = TaskArgs::new();
                        c.input(x.view(&[1], &[r])?)
                            .output_existing(out.view(&[1], &[r * FAN + k])?);
                        o.submit_aiv(3, &c)?;
                    }
                    // An SPMD task of 16 AIV blocks and one AIC task on their own slices.
                    let mut s = TaskArgs::new();
                    s.output_existing(blocks.view(&[256], &[r * 256])?).block_num(16);
                    o.submit_aiv(1, &s)?;
                    let mut c = TaskArgs::new();
                    c.output_existing(blocks.view(&[256], &[r * 256])?);
                    o.submit_aic(2, &c)?;
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(report.completed, u64::from(ROUNDS * (3 + FAN + 2)), "{kind:?}");
        assert_eq!(w.read::<f32>(&x).unwrap(), vec![2.0; ROUNDS as usize], "{kind:?}");
        assert_eq!(
            w.read::<f32>(&out).unwrap(),
            vec![2.0; (ROUNDS * FAN) as usize],
            "{kind:?}"
        );
        let got = w.read::<f32>(&blocks).unwrap();
        for r in 0..ROUNDS as usize {
            let tile = &got[r * 256..(r + 1) * 256];
            let want: Vec<f32> = (0..256)
                .map(|i| match i {
                    0..16 => i as f32 * 10.0,
                    100..101 => 1.0,
                    _ => 0.0,
                })
                .collect();
            assert_eq!(tile, &want[..], "{kind:?} round {r}");
        }
    }
}

/// A task naming more producers than a scan de-duplicates (its fanin list is then indexed),
/// each of them twice and in another order the second time, one also as an explicit
/// dependency: every producer is claimed once, in order of first discovery, on both runtimes.
#[test]
fn a_task_with_many_producers_named_twice_claims_each_once() {
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let w = worker();
        const PRODUCERS: u32 = 12;
        let x = w.alloc_tensor(&[4 * PRODUCERS], DType::Float32).unwrap();
        let report = w
            .run(&recording(kind), move |o| {
                let mut ids = Vec::new();
                for i in 0..PRODUCERS {
                    let mut a = TaskArgs::new();
                    a.inout(x.view(&[4], &[4 * i])?);
                    ids.push(o.submit_aiv(0, &a)?.id());
                }
                let mut all = TaskArgs::new();
                for i in (0..PRODUCERS).chain((0..PRODUCERS).rev()) {
                    all.input(x.view(&[4], &[4 * i])?);
                }
                // An explicit dependency on a producer already found through the map.
                all.dep(ids[3]);
                o.submit_dummy(&all)?;
                Ok(())
            })
            .unwrap();
        assert_eq!(
            w.read::<f32>(&x).unwrap(),
            vec![1.0; 4 * PRODUCERS as usize],
            "{kind:?}"
        );
        let log = report.fanin_log.unwrap();
        let producers: Vec<_> = log[PRODUCERS as usize]
            .producers
            .iter()
            .map(|&(p, _)| p)
            .collect();
        // Explicit dependencies are discovered first, then the arguments in order.
        let ids: Vec<_> = log[..PRODUCERS as usize].iter().map(|r| r.task).collect();
        let expected: Vec<_> = std::iter::once(ids[3])
            .chain(ids.iter().copied().filter(|&p| p != ids[3]))
            .collect();
        assert_eq!(
            producers, expected,
            "{kind:?}: each producer once, in discovery order"
        );
    }
}

/// Found by a review: a task whose first eight producers are on one ring (its fanin then
/// indexed) and whose ninth is the first on another ring panicked `tmr`'s orchestrator
/// (an index into the second ring's de-duplication table, not made yet).
#[test]
fn a_ninth_producer_on_another_ring_is_deduplicated_not_a_panic() {
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let w = worker();
        let x = w.alloc_tensor(&[8], DType::Float32).unwrap();
        let y = w.alloc_tensor(&[4], DType::Float32).unwrap();
        let z = w.alloc_tensor(&[8], DType::Float32).unwrap();
        let report = w
            .run(&recording(kind), move |o| {
                for i in 0..8 {
                    let mut a = TaskArgs::new();
                    a.inout(x.view(&[1], &[i])?);
                    o.submit_aiv(0, &a)?;
                }
                o.scope(|o| {
                    let mut b = TaskArgs::new();
                    b.inout(y);
                    o.submit_aiv(0, &b)?;
                    // copy x → z, reading y too (and y twice: found again, wired once).
                    let mut c = TaskArgs::new();
                    c.input(x).output_existing(z).input(y).input(y);
                    o.submit_aiv(3, &c)?;
                    Ok(())
                })
            })
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(w.read::<f32>(&z).unwrap(), vec![1.0; 8], "{kind:?}");
        let log = report.fanin_log.unwrap();
        let last = log.last().unwrap();
        assert_eq!(last.producers.len(), 9, "{kind:?}: {:?}", last.producers);
        // A host-built graph keeps every task on ring 0.
        let inner = if kind == RuntimeKind::Tmr { 1 } else { 0 };
        assert_eq!(
            last.producers.iter().map(|&(p, _)| p.ring()).collect::<Vec<_>>(),
            [[0; 8].as_slice(), &[inner]].concat(),
            "{kind:?}"
        );
    }
}

/// Found by a review: once a buffer had its own index (its tiles written by many tasks), an
/// empty view met the tiles around it there, and an empty writer or reader got an edge: an
/// empty view overlaps nothing (`../shared/DECISIONS.md`), as the ordinary lookup already said.
#[test]
fn empty_views_get_no_edge_from_a_buffers_own_index() {
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let w = worker();
        let a = w.alloc_tensor(&[64], DType::Float32).unwrap();
        let report = w
            .run(&recording(kind), move |o| {
                // 20 writers of two elements each: the buffer gets its own index.
                for i in 0..20 {
                    let mut t = TaskArgs::new();
                    t.output_existing(a.view(&[2], &[2 * i])?);
                    o.submit_dummy(&t)?;
                }
                let mut reader = TaskArgs::new();
                reader.input(a.view(&[0], &[5])?); // empty, inside writer 2's [4, 6)
                o.submit_dummy(&reader)?;
                let mut writer = TaskArgs::new();
                writer.output_existing(a.view(&[0], &[50])?); // empty: writes nothing
                o.submit_dummy(&writer)?;
                let mut after = TaskArgs::new();
                after.input(a.view(&[32], &[32])?); // [32, 64): writers 16..19, not the empty one
                o.submit_dummy(&after)?;
                Ok(())
            })
            .unwrap();
        let log = report.fanin_log.unwrap();
        let producers = |i: usize| {
            log[i]
                .producers
                .iter()
                .map(|&(p, _)| p.local())
                .collect::<Vec<_>>()
        };
        assert_eq!(producers(20), Vec::<u32>::new(), "{kind:?}: the empty reader");
        assert_eq!(producers(21), Vec::<u32>::new(), "{kind:?}: the empty writer");
        let mut after = producers(22);
        after.sort_unstable();
        let writers: Vec<u32> = (16..20).map(|i| log[i].task.local()).collect();
        assert_eq!(
            after, writers,
            "{kind:?}: the writers of [32, 40), not the empty writer"
        );
    }
}

/// Holds one ready task in the orchestrator's publication batch with no scope end, no full
/// batch and no scheduler asleep (the one scheduler runs a long kernel meanwhile), calls
/// `release`, then waits (as host work would, without submitting) up to `wait` for the task to
/// run. True when it ran within the wait; `extra` tasks are those `release` submits.
fn held_task_runs_after(
    wait: std::time::Duration,
    extra: u64,
    release: impl FnOnce(
            &mut simpler_runtime::Orchestrator,
            simpler_core::Tensor,
        ) -> Result<(), simpler_runtime::Stopped>
        + Send
        + 'static,
) -> bool {
    use simpler_runtime::orchestrator::READY_BATCH;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Instant;
    let (busy, ran) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let submitted = Arc::new(AtomicBool::new(false));
    let mut w = Worker::new();
    let (b, s) = (busy.clone(), submitted.clone());
    // Busy until 300 ms after the task under test was submitted, however late that comes (a
    // loaded machine can stall the orchestration that long): at its submit the scheduler is
    // certainly running this kernel, not asleep.
    w.register_kernel(0, "busy", CoreType::Aiv, move |_| {
        b.store(true, Ordering::SeqCst);
        let t0 = Instant::now();
        while !s.load(Ordering::SeqCst) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(300));
        Ok(())
    })
    .unwrap();
    w.register_kernel(1, "nop", CoreType::Aiv, |_| Ok(())).unwrap();
    let r = ran.clone();
    w.register_kernel(2, "mark", CoreType::Aiv, move |_| {
        r.store(true, Ordering::SeqCst);
        Ok(())
    })
    .unwrap();
    let x = w.alloc_tensor(&[4], DType::Float32).unwrap();
    let cfg = CallConfig {
        runtime: RuntimeKind::Tmr,
        clusters: 1,
        scheduler_threads: 1,
        ..Default::default()
    };
    let (busy_in, ran_in, submitted_in) = (busy.clone(), ran.clone(), submitted.clone());
    let seen = Arc::new(AtomicBool::new(false));
    let seen_in = seen.clone();
    let until = move |flag: &AtomicBool| {
        let t0 = Instant::now();
        while !flag.load(Ordering::SeqCst) && t0.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(1));
        }
        flag.load(Ordering::SeqCst)
    };
    let report = w
        .run(&cfg, move |o| {
            // A full batch publishes the long task: the scheduler is then busy, not asleep.
            o.submit_aiv(0, &TaskArgs::new())?;
            for _ in 1..READY_BATCH {
                o.submit_aiv(1, &TaskArgs::new())?;
            }
            assert!(until(&busy_in), "the full batch was not published");
            // Nothing else may stay held: had the scheduler woken between the long task's
            // submit (published at once to a parked scheduler) and the next ones', those would
            // still be held, and the task under test would fill their batch and go with it
            // (CI saw that once). Publishing them now leaves the task under test alone.
            o.publish_ready();
            let mut a = TaskArgs::new();
            a.output_existing(x);
            o.submit_aiv(2, &a)?;
            submitted_in.store(true, Ordering::SeqCst);
            release(o, x)?;
            seen_in.store(until(&ran_in), Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
    assert_eq!(report.completed, READY_BATCH as u64 + 1 + extra);
    assert!(
        ran.load(Ordering::SeqCst),
        "the end of the orchestration publishes every task"
    );
    seen.load(Ordering::SeqCst)
}

/// A held ready task reaches the scheduler after
/// [`READY_HOLD`](simpler_runtime::orchestrator::READY_HOLD) more submits, none of them ready
/// (a chain behind it). When only scope ends published a lone ready task, it waited forever.
#[test]
fn a_held_ready_task_is_published_after_ready_hold_submits_without_a_scope_end() {
    use simpler_runtime::orchestrator::READY_HOLD;
    let ran = held_task_runs_after(Duration::from_secs(10), READY_HOLD, |o, x| {
        for _ in 0..READY_HOLD {
            let mut c = TaskArgs::new();
            c.inout(x);
            o.submit_dummy(&c)?;
        }
        Ok(())
    });
    assert!(ran, "the held ready task never reached the scheduler");
}

/// `publish_ready` hands a held ready task over at once: what an orchestration calls before
/// long host work.
#[test]
fn publish_ready_hands_a_held_task_over_before_host_work() {
    assert!(held_task_runs_after(Duration::from_secs(10), 0, |o, _| {
        o.publish_ready();
        Ok(())
    }));
    // Without it the task stays held while the host works (here for a second).
    assert!(!held_task_runs_after(Duration::from_secs(1), 0, |_, _| Ok(())));
}

/// A slot reused by a task without scalars after one with them gives its kernel none (the
/// submit clears a slot's scalars only when it or its last task has any). Four-slot windows
/// on tmr reuse every slot many times; hbg's slots are fresh.
#[test]
fn a_reused_slot_keeps_no_scalars_of_its_last_task() {
    let mut w = worker();
    // scalars_seen: out[0] = the scalar count * 100 + scalar 0 (when there is one).
    w.register_kernel(13, "scalars_seen", CoreType::Aiv, |ctx| {
        let out = ctx.view::<f32>(0)?;
        let first = if ctx.scalar_count() > 0 {
            ctx.scalar(0)? as f32
        } else {
            0.0
        };
        out.set(0, ctx.scalar_count() as f32 * 100.0 + first);
        Ok(())
    })
    .unwrap();
    const TASKS: u32 = 40;
    // Task i has scalars (i % 7, then 9) only when i % 3 == 1, so most slots alternate.
    let with_scalars = |i: u32| i % 3 == 1;
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let out = w.alloc_tensor(&[TASKS], DType::Float32).unwrap();
        let window = if kind == RuntimeKind::Tmr { "4" } else { "64" };
        w.run(&tiny(kind, window), move |o| {
            for i in 0..TASKS {
                o.scope(|o| {
                    let mut a = TaskArgs::new();
                    a.output_existing(out.view(&[1], &[i])?);
                    if with_scalars(i) {
                        a.scalar(u64::from(i % 7)).scalar(9);
                    }
                    o.submit_aiv(13, &a)?;
                    Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
                })?;
            }
            Ok(())
        })
        .unwrap();
        let got = w.read::<f32>(&out).unwrap();
        let want: Vec<f32> = (0..TASKS)
            .map(|i| {
                if with_scalars(i) {
                    200.0 + (i % 7) as f32
                } else {
                    0.0
                }
            })
            .collect();
        assert_eq!(got, want, "{kind:?}");
    }
}

/// Each submit returns its own OUTPUT tensors and no earlier submit's: the orchestrator keeps
/// them in a scratch list between the payload and the return (three spill past the inline
/// two), and a task without outputs returns none.
#[test]
fn each_submit_returns_its_own_outputs_only() {
    let w = worker();
    let src = w.alloc_tensor(&[64], DType::Float32).unwrap();
    let dst = w.alloc_tensor(&[64], DType::Float32).unwrap();
    let count = w.alloc_tensor(&[4], DType::Float32).unwrap();
    w.fill_with(&src, |k| 3.0 * k as f64).unwrap();
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let cfg = CallConfig {
            runtime: kind,
            ..Default::default()
        };
        w.run(&cfg, move |o| {
            o.scope(|o| {
                let ci = |n| TensorCreateInfo::new(&[n], DType::Float32);
                // copy: src -> the first of three runtime outputs.
                let mut a = TaskArgs::new();
                a.input(src).output(ci(64)?).output(ci(8)?).output(ci(16)?);
                let three = o.submit_aiv(3, &a)?;
                let shapes: Vec<&[u32]> = three.outputs().iter().map(|t| t.shape()).collect();
                assert_eq!(shapes, [&[64][..], &[8], &[16]]);
                // inc over count: no outputs, and none of the task before.
                let mut b = TaskArgs::new();
                b.inout(count);
                let none = o.submit_aiv(0, &b)?;
                assert!(none.outputs().is_empty());
                assert_eq!(none.get(0), None);
                // copy: the first output -> one runtime output -> dst.
                let mut c = TaskArgs::new();
                c.input(three.output(0)).output(ci(64)?);
                let one = o.submit_aiv(3, &c)?;
                assert_eq!(one.outputs().len(), 1);
                assert_ne!(one.output(0), three.output(0));
                let mut d = TaskArgs::new();
                d.input(one.output(0)).output_existing(dst);
                o.submit_aiv(3, &d)?;
                Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
            })?;
            Ok(())
        })
        .unwrap();
        assert_eq!(
            w.read::<f32>(&dst).unwrap(),
            (0..64).map(|k| 3.0 * k as f32).collect::<Vec<_>>(),
            "{kind:?}"
        );
    }
    assert_eq!(w.read::<f32>(&count).unwrap(), [2.0; 4], "one inc a run");
}
