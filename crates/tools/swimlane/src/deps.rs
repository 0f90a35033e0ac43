//! What the trace takes from deps.json, read with the streaming reader of
//! `simpler_artifacts::deps`: the unique `(pred, succ)` pairs of `edges[]`, and per task its
//! `kernel_ids` (to name rows whose records carry no kernel, and to tell dummy tasks) and
//! `block_num` (to tell SPMD tasks). Every other field is skipped unparsed.

use std::path::Path;

use serde::de::IgnoredAny;
use simpler_artifacts::deps::{read_deps, DepsReadError, DepsSink, EdgeEnds, TaskHead};

/// One task of deps.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepsTask {
    /// Kernel per subslot `[aic, aiv0, aiv1]` (−1 = inactive), when given.
    pub kernel_ids: Option<[i32; 3]>,
    /// SPMD block count, when given.
    pub block_num: Option<u32>,
}

impl DepsTask {
    /// Returns true if and only if the task's kernel ids are known and all inactive (a dummy).
    pub fn is_dummy(&self) -> bool {
        self.kernel_ids.is_some_and(|k| k.iter().all(|&id| id < 0))
    }
}

/// The dependency graph as the trace uses it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deps {
    /// Unique pairs, sorted by `(pred, succ)`.
    pub pairs: Vec<(u64, u64)>,
    /// Number of `edges[]` rows they came from.
    pub annotated_edges: usize,
    /// Every task of `tasks[]`.
    pub tasks: DepsTasks,
    /// The pairs as `(succ, pred)`, sorted: predecessors by task.
    by_succ: Vec<(u64, u64)>,
}

/// The tasks of deps.json by id, ascending: walked in order beside the rows (a hash map's
/// lookups cost a cache miss each, 0.1 s for a million tasks), looked up by binary search
/// otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepsTasks(Vec<(u64, DepsTask)>);

impl DepsTasks {
    /// The tasks in file order; of two entries with one id the later is kept, as a map keeps
    /// the last insert.
    pub fn new(mut tasks: Vec<(u64, DepsTask)>) -> DepsTasks {
        if !tasks.is_sorted_by_key(|&(id, _)| id) {
            tasks.sort_by_key(|&(id, _)| id); // stable: file order within an id
        }
        tasks.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                *kept = *later;
            }
            same
        });
        DepsTasks(tasks)
    }

    /// The task `id`, if deps.json lists it.
    pub fn get(&self, id: &u64) -> Option<&DepsTask> {
        let at = self.0.binary_search_by_key(id, |&(t, _)| t).ok()?;
        Some(&self.0[at].1)
    }

    /// Every task, ascending by id.
    pub fn in_order(&self) -> &[(u64, DepsTask)] {
        &self.0
    }
}

#[derive(Default)]
struct Sink {
    pairs: Vec<(u64, u64)>,
    tasks: Vec<(u64, DepsTask)>,
}

impl DepsSink for Sink {
    type Task = TaskHead;
    type Tensor = IgnoredAny;
    type Edge = EdgeEnds;

    fn task(&mut self, t: TaskHead) {
        self.tasks.push((
            t.task_id,
            DepsTask {
                kernel_ids: t.kernel_ids.and_then(|k| <[i32; 3]>::try_from(k).ok()),
                block_num: t.block_num,
            },
        ));
    }

    fn tensor(&mut self, _: IgnoredAny) {}

    fn edge(&mut self, e: EdgeEnds) {
        self.pairs.push((e.pred, e.succ));
    }
}

/// Sorts `pairs` and drops repeats.
fn sorted_unique(pairs: &mut Vec<(u64, u64)>) {
    pairs.sort_unstable();
    pairs.dedup();
    pairs.shrink_to_fit();
}

impl Deps {
    /// Builds the graph from edge endpoints (duplicates allowed) and tasks (in file order;
    /// see [`DepsTasks::new`]).
    pub fn new(mut pairs: Vec<(u64, u64)>, tasks: Vec<(u64, DepsTask)>) -> Deps {
        let annotated_edges = pairs.len();
        // Both orders at once, each sorted and deduplicated on its own: the set of pairs is
        // the same either way, and the two sorts take two cores instead of one after the
        // other (0.20 → 0.12 s for 3M pairs; the other core is idle here).
        let mut by_succ: Vec<(u64, u64)> = pairs.iter().map(|&(p, s)| (s, p)).collect();
        std::thread::scope(|scope| {
            scope.spawn(|| sorted_unique(&mut by_succ));
            sorted_unique(&mut pairs);
        });
        Deps {
            pairs,
            annotated_edges,
            tasks: DepsTasks::new(tasks),
            by_succ,
        }
    }

    /// The unique successors of `task`, ascending.
    pub fn succs(&self, task: u64) -> impl Iterator<Item = u64> + '_ {
        let from = self.pairs.partition_point(|&(p, _)| p < task);
        self.pairs[from..]
            .iter()
            .take_while(move |&&(p, _)| p == task)
            .map(|&(_, s)| s)
    }

    /// The unique pairs as `(succ, pred)`, sorted.
    pub fn pairs_by_succ(&self) -> &[(u64, u64)] {
        &self.by_succ
    }

    /// The unique predecessors of `task`, ascending.
    pub fn preds(&self, task: u64) -> impl Iterator<Item = u64> + '_ {
        let from = self.by_succ.partition_point(|&(s, _)| s < task);
        self.by_succ[from..]
            .iter()
            .take_while(move |&&(s, _)| s == task)
            .map(|&(_, p)| p)
    }

    /// Streams the deps.json at `path`; errors name the file and the JSON location. What the
    /// file leaves unsaid (an original's file without kernel ids or block counts) is printed
    /// as a warning: those rows are named and grouped as the original does without them.
    pub fn load(path: &Path) -> Result<Deps, DepsReadError> {
        let (deps, notes) = Deps::read(path)?;
        for note in notes {
            simpler_artifacts::errln!("warning: {}: {note}", path.display());
        }
        Ok(deps)
    }

    /// [`Deps::load`] without printing: the graph and the notes on what the file leaves
    /// unsaid, for the caller to print.
    pub fn read(path: &Path) -> Result<(Deps, Vec<String>), DepsReadError> {
        let mut sink = Sink::default();
        let gaps = read_deps(path, &mut sink)?;
        let listed = sink.tasks.len();
        let deps = Deps::new(sink.pairs, sink.tasks);
        let mut notes = gaps.notes();
        // deps-viewer refuses such a file; the converter reads it as the original's does.
        let repeated = listed - deps.tasks.in_order().len();
        if repeated > 0 {
            notes.push(format!(
                "{repeated} tasks[] entries repeat an earlier task_id: the last entry of each id is used, \
                 as the original's converter does"
            ));
        }
        Ok((deps, notes))
    }

    /// The kernel a row of `task` on a core of type `aic` ran, from `kernel_ids`: the AIC
    /// slot, else AIV0, falling back to AIV1 (the original's rule); −1 when unknown.
    pub fn kernel_for(&self, task: u64, aic: bool) -> i32 {
        let Some(k) = self.tasks.get(&task).and_then(|t| t.kernel_ids) else {
            return -1;
        };
        let pick = if aic { [k[0], -1] } else { [k[1], k[2]] };
        pick.into_iter().find(|&id| id >= 0).unwrap_or(-1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_kernels_and_blocks_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        std::fs::write(
            &path,
            r#"{"tasks":[{"task_id":"0","kernel_ids":[3,-1,4],"block_num":2},{"task_id":"1","kernel_ids":[-1,-1,-1]}],"tensors":[],"edges":[
                {"pred":"0","succ":"4294967296","arg":0,"source":"creator"},
                {"pred":"0","succ":"4294967296","arg":1,"source":"tensormap"},
                {"pred":"0","succ":"1","arg":-1,"source":"explicit"}]}"#,
        )
        .unwrap();
        let d = Deps::load(&path).unwrap();
        assert_eq!(d.pairs, [(0, 1), (0, 4_294_967_296)]);
        assert_eq!(d.annotated_edges, 3);
        assert_eq!(d.succs(0).collect::<Vec<_>>(), [1, 4_294_967_296]);
        assert_eq!(d.preds(1).collect::<Vec<_>>(), [0]);
        assert_eq!(d.preds(0).count(), 0);
        assert_eq!(
            (
                d.kernel_for(0, true),
                d.kernel_for(0, false),
                d.kernel_for(7, true)
            ),
            (3, 4, -1)
        );
        let task = |id| *d.tasks.get(&id).unwrap();
        assert_eq!(task(0).block_num, Some(2));
        assert!(task(1).is_dummy() && !task(0).is_dummy());
        assert_eq!(d.tasks.get(&2), None);
    }

    /// Found by a review: a task listed twice (with different kernels) was read without a
    /// word, where deps-viewer refuses the file.
    #[test]
    fn a_repeated_task_id_is_noted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        std::fs::write(
            &path,
            r#"{"tasks":[{"task_id":"1","kernel_ids":[0,-1,-1],"block_num":1},{"task_id":"1","kernel_ids":[-1,2,-1],"block_num":1}],"tensors":[],"edges":[]}"#,
        )
        .unwrap();
        let (deps, notes) = Deps::read(&path).unwrap();
        assert_eq!(deps.kernel_for(1, false), 2);
        assert_eq!(
            notes,
            ["1 tasks[] entries repeat an earlier task_id: the last entry of each id is used, as the original's converter does"]
        );
    }

    #[test]
    fn an_edge_without_succ_names_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        std::fs::write(
            &path,
            "{\"tasks\":[],\"tensors\":[],\n\"edges\":[{\"pred\":\"0\"}]}",
        )
        .unwrap();
        let err = Deps::load(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}:2:21: invalid deps.json: edges[0]: missing field `succ`",
                path.display()
            )
        );
    }
}
