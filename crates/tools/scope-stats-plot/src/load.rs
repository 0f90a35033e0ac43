//! Loading: streams `scope_stats.jsonl` once, pairs begin/end samples, and keeps only the
//! per-scope metrics (never the raw samples), so memory grows with paired scopes, not bytes.
//!
//! # Pairing
//!
//! Samples come oldest first from one producer, so within a ring scopes nest. Each ring keeps
//! a stack of open begins. An `end` closes the innermost open begin of its ring with the same
//! site and depth:
//! - if that begin is on top of the stack, the two pair;
//! - if it is deeper, the begins above it never saw their end (lost or cut off); they are
//!   recorded as unpaired and the end pairs with the matching begin;
//! - if no open begin matches, the end itself is unpaired.
//!
//! Begins still open at the end of the file are unpaired. No pair is ever made from samples of
//! different rings, sites or depths.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use simpler_artifacts::scope_stats::{Metadata, Phase, ReadErrorKind, Reader, Sample};

use crate::metrics::{self, RingSeries, TensorMapSeries};
use crate::progress::Progress;
use crate::{Error, ErrorKind};

/// A sample that found no partner, grouped by where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct UnpairedKey {
    /// Which side of the scope is missing its partner (begins sort first).
    pub(crate) phase: Phase,
    pub(crate) ring: u32,
    pub(crate) depth: u32,
    pub(crate) site: u32,
}

/// How many samples of one [`UnpairedKey`] were unpaired, and the first one's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UnpairedCount {
    pub(crate) count: u64,
    pub(crate) first_line: u64,
}

/// Everything the report needs from one file.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The metadata line.
    pub(crate) meta: Metadata,
    /// Sample lines successfully read.
    pub(crate) samples: u64,
    /// Interned site strings; metric series refer to them by index.
    pub(crate) sites: Vec<String>,
    /// Per-ring metric series, in scope-completion order within the ring.
    pub(crate) rings: BTreeMap<u32, RingSeries>,
    /// Global tensormap live-entry series, in scope-completion order.
    pub(crate) tensormap: TensorMapSeries,
    /// Unpaired samples.
    pub(crate) unpaired: BTreeMap<UnpairedKey, UnpairedCount>,
    /// When the final line was cut off mid-write: the reader's message (with line number).
    pub(crate) truncated: Option<String>,
    /// Samples without `dep_pool_start`/`dep_pool_end` (the original's schema version 4).
    pub(crate) dep_pool_missing: u64,
}

impl Loaded {
    /// Why `r` is unknown in this file, or `None` if it is known. The dep pool is unknown when
    /// any sample lacks its fields: its series would have holes, so none is drawn and no value
    /// stands in for the missing ones.
    pub(crate) fn unknown_reason(&self, r: metrics::Resource) -> Option<String> {
        if r != metrics::Resource::DepPool || self.dep_pool_missing == 0 {
            return None;
        }
        let schema = match self.meta.version {
            Some(v) => format!("this file is of the original's schema version {v}"),
            None => "this file".to_string(),
        };
        Some(format!(
            "unknown: {} of {} samples have no dep_pool_start/dep_pool_end ({schema}, which predates \
             the dependency pool or does not record it)",
            self.dep_pool_missing, self.samples
        ))
    }

    /// Total paired scopes across rings.
    pub(crate) fn pairs(&self) -> usize {
        self.rings.values().map(RingSeries::len).sum()
    }

    /// Unpaired begin and end sample counts.
    pub(crate) fn unpaired_counts(&self) -> (u64, u64) {
        let mut begins = 0;
        let mut ends = 0;
        for (k, v) in &self.unpaired {
            match k.phase {
                Phase::Begin => begins += v.count,
                Phase::End => ends += v.count,
            }
        }
        (begins, ends)
    }
}

/// One open begin on a ring's stack.
struct Open {
    site: u32,
    depth: u32,
    line: u64,
    sample: Sample,
}

/// One ring's open begins, innermost last, with the stack positions of each (site, depth) so
/// that an `end` finds its begin at once: searching the stack made N begins of one site
/// followed by N ends of another cost N² (80k of each: 8.8 s).
#[derive(Default)]
struct OpenStack {
    opens: Vec<Open>,
    /// Positions in `opens` per (site, depth), ascending (Fx: a hash per sample, and
    /// SipHash's made a 2M-sample report 4 % slower).
    at: FxHashMap<(u32, u32), Vec<usize>>,
}

impl OpenStack {
    fn push(&mut self, open: Open) {
        self.at
            .entry((open.site, open.depth))
            .or_default()
            .push(self.opens.len());
        self.opens.push(open);
    }

    /// Pops the top begin (its position is the last of its key's).
    fn pop(&mut self) -> Option<Open> {
        let open = self.opens.pop()?;
        if let Some(v) = self.at.get_mut(&(open.site, open.depth)) {
            v.pop();
        }
        Some(open)
    }

    /// The innermost open begin of `site` at `depth`, and the begins above it (outermost first).
    fn close(&mut self, site: u32, depth: u32) -> Option<(Open, Vec<Open>)> {
        let pos = *self.at.get(&(site, depth))?.last()?;
        let mut above = Vec::with_capacity(self.opens.len() - pos - 1);
        while self.opens.len() > pos + 1 {
            above.push(self.pop().expect("above pos"));
        }
        above.reverse();
        Some((self.pop().expect("at pos"), above))
    }
}

/// Reads and pairs `path`. Errors (missing file, empty file, bad first line, malformed line)
/// name the file and the line; a cut-off final line is kept in [`Loaded::truncated`].
pub(crate) fn load(path: &Path) -> Result<Loaded, Error> {
    let file = simpler_artifacts::input::open_regular(path).map_err(|source| ErrorKind::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let counted = Rc::new(Cell::new(0u64));
    let reader = CountingRead {
        inner: file,
        count: Rc::clone(&counted),
    };
    let mut reader = Reader::new(BufReader::with_capacity(1 << 20, reader)).map_err(|source| {
        ErrorKind::NotScopeStats {
            path: path.to_path_buf(),
            line: source.line(),
            source,
        }
    })?;
    let progress = Progress::for_file(size);
    let mut pairer = Pairer::new(reader.metadata().clone());
    let mut truncated = None;
    while let Some(item) = reader.next_sample() {
        match item {
            Ok(sample) => pairer.push(sample, reader.line_number()),
            Err(e) if e.kind() == ReadErrorKind::TruncatedFinalLine => {
                truncated = Some(e.to_string());
            }
            Err(source) => {
                return Err(ErrorKind::Sample {
                    path: path.to_path_buf(),
                    line: source.line(),
                    source,
                }
                .into())
            }
        }
        if pairer.samples.is_multiple_of(65_536) {
            progress.set(counted.get());
        }
    }
    progress.finish();
    let mut loaded = pairer.finish();
    loaded.truncated = truncated;
    Ok(loaded)
}

/// Streaming pairing state; see the module docs for the rules.
pub(crate) struct Pairer {
    meta: Metadata,
    samples: u64,
    site_ids: HashMap<String, u32>,
    sites: Vec<String>,
    stacks: BTreeMap<u32, OpenStack>,
    rings: BTreeMap<u32, RingSeries>,
    tensormap: TensorMapSeries,
    unpaired: BTreeMap<UnpairedKey, UnpairedCount>,
    dep_pool_missing: u64,
}

impl Pairer {
    /// Starts pairing the samples of a file with this metadata.
    pub(crate) fn new(meta: Metadata) -> Self {
        Pairer {
            meta,
            samples: 0,
            dep_pool_missing: 0,
            site_ids: HashMap::new(),
            sites: Vec::new(),
            stacks: BTreeMap::new(),
            rings: BTreeMap::new(),
            tensormap: TensorMapSeries::default(),
            unpaired: BTreeMap::new(),
        }
    }

    fn intern(&mut self, site: &str) -> u32 {
        if let Some(&id) = self.site_ids.get(site) {
            return id;
        }
        let id = u32::try_from(self.sites.len()).unwrap_or(u32::MAX);
        self.sites.push(site.to_string());
        self.site_ids.insert(site.to_string(), id);
        id
    }

    fn note_unpaired(&mut self, phase: Phase, ring: u32, depth: u32, site: u32, line: u64) {
        let key = UnpairedKey {
            phase,
            ring,
            depth,
            site,
        };
        let entry = self.unpaired.entry(key).or_insert(UnpairedCount {
            count: 0,
            first_line: line,
        });
        entry.count += 1;
        entry.first_line = entry.first_line.min(line);
    }

    /// Feeds the next sample (read from 1-based line `line`).
    pub(crate) fn push(&mut self, sample: Sample, line: u64) {
        self.samples += 1;
        if sample.dep_pool_start.is_none() || sample.dep_pool_end.is_none() {
            self.dep_pool_missing += 1;
        }
        let site = self.intern(&sample.site);
        let ring = sample.ring;
        let depth = sample.depth;
        match sample.phase {
            Phase::Begin => self.stacks.entry(ring).or_default().push(Open {
                site,
                depth,
                line,
                sample,
            }),
            Phase::End => {
                let Some((open, abandoned)) = self.stacks.entry(ring).or_default().close(site, depth) else {
                    self.note_unpaired(Phase::End, ring, depth, site, line);
                    return;
                };
                for a in abandoned {
                    self.note_unpaired(Phase::Begin, ring, a.depth, a.site, a.line);
                }
                let scope = metrics::scope_metrics(&open.sample, &sample);
                self.rings.entry(ring).or_default().push(site, &scope);
                self.tensormap.push(site, ring, scope.tensormap_live);
            }
        }
    }

    /// Ends the input: begins still open become unpaired.
    pub(crate) fn finish(mut self) -> Loaded {
        let stacks = std::mem::take(&mut self.stacks);
        for (ring, stack) in stacks {
            for o in stack.opens {
                self.note_unpaired(Phase::Begin, ring, o.depth, o.site, o.line);
            }
        }
        Loaded {
            meta: self.meta,
            samples: self.samples,
            dep_pool_missing: self.dep_pool_missing,
            sites: self.sites,
            rings: self.rings,
            tensormap: self.tensormap,
            unpaired: self.unpaired,
            truncated: None,
        }
    }
}

/// Counts bytes read, for the progress bar.
struct CountingRead<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for CountingRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(site: &str, phase: Phase, depth: u32, ring: u32, tw_end: i64) -> Sample {
        Sample {
            site: site.into(),
            phase,
            depth,
            ring,
            task_window_start: 0,
            task_window_end: tw_end,
            heap_start: 0,
            heap_end: 0,
            dep_pool_start: Some(0),
            dep_pool_end: Some(0),
            tensormap: 0,
            run_epoch: Some(1),
            buf_seq: Some(0),
        }
    }

    fn run(samples: Vec<Sample>) -> Loaded {
        let mut p = Pairer::new(Metadata::default());
        for (i, s) in samples.into_iter().enumerate() {
            p.push(s, i as u64 + 2);
        }
        p.finish()
    }

    #[test]
    fn nested_scopes_pair_in_completion_order() {
        use Phase::*;
        let l = run(vec![
            sample("root:0", Begin, 0, 0, 0),
            sample("a:1", Begin, 1, 1, 0),
            sample("a:1", End, 1, 1, 4),
            sample("a:1", Begin, 1, 1, 4),
            sample("a:1", End, 1, 1, 9),
            sample("root:0", End, 0, 0, 0),
        ]);
        assert_eq!(l.pairs(), 3);
        assert_eq!(l.rings[&1].len(), 2);
        assert_eq!(l.rings[&1].values[0][0], vec![4, 9]);
        assert_eq!(l.unpaired_counts(), (0, 0));
        assert_eq!(l.tensormap.len(), 3);
    }

    #[test]
    fn never_pairs_across_sites_rings_or_depths() {
        use Phase::*;
        let l = run(vec![
            sample("a:1", Begin, 1, 1, 0),
            sample("b:2", End, 1, 1, 0),
            sample("a:1", End, 2, 1, 0),
            sample("a:1", End, 1, 2, 0),
        ]);
        assert_eq!(l.pairs(), 0);
        assert_eq!(l.unpaired_counts(), (1, 3));
    }

    #[test]
    fn an_end_closing_an_outer_scope_abandons_the_inner_begins() {
        use Phase::*;
        let l = run(vec![
            sample("outer:1", Begin, 3, 3, 0),
            sample("inner:2", Begin, 4, 3, 0), // its end was lost
            sample("outer:1", End, 3, 3, 7),
        ]);
        assert_eq!(l.pairs(), 1);
        assert_eq!(l.unpaired_counts(), (1, 0));
        let (k, v) = l.unpaired.iter().next().unwrap();
        assert_eq!(l.sites[k.site as usize], "inner:2");
        assert_eq!(v.first_line, 3);
    }

    /// The per-(site, depth) index stays right after an end abandons begins above its own:
    /// later ends pair with the begins opened after, never with abandoned ones.
    #[test]
    fn ends_after_abandoned_begins_still_pair_innermost_first() {
        use Phase::*;
        let l = run(vec![
            sample("x:0", Begin, 0, 0, 0),
            sample("y:1", Begin, 1, 0, 0),
            sample("z:2", Begin, 2, 0, 0),
            sample("y:1", Begin, 1, 0, 0),
            sample("x:0", End, 0, 0, 1), // abandons y, z, y
            sample("y:1", Begin, 1, 0, 0),
            sample("y:1", End, 1, 0, 2),
            sample("z:2", End, 2, 0, 3), // its begin was abandoned
        ]);
        assert_eq!(l.pairs(), 2);
        assert_eq!(l.rings[&0].values[0][0], vec![1, 2]);
        assert_eq!(l.unpaired_counts(), (3, 1));
        // N begins of one site, then N ends of another: nothing pairs (and each end is found
        // unmatched at once, not by a search of the whole stack).
        let n = 2000;
        let mut v: Vec<Sample> = (0..n).map(|_| sample("a:1", Begin, 0, 0, 0)).collect();
        v.extend((0..n).map(|_| sample("b:2", End, 0, 0, 0)));
        let l = run(v);
        assert_eq!((l.pairs(), l.unpaired_counts()), (0, (n as u64, n as u64)));
    }

    #[test]
    fn begins_open_at_the_end_are_unpaired() {
        use Phase::*;
        let l = run(vec![
            sample("root:0", Begin, 0, 0, 0),
            sample("a:1", Begin, 1, 1, 0),
        ]);
        assert_eq!(l.pairs(), 0);
        assert_eq!(l.unpaired_counts(), (2, 0));
    }
}
