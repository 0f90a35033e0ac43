//! The reference's unit cases (`../shared/reference/timing-analysis.md` §3, "UTs"), adapted to
//! ns, and the rendered report of one of them to the printed digit.

use std::path::Path;

use simpler_sched_overhead::adapter::{Engine, Input, Phase, TimedTask};
use simpler_sched_overhead::head_tail::{heads_and_tails, Distribution};
use simpler_sched_overhead::overhead::Verdict;
use simpler_sched_overhead::sched_loop::Sum;
use simpler_sched_overhead::{analyze, report, Analysis};

/// The reference's `_task(core, dispatch, start, end, finish)` for task `id` (cores 0.. are
/// AIC, 100.. AIV), served by scheduler thread 0.
fn row(id: u64, core: u32, dispatch: u64, start: u64, end: u64, finish: u64) -> TimedTask {
    TimedTask {
        id,
        core,
        engine: if core < 100 { Engine::Aic } else { Engine::Aiv },
        dispatch_ns: Some(dispatch),
        start_ns: start,
        end_ns: end,
        finish_ns: Some(finish),
        func_id: 0,
        sched_thread: Some(0),
        expected_rows: None,
    }
}

fn run(tasks: Vec<TimedTask>, edges: Vec<(u64, u64)>) -> Analysis {
    analyze(
        &Input {
            tasks,
            phases: Vec::new(),
            edges,
            kernel_less: Default::default(),
            expected_rows: Default::default(),
            unstamped: 0,
            unlisted: (0, None),
        },
        Path::new("records.json"),
    )
    .unwrap()
}

#[test]
fn head_and_tail() {
    assert_eq!(heads_and_tails(&[row(1, 0, 10, 12, 20, 22)]), (vec![2], vec![2]));
    // Same core: the second head is min(start − dispatch, start − previous end).
    let (heads, _) = heads_and_tails(&[row(1, 0, 0, 1, 10, 11), row(2, 0, 5, 12, 20, 21)]);
    assert_eq!(heads, [1, 2]);
    let (heads, _) = heads_and_tails(&[row(1, 0, 0, 1, 10, 11), row(2, 0, 12, 13, 20, 21)]);
    assert_eq!(heads, [1, 1]);
    // Overlap: starts before the previous row ended, finishes before its own end: 0 and 0.
    let (heads, tails) = heads_and_tails(&[row(1, 0, 0, 1, 10, 11), row(2, 0, 5, 9, 16, 15)]);
    assert_eq!((heads[1], tails[1]), (0, 0));
}

#[test]
fn percentiles_take_element_n_p_over_100() {
    let d = Distribution::of((1..=10).collect()).unwrap();
    // n = 10: P10 → index 1, P25 → 2, P50 → 5, P75 → 7, P90 → 9, P95 → 9, P99 → 9.
    assert_eq!(d.percentiles, [2, 3, 6, 8, 10, 10, 10]);
    assert_eq!((d.max, d.total, d.count), (10, 55, 10));
    assert_eq!(d.mean, 5.5);
    assert_eq!(Distribution::of(Vec::new()), None);
}

#[test]
fn overhead_is_idle_core_with_ready_work() {
    // P (0,0,5,6) → C (8,8,15,16) on one AIC core; window [0, 15].
    let a = run(vec![row(1, 0, 0, 0, 5, 6), row(2, 0, 8, 8, 15, 16)], vec![(1, 2)]);
    assert_eq!(
        (
            a.overhead.makespan,
            a.overhead.engine,
            a.overhead.has,
            a.overhead.all
        ),
        (15, [3, 0], 3, 3)
    );
    assert_eq!(a.overhead.cores, [1, 0]);
    assert_eq!(a.overhead.verdict(), Verdict::PartiallySchedulerLimited); // 20 %
                                                                          // A producer without timing: C is ready at its own dispatch.
    let a = run(
        vec![row(1, 0, 0, 0, 5, 6), row(2, 0, 8, 8, 15, 16)],
        vec![(99, 2)],
    );
    assert_eq!((a.overhead.engine, a.overhead.has), ([0, 0], 0));
    assert_eq!(a.overhead.verdict(), Verdict::ComputeOrDependencyBound);
    // A MIX consumer (AIC and AIV rows) is ready work for both engines.
    let a = run(
        vec![
            row(1, 0, 0, 0, 5, 6),
            row(2, 0, 8, 8, 15, 16),
            row(2, 100, 8, 8, 15, 16),
        ],
        vec![(1, 2)],
    );
    assert_eq!(
        (a.overhead.engine, a.overhead.all, a.overhead.has),
        ([3, 3], 3, 3)
    );
}

#[test]
fn verdict_thresholds() {
    assert_eq!(Verdict::of(25.0), Verdict::SchedulerBound);
    assert_eq!(Verdict::of(24.9), Verdict::PartiallySchedulerLimited);
    assert_eq!(Verdict::of(8.0), Verdict::PartiallySchedulerLimited);
    assert_eq!(Verdict::of(7.9).as_str(), "COMPUTE/DEPENDENCY-BOUND");
}

#[test]
fn switch_gap_when_the_next_task_was_dispatched_early() {
    // Core 0: A [0,10], then B dispatched at 8 (before A ended), starting at 12; core 100 (AIV)
    // runs C with no switch.
    let a = run(
        vec![
            row(1, 0, 0, 0, 10, 11),
            row(2, 0, 8, 12, 20, 21),
            row(3, 100, 0, 0, 5, 6),
        ],
        vec![],
    );
    let per_core: Vec<(u32, u64, u64, u64)> = a
        .switches
        .iter()
        .map(|c| (c.core, c.total, c.overhead, c.events))
        .collect();
    assert_eq!(per_core, [(0, 2, 0, 1), (100, 0, 0, 0)]);
    assert_eq!(a.switch_bound, (0, 2));
    let aic = a.engine_switches[0].unwrap();
    assert_eq!((aic.min, aic.max, aic.events, aic.overhead), (2, 2, 1, 0));
}

#[test]
fn critical_path_attribution() {
    // A (0,0,5,6) → B (7,7,12,13): one hop, exec 5 + 5, sched 7 − 5.
    let a = run(vec![row(1, 0, 0, 0, 5, 6), row(2, 0, 7, 7, 12, 13)], vec![(1, 2)]);
    let c = &a.critical;
    assert_eq!(
        (c.path.clone(), c.hops, c.exec, c.sched, c.span, c.other()),
        (vec![1, 2], 1, 10, 2, 13, 1)
    );
}

fn phase(thread: u32, kind: &str, start: u64, end: u64, loop_iter: u64, tasks: u64) -> Phase {
    Phase {
        thread,
        kind: kind.into(),
        start_ns: start,
        end_ns: end,
        loop_iter,
        tasks_processed: tasks,
        pop_hit: if kind == "dispatch" { 3 } else { 0 },
        pop_miss: if kind == "dispatch" { 1 } else { 0 },
    }
}

#[test]
fn scheduler_loop_counts_finishes_and_logical_tasks() {
    // One task on two cores, both served by thread 0; its complete record processed 2 rows.
    let mut rows = vec![row(7, 0, 0, 1, 10, 12), row(7, 100, 0, 1, 10, 11)];
    let phases = vec![
        phase(0, "dispatch", 0, 2, 1, 2),
        phase(0, "complete", 12, 14, 2, 2),
        phase(0, "idle", 3, 11, 1, 0),
    ];
    let input = Input {
        tasks: rows.clone(),
        phases: phases.clone(),
        edges: vec![],
        kernel_less: Default::default(),
        expected_rows: Default::default(),
        unstamped: 0,
        unlisted: (0, None),
    };
    let a = analyze(&input, Path::new("r")).unwrap();
    let l = &a.loops[0];
    assert_eq!(
        (a.loops.len(), l.logical_tasks.get(), l.finishes.get(), l.loops),
        (1, Some(1), Some(2), 2)
    );
    // Work 2 + 2 ns, idle the 10 ns between them (the `idle` record itself is not work).
    assert_eq!(
        (
            l.phase_ns.map(Sum::get),
            l.idle_ns.get(),
            l.pop_hit.get(),
            l.pop_miss.get()
        ),
        ([Some(2), Some(0), Some(2)], Some(10), Some(3), Some(1))
    );
    assert_eq!((l.ns_per_loop(), l.dominant()), (Some(7.0), "idle"));

    // The rows on different threads: the final finish (12, core 0) is thread 0's... moved to
    // thread 1, which then holds the logical task; thread 0 keeps its one finish.
    rows[0].sched_thread = Some(1);
    let phases = vec![
        phase(0, "complete", 12, 14, 1, 1),
        phase(1, "complete", 12, 14, 1, 1),
    ];
    let a = analyze(
        &Input {
            tasks: rows,
            phases,
            edges: vec![],
            kernel_less: Default::default(),
            expected_rows: Default::default(),
            unstamped: 0,
            unlisted: (0, None),
        },
        Path::new("r"),
    )
    .unwrap();
    let per: Vec<(u32, Option<u64>, Option<u64>)> = a
        .loops
        .iter()
        .map(|l| (l.thread, l.logical_tasks.get(), l.finishes.get()))
        .collect();
    assert_eq!(per, [(0, Some(0), Some(1)), (1, Some(1), Some(1))]);
}

#[test]
fn report_states_its_question_first_and_prints_every_part() {
    // The overhead case in µs; C's head is min(8 − 8, 8 − 5) = 0.
    let a = run(
        vec![
            row(1, 0, 0, 0, 5_000, 6_000),
            row(2, 0, 8_000, 8_000, 15_000, 16_000),
        ],
        vec![(1, 2)],
    );
    let text = report::render(&a);
    let expected = "\
Is the scheduler the bottleneck (an idle core next to ready, undispatched work), or is the run compute/dependency bound?
Tasks: 2 (2 rows)   Makespan: 15.00 us (first start → last end)

Part 1: Overhead verdict
  PARTIALLY SCHEDULER-LIMITED: an engine with an idle core had ready, undispatched work 20.0% of the makespan (>= 25% scheduler-bound, >= 8% partially)

Part 2: Per-engine overhead (idle core while ready work waits)
  engine    cores  overhead (us)  % makespan
  AIC           1           3.00       20.0%
  AIV           0              -           -
  all                       3.00       20.0%
  has                       3.00       20.0%

Part 3: AICore switch (gap on a core whose next task was dispatched before the previous ended)
  engine    cores   min (us)  mean (us)   max (us)  events   us/event  in overhead
  AIC           1       0.00       0.00       0.00       0       0.00         0.0%
  per core (us): AIC_0=0.00
  makespan bound from switches: [0.00, 0.00] us

Part 4: Head / tail overhead per row (us)
                P10      P25      P50      P75      P90      P95      P99      Max     Mean      Total
  Head OH      0.00     0.00     0.00     0.00     0.00     0.00     0.00     0.00     0.00       0.00
  Tail OH      1.00     1.00     1.00     1.00     1.00     1.00     1.00     1.00     1.00       2.00

Part 5: Scheduler loop per thread
  no scheduler phase records (they are recorded at swimlane level >= 3)

Part 6: Critical-path latency attribution
  path: 2 tasks, 1 hops: t1 -> t2
  span 16.00 us = exec 12.00 us (75.0%) + sched 3.00 us (18.8%) + other 1.00 us (6.2%)
";
    assert_eq!(text, expected);
}

#[test]
fn inputs_the_model_cannot_use_are_named() {
    let mut level1 = row(5, 0, 0, 1, 2, 3);
    level1.dispatch_ns = None;
    let input = Input {
        tasks: vec![level1],
        phases: Vec::new(),
        edges: Vec::new(),
        kernel_less: Default::default(),
        expected_rows: Default::default(),
        unstamped: 0,
        unlisted: (0, None),
    };
    let err = analyze(&input, Path::new("run/l2_swimlane_records.json")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "run/l2_swimlane_records.json: task 5 has no dispatch/finish time (the records are below level 2, \
         which records no scheduler stamps); the overhead model needs both for every task"
    );
    let err = analyze(&Input::default(), Path::new("r.json")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "r.json: no task rows (an empty or failed timing run?)"
    );

    let dir = tempfile::tempdir().unwrap();
    let err = simpler_sched_overhead::records_of(dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: no l2_swimlane_records.json, chip_swimlane_records.json or l2_perf_records.json (run with --enable-l2-swimlane)",
            dir.path().display()
        )
    );
    // A run folder's run.json says why (found by a review: "run with --enable-l2-swimlane"
    // was said of a run that did, and was killed).
    std::fs::write(
        dir.path().join("run.json"),
        r#"{"schema": 1, "run_id": "r1", "runtime": "tmr", "subject": "x", "started": "2026-12-07T00:00:00.000Z",
            "status": "running", "diagnostics": []}"#,
    )
    .unwrap();
    let err = simpler_sched_overhead::records_of(dir.path()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("(its run.json says running: still going, or its process died before it finished)"),
        "{err}"
    );
    std::fs::remove_file(dir.path().join("run.json")).unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    std::fs::write(&records, "{}").unwrap();
    assert_eq!(simpler_sched_overhead::records_of(dir.path()).unwrap(), records);
    let err = simpler_sched_overhead::load(&records, None).unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "no deps.json beside {} (pass --deps-json)",
            records.display()
        )),
        "{err}"
    );
    std::fs::write(dir.path().join("deps.json"), "{}").unwrap();
    let err = simpler_sched_overhead::load(&records, None).unwrap_err();
    assert!(
        err.to_string().contains("invalid l2_swimlane_records.json"),
        "{err}"
    );
}

/// Found by a review: an `aicore_tasks` row without its `aicpu_tasks` row (AICPU records lost,
/// in a real capture) made the whole file unusable ("task 3 has no dispatch/finish time"),
/// where the original's reader drops the row and runs every part. Such rows are now left out
/// and counted; the model runs on the others.
#[test]
fn rows_without_scheduler_stamps_are_left_out_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("chip_swimlane_records.json");
    // 1 MHz: t1 and t2 on core 0 (stamped), t3 on core 1 without an aicpu_tasks row.
    std::fs::write(
        &records,
        r#"{"chip_swimlane_level":2,"metadata":{"clock_freq_hz":1000000,"core_types":["aic","aic"]},
"aicore_tasks":[[0,1,0,100,105,0],[0,2,1,108,115,0],[1,3,0,100,200,0]],
"aicpu_tasks":[[0,0,100,106],[0,1,108,116]]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("deps.json"),
        r#"{"tasks":[],"tensors":[],"edges":[{"pred":"1","succ":"2"}]}"#,
    )
    .unwrap();
    let input = simpler_sched_overhead::load(&records, None).unwrap();
    assert_eq!(input.unstamped, 1);
    assert_eq!(input.tasks.iter().map(|t| t.id).collect::<Vec<_>>(), [1, 2]);
    let a = analyze(&input, &records).unwrap();
    assert_eq!(a.rows, 2);
    // The window is t1's start to t2's end: 15 µs, in ns.
    assert_eq!((a.tasks.w0, a.tasks.w1), (0, 15_000));
}

/// Found by a review: `dispatch` records with `pop_hit` and `pop_miss` of 2^64 − 1 printed
/// `hit=18446744073709551615` (a saturated sum) and `hit_rate=100.0%`; sums that pass
/// `u64::MAX` now say `overflowed`, and the figures built on them are not printed.
#[test]
fn sums_that_overflow_say_so() {
    let huge = |start, loop_iter| Phase {
        pop_hit: u64::MAX,
        pop_miss: u64::MAX,
        ..phase(0, "dispatch", start, start + 2, loop_iter, 1)
    };
    let input = |phases| Input {
        tasks: vec![row(7, 0, 0, 1, 10, 12)],
        phases,
        edges: vec![],
        kernel_less: Default::default(),
        expected_rows: Default::default(),
        unstamped: 0,
        unlisted: (0, None),
    };
    let a = analyze(&input(vec![huge(0, 1), huge(20, 2)]), Path::new("r")).unwrap();
    assert_eq!(
        (a.loops[0].pop_hit.get(), a.loops[0].pop_miss.get()),
        (None, None)
    );
    let text = report::render(&a);
    assert!(
        text.contains("  Pop: hit=overflowed, miss=overflowed, hit_rate=- (a count overflowed)\n"),
        "{text}"
    );
    // One record of 2^64 − 1 each is exact; the rate's total (2^65 − 2) does not wrap.
    let a = analyze(&input(vec![huge(0, 1)]), Path::new("r")).unwrap();
    let text = report::render(&a);
    assert!(
        text.contains("  Pop: hit=18446744073709551615, miss=18446744073709551615, hit_rate=50.0%\n"),
        "{text}"
    );
    // Loop counts of two threads that sum past u64::MAX: no average loop, no Tail OH ratio.
    let mut other = huge(0, u64::MAX);
    other.thread = 1;
    let a = analyze(&input(vec![huge(0, u64::MAX), other]), Path::new("r")).unwrap();
    let text = report::render(&a);
    assert!(
        text.contains(
            "  Avg scheduler loop iteration: overflowed (the phase records' time or loop count sums past 2^64 - 1)\n  Dominant phase:"
        ),
        "{text}"
    );
    assert_eq!(Sum::of(u64::MAX).plus(Sum::of(1)).to_string(), "overflowed");
}

/// Found by a review: rows that share a task id past what its block count and kernels give
/// (another task's rows under its id) were merged into one task without a word, where
/// `simpler critical-path` warns. The warning, worded as critical-path's, is kept with the
/// analysis (printed on stderr by `run`) and heads the report.
#[test]
fn rows_merged_into_one_task_past_its_blocks_are_warned_about() {
    let counted = |id, core, start, expected| TimedTask {
        expected_rows: expected,
        ..row(id, core, start, start + 1_000, start + 2_000, start + 3_000)
    };
    let input = |tasks, expected_rows| Input {
        tasks,
        phases: Vec::new(),
        edges: Vec::new(),
        kernel_less: Default::default(),
        expected_rows,
        unstamped: 0,
        unlisted: (0, None),
    };
    let records = Path::new("run/l2_swimlane_records.json");
    // t1: 2 blocks of 1 kernel, 2 rows: nothing to say. t3: the original's records say
    // nothing, and nothing is known.
    let fine = vec![
        counted(1, 0, 0, Some(2)),
        counted(1, 1, 0, Some(2)),
        counted(3, 0, 10_000, None),
        counted(3, 1, 10_000, None),
    ];
    let a = analyze(&input(fine.clone(), Default::default()), records).unwrap();
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert!(!report::render(&a).contains("warning"));

    // t2 has 3 rows where its records give 1.
    let mut one = fine.clone();
    one.extend([
        counted(2, 0, 20_000, Some(1)),
        counted(2, 1, 20_000, Some(1)),
        counted(2, 0, 30_000, Some(1)),
    ]);
    let a = analyze(&input(one, Default::default()), records).unwrap();
    let expected = "run/l2_swimlane_records.json: task t2 has 3 rows where its block count and \
                    kernels give 1: its rows are analysed as one task, so the analysis has fewer \
                    tasks than the run (another task's rows under its token?)";
    assert_eq!(a.warnings, [expected]);
    let text = report::render(&a);
    let head: Vec<&str> = text.lines().take(3).collect();
    assert_eq!(
        head[1],
        "Tasks: 3 (7 rows)   Makespan: 31.00 us (first start → last end)"
    );
    assert_eq!(head[2], format!("warning: {expected}"));

    // And t3, whose count comes from deps.json when the records do not give one.
    let mut two = fine;
    two.extend([counted(2, 0, 20_000, Some(1)), counted(2, 1, 20_000, Some(1))]);
    let deps_counts = [(3, 1)].into_iter().collect();
    let a = analyze(&input(two, deps_counts), records).unwrap();
    assert_eq!(
        a.warnings,
        [
            "run/l2_swimlane_records.json: 2 tasks have more rows than their block count and \
          kernels give (first: task t3 has 2 rows where they give 1): each such task's rows are \
          analysed as one task, so the analysis has fewer tasks than the run (another task's \
          rows under its token?)"
        ]
    );
}

/// The counts of the original's records come from deps.json's `block_num` and `kernel_ids`.
#[test]
fn deps_json_gives_the_row_counts_the_originals_records_lack() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("chip_swimlane_records.json");
    // 1 MHz: task 1 on cores 0 and 1, though deps.json gives it 1 block of 1 kernel.
    std::fs::write(
        &records,
        r#"{"chip_swimlane_level":2,"metadata":{"clock_freq_hz":1000000,"core_types":["aic","aic"]},
"aicore_tasks":[[0,1,0,100,105,0],[1,1,0,100,107,0]],
"aicpu_tasks":[[0,0,100,106],[1,0,100,108]]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("deps.json"),
        r#"{"tasks":[{"task_id":"1","kernel_ids":[0,-1,-1],"block_num":1}],"tensors":[],"edges":[]}"#,
    )
    .unwrap();
    let input = simpler_sched_overhead::load(&records, None).unwrap();
    assert_eq!(input.expected_rows.get(&1), Some(&1));
    let a = analyze(&input, &records).unwrap();
    assert_eq!(
        a.warnings,
        [format!(
            "{}: task t1 has 2 rows where its block count and kernels give 1: its rows are \
             analysed as one task, so the analysis has fewer tasks than the run (another task's \
             rows under its token?)",
            records.display()
        )]
    );
}
