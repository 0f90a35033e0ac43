//! The join of `aicpu_tasks` rows onto `aicore_tasks` rows by `(core_id, reg_task_id)`, by
//! sorting both sides' keys and merging them.
//!
//! The rule is the original's map: every aicpu row is put under its key, a later row replacing
//! an earlier one, then each aicore row in file order takes the row under its key out, so a
//! second aicore row with the same key finds nothing. A hash map of a million rows costs two
//! cache misses a row (an insert and a remove at random places in tens of megabytes: 30 % of
//! a 1M-row file's read); sorting two arrays of keys walks memory in order (the read 0.80 →
//! 0.63 s in a conversion, `docs/performance.md`, item 93). The tests hold the merge to the
//! map's answer on random rows.

/// A row's join key: `core_id` in the high half, `reg_task_id` in the low.
pub(super) fn key(core_id: u32, reg: u32) -> u64 {
    (u64::from(core_id) << 32) | u64::from(reg)
}

/// What the join found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Joined {
    /// Per aicore row, the index of its aicpu row, or [`Joined::NONE`].
    pub matched: Vec<u32>,
    /// Aicpu rows whose key an earlier aicpu row already had (the later row is used).
    pub duplicate_keys: usize,
    /// The keys of the aicpu rows no aicore row took (one per key), ascending.
    pub unmatched: Vec<u64>,
    /// Aicore rows whose key an earlier aicore row already had (they take no aicpu row).
    pub duplicate_core_keys: usize,
}

impl Joined {
    /// No aicpu row for this aicore row.
    pub const NONE: u32 = u32::MAX;
}

/// Joins the aicpu keys `cpu` onto the aicore keys `core` (each in file order). With `take`
/// false only the duplicates are counted: every aicore row is unmatched and `unmatched` is
/// empty (a file without dispatch times).
///
/// Panics if either side has `u32::MAX` rows or more (a records file holds far fewer).
pub(super) fn join(cpu: &[u64], core: &[u64], take: bool) -> Joined {
    assert!(
        cpu.len() < Joined::NONE as usize && core.len() < Joined::NONE as usize,
        "more rows than a row index holds"
    );
    let by_key = |keys: &[u64]| {
        let mut sorted: Vec<(u64, u32)> = keys.iter().zip(0u32..).map(|(&k, i)| (k, i)).collect();
        sorted.sort_unstable();
        sorted
    };
    let cpu_sorted = by_key(cpu);
    // Each key's row is the last of its run (the largest index), as a later insert replaces.
    let mut winners: Vec<(u64, u32)> = Vec::with_capacity(cpu_sorted.len());
    for &(k, i) in &cpu_sorted {
        match winners.last_mut() {
            Some(last) if last.0 == k => last.1 = i,
            _ => winners.push((k, i)),
        }
    }
    let duplicate_keys = cpu_sorted.len() - winners.len();
    drop(cpu_sorted);
    let mut matched = vec![Joined::NONE; core.len()];
    if !take {
        return Joined {
            matched,
            duplicate_keys,
            unmatched: Vec::new(),
            duplicate_core_keys: 0,
        };
    }
    let mut unmatched = Vec::new();
    let mut next = winners.iter().peekable();
    let mut previous = None;
    let mut duplicate_core_keys = 0;
    for (k, i) in by_key(core) {
        if previous == Some(k) {
            duplicate_core_keys += 1;
            continue; // a later aicore row with a key already taken
        }
        previous = Some(k);
        while let Some(&&(ck, ci)) = next.peek() {
            if ck > k {
                break;
            }
            next.next();
            if ck == k {
                matched[i as usize] = ci;
            } else {
                unmatched.push(ck);
            }
        }
    }
    unmatched.extend(next.map(|&(k, _)| k));
    Joined {
        matched,
        duplicate_keys,
        unmatched,
        duplicate_core_keys,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rustc_hash::FxHashMap;

    /// The original's rule, with a map: what the merge must equal.
    fn by_map(cpu: &[u64], core: &[u64], take: bool) -> Joined {
        let mut map = FxHashMap::default();
        let mut duplicate_keys = 0;
        for (i, &k) in cpu.iter().enumerate() {
            if map.insert(k, i as u32).is_some() {
                duplicate_keys += 1;
            }
        }
        let matched = core
            .iter()
            .map(|k| take.then(|| map.remove(k)).flatten().unwrap_or(Joined::NONE))
            .collect();
        let mut unmatched: Vec<u64> = if take {
            map.into_keys().collect()
        } else {
            Vec::new()
        };
        unmatched.sort_unstable();
        let mut seen = rustc_hash::FxHashSet::default();
        let duplicate_core_keys = if take {
            core.iter().filter(|k| !seen.insert(**k)).count()
        } else {
            0
        };
        Joined {
            matched,
            duplicate_keys,
            unmatched,
            duplicate_core_keys,
        }
    }

    #[test]
    fn the_last_aicpu_row_of_a_key_goes_to_the_first_aicore_row_of_it() {
        let (a, b, c) = (key(0, 1), key(0, 2), key(3, 1));
        let cpu = [b, a, b, key(9, 9)];
        let core = [a, c, b, b];
        let joined = join(&cpu, &core, true);
        assert_eq!(
            joined,
            Joined {
                matched: vec![1, Joined::NONE, 2, Joined::NONE],
                duplicate_keys: 1,
                unmatched: vec![key(9, 9)],
                duplicate_core_keys: 1,
            }
        );
        let without = join(&cpu, &core, false);
        assert_eq!(without.matched, vec![Joined::NONE; 4]);
        assert_eq!((without.duplicate_keys, without.unmatched), (1, vec![]));
    }

    #[test]
    fn the_key_keeps_core_and_reg_apart() {
        assert_eq!(key(1, 0), 1 << 32);
        assert_ne!(key(1, 0), key(0, 1 << 31));
        assert_eq!(key(u32::MAX, u32::MAX), u64::MAX);
    }

    proptest! {
        #[test]
        fn the_merge_gives_the_maps_answer(
            cpu in prop::collection::vec((0u32..4, 0u32..12), 0..40),
            core in prop::collection::vec((0u32..4, 0u32..12), 0..40),
            take in any::<bool>(),
        ) {
            let cpu: Vec<u64> = cpu.into_iter().map(|(c, r)| key(c, r)).collect();
            let core: Vec<u64> = core.into_iter().map(|(c, r)| key(c, r)).collect();
            prop_assert_eq!(join(&cpu, &core, take), by_map(&cpu, &core, take));
        }
    }
}
