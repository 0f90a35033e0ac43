//! Running one ready task: claim a block, pick virtual cores, call the kernels, complete.

use crate::sync::Ordering;
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrayvec::ArrayVec;
use simpler_artifacts::swimlane::{self as lane_rows, TaskRow};

use crate::collectors::args_dump::{ArgsDumpProducer, Stage};
use crate::collectors::swimlane::{Row, SwimlaneProducer};
use crate::fatal::FatalCode;
use crate::platform::kernel::KernelCtx;
use crate::platform::{CoreId, CoreType, Platform, TaskShape};
use crate::shared::{AdvanceBatch, RunShared};
use crate::slot::{shape_from_u8, SlotRef};

/// Round-robin choice among the clusters a scheduler thread owns.
pub(crate) struct CoreCursor {
    platform: Platform,
    owned: Vec<u32>,
    next: usize,
}

impl CoreCursor {
    pub fn new(platform: Platform, thread_index: u32, thread_count: u32) -> Self {
        let mut owned: Vec<u32> = (0..platform.clusters)
            .filter(|c| c % thread_count == thread_index)
            .collect();
        if owned.is_empty() {
            owned.push(thread_index % platform.clusters);
        }
        CoreCursor {
            platform,
            owned,
            next: 0,
        }
    }
    fn next_cluster(&mut self) -> u32 {
        let c = self.owned[self.next % self.owned.len()];
        self.next = self.next.wrapping_add(1);
        c
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string payload)".into())
}

/// A scheduler thread's diagnostics producers (each `None` when its diagnostic is off).
pub(crate) struct ThreadProbes {
    /// Swimlane timing.
    pub lane: Option<SwimlaneProducer>,
    /// Args dump.
    pub dump: Option<ArgsDumpProducer>,
}

/// Runs one claimed block (or completes a dummy) of task `s`.
pub(crate) fn execute(
    shared: &RunShared,
    s: SlotRef,
    cursor: &mut CoreCursor,
    scratch: &mut Vec<SlotRef>,
    batch: &mut AdvanceBatch,
    probes: &mut ThreadProbes,
    thread: u32,
) {
    let ThreadProbes { lane, dump } = probes;
    let dispatch_ns = lane.as_ref().map_or(0, |l| l.clock.now());
    let slot = shared.slot(s);
    let shape = shape_from_u8(slot.shape.load(Ordering::Relaxed));
    if shape == TaskShape::Dummy {
        let id = lane.as_ref().map(|_| slot.payload.read().id);
        shared.complete(s, scratch, batch);
        if let (Some(l), Some(id)) = (lane.as_mut(), id) {
            l.dummy_done(thread, id.raw(), dispatch_ns);
        }
        return;
    }
    let payload = slot.payload.read();
    let block = slot.next_block.fetch_add(1, Ordering::AcqRel);
    if block == 0 {
        // Before any block runs: the other blocks are queued only after this capture.
        if let Some(d) = dump.as_mut() {
            d.capture(Stage::BeforeDispatch, &payload, &shared.memory);
        }
    }
    if block + 1 < payload.block_num {
        shared.push_ready(s);
    }
    let cluster = cursor.next_cluster();
    let kernels = payload.kernels.as_array();
    let mut rows: ArrayVec<TaskRow, 3> = ArrayVec::new();
    let mut subtasks = 0;
    for (sub, &kid) in kernels.iter().enumerate() {
        if kid < 0 {
            continue;
        }
        subtasks += 1;
        let core: CoreId = match sub {
            0 => cursor.platform.aic(cluster),
            k => cursor.platform.aiv(
                cluster,
                if shape == TaskShape::Mix {
                    k as u32 - 1
                } else {
                    (block + cluster) % 2
                },
            ),
        };
        let Some(def) = shared.kernels.get(kid) else {
            shared.fatal.raise(
                FatalCode::KernelFailed,
                format!("task {} names unregistered kernel {kid}", payload.id),
            );
            shared.wake_all();
            return;
        };
        let ctx = KernelCtx {
            tensors: &payload.args,
            scalars: &payload.scalars,
            memory: &shared.memory,
            block_idx: block,
            block_num: payload.block_num,
            core,
        };
        let start_ns = lane.as_ref().map_or(0, |l| l.clock.now());
        let outcome = catch_unwind(AssertUnwindSafe(|| (def.body)(&ctx)));
        let end_ns = lane.as_ref().map_or(0, |l| l.clock.now());
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.0),
            Err(panic) => Some(format!("panicked: {}", panic_message(panic.as_ref()))),
        };
        if let Some(why) = failure {
            shared.fatal.raise(
                FatalCode::KernelFailed,
                format!(
                    "kernel {} (func_id {kid}) of task {} block {block} on {core}: {why}",
                    def.name, payload.id
                ),
            );
            shared.wake_all();
            return;
        }
        if lane.is_some() {
            rows.push(TaskRow {
                task_id: payload.id.raw(),
                kernel_ids: kernels,
                func_id: kid,
                block_idx: block,
                block_num: payload.block_num,
                core_id: core.index,
                core_type: match core.core_type {
                    CoreType::Aic => lane_rows::CoreType::Aic,
                    CoreType::Aiv => lane_rows::CoreType::Aiv,
                },
                sched_thread: Some(thread),
                reg_task_id: 0,
                dispatch_ns: Some(dispatch_ns),
                receive_ns: start_ns,
                start_ns,
                end_ns,
                finish_ns: None,
            });
        }
    }
    drop(payload);
    if slot.remaining.fetch_sub(subtasks, Ordering::AcqRel) == subtasks {
        // Every block has finished (blocks write disjoint slices): one capture of the whole
        // outputs, before completion lets consumers run and the slot be reused.
        if let Some(d) = dump.as_mut() {
            d.capture(Stage::AfterCompletion, &slot.payload.read(), &shared.memory);
        }
        shared.complete(s, scratch, batch);
    }
    if let Some(l) = lane.as_mut() {
        let finish_ns = l.clock.now();
        for mut r in rows {
            r.finish_ns = Some(finish_ns);
            l.push(Row::Task(r));
        }
    }
}
