//! Axis ticks: readable integer scope-index steps on x, human-friendly value steps on y.

/// Step multipliers tried at each power of ten.
const NICE: [f64; 6] = [1.0, 2.0, 2.5, 5.0, 7.5, 10.0];

/// About how many intervals an axis is split into.
const TARGET_INTERVALS: f64 = 5.0;

/// The nice step closest to `raw`: one of {1, 2, 2.5, 5, 7.5, 10} × 10^k. With
/// `integer_only`, only whole steps of at least 1 qualify.
pub(crate) fn nice_step(raw: f64, integer_only: bool) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let mut best = f64::NAN;
    for m in NICE {
        let step = m * mag;
        if integer_only && (step < 1.0 || step.fract() != 0.0) {
            continue;
        }
        if best.is_nan() || (step - raw).abs() < (best - raw).abs() {
            best = step;
        }
    }
    if best.is_nan() {
        1.0
    } else {
        best
    }
}

/// Tick values from the first multiple of the step at or above `lo` up to `hi`.
pub(crate) fn value_ticks(lo: f64, hi: f64, integer_only: bool) -> Vec<f64> {
    let step = nice_step((hi - lo) / TARGET_INTERVALS, integer_only);
    let mut ticks = Vec::new();
    let mut k = (lo / step).ceil();
    while k * step <= hi + step * 1e-9 && ticks.len() < 64 {
        ticks.push(k * step);
        k += 1.0;
    }
    ticks
}

/// Scope indices to label on an axis of `n` points: 0, step, 2·step, … with an integer step.
pub(crate) fn index_ticks(n: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let step = nice_step((n - 1) as f64 / TARGET_INTERVALS, true) as usize;
    let step = step.max(1);
    (0..n).step_by(step).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_nice() {
        assert_eq!(nice_step(0.0, true), 1.0);
        assert_eq!(nice_step(0.3, true), 1.0);
        assert_eq!(nice_step(0.3, false), 0.25);
        assert_eq!(nice_step(2.2, false), 2.0);
        assert_eq!(nice_step(2.2, true), 2.0);
        assert_eq!(nice_step(2.4, true), 2.0);
        assert_eq!(nice_step(24.0, true), 25.0);
        assert_eq!(nice_step(880.0, true), 1000.0);
    }

    #[test]
    fn y_ticks_start_at_zero_and_stay_in_range() {
        let t = value_ticks(0.0, 4.4, true);
        assert_eq!(t, vec![0.0, 1.0, 2.0, 3.0, 4.0]);
        let t = value_ticks(0.0, 9011.2, true);
        assert_eq!(t, vec![0.0, 2000.0, 4000.0, 6000.0, 8000.0]);
        assert!(value_ticks(0.0, 1.1, false).iter().all(|v| *v <= 1.1));
    }

    #[test]
    fn x_ticks_are_integers() {
        assert_eq!(index_ticks(0), Vec::<usize>::new());
        assert_eq!(index_ticks(1), vec![0]);
        assert_eq!(index_ticks(2), vec![0, 1]);
        assert_eq!(index_ticks(11), vec![0, 2, 4, 6, 8, 10]);
        assert_eq!(index_ticks(1_000_000).len(), 5);
    }
}
