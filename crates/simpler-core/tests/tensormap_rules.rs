//! The tensor map's bookkeeping, through its observables: batched cleanup of retired tasks'
//! entries (`in_use`), the pool's capacity (`free_slots`, `TensorMapFull`), promotion of a busy
//! address to an ordered index (`hot_addresses`) and which entries a hot lookup examines
//! (`last_hot_candidates`).

use simpler_core::tensormap::{TensorMapFull, CLEANUP_INTERVAL, HOT_ADDRESS_LIMIT};
use simpler_core::{DType, Overlap, TaskId, Tensor, TensorMap, TensorMapConfig};

fn buf(addr: u64, n: u32) -> Tensor {
    Tensor::contiguous(addr, u64::from(n) * 4, &[n], DType::Float32, TaskId::INVALID).unwrap()
}

fn hits(m: &mut TensorMap, t: &Tensor) -> Vec<(TaskId, Overlap)> {
    let mut v = Vec::new();
    m.lookup::<()>(t, false, |p, _, o| {
        v.push((p, o));
        Ok(())
    })
    .unwrap();
    v
}

#[test]
fn retired_entries_are_freed_in_batches_of_the_cleanup_interval() {
    let mut m = TensorMap::new(TensorMapConfig::bounded(1024, [256; 4]));
    for local in 0..100 {
        m.insert(&buf(0x1000 + u64::from(local) * 0x100, 4), TaskId::new(0, local))
            .unwrap();
    }
    assert_eq!(m.in_use(), 100);
    // One short of a batch: nothing is freed yet.
    m.set_watermark(0, CLEANUP_INTERVAL - 1);
    m.sync(TaskId::new(0, 100));
    assert_eq!(m.in_use(), 100);
    // A whole batch retired: the next submit frees exactly the retired tasks' entries.
    m.set_watermark(0, CLEANUP_INTERVAL);
    m.sync(TaskId::new(0, 101));
    assert_eq!(m.in_use(), 100 - CLEANUP_INTERVAL as usize);
    // Another ring's submit does not clean ring 0; reclaim_retired cleans every ring now.
    m.set_watermark(0, 90);
    m.sync(TaskId::new(1, 0));
    assert_eq!(m.in_use(), 100 - CLEANUP_INTERVAL as usize);
    assert_eq!(m.reclaim_retired(), 90 - CLEANUP_INTERVAL as usize);
    assert_eq!(m.in_use(), 10);
    // The watermark never goes down.
    m.set_watermark(0, 5);
    assert_eq!(m.watermark(0), 90);
}

#[test]
fn a_slot_reused_by_a_newer_task_frees_the_older_chain_at_once() {
    // A window of 4: task 4 lands in task 0's chain slot.
    let mut m = TensorMap::new(TensorMapConfig::bounded(64, [4; 4]));
    m.insert(&buf(0x1000, 4), TaskId::new(2, 0)).unwrap();
    m.insert(&buf(0x2000, 4), TaskId::new(2, 1)).unwrap();
    m.set_watermark(2, 1);
    m.sync(TaskId::new(2, 3));
    assert_eq!(m.in_use(), 2, "no collision, less than a batch retired");
    m.sync(TaskId::new(2, 4));
    assert_eq!(
        m.in_use(),
        1,
        "task 0's entry is freed before task 4 reuses its slot"
    );
    assert_eq!(
        hits(&mut m, &buf(0x2000, 4)),
        [(TaskId::new(2, 1), Overlap::Covered)]
    );
    // A watermark far past the window cleans only the locals that can still own a chain.
    m.set_watermark(2, 1000);
    assert_eq!(m.reclaim_retired(), 1);
    assert_eq!(m.in_use(), 0);
}

#[test]
fn the_pool_has_its_capacity_and_says_when_full() {
    let mut m = TensorMap::new(TensorMapConfig::bounded(3, [16; 4]));
    assert_eq!((m.capacity(), m.free_slots()), (Some(3), 3));
    for local in 0..3 {
        m.insert(&buf(0x1000, 4), TaskId::new(0, local)).unwrap();
        assert_eq!(m.free_slots(), 2 - local as usize);
    }
    assert_eq!(
        m.insert(&buf(0x1000, 4), TaskId::new(0, 3)),
        Err(TensorMapFull { capacity: 3 })
    );
    m.set_watermark(0, 1);
    m.reclaim_retired();
    assert_eq!(m.free_slots(), 1, "a freed entry is reusable");
    m.insert(&buf(0x1000, 4), TaskId::new(0, 3)).unwrap();
    let u = TensorMap::new(TensorMapConfig::unbounded());
    assert_eq!((u.capacity(), u.free_slots()), (None, usize::MAX));
}

/// A map whose addresses become hot past 4 same-address entries.
fn hot_map() -> TensorMap {
    TensorMap::new(TensorMapConfig {
        hot_threshold: 4,
        ..TensorMapConfig::unbounded()
    })
}

/// Registers slices `0..n` of 8 elements of `x`, slice `i` written by task `first_task + i`.
fn insert_slices(m: &mut TensorMap, x: &Tensor, n: u32, first_task: u32) {
    for i in 0..n {
        m.insert(&x.view(&[8], &[8 * i]).unwrap(), TaskId::new(0, first_task + i))
            .unwrap();
    }
}

#[test]
fn an_address_is_promoted_past_the_threshold_and_lookups_agree() {
    let x = buf(0x1000, 64);
    let tile = |i: u32| x.view(&[8], &[8 * i]).unwrap();
    let mut m = hot_map();
    insert_slices(&mut m, &x, 4, 0);
    assert_eq!(hits(&mut m, &tile(1)), [(TaskId::new(0, 1), Overlap::Covered)]);
    assert_eq!(
        m.hot_addresses(),
        0,
        "4 same-address entries are not past the threshold"
    );
    m.insert(&tile(4), TaskId::new(0, 4)).unwrap();
    assert_eq!(hits(&mut m, &tile(2)), [(TaskId::new(0, 2), Overlap::Covered)]);
    assert_eq!(m.hot_addresses(), 1, "5 are");
    // After the promotion: the same answers, newest first, and new inserts join the index.
    m.insert(&tile(2), TaskId::new(0, 5)).unwrap();
    assert_eq!(
        hits(&mut m, &x),
        [
            (TaskId::new(0, 5), Overlap::Covered),
            (TaskId::new(0, 4), Overlap::Covered),
            (TaskId::new(0, 3), Overlap::Covered),
            (TaskId::new(0, 2), Overlap::Covered),
            (TaskId::new(0, 1), Overlap::Covered),
            (TaskId::new(0, 0), Overlap::Covered),
        ]
    );
    assert_eq!(m.last_hot_candidates(), 6);
    // Another address stays in the bucket chains.
    m.insert(&buf(0x9000, 8), TaskId::new(0, 6)).unwrap();
    assert_eq!(hits(&mut m, &buf(0x9000, 8)).len(), 1);
    assert_eq!(m.hot_addresses(), 1);
}

/// A long walk makes an address hot only when its consumer met few of the entries walked (an
/// index would have skipped the others): a join over every slice does not, a slice among them
/// does; the answers are the same either way.
#[test]
fn only_a_lookup_that_meets_few_of_many_entries_promotes_its_address() {
    let x = buf(0x1000, 128);
    let mut m = hot_map();
    insert_slices(&mut m, &x, 12, 0);
    // The whole buffer meets all 12: visited all the same with an index, so none is made.
    assert_eq!(hits(&mut m, &x).len(), 12);
    assert_eq!(m.hot_addresses(), 0, "a join over every slice");
    // Slices 0-3 are a third of the 12: an index would have skipped the other 8...
    assert_eq!(hits(&mut m, &x.view(&[32], &[0]).unwrap()).len(), 4);
    assert_eq!(m.hot_addresses(), 1, "4 of 12 is a third: promoted");
    // ...while on another buffer 5 of 12 are too many.
    let y = buf(0x9000, 128);
    insert_slices(&mut m, &y, 12, 20);
    assert_eq!(hits(&mut m, &y.view(&[40], &[0]).unwrap()).len(), 5);
    assert_eq!(m.hot_addresses(), 1, "5 of 12 is more than a third");
    assert_eq!(
        hits(&mut m, &y.view(&[8], &[88]).unwrap()),
        [(TaskId::new(0, 31), Overlap::Covered)]
    );
    assert_eq!(m.hot_addresses(), 2, "1 of 12");
}

#[test]
fn a_hot_lookup_examines_only_entries_that_can_reach_the_consumer() {
    let x = buf(0x1000, 128);
    let tile = |i: u32| x.view(&[8], &[8 * i]).unwrap();
    let mut m = hot_map();
    insert_slices(&mut m, &x, 16, 0);
    hits(&mut m, &tile(0));
    assert_eq!(m.hot_addresses(), 1);
    // Tile 5 spans [40, 48); tiles start every 8 and span 8: tile 4 ends where 5 starts and
    // tile 6 starts where 5 ends, so only tile 5's box can meet it.
    assert_eq!(hits(&mut m, &tile(5)), [(TaskId::new(0, 5), Overlap::Covered)]);
    assert_eq!(m.last_hot_candidates(), 1, "tile 5 only");
    // A consumer of the same version as every entry is not "newer": still only nearby tiles.
    let same = tile(5).with_version(0);
    hits(&mut m, &same);
    assert_eq!(m.last_hot_candidates(), 1);
    // A newer consumer overlaps every older entry wherever it lies: all are examined.
    let newer = tile(5).with_version(1);
    assert_eq!(hits(&mut m, &newer).len(), 16);
    assert_eq!(m.last_hot_candidates(), 16);
}

#[test]
fn a_hot_2d_tile_lookup_examines_only_its_own_tile() {
    // A tiled GEMM's C: 16×16 tiles of a 64×64 buffer. Every tile's element range spans its
    // whole tile row (15 rows of 64 plus 16), so a range index would examine the whole row of
    // tiles and the one above; the grid examines the tile itself.
    let c = Tensor::contiguous(0x1000, 64 * 64 * 4, &[64, 64], DType::Float32, TaskId::INVALID).unwrap();
    let tile = |i: u32, j: u32| c.view(&[16, 16], &[16 * i, 16 * j]).unwrap();
    let mut m = hot_map();
    let mut id = 0;
    for i in 0..4 {
        for j in 0..4 {
            m.insert(&tile(i, j), TaskId::new(0, id)).unwrap();
            id += 1;
        }
    }
    hits(&mut m, &tile(0, 0));
    assert_eq!(m.hot_addresses(), 1);
    assert_eq!(hits(&mut m, &tile(2, 1)), [(TaskId::new(0, 9), Overlap::Covered)]);
    assert_eq!(m.last_hot_candidates(), 1);
    // A box straddling four tiles meets exactly those four.
    let straddle = c.view(&[16, 16], &[8, 8]).unwrap();
    let got: Vec<_> = hits(&mut m, &straddle)
        .into_iter()
        .map(|(t, _)| t.local())
        .collect();
    assert_eq!(got, [5, 4, 1, 0]);
    assert_eq!(m.last_hot_candidates(), 4);
    // The transposed C (another layout) cannot be placed on the grid: every tile is examined.
    let t = c.transpose(0, 1).unwrap();
    assert_eq!(hits(&mut m, &t).len(), 16);
    assert_eq!(m.last_hot_candidates(), 16);
}

#[test]
fn a_live_tasks_chain_survives_a_cleanup_of_its_slot() {
    // Window 4: task 4 shares slot 0 with the retired tasks 0..4's first.
    let mut m = TensorMap::new(TensorMapConfig::bounded(64, [4; 4]));
    m.insert(&buf(0x1000, 4), TaskId::new(0, 4)).unwrap();
    m.set_watermark(0, 4);
    assert_eq!(
        m.reclaim_retired(),
        0,
        "task 4 is the oldest live task, not retired"
    );
    assert_eq!(
        hits(&mut m, &buf(0x1000, 4)),
        [(TaskId::new(0, 4), Overlap::Covered)]
    );
    // Task 4 retires; task 8 takes slot 0 (the submit's sync frees task 4's chain first).
    m.set_watermark(0, 5);
    for local in [8, 9, 10, 11] {
        m.sync(TaskId::new(0, local));
        m.insert(&buf(0x2000 + u64::from(local) * 0x100, 4), TaskId::new(0, local))
            .unwrap();
    }
    assert_eq!(m.in_use(), 4);
    // A jump of the watermark by more than a window still reaches every slot: task 8's chain
    // (slot 0, the slot of local 996 = 1000 - window) is freed with the others.
    m.set_watermark(0, 1000);
    assert_eq!(m.reclaim_retired(), 4);
    assert_eq!(m.in_use(), 0);
}

#[test]
fn any_bucket_count_and_any_address_work() {
    for buckets in [1, 2, 4096] {
        let mut m = TensorMap::new(TensorMapConfig {
            buckets,
            ..TensorMapConfig::unbounded()
        });
        // Odd addresses hash to every bucket, not only the ones of page-aligned addresses.
        for i in 0..64u64 {
            m.insert(&buf(0x1001 + i * 0x1235, 4), TaskId::new(0, i as u32))
                .unwrap();
        }
        for i in 0..64u64 {
            let got = hits(&mut m, &buf(0x1001 + i * 0x1235, 4));
            assert_eq!(
                got,
                [(TaskId::new(0, i as u32), Overlap::Covered)],
                "buckets {buckets}"
            );
        }
    }
}

#[test]
fn an_emptied_hot_index_stays_until_the_limit_and_answers_the_same() {
    let mut m = TensorMap::new(TensorMapConfig {
        hot_threshold: 4,
        ..TensorMapConfig::bounded(1 << 14, [1 << 12; 4])
    });
    let x = buf(0x1000, 64);
    insert_slices(&mut m, &x, 5, 0);
    // A lookup that meets one of the five (a lookup that met them all would not promote).
    hits(&mut m, &x.view(&[8], &[0]).unwrap());
    assert_eq!(m.hot_addresses(), 1);
    m.set_watermark(0, 5);
    assert_eq!(m.reclaim_retired(), 5);
    // Kept while empty: a buffer whose writers all retired (the schedulers caught up) gets
    // new writers soon, and sending it back to the bucket chain made every lookup walk up to
    // the threshold again before the next promotion.
    assert_eq!(m.hot_addresses(), 1, "the empty index is kept");
    m.insert(&x, TaskId::new(0, 5)).unwrap();
    assert_eq!(hits(&mut m, &x), [(TaskId::new(0, 5), Overlap::Covered)]);
    assert_eq!(m.last_hot_candidates(), 1, "answered by the index");
    // Past HOT_ADDRESS_LIMIT hot addresses, a promotion drops the empty indexes.
    let mut id = 6;
    for a in 0..HOT_ADDRESS_LIMIT as u64 {
        let y = buf(0x10_0000 + a * 0x1000, 8);
        for i in 0..5 {
            m.insert(&y.view(&[1], &[i]).unwrap(), TaskId::new(0, id))
                .unwrap();
            id += 1;
        }
        hits(&mut m, &y.view(&[1], &[0]).unwrap());
        m.set_watermark(0, id);
        m.reclaim_retired();
    }
    // x's index held an entry (task 5 retired above, so it is empty now too): every index but
    // the last promoted one is empty and was dropped at that promotion.
    assert_eq!(m.hot_addresses(), 1);
}
