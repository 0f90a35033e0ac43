//! The text report: the question it answers on the first line, the counts and the warnings
//! about them, then Parts 1–6
//! (`../shared/reference/timing-analysis.md` §3, "Output sections"). Times in µs (2 decimals),
//! shares in percent of the makespan.

use std::fmt::Write as _;

use crate::adapter::Engine;
use crate::head_tail::{Distribution, PERCENTILES};
use crate::sched_loop::{Sum, ThreadLoop, WORK_PHASES};
use crate::switch::{CoreSwitch, EngineSwitch};
use crate::tasks::engine_ix as slot;
use crate::Analysis;

/// The report's first line.
pub const QUESTION: &str =
    "Is the scheduler the bottleneck (an idle core next to ready, undispatched work), \
                            or is the run compute/dependency bound?";

fn us(ns: u64) -> String {
    format!("{:.2}", ns as f64 / 1000.0)
}

fn us_f(ns: f64) -> String {
    format!("{:.2}", ns / 1000.0)
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "0.0%".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

pub use simpler_artifacts::deps::task_label;

/// The whole report.
pub fn render(a: &Analysis) -> String {
    let mut w = String::new();
    let _ = writeln!(w, "{QUESTION}");
    let _ = writeln!(
        w,
        "Tasks: {} ({} rows)   Makespan: {} us (first start → last end)",
        a.tasks.spans.len(),
        a.rows,
        us(a.overhead.makespan)
    );
    for warning in &a.warnings {
        let _ = writeln!(w, "warning: {warning}");
    }
    part1(&mut w, a);
    part2(&mut w, a);
    part3(&mut w, &a.switches, &a.engine_switches, a.switch_bound);
    part4(&mut w, a);
    part5(&mut w, &a.loops, a.tail.as_ref());
    part6(&mut w, a);
    w
}

fn part1(w: &mut String, a: &Analysis) {
    let o = &a.overhead;
    let _ = writeln!(w, "\nPart 1: Overhead verdict");
    let _ = writeln!(
        w,
        "  {}: an engine with an idle core had ready, undispatched work {} of the makespan \
         (>= 25% scheduler-bound, >= 8% partially)",
        o.verdict().as_str(),
        pct(o.has, o.makespan)
    );
}

fn part2(w: &mut String, a: &Analysis) {
    let o = &a.overhead;
    let _ = writeln!(
        w,
        "\nPart 2: Per-engine overhead (idle core while ready work waits)"
    );
    let _ = writeln!(
        w,
        "  {:<8} {:>6} {:>14} {:>11}",
        "engine", "cores", "overhead (us)", "% makespan"
    );
    for e in Engine::ALL {
        let i = slot(e);
        if o.cores[i] == 0 {
            let _ = writeln!(w, "  {:<8} {:>6} {:>14} {:>11}", e.label(), 0, "-", "-");
        } else {
            let _ = writeln!(
                w,
                "  {:<8} {:>6} {:>14} {:>11}",
                e.label(),
                o.cores[i],
                us(o.engine[i]),
                pct(o.engine[i], o.makespan)
            );
        }
    }
    for (name, ns) in [("all", o.all), ("has", o.has)] {
        let _ = writeln!(
            w,
            "  {:<8} {:>6} {:>14} {:>11}",
            name,
            "",
            us(ns),
            pct(ns, o.makespan)
        );
    }
}

fn part3(w: &mut String, cores: &[CoreSwitch], engines: &[Option<EngineSwitch>; 2], bound: (u64, u64)) {
    let _ = writeln!(
        w,
        "\nPart 3: AICore switch (gap on a core whose next task was dispatched before the previous ended)"
    );
    let _ = writeln!(
        w,
        "  {:<8} {:>6} {:>10} {:>10} {:>10} {:>7} {:>10} {:>12}",
        "engine", "cores", "min (us)", "mean (us)", "max (us)", "events", "us/event", "in overhead"
    );
    for e in Engine::ALL {
        let Some(s) = &engines[slot(e)] else { continue };
        let per_event = if s.events == 0 {
            0.0
        } else {
            s.total as f64 / s.events as f64
        };
        let _ = writeln!(
            w,
            "  {:<8} {:>6} {:>10} {:>10} {:>10} {:>7} {:>10} {:>12}",
            e.label(),
            s.cores,
            us(s.min),
            us_f(s.mean),
            us(s.max),
            s.events,
            us_f(per_event),
            pct(s.overhead, s.total)
        );
    }
    let per_core: Vec<String> = cores
        .iter()
        .map(|c| format!("{}_{}={}", c.engine.label(), c.core, us(c.total)))
        .collect();
    let _ = writeln!(w, "  per core (us): {}", per_core.join(" "));
    let _ = writeln!(
        w,
        "  makespan bound from switches: [{}, {}] us",
        us(bound.0),
        us(bound.1)
    );
}

fn dist_row(w: &mut String, name: &str, d: Option<&Distribution>) {
    match d {
        None => {
            let _ = writeln!(w, "  {name:<8} (no rows)");
        }
        Some(d) => {
            let mut line = format!("  {name:<8}");
            for v in d.percentiles {
                let _ = write!(line, " {:>8}", us(v));
            }
            let _ = write!(line, " {:>8} {:>8} {:>10}", us(d.max), us_f(d.mean), us(d.total));
            let _ = writeln!(w, "{line}");
        }
    }
}

fn part4(w: &mut String, a: &Analysis) {
    let _ = writeln!(w, "\nPart 4: Head / tail overhead per row (us)");
    let mut header = format!("  {:<8}", "");
    for p in PERCENTILES {
        let _ = write!(header, " {:>8}", format!("P{p}"));
    }
    let _ = write!(header, " {:>8} {:>8} {:>10}", "Max", "Mean", "Total");
    let _ = writeln!(w, "{header}");
    dist_row(w, "Head OH", a.head.as_ref());
    dist_row(w, "Tail OH", a.tail.as_ref());
}

fn part5(w: &mut String, loops: &[ThreadLoop], tail: Option<&Distribution>) {
    let _ = writeln!(w, "\nPart 5: Scheduler loop per thread");
    if loops.is_empty() {
        let _ = writeln!(
            w,
            "  no scheduler phase records (they are recorded at swimlane level >= 3)"
        );
        return;
    }
    let _ = writeln!(
        w,
        "  {:<6} {:>7} {:>9} {:>9} {:>11} {:>9} {:>7} {:>9} {:>8} {:>7} {:>7} {:>8}",
        "thread",
        "loops",
        "ns/loop",
        "complete",
        "async_poll",
        "dispatch",
        "idle",
        "finishes",
        "logical",
        "fanout",
        "fanin",
        "dominant"
    );
    for l in loops {
        let total = l.total_ns();
        let share = |part: Sum| match (part.get(), total.get()) {
            (Some(p), Some(t)) => pct(p, t),
            _ => "-".into(),
        };
        let _ = writeln!(
            w,
            "  {:<6} {:>7} {:>9} {:>9} {:>11} {:>9} {:>7} {:>9} {:>8} {:>7} {:>7} {:>8}",
            l.thread,
            l.loops,
            l.ns_per_loop().map_or_else(|| "-".into(), |v| format!("{v:.0}")),
            share(l.phase_ns[0]),
            share(l.phase_ns[1]),
            share(l.phase_ns[2]),
            share(l.idle_ns),
            l.finishes,
            l.logical_tasks,
            l.fanout,
            l.fanin,
            l.dominant()
        );
    }
    let hit: Sum = loops.iter().map(|l| l.pop_hit).sum();
    let miss: Sum = loops.iter().map(|l| l.pop_miss).sum();
    // The rate's total in u128: two counts that each fit may not fit together.
    let rate = match (hit.get(), miss.get()) {
        (Some(h), Some(m)) if h > 0 || m > 0 => {
            format!(
                "{:.1}%",
                h as f64 * 100.0 / (u128::from(h) + u128::from(m)) as f64
            )
        }
        (Some(_), Some(_)) => "0.0%".into(),
        _ => "- (a count overflowed)".into(),
    };
    let _ = writeln!(w, "  Pop: hit={hit}, miss={miss}, hit_rate={rate}");
    let ns: Sum = loops.iter().map(ThreadLoop::total_ns).sum();
    let n: Sum = loops.iter().map(|l| Sum::of(l.loops)).sum();
    match (ns.get(), n.get()) {
        (Some(ns), Some(n)) => {
            let avg = if n == 0 { 0.0 } else { ns as f64 / n as f64 };
            let _ = writeln!(w, "  Avg scheduler loop iteration: {avg:.0} ns");
            if let (Some(t), true) = (tail, avg > 0.0) {
                let _ = writeln!(w, "  Avg Tail OH = {:.1} x loop ({:.0} ns)", t.mean / avg, t.mean);
            }
        }
        _ => {
            let _ = writeln!(
                w,
                "  Avg scheduler loop iteration: overflowed (the phase records' time or loop count sums past 2^64 - 1)"
            );
        }
    }
    let dominant = WORK_PHASES
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, loops.iter().map(|l| l.phase_ns[i]).sum::<Sum>()))
        .chain(std::iter::once((
            "idle",
            loops.iter().map(|l| l.idle_ns).sum::<Sum>(),
        )))
        .max_by_key(|&(_, ns)| ns.rank())
        .map_or("idle", |(k, _)| k);
    let _ = writeln!(w, "  Dominant phase: {dominant}");
}

fn part6(w: &mut String, a: &Analysis) {
    let c = &a.critical;
    let _ = writeln!(w, "\nPart 6: Critical-path latency attribution");
    let shown: Vec<String> = c.path.iter().map(|&id| task_label(id)).collect();
    let _ = writeln!(
        w,
        "  path: {} tasks, {} hops: {}",
        c.path.len(),
        c.hops,
        shown.join(" -> ")
    );
    let other = c.other();
    let share = |v: i128| {
        if c.span == 0 {
            "0.0%".to_owned()
        } else {
            format!("{:.1}%", v as f64 * 100.0 / c.span as f64)
        }
    };
    let _ = writeln!(
        w,
        "  span {} us = exec {} us ({}) + sched {} us ({}) + other {:.2} us ({})",
        us(c.span),
        us(c.exec),
        share(i128::from(c.exec)),
        us(c.sched),
        share(i128::from(c.sched)),
        other as f64 / 1000.0,
        share(other)
    );
}
