//! Per-kernel statistics, in the original converter's layout (`../shared/reference/timing-analysis.md` §1):
//! per kernel, how long it runs and how much scheduling surrounds it.
//!
//! One sample per row (a block on one subslot), from the row's four stamps:
//! - Exec = end − start;
//! - Latency = finish − dispatch;
//! - Head OH = start − dispatch (not clamped);
//! - Tail OH = finish − end.
//!
//! Per kernel: Avg Exec = Σexec / count, Avg Latency = Σlatency / count, Exec% = Σexec /
//! Σlatency · 100 (0 when Σlatency is 0), Avg Head OH and Avg Tail OH the means. Prop
//! (receive − dispatch) and Local (start − receive) need a receive stamp, which the simulator's
//! cores do not have: they print `-`, as the original does when no task has them. Then the
//! totals, the run's span (max finish − min dispatch, the original's "Total Test Time") and
//! the averages over every row.

use std::collections::BTreeMap;
use std::io::{self, Write};

use simpler_artifacts::swimlane::TaskRow;

use crate::names::Names;

/// The samples of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelStats {
    /// Kernel id.
    pub func_id: i32,
    /// Display name: the name map's, else the original's `func_<id>_<letters>`.
    pub name: String,
    /// Rows (blocks × subslots) that ran it.
    pub count: u64,
    /// Σ (end − start), ns.
    pub exec_ns: u64,
    /// Σ (finish − dispatch), ns.
    pub latency_ns: u64,
    /// Σ (start − dispatch), ns (signed: a start stamped before its dispatch counts negative).
    pub head_ns: i64,
    /// Σ (finish − end), ns.
    pub tail_ns: i64,
}

impl KernelStats {
    /// Σexec / Σlatency in percent; 0 when there is no latency.
    pub fn exec_percent(&self) -> f64 {
        percent(self.exec_ns, self.latency_ns)
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The original's fallback name: `func_<id>_<letters>`, letters the id in bijective base 26
/// (0 → `a`, 25 → `z`, 26 → `aa`); `func_-1_` for a negative id.
pub fn fallback_name(func_id: i32) -> String {
    let mut letters = Vec::new();
    if func_id >= 0 {
        let mut n = i64::from(func_id) + 1;
        while n > 0 {
            n -= 1;
            letters.push(b'a' + (n % 26) as u8);
            n /= 26;
        }
        letters.reverse();
    }
    format!(
        "func_{func_id}_{}",
        String::from_utf8(letters).expect("ASCII letters")
    )
}

/// Statistics per kernel, ordered by kernel id.
pub fn kernel_stats(rows: &[TaskRow], names: &Names) -> Vec<KernelStats> {
    let mut by_id: BTreeMap<i32, KernelStats> = BTreeMap::new();
    for r in rows {
        let s = by_id.entry(r.func_id).or_insert_with(|| KernelStats {
            func_id: r.func_id,
            name: names
                .get(r.func_id)
                .map_or_else(|| fallback_name(r.func_id), str::to_string),
            count: 0,
            exec_ns: 0,
            latency_ns: 0,
            head_ns: 0,
            tail_ns: 0,
        });
        s.count += 1;
        s.exec_ns += r.end_ns.saturating_sub(r.start_ns);
        let (dispatch, finish) = (
            r.dispatch_ns.unwrap_or(r.start_ns),
            r.finish_ns.unwrap_or(r.end_ns),
        );
        s.latency_ns += finish.saturating_sub(dispatch);
        s.head_ns += r.start_ns as i64 - dispatch as i64;
        s.tail_ns += finish as i64 - r.end_ns as i64;
    }
    by_id.into_values().collect()
}

/// µs with two decimals from a sum of ns over `count` samples.
fn mean_us(sum_ns: f64, count: u64) -> String {
    format!("{:.2}", sum_ns / count.max(1) as f64 / 1000.0)
}

fn us(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1000.0)
}

/// The widest the kernel-name column gets.
const NAME_COLUMN: usize = 48;

/// The run's span: max finish − min dispatch over `rows`, ns (the original's "Total Test Time").
pub fn span_ns(rows: &[TaskRow]) -> u64 {
    let first = rows
        .iter()
        .map(|r| r.dispatch_ns.unwrap_or(r.start_ns))
        .min()
        .unwrap_or(0);
    let last = rows
        .iter()
        .map(|r| r.finish_ns.unwrap_or(r.end_ns))
        .max()
        .unwrap_or(0);
    last.saturating_sub(first)
}

/// Writes the statistics: the source line, one row per kernel, the totals, the run's span
/// (`span_ns`, from [`span_ns`]) and the averages (values in µs, two decimals). `source` names
/// the records file.
pub fn write_table<W: Write>(mut w: W, stats: &[KernelStats], span_ns: u64, source: &str) -> io::Result<()> {
    let width = stats
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp("Func_Name".len(), NAME_COLUMN);
    writeln!(
        w,
        "Source: {source} (dispatch, start, end and finish of every block: the original's level 2)"
    )?;
    writeln!(
        w,
        "{:>7}  {:<width$}  {:>7}  {:>13}  {:>16}  {:>7}  {:>16}  {:>16}  {:>13}  {:>14}",
        "Func_ID",
        "Func_Name",
        "Count",
        "Avg Exec(us)",
        "Avg Latency(us)",
        "Exec%",
        "Avg Head OH(us)",
        "Avg Tail OH(us)",
        "Avg Prop(us)",
        "Avg Local(us)"
    )?;
    for s in stats {
        writeln!(
            w,
            "{:>7}  {:<width$}  {:>7}  {:>13}  {:>16}  {:>7}  {:>16}  {:>16}  {:>13}  {:>14}",
            s.func_id,
            s.name,
            s.count,
            mean_us(s.exec_ns as f64, s.count),
            mean_us(s.latency_ns as f64, s.count),
            format!("{:.2}", s.exec_percent()),
            mean_us(s.head_ns as f64, s.count),
            mean_us(s.tail_ns as f64, s.count),
            "-",
            "-"
        )?;
    }
    let count: u64 = stats.iter().map(|s| s.count).sum();
    let exec: u64 = stats.iter().map(|s| s.exec_ns).sum();
    let latency: u64 = stats.iter().map(|s| s.latency_ns).sum();
    writeln!(
        w,
        "TOTAL  count {count}  exec {} us  latency {} us",
        us(exec),
        us(latency)
    )?;
    if count == 0 {
        return writeln!(w, "(no task rows)");
    }
    writeln!(w, "Total Test Time: {} us", us(span_ns))?;
    writeln!(
        w,
        "Average Exec {} us, Average Latency {} us, Exec/Latency {:.2}%",
        mean_us(exec as f64, count),
        mean_us(latency as f64, count),
        percent(exec, latency)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::swimlane::CoreType;

    fn row(func_id: i32, dispatch_ns: u64, start_ns: u64, end_ns: u64, finish_ns: u64) -> TaskRow {
        TaskRow {
            task_id: 0,
            kernel_ids: [-1, func_id, -1],
            func_id,
            block_idx: 0,
            block_num: 1,
            core_id: 1,
            core_type: CoreType::Aiv,
            sched_thread: Some(0),
            reg_task_id: 0,
            dispatch_ns: Some(dispatch_ns),
            receive_ns: start_ns,
            start_ns,
            end_ns,
            finish_ns: Some(finish_ns),
        }
    }

    #[test]
    fn fallback_names_are_bijective_base_26() {
        assert_eq!(fallback_name(0), "func_0_a");
        assert_eq!(fallback_name(25), "func_25_z");
        assert_eq!(fallback_name(26), "func_26_aa");
        assert_eq!(fallback_name(27), "func_27_ab");
        assert_eq!(fallback_name(701), "func_701_zz");
        assert_eq!(fallback_name(702), "func_702_aaa");
        assert_eq!(fallback_name(-1), "func_-1_");
    }

    /// Hand-computed: kernel 1 has two rows, exec 2.0 and 1.0 µs, latency 3.0 and 1.6 µs
    /// (Exec% = 3.0 / 4.6 = 65.22 %), head 0.5 and 0.2, tail 0.5 and 0.4; kernel 0 one row whose
    /// start is stamped before its dispatch (head −0.1 µs, not clamped).
    #[test]
    fn the_formulas_on_crafted_rows() {
        let names = Names::from_pairs([(1, "kernel_add_scalar".to_string())]);
        let rows = [
            row(1, 1000, 1500, 3500, 4000),
            row(0, 2000, 1900, 2900, 3000),
            row(1, 5000, 5200, 6200, 6600),
        ];
        let s = kernel_stats(&rows, &names);
        assert_eq!(
            (s[0].name.as_str(), s[0].head_ns, s[0].tail_ns),
            ("func_0_a", -100, 100)
        );
        assert_eq!(
            (
                s[1].count,
                s[1].exec_ns,
                s[1].latency_ns,
                s[1].head_ns,
                s[1].tail_ns
            ),
            (2, 3000, 4600, 700, 900)
        );
        let mut out = Vec::new();
        write_table(&mut out, &s, span_ns(&rows), "records.json").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "Source: records.json (dispatch, start, end and finish of every block: the original's level 2)\n\
             Func_ID  Func_Name            Count   Avg Exec(us)   Avg Latency(us)    Exec%   Avg Head OH(us)   Avg Tail OH(us)   Avg Prop(us)   Avg Local(us)\n\
             \x20     0  func_0_a                 1           1.00              1.00   100.00             -0.10              0.10              -               -\n\
             \x20     1  kernel_add_scalar        2           1.50              2.30    65.22              0.35              0.45              -               -\n\
             TOTAL  count 3  exec 4.00 us  latency 5.60 us\n\
             Total Test Time: 5.60 us\n\
             Average Exec 1.33 us, Average Latency 1.87 us, Exec/Latency 71.43%\n"
        );
    }
}
