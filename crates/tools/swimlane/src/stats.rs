//! Per-kernel statistics over the task rows (one sample per block and subslot: `end - start`).

use std::collections::BTreeMap;
use std::io::{self, Write};

use simpler_artifacts::swimlane::TaskRow;

use crate::names::Names;
use crate::trace::Micros;

/// Durations of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelStats {
    /// Kernel id.
    pub func_id: i32,
    /// Display name (from the name map, else `func_<id>`).
    pub name: String,
    /// Number of rows (blocks × subslots) that ran it.
    pub count: u64,
    /// Sum of durations, ns.
    pub total_ns: u64,
    /// Shortest duration, ns.
    pub min_ns: u64,
    /// Longest duration, ns.
    pub max_ns: u64,
}

impl KernelStats {
    /// Mean duration, ns (rounded down).
    pub fn mean_ns(&self) -> u64 {
        self.total_ns.checked_div(self.count).unwrap_or(0)
    }
}

/// Statistics per kernel, ordered by kernel id.
pub fn kernel_stats(rows: &[TaskRow], names: &Names) -> Vec<KernelStats> {
    let mut by_id: BTreeMap<i32, KernelStats> = BTreeMap::new();
    for r in rows {
        let d = r.end_ns.saturating_sub(r.start_ns);
        let s = by_id.entry(r.func_id).or_insert_with(|| KernelStats {
            func_id: r.func_id,
            name: names.name(r.func_id),
            count: 0,
            total_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        });
        s.count += 1;
        s.total_ns = s.total_ns.saturating_add(d);
        s.min_ns = s.min_ns.min(d);
        s.max_ns = s.max_ns.max(d);
    }
    by_id.into_values().collect()
}

/// The widest the kernel-name column gets.
const NAME_COLUMN: usize = 48;

/// Writes the statistics table (durations in µs).
pub fn write_table<W: Write>(mut w: W, stats: &[KernelStats]) -> io::Result<()> {
    // Column width: the longest name, but at most NAME_COLUMN characters (a longer name is
    // printed whole and pushes its row's numbers right; a width is a u16 in `format!`).
    let width = stats
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp("kernel".len(), NAME_COLUMN);
    writeln!(w, "Kernel statistics (µs; one sample per block and subslot):")?;
    writeln!(
        w,
        "  {:<width$}  {:>8}  {:>10}  {:>14}  {:>12}  {:>12}  {:>12}",
        "kernel", "func_id", "count", "total", "mean", "min", "max"
    )?;
    if stats.is_empty() {
        writeln!(w, "  (no task rows)")?;
    }
    for s in stats {
        writeln!(
            w,
            "  {:<width$}  {:>8}  {:>10}  {:>14}  {:>12}  {:>12}  {:>12}",
            s.name,
            s.func_id,
            s.count,
            Micros(s.total_ns).to_string(),
            Micros(s.mean_ns()).to_string(),
            Micros(s.min_ns).to_string(),
            Micros(s.max_ns).to_string()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::swimlane::CoreType;

    fn row(func_id: i32, start_ns: u64, end_ns: u64) -> TaskRow {
        TaskRow {
            task_id: 0,
            kernel_ids: [-1, func_id, -1],
            func_id,
            block_idx: 0,
            block_num: 1,
            core_id: 1,
            core_type: CoreType::Aiv,
            sched_thread: 0,
            dispatch_ns: start_ns,
            start_ns,
            end_ns,
            finish_ns: end_ns,
        }
    }

    #[test]
    fn stats_per_kernel_and_table() {
        let names = Names::from_pairs([(1, "kernel_add_scalar".to_string())]);
        let rows = [row(1, 0, 1000), row(0, 0, 2500), row(1, 10, 3010), row(1, 5, 4)];
        let s = kernel_stats(&rows, &names);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].name.as_str(), s[0].count, s[0].total_ns),
            ("func_0", 1, 2500)
        );
        assert_eq!(
            (
                s[1].count,
                s[1].total_ns,
                s[1].mean_ns(),
                s[1].min_ns,
                s[1].max_ns
            ),
            (3, 4000, 1333, 0, 3000)
        );
        let mut out = Vec::new();
        write_table(&mut out, &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "Kernel statistics (µs; one sample per block and subslot):\n\
             \x20 kernel              func_id       count           total          mean           min           max\n\
             \x20 func_0                    0           1           2.500         2.500         2.500         2.500\n\
             \x20 kernel_add_scalar         1           3           4.000         1.333         0.000         3.000\n"
        );
    }
}
