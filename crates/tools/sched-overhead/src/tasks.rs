//! Per task (over all its rows): earliest dispatch and start, latest end and finish, the
//! engines it ran on, and when it became ready: the latest end among its producers that have
//! timing, or its own dispatch when none has (`../shared/reference/timing-analysis.md` §3).

use rustc_hash::FxHashMap;

use crate::adapter::{Engine, Input, TimedTask};

/// One task's times, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskSpan {
    /// Raw task id.
    pub id: u64,
    /// Earliest dispatch.
    pub dispatch: u64,
    /// Earliest start.
    pub start: u64,
    /// Latest end.
    pub end: u64,
    /// Latest finish.
    pub finish: u64,
    /// Engines it has rows on (`[aic, aiv]`); a MIX task is ready work for both.
    pub engines: [bool; 2],
    /// When its last timed producer ended, else its dispatch.
    pub ready: u64,
}

/// A row without a dispatch or finish time: the records' level has no scheduler stamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MissingStamps {
    /// The row's task.
    pub task: u64,
}

/// A task whose rows outnumber what its block count and kernels give: rows of another task
/// under its id (a corrupt or edited file), merged into its span all the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverfullTask {
    /// Raw task id.
    pub task: u64,
    /// Its rows.
    pub rows: u32,
    /// The rows it should have: its block count times its active kernels, from the records,
    /// else from deps.json.
    pub expected: u32,
}

/// The tasks of a run and its window `[w0, w1]` (earliest start, latest end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tasks {
    /// One entry per task id, in first-row order.
    pub spans: Vec<TaskSpan>,
    /// Earliest start.
    pub w0: u64,
    /// Latest end.
    pub w1: u64,
    /// The tasks with more rows than they should have, in first-row order: each is one span
    /// all the same, so the model has fewer tasks than the run (said as a warning).
    pub overfull: Vec<OverfullTask>,
}

impl Tasks {
    /// Builds the spans of `input` (rows and dependency pairs); `Ok(None)` without rows. The
    /// rows that share a task id make one span; a task with more rows than its block count
    /// and kernels give is listed in [`Tasks::overfull`].
    pub fn new(input: &Input) -> Result<Option<Tasks>, MissingStamps> {
        let mut index: FxHashMap<u64, usize> = FxHashMap::default();
        let mut spans: Vec<TaskSpan> = Vec::new();
        // Per span: its rows, and the rows its records say it should have.
        let mut rows: Vec<(u32, Option<u32>)> = Vec::new();
        for r in &input.tasks {
            let (Some(dispatch), Some(finish)) = (r.dispatch_ns, r.finish_ns) else {
                return Err(MissingStamps { task: r.id });
            };
            let i = *index.entry(r.id).or_insert_with(|| {
                spans.push(TaskSpan {
                    id: r.id,
                    dispatch,
                    start: r.start_ns,
                    end: r.end_ns,
                    finish,
                    engines: [false; 2],
                    ready: 0,
                });
                rows.push((0, None));
                spans.len() - 1
            });
            let (count, expected) = &mut rows[i];
            *count = count.saturating_add(1);
            *expected = (*expected).max(r.expected_rows);
            let s = &mut spans[i];
            s.dispatch = s.dispatch.min(dispatch);
            s.start = s.start.min(r.start_ns);
            s.end = s.end.max(r.end_ns);
            s.finish = s.finish.max(finish);
            s.engines[engine_ix(r.engine)] = true;
        }
        if spans.is_empty() {
            return Ok(None);
        }
        let mut ready: Vec<Option<u64>> = vec![None; spans.len()];
        for &(p, s) in &input.edges {
            if let (Some(&pi), Some(&si)) = (index.get(&p), index.get(&s)) {
                let end = spans[pi].end;
                ready[si] = Some(ready[si].map_or(end, |r| r.max(end)));
            }
        }
        for (s, r) in spans.iter_mut().zip(ready) {
            s.ready = r.unwrap_or(s.dispatch);
        }
        let w0 = input.tasks.iter().map(|r| r.start_ns).min().unwrap_or(0);
        let w1 = input.tasks.iter().map(|r| r.end_ns).max().unwrap_or(0);
        let overfull = spans
            .iter()
            .zip(rows)
            .filter_map(|(s, (rows, expected))| {
                let expected = expected.or_else(|| input.expected_rows.get(&s.id).copied())?;
                (rows > expected).then_some(OverfullTask {
                    task: s.id,
                    rows,
                    expected,
                })
            })
            .collect();
        Ok(Some(Tasks {
            spans,
            w0,
            w1,
            overfull,
        }))
    }

    /// `w1 − w0`.
    pub fn makespan(&self) -> u64 {
        self.w1 - self.w0
    }
}

/// Index of an engine in `[aic, aiv]` arrays.
pub fn engine_ix(e: Engine) -> usize {
    match e {
        Engine::Aic => 0,
        Engine::Aiv => 1,
    }
}

/// The rows of each core, sorted by start (then end).
pub fn rows_by_core(rows: &[TimedTask]) -> Vec<(u32, Vec<TimedTask>)> {
    let mut by_core: FxHashMap<u32, Vec<TimedTask>> = FxHashMap::default();
    for r in rows {
        by_core.entry(r.core).or_default().push(*r);
    }
    let mut cores: Vec<(u32, Vec<TimedTask>)> = by_core.into_iter().collect();
    cores.sort_unstable_by_key(|(c, _)| *c);
    for (_, rows) in &mut cores {
        rows.sort_by_key(|r| (r.start_ns, r.end_ns));
    }
    cores
}
