//! Critical paths of crafted graphs whose answers are known by hand: the static (CPM) path and
//! the observed path (task ids, lengths, compute and stall), the reference's 1 MHz case, and
//! the Markdown report of that case to the printed digit.

use std::path::Path;

use simpler_artifacts::name_map::NameMap;
use simpler_critical_path::adapter::{DepEdge, TaskKernels, TimedSlice};
use simpler_critical_path::graph::GraphBuilder;
use simpler_critical_path::observed::StallKind;
use simpler_critical_path::observed::StallKind::{CoreWait, DataWait, FrontGap};
use simpler_critical_path::{analyze, report, Analysis};

/// `(task, core, start, end)` slices and `(pred, succ)` edges → the analysis at 1 GHz.
fn analysis(slices: &[(u64, u32, u64, u64)], edges: &[(u64, u64)], tol: u64) -> Analysis {
    analysis_at(slices, edges, tol, 1_000_000_000, &NameMap::default())
}

fn analysis_at(
    slices: &[(u64, u32, u64, u64)],
    edges: &[(u64, u64)],
    tol: u64,
    hz: u64,
    names: &NameMap,
) -> Analysis {
    let mut b = GraphBuilder::default();
    for &(task, core, start, end) in slices {
        b.add_slice(TimedSlice {
            task,
            core,
            start,
            end,
            expected_rows: None,
        });
    }
    for &(task, _, _, _) in slices {
        b.add_task(TaskKernels {
            task_id: task,
            kernel_ids: vec![-1, task as i32 % 3, -1],
            block_num: None,
        });
    }
    for &(pred, succ) in edges {
        b.add_edge(DepEdge { pred, succ });
    }
    analyze("case".into(), hz, b.build(names, tol), Path::new("case"))
        .unwrap()
        .unwrap()
}

/// The observed path as `(task id, compute, stall, kind)`.
fn observed(a: &Analysis) -> Vec<(u64, u64, u64, StallKind)> {
    a.observed
        .segments
        .iter()
        .map(|s| (a.graph.ids[s.task as usize], s.compute, s.stall, s.kind))
        .collect()
}

#[test]
fn diamond_static_and_observed_follow_the_long_branch() {
    // t0 (20 µs) → t1 (60 µs, core 1) | t2 (10 µs, core 2) → t3 (20 µs), times in ns.
    let a = analysis(
        &[
            (0, 0, 0, 20_000),
            (1, 1, 20_000, 80_000),
            (2, 2, 20_000, 30_000),
            (3, 0, 80_000, 100_000),
        ],
        &[(0, 1), (0, 2), (1, 3), (2, 3)],
        2,
    );
    assert_eq!(a.static_ids(), [0, 1, 3]);
    assert_eq!(a.static_path.length, 100_000);
    assert_eq!(
        observed(&a),
        [
            (0, 20_000, 0, FrontGap),
            (1, 60_000, 0, DataWait),
            (3, 20_000, 0, DataWait)
        ]
    );
    assert_eq!(
        (a.observed.compute, a.observed.stall, a.makespan()),
        (100_000, 0, 100_000)
    );
    assert_eq!(a.graph.kept_edges(), 4);
}

#[test]
fn chain_with_a_longer_side_branch() {
    // a → b → c → d on core 0 (10 each); b → e on core 1 runs 35 and ends last.
    let (a_, b_, c_, d_, e_) = (10, 11, 12, 13, 14);
    let a = analysis(
        &[
            (a_, 0, 0, 10),
            (b_, 0, 10, 20),
            (c_, 0, 20, 30),
            (d_, 0, 30, 40),
            (e_, 1, 20, 55),
        ],
        &[(a_, b_), (b_, c_), (c_, d_), (b_, e_)],
        0,
    );
    assert_eq!(a.static_ids(), [a_, b_, e_]);
    assert_eq!(a.static_path.length, 55);
    // d waits for c both as its producer and as the previous holder of core 0; e ends last.
    assert_eq!(
        observed(&a),
        [
            (a_, 10, 0, FrontGap),
            (b_, 10, 0, DataWait),
            (e_, 35, 0, DataWait)
        ]
    );
    // Without the branch the chain is the path, each link a data wait (a data wait wins a tie
    // with the core wait on the same task).
    let chain = analysis(
        &[(a_, 0, 0, 10), (b_, 0, 10, 20), (c_, 0, 20, 30), (d_, 0, 30, 40)],
        &[(a_, b_), (b_, c_), (c_, d_)],
        0,
    );
    assert_eq!(chain.static_ids(), [a_, b_, c_, d_]);
    assert_eq!(
        observed(&chain).iter().map(|s| s.3).collect::<Vec<_>>(),
        [FrontGap, DataWait, DataWait, DataWait]
    );
}

#[test]
fn a_late_dispatch_makes_the_observed_path_leave_the_static_one() {
    // x (10) → y (40) → z (10) is the longest chain (60); x → w (30) → z is shorter (50), but w
    // was dispatched late: it starts at 45 instead of 10, so z waits for w, not for y.
    let (x, y, z, w) = (0, 1, 2, 3);
    let a = analysis(
        &[(x, 0, 0, 10), (y, 1, 10, 50), (w, 2, 45, 75), (z, 0, 75, 85)],
        &[(x, y), (y, z), (x, w), (w, z)],
        2,
    );
    assert_eq!(a.static_ids(), [x, y, z]);
    assert_eq!(a.static_path.length, 60);
    assert_eq!(
        observed(&a),
        [(x, 10, 0, FrontGap), (w, 30, 35, DataWait), (z, 10, 0, DataWait)]
    );
    assert_eq!((a.observed.compute, a.observed.stall, a.makespan()), (50, 35, 85));
    assert_eq!(a.observed.stall_of(DataWait), 35);
}

/// The reference's 1 MHz graph: t1 on core 0 [0,10], t2 on core 1 [0,19], t3 on core 1
/// [20,30], edge t1 → t3.
fn reference_case() -> Analysis {
    let names = NameMap::from_pairs([(1, "kernel_add".to_owned()), (0, "kernel_mul_0_aiv".to_owned())]);
    analysis_at(
        &[(1, 0, 0, 10), (2, 1, 0, 19), (3, 1, 20, 30)],
        &[(1, 3)],
        2,
        1_000_000,
        &names,
    )
}

#[test]
fn reference_graph_static_is_1_3_and_observed_is_2_3() {
    let a = reference_case();
    assert_eq!((a.static_ids(), a.static_path.length), (vec![1, 3], 20));
    // t3's core was freed at 19 by t2, later than t1's end at 10: a core wait.
    assert_eq!(observed(&a), [(2, 19, 0, FrontGap), (3, 10, 1, CoreWait)]);
    assert_eq!((a.observed.compute, a.observed.stall), (29, 1));
}

#[test]
fn tolerance_decides_what_finished_before() {
    // p ends 3 ticks after s starts: kept with tol 3, dropped with tol 2 (the default).
    let slices = [(1, 0, 0, 23), (2, 1, 20, 50)];
    let loose = analysis(&slices, &[(1, 2)], 3);
    assert_eq!((loose.static_ids(), loose.static_path.length), (vec![1, 2], 53));
    assert_eq!(observed(&loose), [(1, 23, 0, FrontGap), (2, 27, 0, DataWait)]);
    let strict = analysis(&slices, &[(1, 2)], 2);
    assert_eq!((strict.static_ids(), strict.static_path.length), (vec![2], 30));
    assert_eq!(observed(&strict), [(2, 30, 20, FrontGap)]);
}

#[test]
fn reference_report_to_the_printed_digit() {
    let a = reference_case();
    assert_eq!(
        report::summary_line(&a),
        "[case] makespan=0.030ms  CPM=0.02ms(67%)  compute=96.7%  stall=3.3% (core-wait 3.3%)"
    );
    let text = report::render(std::slice::from_ref(&a), 25);
    let body = text.split_once("\n## Rank `case`\n").unwrap().1;
    assert_eq!(
        body,
        "\n\
         - tasks: 3 | happens-before edges: 1\n\
         - **makespan**: 0.030 ms\n\
         - **static CPM path**: 0.020 ms (66.7% of makespan) over 2 tasks\n\
         - **observed critical path**: 2 tasks\n  \
         - compute: 0.029 ms (96.7%)\n  \
         - stall (runtime scheduling): 0.001 ms (3.3%)\n    \
         - core-wait: 0.001 ms (3.3%)\n  \
         - tiling check: compute+stall = 30 ticks vs makespan 30 ticks (exact)\n\
         \n### Time on the observed critical path, by kernel family\n\n\
         | kernel family | compute ms | % makespan | stall ms | # on path |\n\
         |---|---:|---:|---:|---:|\n\
         | cid2 | 0.019 | 63.3% | 0.000 | 1 |\n\
         | kernel_mul | 0.010 | 33.3% | 0.001 | 1 |\n\
         \n### Observed critical path — all 2 tasks\n\n\
         | # | kernel | task µs | compute µs (%mk) | stall µs (%mk) | stall kind |\n\
         |---:|---|---:|---:|---:|---|\n\
         | 0 | cid2 | 19.0 | 19.0 (63.33%) | 0.0 (0.00%) |  |\n\
         | 1 | kernel_mul_0_aiv | 10.0 | 10.0 (33.33%) | 1.0 (3.33%) | core-wait |\n"
    );
    assert!(
        text.starts_with("# Critical-path report (chip swimlane)\n"),
        "{text}"
    );
}

/// A run folder `case` holding `records` as `chip_swimlane_records.json` and a deps.json
/// with the edges `(pred, succ)`, analysed with `--tol 2`.
fn analyze_files(records: &str, edges: &[(u64, u64)]) -> Analysis {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("case");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("chip_swimlane_records.json"), records).unwrap();
    let edges: Vec<String> = edges
        .iter()
        .map(|(p, s)| format!(r#"{{"pred":"{p}","succ":"{s}"}}"#))
        .collect();
    std::fs::write(
        run.join("deps.json"),
        format!(r#"{{"tasks":[],"tensors":[],"edges":[{}]}}"#, edges.join(",")),
    )
    .unwrap();
    let dirs = simpler_critical_path::input::discover(dir.path()).unwrap();
    simpler_critical_path::analyze_run(&dirs[0], 2).unwrap()
}

/// Found by a review: the reference's 1 MHz graph in the original runtime's own file layout
/// (raw ticks, no `simpler` metadata), read from disk. Its rows start at tick 0, which the
/// shared reader took as "absent" and measured from the next timestamp (tick 10): makespan
/// 0.020 ms and static path t3 instead of 0.030 ms and t1 → t3.
#[test]
fn the_reference_graph_in_the_original_layout_keeps_its_tick_zero() {
    let a = analyze_files(
        r#"{"chip_swimlane_level":2,"metadata":{"clock_freq_hz":1000000,"core_types":["aic","aic"]},
"aicore_tasks":[[0,1,0,0,10,0],[1,2,0,0,19,0],[1,3,1,20,30,0]],
"aicpu_tasks":[[0,0,0,10],[1,0,0,19],[1,1,20,30]]}"#,
        &[(1, 3)],
    );
    assert_eq!(a.makespan(), 30_000); // ns: 30 ticks at 1 MHz
    assert_eq!((a.static_ids(), a.static_path.length), (vec![1, 3], 20_000));
    assert_eq!(a.observed_ids(), [2, 3]);
    assert_eq!((a.observed.compute, a.observed.stall), (29_000, 1_000));
}

/// Found by a review: `--tol` is in the file's ticks, and the happens-before edges were
/// decided with it converted to ns (2 ticks at 50 MHz: 40 ns), but the observed walk took the
/// raw figure as ns (2 ns). t1 ends one tick after t3 starts, within the tolerance: the static
/// path kept t1 → t3 while the observed one ended at t3 with half the makespan a front gap.
#[test]
fn the_tolerance_is_the_files_ticks_for_the_observed_path_too() {
    let a = analyze_files(
        r#"{"chip_swimlane_level":1,"metadata":{"clock_freq_hz":50000000,"core_types":["aiv","aiv","aiv"]},
"aicore_tasks":[[0,1,0,1000,1100,0],[2,2,0,1000,1050,0],[1,3,0,1099,1200,0]],"aicpu_tasks":[]}"#,
        &[(1, 3)],
    );
    assert_eq!(a.makespan(), 4_000); // ns: 200 ticks at 50 MHz
    assert_eq!(a.static_ids(), [1, 3]);
    assert_eq!(a.observed_ids(), [1, 3]);
    assert_eq!((a.observed.compute, a.observed.stall), (4_000, 0));
    let text = report::render(std::slice::from_ref(&a), 25);
    assert!(
        text.contains("tiling check: compute+stall = 4000 ns vs makespan 4000 ns (exact)"),
        "{text}"
    );
}

/// Found by a review: the original's older records name, `l2_perf_records.json`, was not
/// looked for (the README says the timing tools read all three names). The interop case at
/// 50 MHz (20 ns a tick): t0 [50, 150], r1t0 [180, 250], r1t1 [185, 270], r1t2 [300, 400],
/// r1t3 [395, 450] (ticks after 1000000); r1t2 → r1t3 is dropped (r1t2 ends 5 ticks after
/// r1t3 starts, past the 2-tick tolerance), so the static path is t0 → r1t1 → r1t2
/// (100 + 85 + 100 ticks) and the observed one t0 → r1t3, its front gap none and r1t3's wait
/// for t0 a stall of 400 − 155 ticks.
#[test]
fn the_originals_older_records_name_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("case");
    std::fs::create_dir_all(&run).unwrap();
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/interop/swimlane/level2_five_columns");
    for name in ["l2_perf_records.json", "deps.json", "name_map.json"] {
        std::fs::copy(case.join(name), run.join(name)).unwrap();
    }
    let dirs = simpler_critical_path::input::discover(dir.path()).unwrap();
    assert_eq!(dirs.len(), 1);
    assert_eq!(dirs[0].records, run.join("l2_perf_records.json"));
    let a = simpler_critical_path::analyze_run(&dirs[0], 2).unwrap();
    assert_eq!(a.makespan(), 8_000);
    let r1 = 1u64 << 32;
    assert_eq!(
        (a.static_ids(), a.static_path.length),
        (vec![0, r1 + 1, r1 + 2], 5_700)
    );
    assert_eq!(a.observed_ids(), [0, r1 + 3]);
    assert_eq!((a.observed.compute, a.observed.stall), (3_100, 4_900));
}

/// Found by a review: times near u64's end wrapped the path's sums (a static path of one task
/// where two chain). The reader now refuses a time more than 2^53 ns after the first, naming
/// the row.
#[test]
fn a_time_past_any_run_is_refused_with_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    std::fs::write(
        &records,
        r#"{"chip_swimlane_level":2,"metadata":{"clock_freq_hz":1000000000,"core_types":["aiv","aiv"]},
"aicore_tasks":[[0,0,0,1,2,0],[1,1,0,3,9223372036854775812,0]],
"aicpu_tasks":[[0,0,1,2],[1,1,3,4]]}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("deps.json"),
        r#"{"tasks":[],"tensors":[],"edges":[]}"#,
    )
    .unwrap();
    let dirs = simpler_critical_path::input::discover(dir.path()).unwrap();
    let err = simpler_critical_path::analyze_run(&dirs[0], 2)
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(
            "aicore_tasks[1]: 9223372036854775812 cycles at 1000000000 Hz is more than 104 days \
             after the earliest timestamp (1): not a run's timing"
        ),
        "{err}"
    );
}
