//! Processes and tracks of the trace, and the metadata events that name them.
//!
//! Three processes: [`ORCHESTRATOR_PID`] (submit spans), [`SCHEDULERS_PID`] (one track per
//! scheduler thread: dispatch → finish, plus dummy-task markers) and [`WORKERS_PID`] ("Worker
//! View", one track per virtual core: kernel start → end). Thread ids are allocated in order of
//! first use and unique across processes (Perfetto's JSON importer can merge equal tids of
//! different processes). A group whose slices overlap gets extra lanes ([`crate::lanes`]),
//! named `<track> (overlap <k>)`.

use std::collections::HashMap;
use std::io;

use crate::trace::TraceWriter;

/// Process of the orchestrator's submit spans.
pub const ORCHESTRATOR_PID: u32 = 1;
/// Process of the scheduler threads.
pub const SCHEDULERS_PID: u32 = 2;
/// Process of the virtual cores ("Worker View").
pub const WORKERS_PID: u32 = 3;

/// The processes in display order, with their names.
const PROCESSES: [(u32, &str); 3] = [
    (ORCHESTRATOR_PID, "Orchestrator"),
    (SCHEDULERS_PID, "Schedulers"),
    (WORKERS_PID, "Worker View"),
];

/// Sort-index stride between groups, so lanes sort right after their group's first lane.
const LANES_PER_GROUP_SORT: u64 = 1 << 16;

/// Where a slice goes: process and thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TrackId {
    /// Process id.
    pub pid: u32,
    /// Thread id (unique across processes).
    pub tid: u32,
}

/// One track and its display name.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Track {
    id: TrackId,
    name: String,
    sort_index: u64,
}

/// Every track used so far.
#[derive(Debug, Default)]
pub struct Tracks {
    by_key: HashMap<(u32, u32, u32), TrackId>,
    list: Vec<Track>,
}

impl Tracks {
    /// The track of lane `lane` of group `group` in process `pid`, created on first use with
    /// the name `base_name()` (plus ` (overlap <lane>)` for lanes after the first).
    pub fn get(&mut self, pid: u32, group: u32, lane: u32, base_name: impl FnOnce() -> String) -> TrackId {
        if let Some(id) = self.by_key.get(&(pid, group, lane)) {
            return *id;
        }
        let id = TrackId {
            pid,
            tid: self.list.len() as u32 + 1,
        };
        let name = match lane {
            0 => base_name(),
            k => format!("{} (overlap {k})", base_name()),
        };
        self.list.push(Track {
            id,
            name,
            sort_index: u64::from(group) * LANES_PER_GROUP_SORT + u64::from(lane),
        });
        self.by_key.insert((pid, group, lane), id);
        id
    }

    /// Number of tracks.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Returns true if and only if no track was created.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Writes `process_name`/`process_sort_index` for the three processes and
    /// `thread_name`/`thread_sort_index` for every track.
    pub fn write_metadata<W: io::Write>(&self, out: &mut TraceWriter<W>) -> io::Result<()> {
        for (sort, (pid, name)) in PROCESSES.iter().enumerate() {
            out.process_name(*pid, name, sort as u64)?;
        }
        for t in &self.list {
            out.thread_name(t.id.pid, t.id.tid, &t.name, t.sort_index)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_are_created_once_with_unique_tids_and_lane_names() {
        let mut t = Tracks::default();
        let a = t.get(WORKERS_PID, 4, 0, || "AIV_4".into());
        let b = t.get(SCHEDULERS_PID, 4, 0, || "Scheduler 4".into());
        let c = t.get(WORKERS_PID, 4, 1, || "AIV_4".into());
        assert_eq!(t.get(WORKERS_PID, 4, 0, || unreachable!()), a);
        assert_eq!((a.tid, b.tid, c.tid, t.len()), (1, 2, 3, 3));
        let mut w = TraceWriter::new(Vec::new()).unwrap();
        t.write_metadata(&mut w).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert!(
            text.contains(
                r#""name":"thread_name","ph":"M","pid":3,"tid":3,"args":{"name":"AIV_4 (overlap 1)"}"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#""name":"process_name","ph":"M","pid":3,"args":{"name":"Worker View"}"#),
            "{text}"
        );
    }
}
