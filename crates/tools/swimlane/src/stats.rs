//! Per-kernel statistics, in the original converter's layout and with its level gating
//! (`../shared/reference/timing-analysis.md` §1): per kernel, how long it runs and how much
//! scheduling surrounds it.
//!
//! Per row (a block on one subslot), in µs:
//! - Exec = end − start; Local = start − receive (every level);
//! - with both scheduler stamps and level ≥ 2: Latency = finish − dispatch, Head OH = start −
//!   dispatch (not clamped), Tail OH = finish − end, Prop = receive − dispatch.
//!
//! Per kernel: Avg Exec = Σexec / count; Avg Latency, and Exec% = Σexec / Σlatency · 100, over
//! the rows with scheduler stamps (Exec% 0 when Σlatency is 0); the other columns are means
//! over the rows that have the value, `-` when none has it (so at level 1 Latency, Exec%,
//! Head OH, Tail OH and Prop print `-`). Then the totals; `Total Test Time` (max finish − min
//! dispatch) from level 2, `AICore Observed Span` (max end − min receive) at level 1; and,
//! when there is latency, the per-task averages over the rows with scheduler stamps.
//!
//! The original drops an AICore row without an AICPU row when it reads the file (a task is
//! built from the AICPU side); we keep it, without stamps (`docs/swimlane.md` §2). So every
//! figure that involves latency is taken over the stamped rows only, and matches the
//! original's on the same file; the rows without stamps are in Count, Avg Exec and TOTAL.

use std::collections::BTreeMap;
use std::io::{self, Write};

use simpler_artifacts::name_map::printable;
use simpler_artifacts::swimlane::{Level, TaskRow};

use crate::names::{kernel_name, Names};

/// A running sum and count.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mean {
    /// Σ values, µs.
    pub sum: f64,
    /// Number of values.
    pub count: u64,
}

impl Mean {
    fn add(&mut self, v: f64) {
        self.sum += v;
        self.count += 1;
    }

    /// The mean, if there is any value.
    pub fn get(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

/// The samples of one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelStats {
    /// Kernel id (−1 when unknown).
    pub func_id: i32,
    /// Display name: the name map's, else the original's `func_<id>_<letters>`.
    pub name: String,
    /// Rows that ran it.
    pub count: u64,
    /// Σ exec over every row, µs.
    pub exec_us: f64,
    /// Σ exec over the rows with scheduler stamps, µs (Exec%'s numerator).
    pub timed_exec_us: f64,
    /// Latency over the rows with scheduler stamps.
    pub latency: Mean,
    /// Head OH.
    pub head: Mean,
    /// Tail OH.
    pub tail: Mean,
    /// Prop.
    pub prop: Mean,
    /// Local.
    pub local: Mean,
}

impl KernelStats {
    /// Σexec / Σlatency in percent over the rows with scheduler stamps; 0 when there is no
    /// latency.
    pub fn exec_percent(&self) -> f64 {
        if self.latency.sum > 0.0 {
            self.timed_exec_us / self.latency.sum * 100.0
        } else {
            0.0
        }
    }
}

/// The statistics of a conversion.
#[derive(Debug, Clone, PartialEq)]
pub struct Statistics {
    /// The level the file recorded.
    pub level: Level,
    /// The records file's name, for the first line.
    pub source: String,
    /// Per kernel, by kernel id.
    pub kernels: Vec<KernelStats>,
    /// `(min dispatch, max finish)` over the rows with scheduler stamps, µs.
    pub scheduler_span: Option<(f64, f64)>,
    /// `(min receive, max end)` over every row, µs.
    pub aicore_span: Option<(f64, f64)>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn delta_us(later: u64, earlier: u64) -> f64 {
    (i128::from(later) - i128::from(earlier)) as f64 / 1000.0
}

fn widen(span: &mut Option<(f64, f64)>, lo: f64, hi: f64) {
    let s = span.get_or_insert((lo, hi));
    s.0 = s.0.min(lo);
    s.1 = s.1.max(hi);
}

impl Statistics {
    /// The statistics of `rows` (func ids resolved) of a file at `level`.
    pub fn new(rows: &[TaskRow], level: Level, names: &Names, source: &str) -> Statistics {
        let mut by_id: BTreeMap<i32, KernelStats> = BTreeMap::new();
        let mut scheduler_span = None;
        let mut aicore_span = None;
        for r in rows {
            let s = by_id.entry(r.func_id).or_insert_with(|| KernelStats {
                func_id: r.func_id,
                name: kernel_name(names, r.func_id),
                count: 0,
                exec_us: 0.0,
                timed_exec_us: 0.0,
                latency: Mean::default(),
                head: Mean::default(),
                tail: Mean::default(),
                prop: Mean::default(),
                local: Mean::default(),
            });
            let exec = delta_us(r.end_ns, r.start_ns);
            s.count += 1;
            s.exec_us += exec;
            s.local.add(delta_us(r.start_ns, r.receive_ns));
            widen(&mut aicore_span, us(r.receive_ns), us(r.end_ns));
            let (Some(dispatch), Some(finish), true) = (r.dispatch_ns, r.finish_ns, level.has_dispatch())
            else {
                continue;
            };
            s.timed_exec_us += exec;
            s.latency.add(delta_us(finish, dispatch));
            s.head.add(delta_us(r.start_ns, dispatch));
            s.tail.add(delta_us(finish, r.end_ns));
            s.prop.add(delta_us(r.receive_ns, dispatch));
            widen(&mut scheduler_span, us(dispatch), us(finish));
        }
        Statistics {
            level,
            source: source.to_string(),
            kernels: by_id.into_values().collect(),
            scheduler_span,
            aicore_span,
        }
    }

    /// Writes the table as the original prints it (values in µs, two decimals). Names are
    /// printed with their control characters escaped (`simpler_artifacts::name_map::printable`),
    /// so a name cannot add a row or colour the terminal.
    pub fn write<W: Write>(&self, mut w: W) -> io::Result<()> {
        let rule = "-".repeat(140);
        writeln!(
            w,
            "Source chip_swimlane_level: {} ({}; recorded in {})",
            self.level.number(),
            self.level.description(),
            printable(&self.source)
        )?;
        writeln!(
            w,
            "{:<8} {:<12} {:>5}   {:>12}  {:>15}  {:>6}   {:>15}  {:>15}  {:>12}  {:>13}",
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
        writeln!(w, "{rule}")?;
        let two = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.2}"));
        for s in &self.kernels {
            let timed = s.latency.count > 0;
            writeln!(
                w,
                "{:<8} {:<12} {:>5}   {:>12.2}  {:>15}  {:>6}   {:>15}  {:>15}  {:>12}  {:>13}",
                s.func_id,
                printable(&s.name),
                s.count,
                s.exec_us / s.count as f64,
                two(s.latency.get()),
                if timed {
                    format!("{:.1}%", s.exec_percent())
                } else {
                    "-".into()
                },
                two(s.head.get()),
                two(s.tail.get()),
                two(s.prop.get()),
                two(s.local.get()),
            )?;
        }
        writeln!(w, "{rule}")?;
        let count: u64 = self.kernels.iter().map(|s| s.count).sum();
        // Folded from +0.0: an empty `sum()` of floats is -0.0, printed "-0.00" where the
        // original prints 0.00.
        let exec = self.kernels.iter().fold(0.0, |t, s| t + s.exec_us);
        let latency = self.kernels.iter().fold(0.0, |t, s| t + s.latency.sum);
        let timed = self.level.has_dispatch();
        writeln!(
            w,
            "{:<21} {:>5}   {:>12.2}  {:>15}",
            "TOTAL",
            count,
            exec,
            if timed {
                format!("{latency:.2}")
            } else {
                "-".into()
            }
        )?;
        match (timed, self.scheduler_span, self.aicore_span) {
            (true, Some((first, last)), _) => writeln!(
                w,
                "\nTotal Test Time: {:.2} us (from earliest dispatch to latest finish)",
                last - first
            )?,
            (false, _, Some((first, last))) => writeln!(
                w,
                "\nAICore Observed Span: {:.2} us (from earliest AICore receive to latest AICore end)",
                last - first
            )?,
            _ => {}
        }
        let stamped: u64 = self.kernels.iter().map(|s| s.latency.count).sum();
        let stamped_exec = self.kernels.iter().fold(0.0, |t, s| t + s.timed_exec_us);
        if timed && stamped > 0 && latency > 0.0 {
            writeln!(w, "\n--- Task execution vs Scheduler overhead ---")?;
            writeln!(
                w,
                "  Per-task (all):  Avg Exec = {:.2} us,  Avg Latency (dispatch->finish) = {:.2} us,  Exec/Latency = {:.2}%",
                stamped_exec / stamped as f64,
                latency / stamped as f64,
                stamped_exec / latency * 100.0
            )?;
            writeln!(
                w,
                "  (Latency = dispatch→finish; Exec = AICore kernel time per task)"
            )?;
            if stamped < count {
                let unstamped = count - stamped;
                writeln!(
                    w,
                    "  ({unstamped} row{} without scheduler stamps {} in TOTAL, not in this line)",
                    if unstamped == 1 { "" } else { "s" },
                    if unstamped == 1 { "is" } else { "are" },
                )?;
            }
        }
        Ok(())
    }
}
