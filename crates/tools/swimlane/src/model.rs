//! The inputs of one conversion, resolved the way the original converter resolves them.
//!
//! - Rows are ordered by task id (stable), so a task's rows are contiguous ([`Run::rows_of`]).
//! - A row whose records carry no kernel (`func_id` −1, the original's files) takes it from
//!   deps.json's `kernel_ids` by core type ([`Deps::kernel_for`]).
//! - A task is SPMD when deps.json says `block_num > 1`; without a deps.json entry, when the
//!   records say so (ours), else when it has several rows that all share one core type
//!   (the original's heuristic).
//! - Scheduler phases and submit spans are grouped by thread.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use simpler_artifacts::swimlane::{BuildPhase, CoreType, Header, OrchRow, SchedPhase, SwimlaneFile, TaskRow};

use crate::deps::Deps;

/// One task's rows: `rows[start..start + len]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskRows {
    /// First row.
    pub start: u32,
    /// Number of rows.
    pub len: u32,
    /// Whether the task is SPMD.
    pub spmd: bool,
    /// Its block count for a dependency flow's `input_task_count`/`output_task_count`: the
    /// SPMD block count, else 1.
    pub fan_count: u32,
}

/// Everything a conversion draws.
#[derive(Debug)]
pub struct Run {
    /// The file's run-level facts.
    pub header: Header,
    /// Every kernel execution, ordered by task id, func ids resolved.
    pub rows: Vec<TaskRow>,
    /// Each task's rows by id, built from `ordered` when first asked for ([`Run::tasks`]).
    tasks: OnceLock<FxHashMap<u64, TaskRows>>,
    /// Per row, whether its task is SPMD ([`TaskRows::spmd`] without a lookup per row).
    pub spmd_rows: Vec<bool>,
    /// What `tasks` holds, ascending by task id: for walks over every task in order without
    /// a hash lookup each.
    pub ordered: Vec<(u64, TaskRows)>,
    /// Scheduler phases, one list per scheduler thread.
    pub phases: Vec<Vec<SchedPhase>>,
    /// Submit spans, one list per orchestrator thread.
    pub orch: Vec<Vec<OrchRow>>,
    /// The dependency graph (empty without a deps.json).
    pub deps: Deps,
    /// The graph-build steps of an `hbg` run (this runtime's records only).
    pub build: Vec<BuildPhase>,
}

/// Puts `rows` in the order [`Run::rows`] keeps: by task id, each task's rows as the file
/// gave them. Sorting rows already in that order leaves them as they are.
pub fn sort_rows(rows: &mut [TaskRow]) {
    if !rows.is_sorted_by_key(|r| r.task_id) {
        rows.sort_by_key(|r| r.task_id);
    }
}

impl Run {
    /// Resolves `file` against `deps`.
    pub fn new(file: SwimlaneFile, deps: Deps) -> Run {
        let SwimlaneFile {
            header,
            mut tasks,
            orchestrator,
            phases,
            build_phases,
            ..
        } = file;
        sort_rows(&mut tasks);
        for r in &mut tasks {
            if r.func_id < 0 {
                r.func_id = deps.kernel_for(r.task_id, r.core_type == CoreType::Aic);
            }
        }
        let mut spmd_rows = vec![false; tasks.len()];
        let mut ordered = Vec::new();
        // deps.json's tasks ascend as the rows do: walked beside them.
        let mut listed = deps.tasks.in_order().iter().peekable();
        let mut i = 0;
        while i < tasks.len() {
            let id = tasks[i].task_id;
            let end = tasks[i..]
                .iter()
                .position(|r| r.task_id != id)
                .map_or(tasks.len(), |n| i + n);
            let rows = &tasks[i..end];
            let recorded_blocks = rows[0].block_num;
            while listed.next_if(|&&(t, _)| t < id).is_some() {}
            let blocks = listed.next_if(|&&(t, _)| t == id).and_then(|(_, t)| t.block_num);
            let spmd = match (blocks, recorded_blocks) {
                (Some(b), _) => b > 1,
                (None, b) if b > 0 => b > 1,
                _ => rows.len() > 1 && rows.iter().all(|r| r.core_type == rows[0].core_type),
            };
            let fan_count = match (spmd, blocks) {
                (false, _) => 1,
                (true, Some(b)) => b.max(1),
                (true, None) if recorded_blocks > 0 => recorded_blocks,
                (true, None) => rows.len() as u32,
            };
            spmd_rows[i..end].fill(spmd);
            let rows = TaskRows {
                start: i as u32,
                len: (end - i) as u32,
                spmd,
                fan_count,
            };
            ordered.push((id, rows));
            i = end;
        }
        let threads = phases
            .iter()
            .map(|p| p.sched_thread as usize + 1)
            .chain(
                header
                    .scheduler_threads
                    .filter(|_| header.level.has_sched_phases())
                    .map(|n| n as usize),
            )
            .max()
            .unwrap_or(0);
        let mut by_thread = vec![Vec::new(); threads];
        for p in phases {
            by_thread[p.sched_thread as usize].push(p);
        }
        let orch_threads = orchestrator
            .iter()
            .map(|o| o.thread as usize + 1)
            .max()
            .unwrap_or(0);
        let mut orch = vec![Vec::new(); orch_threads];
        for o in orchestrator {
            orch[o.thread as usize].push(o);
        }
        Run {
            header,
            rows: tasks,
            tasks: OnceLock::new(),
            spmd_rows,
            ordered,
            phases: by_thread,
            orch,
            deps,
            build: build_phases,
        }
    }

    /// Each task's rows by id: a map built from [`Run::ordered`] the first time it is asked
    /// for, on the thread that asks (a level-2 conversion never does: its slices and flows
    /// walk the tasks in order).
    pub fn tasks(&self) -> &FxHashMap<u64, TaskRows> {
        self.tasks.get_or_init(|| self.ordered.iter().copied().collect())
    }

    /// The rows of `task` (empty if it has none).
    pub fn rows_of(&self, task: u64) -> &[TaskRow] {
        self.tasks()
            .get(&task)
            .map_or(&[], |t| &self.rows[t.start as usize..(t.start + t.len) as usize])
    }

    /// Returns true if and only if any row has both scheduler stamps (the Scheduler View).
    pub fn has_aicpu_data(&self) -> bool {
        self.rows
            .iter()
            .any(|r| r.dispatch_ns.is_some() && r.finish_ns.is_some())
    }

    /// Scheduler threads as the Worker View's `AICPU_<n>` tracks count them: the highest
    /// thread of `core_to_thread` or of a non-empty phase list, plus one.
    pub fn aicpu_scheduler_threads(&self) -> u32 {
        let mapped = self
            .header
            .core_to_thread
            .iter()
            .flatten()
            .filter_map(|&t| u32::try_from(t).ok());
        let phased = self
            .phases
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty())
            .map(|(t, _)| t as u32);
        mapped
            .chain(phased)
            .max()
            .map_or(self.phases.len() as u32, |t| t + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deps::DepsTask;
    use simpler_artifacts::swimlane::read_swimlane_from;

    fn file(json: &str) -> SwimlaneFile {
        #[derive(Default)]
        struct All(Vec<TaskRow>);
        impl simpler_artifacts::swimlane::SwimlaneSink for All {
            fn task(&mut self, r: TaskRow) {
                self.0.push(r);
            }
        }
        let mut all = All::default();
        let header = read_swimlane_from(json.as_bytes(), &mut all).unwrap();
        SwimlaneFile {
            header,
            tasks: all.0,
            dummy_tasks: vec![],
            orchestrator: vec![],
            phases: vec![],
            build_phases: vec![],
        }
    }

    #[test]
    fn kernels_and_spmd_come_from_deps_then_the_rows() {
        // Task 7: two AIV rows (SPMD by the heuristic); task 3: one AIC row; task 9: two AIV
        // rows but deps.json says block_num 1 (not SPMD).
        let f = file(
            r#"{"chip_swimlane_level":1,"metadata":{"clock_freq_hz":1000000000,"core_types":["aic","aiv","aiv"]},
            "aicore_tasks":[[1,7,0,10,20,0],[0,3,0,5,9,0],[2,7,0,11,19,0],[1,9,1,30,40,0],[2,9,1,30,40,0]]}"#,
        );
        let dt = |k, b| DepsTask {
            kernel_ids: Some(k),
            block_num: b,
        };
        // In no order, task 9 listed twice (the later entry counts), task 8 without rows.
        let tasks = vec![
            (9, dt([-1, 2, -1], Some(3))),
            (7, dt([-1, -1, 6], None)),
            (8, dt([-1, 1, -1], Some(4))),
            (3, dt([5, -1, -1], None)),
            (9, dt([-1, 2, -1], Some(1))),
        ];
        let run = Run::new(f, Deps::new(vec![], tasks));
        let ids: Vec<(u64, i32)> = run.rows.iter().map(|r| (r.task_id, r.func_id)).collect();
        assert_eq!(ids, [(3, 5), (7, 6), (7, 6), (9, 2), (9, 2)]);
        let t = |id| run.tasks()[&id];
        assert_eq!((t(3).spmd, t(7).spmd, t(9).spmd), (false, true, false));
        assert_eq!(
            (t(7).start, t(7).len, t(7).fan_count, t(9).fan_count),
            (1, 2, 2, 1)
        );
        assert_eq!(run.rows_of(9).len(), 2);
        assert!(run.rows_of(4).is_empty());
    }
}
