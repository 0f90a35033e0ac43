//! Which scheduler `complete` phase saw a finish: per thread, the `complete` phase that
//! contains the instant, else the next one to start (the original's rule; a thread's
//! `complete` phases do not overlap).

use simpler_artifacts::swimlane::TaskRow;

use crate::model::Run;

/// One `complete` phase of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Complete {
    /// Its index in the thread's phase list.
    pub phase: usize,
    /// Start, ns.
    pub start_ns: u64,
    /// End, ns.
    pub end_ns: u64,
}

/// The `complete` phases of every scheduler thread, by start, and how many rows' finishes
/// each one saw.
#[derive(Debug, Default)]
pub struct Completes {
    by_thread: Vec<Vec<Complete>>,
    /// Rows whose finish each phase saw, by thread and phase index.
    attributed: Vec<Vec<u64>>,
}

impl Completes {
    /// Indexes the `complete` phases of `run` and attributes every row's finish.
    pub fn new(run: &Run) -> Completes {
        let by_thread: Vec<Vec<Complete>> = run
            .phases
            .iter()
            .map(|list| {
                let mut c: Vec<Complete> = list
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.kind == "complete")
                    .map(|(k, p)| Complete {
                        phase: k,
                        start_ns: p.start_ns,
                        end_ns: p.end_ns,
                    })
                    .collect();
                c.sort_by_key(|c| c.start_ns);
                c
            })
            .collect();
        let mut attributed: Vec<Vec<u64>> = run.phases.iter().map(|l| vec![0; l.len()]).collect();
        let mut completes = Completes {
            by_thread,
            attributed: Vec::new(),
        };
        for r in &run.rows {
            if let Some((thread, c)) = completes.of_row(r) {
                attributed[thread as usize][c.phase] += 1;
            }
        }
        completes.attributed = attributed;
        completes
    }

    /// The `complete` phase of `thread` that saw an instant `t`: the one containing it, else
    /// the next to start; with whether it contains `t`.
    pub fn find(&self, thread: u32, t: u64) -> Option<(Complete, bool)> {
        let list = self.by_thread.get(thread as usize)?;
        let idx = list.partition_point(|c| c.start_ns <= t);
        if idx > 0 && list[idx - 1].end_ns >= t {
            return Some((list[idx - 1], true));
        }
        list.get(idx).map(|&c| (c, false))
    }

    /// The thread and `complete` phase that saw `row`'s finish.
    pub fn of_row(&self, row: &TaskRow) -> Option<(u32, Complete)> {
        let thread = row.sched_thread?;
        let (c, _) = self.find(thread, row.finish_ns?)?;
        Some((thread, c))
    }

    /// How many rows' finishes the phase `phase` of `thread` saw.
    pub fn attributed(&self, thread: u32, phase: usize) -> u64 {
        self.attributed
            .get(thread as usize)
            .and_then(|l| l.get(phase))
            .copied()
            .unwrap_or(0)
    }

    /// Every `complete` phase as `(end, thread, phase)`, by end then thread.
    pub fn by_end(&self) -> Vec<(u64, u32, Complete)> {
        let mut all: Vec<(u64, u32, Complete)> = self
            .by_thread
            .iter()
            .enumerate()
            .flat_map(|(t, l)| l.iter().map(move |&c| (c.end_ns, t as u32, c)))
            .collect();
        all.sort_by_key(|&(end, t, _)| (end, t));
        all
    }
}
