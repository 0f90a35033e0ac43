//! Where each task's dependency arrows attach, and when it ended.
//!
//! A task's anchor is its earliest-starting execution row (ties: the smaller core id): for an
//! SPMD task that is its earliest block, for a MIX task its earliest block of any subslot, so
//! every `(pred, succ)` pair gets exactly one arrow, from the predecessor's anchor start to the
//! successor's anchor start. The task's end is the latest `end_ns` over all its rows, so a pair
//! is an `hb_violation` when any block of the predecessor ends after the successor starts.
//!
//! Tasks with no execution row fall back to, in order: their dummy marker (start = end =
//! `finish_ns`), then their orchestrator submit span (a task that never ran, e.g. the hidden
//! allocation task of `alloc_tensors`). A task with none of these has no anchor, and arrows to
//! or from it are counted as not drawn.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use simpler_artifacts::swimlane::SwimlaneFile;

use crate::layout::Layout;
use crate::tracks::TrackId;

/// What a task's anchor is; a better (lower) kind replaces a worse one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AnchorKind {
    /// An execution row on a core.
    Core,
    /// A dummy task's marker on a scheduler track.
    Dummy,
    /// The orchestrator's submit span.
    Submit,
}

/// One task's arrow anchor and timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    /// What the anchor is.
    pub kind: AnchorKind,
    /// The anchor slice's track.
    pub track: TrackId,
    /// The anchor slice's start, ns: where arrows attach.
    pub start_ns: u64,
    /// The latest end over the task's rows of this kind, ns.
    pub end_ns: u64,
    /// Unique predecessors in deps.json.
    pub fanin: u32,
    /// Unique successors in deps.json.
    pub fanout: u32,
    tie: u32,
}

/// Anchors by raw task id.
#[derive(Debug, Default)]
pub struct Anchors {
    map: HashMap<u64, Anchor, BuildHasherDefault<TaskIdHasher>>,
}

/// A multiplicative hash for task ids (the keys are trusted run output, so no protection
/// against chosen collisions is needed). Five lookups per dependency pair make the default
/// SipHash a visible share of a conversion.
#[derive(Debug, Default)]
struct TaskIdHasher(u64);

impl Hasher for TaskIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        // Fibonacci hashing: the high bits, which hashbrown uses, depend on every input bit.
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Anchors {
    /// Anchors every task of `file`, on the tracks of `layout`.
    pub fn new(file: &SwimlaneFile, layout: &Layout) -> Anchors {
        let mut a = Anchors {
            map: HashMap::with_capacity_and_hasher(
                file.orchestrator.len().max(file.tasks.len() / 2),
                BuildHasherDefault::default(),
            ),
        };
        for (r, &track) in file.tasks.iter().zip(&layout.worker) {
            a.offer(
                r.task_id,
                AnchorKind::Core,
                track,
                r.start_ns,
                r.end_ns,
                r.core_id,
            );
        }
        for (r, &track) in file.dummy_tasks.iter().zip(&layout.dummy) {
            a.offer(
                r.task_id,
                AnchorKind::Dummy,
                track,
                r.finish_ns,
                r.finish_ns,
                r.sched_thread,
            );
        }
        for (r, &track) in file.orchestrator.iter().zip(&layout.orchestrator) {
            a.offer(
                r.task_id,
                AnchorKind::Submit,
                track,
                r.submit_start_ns,
                r.submit_end_ns,
                0,
            );
        }
        a
    }

    fn offer(&mut self, task: u64, kind: AnchorKind, track: TrackId, start_ns: u64, end_ns: u64, tie: u32) {
        let candidate = Anchor {
            kind,
            track,
            start_ns,
            end_ns,
            fanin: 0,
            fanout: 0,
            tie,
        };
        self.map
            .entry(task)
            .and_modify(|a| {
                if kind < a.kind {
                    *a = candidate;
                } else if kind == a.kind {
                    let end_ns = a.end_ns.max(end_ns);
                    if (start_ns, tie) < (a.start_ns, a.tie) {
                        *a = candidate;
                    }
                    a.end_ns = end_ns;
                }
            })
            .or_insert(candidate);
    }

    /// Counts unique fanin and fanout per anchored task from unique `(pred, succ)` pairs.
    pub fn count_degrees(&mut self, pairs: &[(u64, u64)]) {
        for &(pred, succ) in pairs {
            if let Some(a) = self.map.get_mut(&pred) {
                a.fanout += 1;
            }
            if let Some(a) = self.map.get_mut(&succ) {
                a.fanin += 1;
            }
        }
    }

    /// The anchor of `task`, if it has any row.
    pub fn get(&self, task: u64) -> Option<&Anchor> {
        self.map.get(&task)
    }
}
