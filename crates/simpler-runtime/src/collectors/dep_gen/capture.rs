//! The device-side capture (`tmr`): one record chain per submit, written before any lookup,
//! handed to the host through the bounded buffer channel.

use std::sync::Arc;
use std::time::Duration;

use simpler_core::{TaskArgs, TaskId};

use super::record::{
    slots_for, SlotBuffer, FLAG_EARLY_DISPATCH, FLAG_HAS_OVERFLOW, FLAG_LAST_OVERFLOW, FLAG_MANUAL,
    FLAG_OVERFLOW, INLINE_DEPS, OVERFLOW_DEPS,
};
use crate::collectors::channel::{BufferChannel, Producer};
use crate::platform::MixedKernels;

/// How many slots past the next one the capture asks for the lines of
/// ([`super::record::DepGenSlot::prefetch_base`], a submit with as many arguments as this one):
/// a few submits ahead, so the lines have arrived when the record comes.
const PREFETCH_AHEAD: usize = 3;

/// Counters and leftovers the host reads once the producer's stop is proven.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CaptureFinal {
    /// Submits attempted.
    pub total: u64,
    /// Extra chain slots committed.
    pub total_overflow: u64,
    /// Slots lost (a whole buffer when its hand-over failed, one per submit without a buffer).
    pub dropped: u64,
    /// Slots still in the producer's buffer (never flushed).
    pub leftover: u64,
    /// Explicit deps cut off because one chain exceeded a whole buffer, and the first message.
    pub truncated_deps: u64,
    pub truncation: Option<String>,
}

/// See the module docs.
pub(crate) struct DepGenCapture {
    producer: Producer<SlotBuffer>,
    fin: CaptureFinal,
}

impl DepGenCapture {
    pub fn new(channel: Arc<BufferChannel<SlotBuffer>>, wait: Duration) -> Self {
        DepGenCapture {
            producer: Producer::new(channel, wait),
            fin: CaptureFinal::default(),
        }
    }

    fn switch(&mut self) {
        self.fin.dropped += self.producer.hand_over() as u64;
    }

    /// Records one submit (`tensors` before materialization: OUTPUT args carry no view).
    pub fn record(&mut self, task: TaskId, manual: bool, kernels: MixedKernels, args: &TaskArgs<'_>) {
        self.fin.total += 1;
        let mut deps = args.explicit_dep_count();
        let needed = slots_for(deps);
        if self
            .producer
            .current()
            .is_some_and(|b| b.count > 0 && b.count + needed > b.slots.len())
        {
            self.switch();
        }
        let Some(buf) = self.producer.buffer(|_| {}) else {
            self.fin.dropped += 1;
            return;
        };
        let capacity = buf.slots.len() - buf.count;
        let mut needed = needed;
        if needed > capacity {
            let keep = INLINE_DEPS + (capacity - 1) * OVERFLOW_DEPS;
            let lost = deps - keep;
            self.fin.truncated_deps += lost as u64;
            self.fin.truncation.get_or_insert_with(|| {
                format!(
                    "task {task}: {deps} explicit deps need {needed} record slots but a buffer holds {}; \
                     the last {lost} deps were not captured",
                    buf.slots.len()
                )
            });
            deps = keep;
            needed = capacity;
        }
        let launch = args.launch();
        let mut flags = if manual { FLAG_MANUAL } else { 0 };
        if args.early_resolve() {
            flags |= FLAG_EARLY_DISPATCH;
        }
        if needed > 1 {
            flags |= FLAG_HAS_OVERFLOW;
        }
        let base = &mut buf.slots[buf.count];
        base.task_id = task;
        base.flags = flags;
        base.kernel_ids = kernels.as_array();
        base.block_num = u32::from(launch.block_num);
        base.set_base(args.tensors(), args.explicit_deps().take(deps.min(INLINE_DEPS)));
        for k in 1..needed {
            let slot = &mut buf.slots[buf.count + k];
            slot.task_id = task;
            slot.flags = FLAG_OVERFLOW | if k + 1 == needed { FLAG_LAST_OVERFLOW } else { 0 };
            let from = INLINE_DEPS + (k - 1) * OVERFLOW_DEPS;
            let to = (from + OVERFLOW_DEPS).min(deps);
            slot.set_overflow(args.explicit_deps().skip(from).take(to - from));
        }
        self.fin.total_overflow += needed as u64 - 1;
        // Publication: the count covers the whole chain at once.
        buf.count += needed;
        if let Some(ahead) = buf.slots.get(buf.count + PREFETCH_AHEAD) {
            ahead.prefetch_base(args.tensors().len());
        }
    }

    /// Hands the partial buffer over at the end of orchestration.
    pub fn flush(&mut self) {
        if self.producer.current().is_some_and(|b| b.count > 0) {
            self.switch();
        }
    }

    /// The final state (only read with producer-stop proof).
    pub fn finish(mut self) -> CaptureFinal {
        self.fin.leftover = self.producer.current().map_or(0, |b| b.count as u64);
        self.fin
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectors::channel::ChannelFaults;
    use crate::collectors::dep_gen::record::{
        slots_for, FLAG_HAS_OVERFLOW, FLAG_LAST_OVERFLOW, FLAG_OVERFLOW,
    };
    use simpler_core::{DepKind, TaskArgs};

    fn capture(slots: usize, buffers: usize) -> (Arc<BufferChannel<SlotBuffer>>, DepGenCapture) {
        let bufs = (0..buffers).map(|_| Box::new(SlotBuffer::new(slots))).collect();
        let ch = Arc::new(BufferChannel::new(bufs, ChannelFaults::default()));
        (ch.clone(), DepGenCapture::new(ch, Duration::from_millis(10)))
    }

    #[test]
    fn a_chain_uses_the_slot_count_and_flags_of_the_spec() {
        for n in [1usize, 64, 65, 200, 646, 647, 1300, 5000] {
            let (ch, mut c) = capture(64, 1);
            let ids: Vec<TaskId> = (0..n as u32).map(|i| TaskId::new(1, i)).collect();
            let kinds: Vec<DepKind> = (0..n)
                .map(|i| {
                    if i % 7 == 0 {
                        DepKind::Wait
                    } else {
                        DepKind::WaitRetain
                    }
                })
                .collect();
            let mut a = TaskArgs::new();
            a.set_dependencies_with_kinds(&ids, &kinds);
            c.record(TaskId::new(1, n as u32), false, MixedKernels::NONE, &a);
            c.flush();
            let fin = c.finish();
            let slots = slots_for(n);
            assert_eq!(
                (fin.total, fin.total_overflow, fin.dropped, fin.leftover),
                (1, slots as u64 - 1, 0, 0),
                "n={n}"
            );
            let buf = ch.take().expect("flushed");
            assert_eq!(buf.count, slots);
            let flags: Vec<u32> = buf.slots[..slots].iter().map(|s| s.flags).collect();
            let mut want = vec![if slots > 1 { FLAG_HAS_OVERFLOW } else { 0 }];
            for k in 1..slots {
                want.push(FLAG_OVERFLOW | if k + 1 == slots { FLAG_LAST_OVERFLOW } else { 0 });
            }
            assert_eq!(flags, want, "n={n}");
            let got: Vec<_> = buf.slots[..slots].iter().flat_map(|s| s.deps()).collect();
            let expect: Vec<_> = ids.iter().copied().zip(kinds.iter().copied()).collect();
            assert_eq!(got, expect, "every dep, in order, with its kind; n={n}");
        }
    }

    #[test]
    fn a_chain_is_never_split_across_buffers() {
        let (ch, mut c) = capture(4, 2);
        let ids: Vec<TaskId> = (0..700).map(|i| TaskId::new(0, i)).collect();
        c.record(TaskId::new(0, 1000), false, MixedKernels::NONE, &TaskArgs::new());
        c.record(TaskId::new(0, 1001), false, MixedKernels::NONE, &TaskArgs::new());
        let mut a = TaskArgs::new();
        a.set_dependencies(&ids); // 3 slots: does not fit the 2 left, so the buffer switches first
        c.record(TaskId::new(0, 1002), false, MixedKernels::NONE, &a);
        let first = ch.take().unwrap();
        assert_eq!(first.count, 2);
        c.flush();
        let second = ch.take().unwrap();
        assert_eq!(second.count, 3);
        assert_eq!(second.slots[0].task_id, TaskId::new(0, 1002));
    }

    #[test]
    fn a_chain_bigger_than_a_buffer_is_truncated_with_an_error() {
        let (ch, mut c) = capture(3, 1);
        let ids: Vec<TaskId> = (0..2000).map(|i| TaskId::new(0, i)).collect();
        let mut a = TaskArgs::new();
        a.set_dependencies(&ids); // needs 5 slots, a buffer holds 3
        c.record(TaskId::new(0, 3000), false, MixedKernels::NONE, &a);
        c.flush();
        let fin = c.finish();
        let kept = INLINE_DEPS + 2 * OVERFLOW_DEPS;
        assert_eq!(fin.truncated_deps, (2000 - kept) as u64);
        assert_eq!(
            fin.truncation.as_deref(),
            Some("task (0, 3000): 2000 explicit deps need 5 record slots but a buffer holds 3; the last 772 deps were not captured")
        );
        assert_eq!((fin.total, fin.total_overflow), (1, 2));
        let buf = ch.take().unwrap();
        assert_eq!(buf.slots[..3].iter().map(|s| s.dep_count()).sum::<usize>(), kept);
        assert_eq!(buf.slots[2].flags, FLAG_OVERFLOW | FLAG_LAST_OVERFLOW);
    }

    #[test]
    fn no_buffer_counts_one_dropped_submit() {
        let bufs = vec![Box::new(SlotBuffer::new(4))];
        let ch = Arc::new(BufferChannel::new(
            bufs,
            ChannelFaults {
                starve_free: true,
                refuse_ready: false,
            },
        ));
        let mut c = DepGenCapture::new(ch, Duration::ZERO);
        c.record(TaskId::new(0, 0), false, MixedKernels::NONE, &TaskArgs::new());
        let fin = c.finish();
        assert_eq!((fin.total, fin.dropped, fin.total_overflow), (1, 1, 0));
    }
}
