//! The tensor map: which task last wrote which view of which buffer.
//!
//! Structure: a bucket array keyed by the buffer's base
//! address over a pool of entries with a free list. Each entry is linked twice, into its
//! bucket's chain (newest first, for lookups) and into its producer's per-task chain (for
//! freeing every entry of a retired task at once).
//!
//! Validity is a watermark per ring: an entry is live while
//! `producer.local >= watermark[producer.ring]`. Lookups skip stale entries and never truncate
//! chains (rings interleave in one bucket). Stale entries are freed in batches by
//! [`TensorMap::sync`] / [`TensorMap::reclaim_retired`].
//!
//! A map built with [`TensorMapConfig::unbounded`] never retires anything and grows on
//! demand: that is the dep_gen replay's map (tests and `--from-deps` use one too). The
//! runtime's map is bounded under both runtimes: [`TensorMapConfig::bounded`] under `tmr`,
//! [`TensorMapConfig::bounded_never_retiring`] under `hbg`, which advances no watermark, so
//! nothing retires while it builds the graph (and it keeps no per-task chains) and the
//! capacity (`tensormap_capacity`, default [`DEFAULT_TENSORMAP_CAPACITY`]) bounds the whole
//! graph's live entries; past it the submit fails at once with TENSORMAP_OVERFLOW.
//!
//! A buffer that accumulates many live entries (more than `hot_threshold` walked in one lookup
//! whose consumer met at most a third of them, e.g. a tile of a tiled GEMM's C among the
//! others; a fan-in's join, which meets them all, keeps its buffer in the chain) moves into
//! its own index (`hot.rs`: hashed by box position for its main layout, by start offset
//! otherwise), so a lookup visits only the entries that can overlap the consumer's view; the
//! visiting order (newest first) and every result are unchanged (property-tested against the
//! plain map).
//! Hot addresses are found through a bit per bucket (`hot_set.rs`), and an INOUT lookup that
//! removes a hot entry holding its own view parks that entry for the same submit's
//! registration to take over in place (`TensorMap::park`); the property test makes whole
//! submits to check that nothing a lookup, a removal or the count in use shows changes.
//!
//! The last-writer memo answers the lookup of an accumulator's next INOUT step (a chain on one
//! tensor, a tiled GEMM's k-steps on one C tile) without walking anything: when the last
//! insert registered the view its own submit's lookup had just swept clean (every live entry
//! that overlapped it removed), that entry is the only live one that can overlap the view
//! until another writer of its buffer is inserted or the entry itself leaves (the `last`
//! field). The same property test compares a map with it against one without it.

mod buckets;
mod hot;
mod hot_set;
mod keyed_slab;
mod overlap;
mod views;

pub use overlap::{check_overlap, Overlap};

use crate::{TaskId, Tensor, MAX_RINGS};
use hot::Candidate;
use hot_set::{HotSet, HotSlot};
use views::Views;

/// Default entry capacity of the runtime's tensor map.
pub const DEFAULT_TENSORMAP_CAPACITY: usize = 65536;
/// Default bucket count (a power of two).
pub const DEFAULT_TENSORMAP_BUCKETS: usize = 4096;
/// Retired tasks between two batched cleanups of a ring.
pub const CLEANUP_INTERVAL: u32 = 64;
/// Entries of one base address a lookup may walk in the bucket chain before that address gets
/// its own index (see `hot.rs`), when the lookup met few of them (`worth_an_index`).
pub const DEFAULT_HOT_THRESHOLD: usize = 16;
/// Hot addresses kept before the empty indexes among them are dropped. An index that empties
/// (every writer of its buffer retired, e.g. the schedulers caught up with a tiled GEMM) is
/// kept: dropping it at once sent its buffer back to the bucket chain, whose lookups then
/// walked up to [`DEFAULT_HOT_THRESHOLD`] live entries each until the next promotion, over
/// and over. An empty index keeps at most a few emptied buckets (see `hot.rs`).
pub const HOT_ADDRESS_LIMIT: usize = 1024;

const NIL: u32 = u32::MAX;

/// How a [`TensorMap`] is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapConfig {
    /// Maximum live entries; `None` grows without bound (the dep_gen replay). The runtime's
    /// map is bounded under both runtimes.
    pub capacity: Option<usize>,
    /// Number of hash buckets (rounded up to a power of two).
    pub buckets: usize,
    /// Task window per ring, for the per-task chains; `None` when nothing ever retires.
    pub task_windows: Option<[u32; MAX_RINGS]>,
    /// Same-address entries a lookup may walk before the address gets an ordered index (when
    /// its consumer met at most a third of them).
    pub hot_threshold: usize,
    /// Producer views kept as template numbers and offsets (`views.rs`) instead of whole.
    pub packed_views: bool,
    /// Answer a lookup of the view the last insert registered, when nothing else can overlap
    /// it, from that entry alone ([`TensorMap::lookup`]'s last-writer memo). Off only to
    /// compare against a map without it (tests).
    pub last_writer_memo: bool,
}

impl TensorMapConfig {
    /// The runtime's map: a fixed pool, per-ring retirement.
    pub fn bounded(capacity: usize, task_windows: [u32; MAX_RINGS]) -> Self {
        TensorMapConfig {
            capacity: Some(capacity),
            buckets: DEFAULT_TENSORMAP_BUCKETS,
            task_windows: Some(task_windows),
            hot_threshold: DEFAULT_HOT_THRESHOLD,
            packed_views: false,
            last_writer_memo: true,
        }
    }
    /// A fixed pool whose entries never retire (a host-built graph: nothing completes while it
    /// is built), so it keeps no per-task chains: those cost 8 bytes per task-window slot and
    /// a write per insert, for a cleanup that never has anything to free. It holds an entry per
    /// registered output of the whole graph, so it packs their views (`views.rs`).
    pub fn bounded_never_retiring(capacity: usize) -> Self {
        TensorMapConfig {
            capacity: Some(capacity),
            task_windows: None,
            packed_views: true,
            ..TensorMapConfig::unbounded()
        }
    }
    /// A map that never retires and grows on demand.
    pub fn unbounded() -> Self {
        TensorMapConfig {
            capacity: None,
            buckets: DEFAULT_TENSORMAP_BUCKETS,
            task_windows: None,
            hot_threshold: DEFAULT_HOT_THRESHOLD,
            packed_views: false,
            last_writer_memo: true,
        }
    }
}

/// The pool has no free entry for an insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapFull {
    /// The pool's capacity.
    pub capacity: usize,
}

#[derive(Clone, Copy)]
struct Entry {
    /// The producer view's buffer address (the view itself is in [`Views`], read on a match).
    addr: u64,
    producer: TaskId,
    /// Insert order (newest first is the visiting order).
    seq: u64,
    /// Kept in its address's hot index instead of the bucket chain.
    hot: bool,
    /// Removed by a lookup and kept for its consumer's registration ([`TensorMap::park`]):
    /// no lookup sees it.
    parked: bool,
    /// Its bucket chain's bucket; for a hot entry, its index's slot in the hot set.
    bucket: u32,
    /// The bucket chain's links. A hot entry is in no chain: `b_prev` is its grid bucket's
    /// slot instead (`NIL` for a loose entry), so that its removal finds it without placing
    /// its view or probing for the bucket (`buckets.rs`).
    b_prev: u32,
    b_next: u32,
    t_prev: u32,
    t_next: u32,
}

#[derive(Clone, Copy)]
struct TaskChain {
    local: u32,
    head: u32,
}

/// See the module documentation.
pub struct TensorMap {
    buckets: Vec<u32>,
    bucket_shift: u32,
    entries: Vec<Entry>,
    /// Each entry's producer view, by entry index.
    views: Views,
    free: Vec<u32>,
    capacity: Option<usize>,
    in_use: usize,
    watermark: [u32; MAX_RINGS],
    cleaned: [u32; MAX_RINGS],
    task_chains: [Vec<TaskChain>; MAX_RINGS],
    hot: HotSet,
    hot_threshold: usize,
    next_seq: u64,
    candidates: Vec<Candidate>,
    /// The entry a lookup parked ([`TensorMap::park`]), if any.
    parked: Option<u32>,
    /// `swept_view` is the view of the last lookup that removed every entry it reported (an
    /// INOUT that covered each earlier writer it met), and no insert came since.
    swept: bool,
    swept_view: Option<Tensor>,
    /// What `check_overlap` answers for `swept_view` against itself, when the sweep knew it
    /// (a memo lookup); carried into `last_overlap` by the insert of that view.
    swept_overlap: Option<Overlap>,
    /// The last-writer memo: entry `last` was inserted right after a lookup of the same view
    /// removed every live entry that overlapped it (`swept`), and nothing was inserted on its
    /// buffer since. So no other live entry overlaps that view: every other one was disjoint
    /// from it then (views and versions never change), removals only shrink the set, and an
    /// entry of another buffer is never compared with it. A lookup of exactly that view (an
    /// accumulator's next INOUT: a chain, a tiled GEMM's k-steps over one tile; a fan-out's
    /// readers of what one writer wrote) is answered from this entry alone, with no walk of
    /// its bucket chain or hot index ([`TensorMap::lookup_last`]). Dropped when its entry is
    /// removed, parked or freed, or another writer of its buffer is inserted; replaced by the
    /// next insert that qualifies. (Flags beside plain fields, not `Option`s of views: those
    /// were moved and compared whole at every insert and lookup.)
    last_valid: bool,
    last: u32,
    /// The view entry `last` holds (valid with it).
    last_view: Option<Tensor>,
    /// The memo view's overlap with itself, once known: a chain of INOUT tasks on one view
    /// works it out once, not at every submit.
    last_overlap: Option<Overlap>,
    /// The parked entry holds exactly `swept_view` (the memo parked it for its consumer's own
    /// view, and no sweep came since): its registration needs no placement to take it over.
    parked_is_swept: bool,
    last_writer_memo: bool,
}

/// Entries a new map reserves at most (4M, 192 MB of address space): more than any run of the
/// benches needs, far less than the largest capacity a configuration may ask for.
const MAX_RESERVED_ENTRIES: usize = 1 << 22;

impl TensorMap {
    /// An empty map.
    pub fn new(cfg: TensorMapConfig) -> TensorMap {
        let nb = cfg.buckets.max(1).next_power_of_two();
        let task_chains = match cfg.task_windows {
            Some(w) => w.map(|n| {
                vec![
                    TaskChain {
                        local: u32::MAX,
                        head: NIL
                    };
                    n as usize
                ]
            }),
            None => Default::default(),
        };
        TensorMap {
            buckets: vec![NIL; nb],
            bucket_shift: 64 - nb.trailing_zeros(),
            // Reserved up to a bound, grown past it: a capacity is a limit, not a size, and
            // one near its maximum (2^31 entries, 100 GB) aborted the process here (found by
            // a review).
            entries: Vec::with_capacity(cfg.capacity.unwrap_or(1024).min(MAX_RESERVED_ENTRIES)),
            views: Views::new(cfg.packed_views),
            free: Vec::new(),
            capacity: cfg.capacity,
            in_use: 0,
            watermark: [0; MAX_RINGS],
            cleaned: [0; MAX_RINGS],
            task_chains,
            hot: HotSet::new(nb),
            hot_threshold: cfg.hot_threshold.max(1),
            next_seq: 0,
            candidates: Vec::new(),
            parked: None,
            swept: false,
            swept_view: None,
            swept_overlap: None,
            last_valid: false,
            last: NIL,
            last_view: None,
            last_overlap: None,
            parked_is_swept: false,
            last_writer_memo: cfg.last_writer_memo,
        }
    }

    #[inline]
    fn bucket_of(&self, addr: u64) -> usize {
        bucket_index(addr, self.bucket_shift)
    }

    /// Live entries (including stale ones not yet freed).
    #[inline]
    pub fn in_use(&self) -> usize {
        self.in_use
    }
    /// The entry capacity, `None` when unbounded.
    #[inline]
    pub fn capacity(&self) -> Option<usize> {
        self.capacity
    }
    /// Entries that can be inserted before the pool is full.
    #[inline]
    pub fn free_slots(&self) -> usize {
        self.capacity.map_or(usize::MAX, |c| c - self.in_use)
    }
    /// Where the map writes next: the address ranges of its entry storage and of its view
    /// column past the last element written (capacity allocated, not yet used). For a runtime
    /// that faults those pages in ahead of the map on another thread (a host-built graph's
    /// prefault thread); addresses only, never read or written through. A column that grows
    /// may move, so a range is a hint of the moment.
    pub fn unwritten_storage(&self) -> [std::ops::Range<usize>; 2] {
        [unwritten(&self.entries), self.views.unwritten()]
    }
    /// Addresses whose entries moved into an ordered index (see [`DEFAULT_HOT_THRESHOLD`]).
    /// For tests of the promotion.
    #[doc(hidden)]
    pub fn hot_addresses(&self) -> usize {
        self.hot.len()
    }
    /// Entries the last lookup on a hot address examined. For tests of the ordered index.
    #[doc(hidden)]
    pub fn last_hot_candidates(&self) -> usize {
        self.candidates.len()
    }
    /// The validity watermark of `ring` (its oldest unretired local id).
    #[inline]
    pub fn watermark(&self, ring: u8) -> u32 {
        self.watermark[ring as usize]
    }
    /// Raises the validity watermark of `ring` (it never goes down).
    #[inline]
    pub fn set_watermark(&mut self, ring: u8, last_alive: u32) {
        let w = &mut self.watermark[ring as usize];
        *w = (*w).max(last_alive);
    }
    #[inline]
    fn is_live(&self, producer: TaskId) -> bool {
        producer.local() >= self.watermark[producer.ring() as usize]
    }

    /// Called at each submit of `task`: frees the entries of tasks its ring retired, in batches
    /// of [`CLEANUP_INTERVAL`], or at once when `task`'s slot still holds an older task's chain.
    #[inline]
    pub fn sync(&mut self, task: TaskId) {
        self.unpark();
        let r = task.ring() as usize;
        let Some(chains) = self.task_chains.get(r).filter(|c| !c.is_empty()) else {
            return;
        };
        let slot = task.local() as usize & (chains.len() - 1);
        let collision = chains[slot].head != NIL && chains[slot].local != task.local();
        if collision || self.watermark[r].saturating_sub(self.cleaned[r]) >= CLEANUP_INTERVAL {
            self.cleanup_ring(r);
        }
    }

    /// Frees every stale entry of every ring; returns how many were freed.
    pub fn reclaim_retired(&mut self) -> usize {
        self.unpark();
        let before = self.in_use;
        for r in 0..MAX_RINGS {
            self.cleanup_ring(r);
        }
        before - self.in_use
    }

    fn cleanup_ring(&mut self, r: usize) {
        if self.task_chains[r].is_empty() {
            return;
        }
        let mask = self.task_chains[r].len() - 1;
        let (from, to) = (self.cleaned[r], self.watermark[r]);
        // Visiting the slots of the last `window` locals visits every slot. A slot may still
        // hold the chain of an older retired task (no later task of that slot inserted
        // anything), so any retired owner's chain is freed, not only the visited local's.
        let from = from.max(to.saturating_sub(mask as u32 + 1));
        for local in from..to {
            let slot = local as usize & mask;
            let chain = self.task_chains[r][slot];
            if chain.head != NIL && chain.local < to {
                let mut e = chain.head;
                while e != NIL {
                    let next = self.entries[e as usize].t_next;
                    self.unlink_bucket(e);
                    self.release(e);
                    e = next;
                }
                self.task_chains[r][slot] = TaskChain {
                    local: u32::MAX,
                    head: NIL,
                };
            }
        }
        self.cleaned[r] = self.cleaned[r].max(to);
    }

    fn release(&mut self, e: u32) {
        self.forget_last(e);
        self.free.push(e);
        self.in_use -= 1;
    }

    /// Drops the last-writer memo when its entry `e` leaves (removed, parked or freed).
    #[inline]
    fn forget_last(&mut self, e: u32) {
        if e == self.last {
            self.last_valid = false;
        }
    }

    fn unlink_bucket(&mut self, e: u32) {
        let Entry {
            bucket,
            b_prev,
            b_next,
            hot,
            seq,
            ..
        } = self.entries[e as usize];
        if hot {
            // A hot entry's `bucket` is its index's slot.
            let h = self.hot.index_mut(bucket);
            if b_prev == NIL {
                h.remove_loose(&self.views.get(e), seq);
            } else {
                h.remove_from_slot(b_prev, seq);
            }
            return;
        }
        if b_prev == NIL {
            self.buckets[bucket as usize] = b_next;
        } else {
            self.entries[b_prev as usize].b_next = b_next;
        }
        if b_next != NIL {
            self.entries[b_next as usize].b_prev = b_prev;
        }
    }

    fn unlink_task(&mut self, e: u32) {
        let Entry {
            producer,
            t_prev,
            t_next,
            ..
        } = self.entries[e as usize];
        if t_prev == NIL {
            if let Some(chains) = self
                .task_chains
                .get_mut(producer.ring() as usize)
                .filter(|c| !c.is_empty())
            {
                let slot = producer.local() as usize & (chains.len() - 1);
                chains[slot].head = t_next;
            }
        } else {
            self.entries[t_prev as usize].t_next = t_next;
        }
        if t_next != NIL {
            self.entries[t_next as usize].t_prev = t_prev;
        }
    }

    /// Removes one entry (the INOUT-covered rule).
    fn remove(&mut self, e: u32) {
        self.unlink_bucket(e);
        self.unlink_task(e);
        self.release(e);
    }

    /// Removes covered entry `e` of a hot grid whose view is the consumer's own, as
    /// [`TensorMap::remove`] does, except that the entry stays where it is, hidden from every
    /// lookup, for the consumer's registration of the same view to take over
    /// ([`TensorMap::insert`]): an INOUT tile (a tiled GEMM's C) then neither leaves its
    /// index's bucket nor enters it again, nor goes through the free list. Anything else that
    /// comes first finishes the removal ([`TensorMap::unpark`]). One entry at most is parked.
    fn park(&mut self, e: u32) {
        self.forget_last(e);
        self.parked_is_swept = false;
        self.unlink_task(e);
        self.entries[e as usize].parked = true;
        self.in_use -= 1;
        self.parked = Some(e);
    }

    /// Removes covered entry `e` (the INOUT rule), or parks it ([`TensorMap::park`]) when it
    /// holds the consumer's own view in a hot grid (`same_grid_view`; `b_prev` is then its
    /// grid bucket's slot, `NIL` for a loose entry) and nothing is parked yet; whether it
    /// parked it.
    #[inline]
    fn supersede(&mut self, e: u32, b_prev: u32, same_grid_view: bool) -> bool {
        if same_grid_view && b_prev != NIL && self.parked.is_none() {
            self.park(e);
            true
        } else {
            self.remove(e);
            false
        }
    }

    /// Finishes the removal of the parked entry, if any.
    #[inline]
    fn unpark(&mut self) {
        if self.parked.is_some() {
            self.unpark_now();
        }
    }

    #[inline(never)]
    fn unpark_now(&mut self) {
        if let Some(e) = self.parked.take() {
            self.forget_last(e);
            self.parked_is_swept = false;
            self.entries[e as usize].parked = false;
            self.unlink_bucket(e);
            self.free.push(e);
        }
    }

    /// [`TensorMap::insert`] with an entry parked: taken over, or its removal finished first.
    #[inline(never)]
    fn insert_with_parked(&mut self, tensor: &Tensor, producer: TaskId) -> Result<u32, TensorMapFull> {
        if let Some(e) = self.parked {
            if self.take_over(e, tensor, producer) {
                self.parked = None;
                return Ok(e);
            }
            self.unpark_now();
        }
        self.insert_entry(tensor, producer)
    }

    /// The parked entry taken over by `producer`'s registration of the view it holds, known to
    /// be that view (`parked_is_swept`): what [`TensorMap::take_over`] makes of it, without
    /// placing the view to check its box or storing it again.
    fn renew_parked(&mut self, producer: TaskId) -> u32 {
        let e = self.parked.take().expect("an entry is parked");
        self.parked_is_swept = false;
        let entry = self.entries[e as usize];
        let seq = self.next_seq;
        // A parked entry is hot: its `bucket` is its index's slot, `b_prev` its bucket's.
        let renewed = self
            .hot
            .index_mut(entry.bucket)
            .renew(entry.b_prev, entry.seq, seq);
        assert!(renewed, "a parked entry is in its grid bucket");
        let entry = &mut self.entries[e as usize];
        (entry.producer, entry.seq, entry.parked) = (producer, seq, false);
        self.next_seq += 1;
        self.in_use += 1;
        self.link_task(e, producer);
        e
    }

    /// The parked entry `e` taken over by `producer`'s registration of `tensor`, when that is
    /// the view it held: the entry as [`TensorMap::insert`] would make it, in the same place.
    fn take_over(&mut self, e: u32, tensor: &Tensor, producer: TaskId) -> bool {
        let entry = self.entries[e as usize];
        if entry.addr != tensor.addr() {
            return false;
        }
        let seq = self.next_seq;
        // A parked entry is hot: its `bucket` is its index's slot, `b_prev` its bucket's.
        if !self
            .hot
            .index_mut(entry.bucket)
            .take_over(entry.b_prev, entry.seq, tensor, seq)
        {
            return false;
        }
        let entry = &mut self.entries[e as usize];
        (entry.producer, entry.seq, entry.parked) = (producer, seq, false);
        self.views.set(e, tensor);
        self.next_seq += 1;
        self.in_use += 1;
        self.link_task(e, producer);
        true
    }

    /// The slot of `producer`'s task chain and its head, when the map keeps task chains (the
    /// chain made `producer`'s if its slot held an older task's).
    #[inline]
    fn task_chain_head(&mut self, producer: TaskId) -> (Option<usize>, u32) {
        let Some(chains) = self
            .task_chains
            .get_mut(producer.ring() as usize)
            .filter(|c| !c.is_empty())
        else {
            return (None, NIL);
        };
        let slot = producer.local() as usize & (chains.len() - 1);
        let c = &mut chains[slot];
        if c.local != producer.local() {
            *c = TaskChain {
                local: producer.local(),
                head: NIL,
            };
        }
        (Some(slot), c.head)
    }

    /// Links entry `e`, in no task chain, at the head of `producer`'s.
    fn link_task(&mut self, e: u32, producer: TaskId) {
        let (t_head_slot, t_next) = self.task_chain_head(producer);
        (self.entries[e as usize].t_prev, self.entries[e as usize].t_next) = (NIL, t_next);
        if let Some(slot) = t_head_slot {
            if t_next != NIL {
                self.entries[t_next as usize].t_prev = e;
            }
            self.task_chains[producer.ring() as usize][slot].head = e;
        }
    }

    /// Records that `producer` wrote `tensor`.
    pub fn insert(&mut self, tensor: &Tensor, producer: TaskId) -> Result<(), TensorMapFull> {
        // The view just swept, registered: the only live entry that can overlap it.
        let exclusive = self.swept && self.swept_view.as_ref().is_some_and(|v| v == tensor);
        self.swept = false;
        let e = if self.parked.is_some() {
            if exclusive && self.parked_is_swept {
                self.renew_parked(producer)
            } else {
                self.insert_with_parked(tensor, producer)?
            }
        } else {
            self.insert_entry(tensor, producer)?
        };
        if exclusive {
            self.last_valid = true;
            (self.last, self.last_view, self.last_overlap) = (e, self.swept_view, self.swept_overlap);
        } else if self.last_valid && self.last_view.as_ref().is_some_and(|v| v.addr() == tensor.addr()) {
            // A new writer of the memo's buffer may overlap its view; one of another buffer
            // cannot (views of different base addresses are never compared).
            self.last_valid = false;
        }
        Ok(())
    }

    /// [`TensorMap::insert`]'s new entry, no entry parked; its index.
    #[inline(always)]
    fn insert_entry(&mut self, tensor: &Tensor, producer: TaskId) -> Result<u32, TensorMapFull> {
        let addr = tensor.addr();
        let chain = self.bucket_of(addr);
        let hot_slot = self.hot.find(addr, chain);
        let hot = hot_slot.is_some();
        // A hot entry is in no chain: its `bucket` is its index's slot.
        let bucket = hot_slot.unwrap_or(chain as u32);
        let b_next = if hot { NIL } else { self.buckets[chain] };
        let (t_head_slot, t_next) = self.task_chain_head(producer);
        let seq = self.next_seq;
        let entry = Entry {
            addr,
            producer,
            seq,
            hot,
            parked: false,
            bucket,
            b_prev: NIL,
            b_next,
            t_prev: NIL,
            t_next,
        };
        let e = if let Some(e) = self.free.pop() {
            self.entries[e as usize] = entry;
            e
        } else if self.capacity.is_none_or(|c| self.entries.len() < c) {
            self.entries.push(entry);
            (self.entries.len() - 1) as u32
        } else {
            return Err(TensorMapFull {
                capacity: self.capacity.unwrap_or(0),
            });
        };
        self.views.set(e, tensor);
        self.next_seq += 1;
        self.in_use += 1;
        if let Some(slot) = hot_slot {
            let h = self.hot.index_mut(slot);
            self.entries[e as usize].b_prev = h.insert(tensor, seq, e).unwrap_or(NIL);
        } else {
            if b_next != NIL {
                self.entries[b_next as usize].b_prev = e;
            }
            self.buckets[bucket as usize] = e;
        }
        if let Some(slot) = t_head_slot {
            if t_next != NIL {
                self.entries[t_next as usize].t_prev = e;
            }
            self.task_chains[producer.ring() as usize][slot].head = e;
        }
        Ok(e)
    }

    /// Visits every live entry on `consumer`'s buffer that overlaps it, newest first, calling
    /// `hit(producer, producer_view, overlap)`. With `remove_covered`, an entry whose region the
    /// consumer covers is removed after the visit (the INOUT rule).
    pub fn lookup<E>(
        &mut self,
        consumer: &Tensor,
        remove_covered: bool,
        mut hit: impl FnMut(TaskId, &Tensor, Overlap) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.last_valid && self.last_view.as_ref().is_some_and(|v| v == consumer) {
            return self.lookup_last(self.last, consumer, remove_covered, hit);
        }
        let addr = consumer.addr();
        let chain = self.bucket_of(addr);
        if let Some(slot) = self.hot.find(addr, chain) {
            return self.lookup_hot(slot, consumer, remove_covered, hit);
        }
        let mut e = self.buckets[chain];
        // Entries of the address walked (low half) and of them those reported (high half), in
        // one register: a second counter, kept across the visitor's calls, cost each lookup
        // about 6 instructions of saves and restores.
        let mut walked = 0u64;
        // Every entry reported was removed (see `swept`).
        let mut swept = true;
        while e != NIL {
            let entry = self.entries[e as usize];
            let next = entry.b_next;
            if entry.addr == addr {
                walked += 1;
                if self.is_live(entry.producer) {
                    let view = self.views.get(e);
                    let ov = check_overlap(&view, consumer);
                    if ov != Overlap::None {
                        walked += 1 << 32;
                        hit(entry.producer, &view, ov)?;
                        if remove_covered && ov == Overlap::Covered {
                            self.remove(e);
                        } else {
                            swept = false;
                        }
                    }
                }
            }
            e = next;
        }
        self.note_sweep(consumer, remove_covered && swept, None);
        if walked as u32 as usize > self.hot_threshold && worth_an_index(walked) {
            self.promote(addr);
        }
        Ok(())
    }

    /// Remembers `consumer` as swept when a lookup that removes covered entries removed every
    /// entry it reported (`swept`), for the insert of that view to become the last-writer memo.
    /// A lookup that did not sweep leaves an earlier sweep as it was: lookups only remove
    /// entries, so what it claims stays true until the next insert.
    #[inline]
    fn note_sweep(&mut self, consumer: &Tensor, swept: bool, overlap: Option<Overlap>) {
        if swept && self.last_writer_memo {
            (self.swept, self.swept_view, self.swept_overlap) = (true, Some(*consumer), overlap);
            self.parked_is_swept = false;
        }
    }

    /// [`TensorMap::lookup`] of the view the last-writer memo's entry `e` holds (see `last`):
    /// that entry is the only live one that can overlap it, so it is the whole answer. The
    /// overlap of a view with itself is `check_overlap`'s (`same_view_overlap`); a covered
    /// entry is parked or removed as `lookup_hot` or the chain walk would.
    #[inline(never)]
    fn lookup_last<E>(
        &mut self,
        e: u32,
        consumer: &Tensor,
        remove_covered: bool,
        mut hit: impl FnMut(TaskId, &Tensor, Overlap) -> Result<(), E>,
    ) -> Result<(), E> {
        let entry = self.entries[e as usize];
        let mut swept = true;
        let ov = match self.last_overlap {
            Some(ov) => ov,
            None => overlap::same_view_overlap(consumer),
        };
        let mut parked = false;
        if self.is_live(entry.producer) && ov != Overlap::None {
            hit(entry.producer, consumer, ov)?;
            if remove_covered && ov == Overlap::Covered {
                // The entry holds the consumer's own view: a hot one is parked.
                parked = self.supersede(e, entry.b_prev, entry.hot);
            } else {
                swept = false;
            }
        }
        self.note_sweep(consumer, remove_covered && swept, Some(ov));
        // Parked for a covering consumer: the sweep is complete, and `swept_view` is its view.
        self.parked_is_swept = parked;
        Ok(())
    }

    /// [`TensorMap::lookup`] for a hot address: only entries whose range can reach the
    /// consumer's are visited, newest first; the index's verdicts stand in for the test. Out
    /// of line, so that `lookup`'s bucket-chain walk compiles as it did before parking (with
    /// this inlined, tmr chain read 1.02–1.03 in 11 pairs; `docs/performance.md`, item 74).
    #[inline(never)]
    fn lookup_hot<E>(
        &mut self,
        slot: HotSlot,
        consumer: &Tensor,
        remove_covered: bool,
        mut hit: impl FnMut(TaskId, &Tensor, Overlap) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut cands = std::mem::take(&mut self.candidates);
        cands.clear();
        self.hot.index(slot).candidates(consumer, &mut cands);
        cands.sort_unstable_by_key(|c| std::cmp::Reverse(c.seq));
        let mut result = Ok(());
        let mut swept = true;
        for c in &cands {
            let e = c.entry;
            let entry = self.entries[e as usize];
            if entry.parked || !self.is_live(entry.producer) {
                continue;
            }
            let view = self.views.get(e);
            let ov = c.verdict.unwrap_or_else(|| check_overlap(&view, consumer));
            debug_assert_eq!(ov, check_overlap(&view, consumer), "the hot index's verdict");
            if ov != Overlap::None {
                if let Err(err) = hit(entry.producer, &view, ov) {
                    result = Err(err);
                    break;
                }
                if remove_covered && ov == Overlap::Covered {
                    self.supersede(e, entry.b_prev, c.same_view);
                } else {
                    swept = false;
                }
            }
        }
        self.candidates = cands;
        if result.is_ok() {
            self.note_sweep(consumer, remove_covered && swept, None);
        }
        result
    }

    /// Moves every entry of `addr` from its bucket chain into an ordered index.
    #[cold]
    fn promote(&mut self, addr: u64) {
        if self.hot.len() >= HOT_ADDRESS_LIMIT {
            // Indexes stay when they empty (see `HOT_ADDRESS_LIMIT`); drop the empty ones now.
            let shift = self.bucket_shift;
            self.hot.drop_empty(|a| bucket_index(a, shift));
        }
        let chain = self.bucket_of(addr);
        let slot = self.hot.add(addr, chain);
        let mut e = self.buckets[chain];
        while e != NIL {
            let next = self.entries[e as usize].b_next;
            if self.entries[e as usize].addr == addr {
                self.unlink_bucket(e);
                let view = self.views.get(e);
                let entry = &mut self.entries[e as usize];
                entry.hot = true;
                entry.bucket = slot;
                entry.b_prev = self
                    .hot
                    .index_mut(slot)
                    .insert(&view, entry.seq, e)
                    .unwrap_or(NIL);
            }
            e = next;
        }
    }
}

/// Whether a lookup that walked a long chain of entries of one address (`walked`: their count
/// in the low half, those overlapping its consumer in the high half) says that the address
/// would gain from an index. The index finds a consumer's few overlapping entries without
/// visiting the others (a tiled GEMM's tile among its buffer's other tiles), but a consumer
/// that overlaps most of them (a fan-in's join over its readers' slices) visits them all
/// either way, and an indexed entry costs about three times a chained one to insert
/// (`docs/performance.md`, item 88). The consumer must meet at most a third of them: the walk
/// also counts entries whose tasks retired and are not freed yet, up to as many again as the
/// live ones in a `tmr` fan-in, and a join over the live ones must still not look selective.
#[inline]
fn worth_an_index(walked: u64) -> bool {
    let (entries, reported) = (walked & u64::from(u32::MAX), walked >> 32);
    3 * reported <= entries
}

/// The bucket of `addr` in a map of `2^(64 - shift)` buckets.
#[inline]
fn bucket_index(addr: u64, shift: u32) -> usize {
    if shift >= 64 {
        return 0;
    }
    (addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

/// The address range of `v`'s capacity past its last element.
pub(crate) fn unwritten<T>(v: &Vec<T>) -> std::ops::Range<usize> {
    let size = std::mem::size_of::<T>();
    let base = v.as_ptr() as usize;
    base + v.len() * size..base + v.capacity() * size
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    fn buf(addr: u64, n: u32) -> Tensor {
        Tensor::contiguous(addr, u64::from(n) * 4, &[n], DType::Float32, TaskId::INVALID).unwrap()
    }
    fn hits(m: &mut TensorMap, t: &Tensor, remove: bool) -> Vec<(TaskId, Overlap)> {
        let mut v = Vec::new();
        m.lookup::<()>(t, remove, |p, _, o| {
            v.push((p, o));
            Ok(())
        })
        .unwrap();
        v
    }

    /// The unwritten ranges start where the next entry and view will be written and end at
    /// the storages' capacity, each insert moving the starts on by one element.
    #[test]
    fn unwritten_storage_starts_at_the_next_element_and_ends_at_the_capacity() {
        let mut m = TensorMap::new(TensorMapConfig::bounded_never_retiring(64));
        let a = buf(0x10_0000, 1024);
        m.insert(&a.view(&[1], &[0]).unwrap(), TaskId::new(0, 0)).unwrap();
        let [entries, views] = m.unwritten_storage();
        let (e, v) = (size_of::<Entry>(), size_of::<crate::view_pack::PackedView>());
        assert_eq!(
            entries.end - entries.start,
            63 * e,
            "64 entries reserved, one written"
        );
        assert!(
            views.end > views.start,
            "the view column has room past its first view"
        );
        for i in 1..3 {
            m.insert(&a.view(&[1], &[i]).unwrap(), TaskId::new(0, i)).unwrap();
        }
        let [entries2, views2] = m.unwritten_storage();
        assert_eq!(
            (entries2.start - entries.start, entries2.end),
            (2 * e, entries.end)
        );
        // The column grows on demand: unless it moved to a larger allocation, its start moved
        // on by the two views written.
        if views2.end == views.end {
            assert_eq!(views2.start - views.start, 2 * v);
        } else {
            assert!(
                views2.end - views2.start > 0,
                "a grown column has room past its views"
            );
        }
    }

    #[test]
    fn newest_first_and_different_bases_never_compare() {
        let mut m = TensorMap::new(TensorMapConfig::unbounded());
        let a = buf(0x1000, 64);
        m.insert(&a, TaskId::new(0, 0)).unwrap();
        m.insert(&a.view(&[32], &[0]).unwrap(), TaskId::new(0, 1))
            .unwrap();
        // Same bytes at another base address: never compared.
        m.insert(&buf(0x1040, 48), TaskId::new(0, 2)).unwrap();
        let got = hits(&mut m, &a, false);
        assert_eq!(
            got,
            vec![
                (TaskId::new(0, 1), Overlap::Covered),
                (TaskId::new(0, 0), Overlap::Covered)
            ]
        );
    }

    #[test]
    fn inout_covered_removes_other_keeps() {
        let mut m = TensorMap::new(TensorMapConfig::unbounded());
        let a = buf(0x1000, 64);
        m.insert(&a.view(&[32], &[0]).unwrap(), TaskId::new(0, 0))
            .unwrap();
        m.insert(&a.view(&[32], &[16]).unwrap(), TaskId::new(0, 1))
            .unwrap();
        let reader = a.view(&[32], &[0]).unwrap();
        // Entry 1 overlaps partially (Other: kept), entry 0 is covered (removed).
        assert_eq!(
            hits(&mut m, &reader, true),
            vec![
                (TaskId::new(0, 1), Overlap::Other),
                (TaskId::new(0, 0), Overlap::Covered)
            ]
        );
        assert_eq!(m.in_use(), 1);
        assert_eq!(
            hits(&mut m, &reader, true),
            vec![(TaskId::new(0, 1), Overlap::Other)]
        );
    }

    #[test]
    fn watermark_hides_then_frees_retired_entries() {
        let mut m = TensorMap::new(TensorMapConfig::bounded(4, [8; MAX_RINGS]));
        let a = buf(0x1000, 64);
        for local in 0..4 {
            m.insert(&a, TaskId::new(1, local)).unwrap();
        }
        assert_eq!(
            m.insert(&a, TaskId::new(1, 4)),
            Err(TensorMapFull { capacity: 4 })
        );
        m.set_watermark(1, 3);
        assert_eq!(
            hits(&mut m, &a, false),
            vec![(TaskId::new(1, 3), Overlap::Covered)]
        );
        assert_eq!(m.in_use(), 4, "stale entries are freed lazily");
        assert_eq!(m.reclaim_retired(), 3);
        m.insert(&a, TaskId::new(1, 4)).unwrap();
        assert_eq!(m.in_use(), 2);
    }

    #[test]
    fn slot_collision_triggers_cleanup() {
        let mut m = TensorMap::new(TensorMapConfig::bounded(16, [4; MAX_RINGS]));
        let a = buf(0x1000, 64);
        m.insert(&a, TaskId::new(0, 1)).unwrap();
        m.set_watermark(0, 3);
        // Local 5 reuses slot 1: the old chain is freed first.
        m.sync(TaskId::new(0, 5));
        assert_eq!(m.in_use(), 0);
    }
}
