//! Point reduction for drawing: long series are cut into buckets and each bucket keeps its
//! minimum and maximum. Because the series' first maximum is also its bucket's first maximum,
//! the plotted maximum always equals the true maximum, at the same scope index.

/// Indices of `values` to plot, ascending: all of them when there are at most `max_points`,
/// else the first minimum and first maximum of each of `max_points / 2` equal buckets.
pub(crate) fn reduce(values: &[i64], max_points: usize) -> Vec<usize> {
    let n = values.len();
    if n <= max_points {
        return (0..n).collect();
    }
    let buckets = (max_points / 2).max(1);
    let mut keep = Vec::with_capacity(buckets * 2);
    for b in 0..buckets {
        let lo = b * n / buckets;
        let hi = (b + 1) * n / buckets;
        if lo >= hi {
            continue;
        }
        let (mut imin, mut imax) = (lo, lo);
        for i in lo..hi {
            if values[i] < values[imin] {
                imin = i;
            }
            if values[i] > values[imax] {
                imax = i;
            }
        }
        keep.push(imin.min(imax));
        if imin != imax {
            keep.push(imin.max(imax));
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_series_are_kept_whole() {
        assert_eq!(reduce(&[3, 1, 2], 10), vec![0, 1, 2]);
        assert_eq!(reduce(&[], 10), Vec::<usize>::new());
    }

    #[test]
    fn reduction_keeps_the_peak_and_its_index() {
        // A pseudo-random series with a single spike somewhere in the middle.
        let mut x: u64 = 12345;
        let mut v: Vec<i64> = (0..100_003)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 40) as i64 % 1000
            })
            .collect();
        v[77_777] = 5000;
        let keep = reduce(&v, 500);
        assert!(keep.len() <= 500);
        assert!(keep.windows(2).all(|w| w[0] < w[1]));
        let plotted_max = keep.iter().map(|&i| v[i]).max().unwrap();
        assert_eq!(plotted_max, 5000);
        assert!(keep.contains(&77_777));
        let plotted_min = keep.iter().map(|&i| v[i]).min().unwrap();
        assert_eq!(plotted_min, *v.iter().min().unwrap());
    }
}
