//! The records module: the writer's exact output, round trips at every level, and the
//! reader on the original's files (`../shared/reference/swimlane-format.md` §3, §4).

use super::*;

/// Every row a reader hands over.
type All = read::CollectRows;

fn read(json: &str) -> Result<(Header, All), String> {
    let mut all = All::default();
    let header = read_swimlane_from(json.as_bytes(), &mut all).map_err(|e| e.to_string())?;
    Ok((header, all))
}

fn header(level: Level) -> WriteHeader {
    WriteHeader {
        level,
        clusters: 1,
        scheduler_threads: 2,
        core_types: core_types_for_clusters(1),
        core_to_thread: vec![0, 0, 1],
    }
}

fn phase(kind: &'static str, start: u64, end: u64, task_id: Option<u64>) -> PhaseRecord {
    PhaseRecord {
        kind,
        start_cycles: start,
        end_cycles: end,
        loop_iter: 3,
        tasks_processed: 1,
        pop_hit: (kind == "dispatch").then_some(2),
        pop_miss: (kind == "dispatch").then_some(1),
        task_id,
        shared_at_start: [0, 1, 0],
        shared_at_end: [0, 0, 0],
    }
}

/// One task on AIV core 2 (dispatch 100, start 110, end 150, finish 160), its dispatch phase,
/// a dummy task on thread 1, and two submits; the sections the level records.
fn write(level: Level) -> String {
    let mut w = SwimlaneWriter::begin(Vec::new(), &header(level)).unwrap();
    w.aicore(&AicoreRecord {
        core_id: 2,
        task_token: 1 << 32,
        reg_task_id: 0,
        start: 110,
        end: 150,
        receive_to_start: 0,
    })
    .unwrap();
    if level.has_dispatch() {
        w.aicpu(&AicpuRecord {
            core_id: 2,
            reg_task_id: 0,
            dispatch: 100,
            finish: 160,
        })
        .unwrap();
    }
    w.task_info(&TaskInfo {
        func_id: 4,
        block_idx: 0,
        block_num: 1,
        kernel_ids: [-1, -1, 4],
        sched_thread: 1,
    })
    .unwrap();
    if level.has_sched_phases() {
        w.phase(0, &phase("dispatch", 95, 105, None)).unwrap();
        w.phase(1, &phase("dummy_task", 170, 170, Some(7))).unwrap();
    }
    if level.has_orch_phases() {
        for (i, task) in [(0, 1 << 32), (1, 7)] {
            w.orch(&OrchRecord {
                submit_idx: i,
                task_id: task,
                start_cycles: 10 + 20 * i,
                end_cycles: 20 + 20 * i,
            })
            .unwrap();
        }
    }
    String::from_utf8(w.finish().unwrap()).unwrap()
}

#[test]
fn the_writer_writes_the_originals_layout_one_row_per_line() {
    assert_eq!(
        write(Level::OrchPhases),
        concat!(
            "{\"chip_swimlane_level\":4,\"l2_swimlane_level\":4,\n",
            "\"metadata\":{\"clock_freq_hz\":1000000000,\"num_cores\":3,\"core_types\":[\"aic\",\"aiv\",\"aiv\"],",
            "\"core_to_thread\":[0,0,1],\"simpler\":{\"version\":2,\"clock\":\"monotonic_ns\",\"clusters\":1,\"scheduler_threads\":2}},\n",
            "\"aicore_tasks\":[\n[2,4294967296,0,110,150,0]\n],\n",
            "\"aicpu_tasks\":[\n[2,0,100,160]\n],\n",
            "\"simpler_task_info\":[\n[4,0,1,-1,-1,4,1]\n],\n",
            "\"aicpu_scheduler_phases\":[\n[\n",
            "{\"kind\":\"dispatch\",\"start_cycles\":95,\"end_cycles\":105,\"loop_iter\":3,\"tasks_processed\":1,\"pop_hit\":2,\"pop_miss\":1,\"shared_at_start\":[0,1,0],\"shared_at_end\":[0,0,0]}\n",
            "],\n[\n",
            "{\"kind\":\"dummy_task\",\"start_cycles\":170,\"end_cycles\":170,\"loop_iter\":3,\"tasks_processed\":1,\"task_id\":7,\"shared_at_start\":[0,1,0],\"shared_at_end\":[0,0,0]}\n",
            "]],\n",
            "\"aicpu_orchestrator_phases\":[\n[\n",
            "{\"submit_idx\":0,\"task_id\":4294967296,\"start_cycles\":10,\"end_cycles\":20},\n",
            "{\"submit_idx\":1,\"task_id\":7,\"start_cycles\":30,\"end_cycles\":40}\n",
            "]]}\n"
        )
    );
}

#[test]
fn the_writer_refuses_sections_the_level_does_not_record_and_going_back() {
    let mut w = SwimlaneWriter::begin(Vec::new(), &header(Level::AicpuTiming)).unwrap();
    let err = w.phase(0, &phase("dispatch", 1, 2, None)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "level 2 does not record \"aicpu_scheduler_phases\""
    );
    w.task_info(&TaskInfo {
        func_id: 0,
        block_idx: 0,
        block_num: 1,
        kernel_ids: [0, -1, -1],
        sched_thread: 0,
    })
    .unwrap();
    let err = w
        .aicpu(&AicpuRecord {
            core_id: 0,
            reg_task_id: 0,
            dispatch: 1,
            finish: 2,
        })
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot add to \"aicpu_tasks\" after \"simpler_task_info\""),
        "{err}"
    );
}

#[test]
fn every_level_round_trips_through_the_reader() {
    for level in Level::ALL {
        let (h, all) = read(&write(level)).unwrap();
        assert_eq!(h.level, level);
        assert_eq!(
            (h.clusters, h.scheduler_threads, h.has_task_info),
            (Some(1), Some(2), true)
        );
        assert_eq!(
            h.cores.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["AIC_0", "AIV_1", "AIV_2"]
        );
        // This runtime's files are nanoseconds since the run started already: no time base.
        let base = 0;
        assert_eq!(h.base_cycles, base);
        let t = all.tasks[0];
        assert_eq!(
            (
                t.task_id,
                t.func_id,
                t.kernel_ids,
                t.block_num,
                t.core_type,
                t.sched_thread
            ),
            (1 << 32, 4, [-1, -1, 4], 1, CoreType::Aiv, Some(1))
        );
        assert_eq!(
            (t.receive_ns, t.start_ns, t.end_ns),
            (110 - base, 110 - base, 150 - base)
        );
        let stamps = level.has_dispatch().then_some((100 - base, 160 - base));
        assert_eq!(t.dispatch_ns.zip(t.finish_ns), stamps);
        assert_eq!(h.core_to_thread.is_some(), level.has_sched_phases());
        assert_eq!(all.phases.len(), if level.has_sched_phases() { 2 } else { 0 });
        let dummies: Vec<(u64, u32)> = all
            .dummy_tasks
            .iter()
            .map(|d| (d.task_id, d.sched_thread))
            .collect();
        assert_eq!(
            dummies,
            if level.has_sched_phases() {
                vec![(7, 1)]
            } else {
                vec![]
            }
        );
        let submits: Vec<(u64, u64, u64)> = all
            .orchestrator
            .iter()
            .map(|o| (o.task_id, o.submit_start_ns, o.submit_end_ns))
            .collect();
        assert_eq!(
            submits,
            if level.has_orch_phases() {
                vec![(1 << 32, 10, 20), (7, 30, 40)]
            } else {
                vec![]
            }
        );
        let expected_notes: Vec<String> = if level.has_dispatch() {
            vec![]
        } else {
            vec!["level 1: no dispatch or finish times (recorded from level 2)".into()]
        };
        assert_eq!(h.notes, expected_notes);
    }
}

const META: &str = "\"metadata\":{\"clock_freq_hz\":50000000,\"num_cores\":4,\"core_types\":[\"aic\",\"aiv\",\"aiv\",\"aiv\"]}";

#[test]
fn five_column_rows_take_receive_as_start_and_unknown_kernels_are_noted() {
    let (h, all) = read(&format!(
        "{{\"chip_swimlane_level\":2,{META},\"aicore_tasks\":[[1,5,0,100,150]],\"aicpu_tasks\":[[1,0,90,160]]}}"
    ))
    .unwrap();
    let t = all.tasks[0];
    // 50 MHz: 20 ns a cycle; the base is the dispatch at cycle 90.
    assert_eq!(
        (t.dispatch_ns, t.receive_ns, t.start_ns, t.end_ns, t.finish_ns),
        (Some(0), 200, 200, 1200, Some(1400))
    );
    assert_eq!(
        (t.func_id, t.block_num, t.sched_thread, h.has_task_info),
        (-1, 0, None, false)
    );
    assert_eq!(
        h.notes,
        ["the records carry no kernel ids or blocks (the original's layout): they come from deps.json"]
    );
}

#[test]
fn level_one_has_no_scheduler_stamps_and_says_so() {
    let (h, all) = read(&format!(
        "{{\"chip_swimlane_level\":1,{META},\"aicore_tasks\":[[0,5,0,100,150,10]],\"aicpu_tasks\":[]}}"
    ))
    .unwrap();
    let t = all.tasks[0];
    assert_eq!(
        (t.dispatch_ns, t.finish_ns, t.receive_ns, t.start_ns),
        (None, None, 0, 200)
    );
    assert_eq!(
        h.notes[0],
        "level 1: no dispatch or finish times (recorded from level 2)"
    );
}

#[test]
fn unmatched_aicpu_rows_are_dropped_naming_the_top_three_cores() {
    let aicpu =
        "[1,9,1,2],[1,8,1,2],[1,7,1,2],[2,9,1,2],[2,8,1,2],[3,9,1,2],[0,9,1,2],[0,8,1,2],[0,0,90,160]";
    let (h, all) = read(&format!(
        "{{\"chip_swimlane_level\":2,{META},\"aicore_tasks\":[[0,5,0,100,150,0]],\"aicpu_tasks\":[{aicpu}]}}"
    ))
    .unwrap();
    assert_eq!(all.tasks.len(), 1);
    // Dropped rows still count for the base, as in the original (cycle 1 here).
    assert_eq!(all.tasks[0].dispatch_ns, Some(89 * 20));
    assert_eq!(
        h.notes[0],
        "8 aicpu_tasks rows match no aicore_tasks row and were dropped (core 1: 3, core 0: 2, core 2: 2)"
    );
}

#[test]
fn phase_kinds_may_be_the_originals_numbers() {
    let phases = "[[{\"kind\":0,\"start_cycles\":100,\"end_cycles\":110},{\"kind\":7,\"start_cycles\":120,\"end_cycles\":120,\"task_id\":9},{\"kind\":\"idle\",\"start_cycles\":130,\"end_cycles\":140}]]";
    let (_, all) = read(&format!(
        "{{\"chip_swimlane_level\":3,{META},\"aicore_tasks\":[],\"aicpu_tasks\":[],\"aicpu_scheduler_phases\":{phases}}}"
    ))
    .unwrap();
    let kinds: Vec<&str> = all.phases.iter().map(|p| p.kind.as_str()).collect();
    assert_eq!(kinds, ["complete", "dummy_task", "idle"]);
    assert_eq!(
        (all.dummy_tasks[0].task_id, all.dummy_tasks[0].finish_ns),
        (9, 400)
    );
    let err = read(&format!(
        "{{\"chip_swimlane_level\":3,{META},\"aicpu_scheduler_phases\":[[{{\"kind\":3,\"start_cycles\":1,\"end_cycles\":2}}]]}}"
    ))
    .unwrap_err();
    assert!(
        err.ends_with("aicpu_scheduler_phases[0][0]: unknown phase kind 3"),
        "{err}"
    );
}

#[test]
fn host_orchestrator_phases_count_from_their_own_origin() {
    let host = "[[{\"submit_idx\":0,\"task_id\":5,\"start_host_ns\":7000000000,\"end_host_ns\":7000000400},{\"submit_idx\":1,\"task_id\":-1,\"start_host_ns\":7000000500,\"end_host_ns\":7000000600}]]";
    let (h, all) = read(&format!(
        "{{\"chip_swimlane_level\":4,{META},\"aicore_tasks\":[[0,5,0,100,150,0]],\"aicpu_tasks\":[[0,0,90,160]],\"host_orchestrator_phases\":{host}}}"
    ))
    .unwrap();
    assert_eq!(h.orchestrator_source, OrchestratorSource::Host);
    let spans: Vec<(u64, u64, u64)> = all
        .orchestrator
        .iter()
        .map(|o| (o.task_id, o.submit_start_ns, o.submit_end_ns))
        .collect();
    assert_eq!(spans, [(5, 0, 400), (u64::MAX, 500, 600)]);
    assert!(h
        .notes
        .iter()
        .any(|n| n.starts_with("host orchestration: submit spans are on the host clock")));
    let both = format!(
        "{{\"chip_swimlane_level\":4,{META},\"aicpu_orchestrator_phases\":[[]],\"host_orchestrator_phases\":{host}}}"
    );
    assert!(read(&both).unwrap_err().ends_with(
        "invalid l2_swimlane_records.json: the file holds both aicpu_orchestrator_phases and host_orchestrator_phases"
    ));
}

#[test]
fn bad_headers_are_refused_with_what_is_wrong() {
    let err = |json: String| read(&json).unwrap_err();
    assert_eq!(
        err(format!("{{\"chip_swimlane_level\":2,\"l2_swimlane_level\":3,{META}}}")),
        "<input>:1:47: invalid l2_swimlane_records.json: l2_swimlane_level is 3 but chip_swimlane_level is 2: the file names two levels"
    );
    for level in [0, 5] {
        assert_eq!(
            err(format!("{{\"chip_swimlane_level\":{level},{META}}}")),
            format!("<input>: invalid l2_swimlane_records.json: chip_swimlane_level {level} is not a recorded level (1 to 4)")
        );
    }
    for freq in ["0", "-5", "0.5"] {
        assert_eq!(
            err(format!("{{\"chip_swimlane_level\":1,\"metadata\":{{\"clock_freq_hz\":{freq}}}}}")),
            format!("<input>: invalid l2_swimlane_records.json: metadata.clock_freq_hz must be at least 1 cycle per second, not {}", freq.parse::<f64>().unwrap())
        );
    }
    assert_eq!(
        err("{\"version\":1,\"clock\":\"monotonic_ns\",\"tasks\":[]}".into()),
        "<input>: invalid l2_swimlane_records.json: this is simpler's earlier swimlane layout (\"tasks\", \"dummy_tasks\", \"orchestrator\"), which this version no longer reads: re-run with --enable-l2-swimlane to record the raw layout"
    );
}

/// Found by a review: a deps.json given as the records was called "simpler's earlier
/// swimlane layout" (it has `tasks` too), and a fractional clock was cut to a whole number
/// (1.9 Hz read as 1, every time 1.9× too long).
#[test]
fn a_deps_json_or_a_fractional_clock_is_refused_for_what_it_is() {
    let err = |json: &str| read(json).unwrap_err();
    assert_eq!(
        err("{\"tasks\":[],\"tensors\":[],\"edges\":[]}"),
        "<input>: invalid l2_swimlane_records.json: this is a deps.json (tasks, tensors, edges), not swimlane \
         timing records: give the run's l2_swimlane_records.json (or chip_swimlane_records.json), or its folder"
    );
    assert_eq!(
        err("{\"chip_swimlane_level\":1,\"metadata\":{\"clock_freq_hz\":1.9}}"),
        "<input>: invalid l2_swimlane_records.json: metadata.clock_freq_hz must be a whole number of cycles \
         per second, not 1.9 (every time is converted with it)"
    );
}

#[test]
fn a_bad_row_names_its_section_index_line_and_column() {
    let json = format!(
        "{{\"chip_swimlane_level\":1,{META},\n\"aicore_tasks\":[\n[0,1,0,10,20,0],\n[0,2,1,30,40,0],\n[0,3,2,50,60,0],\n[0,4,3,70]]}}"
    );
    assert_eq!(
        read(&json).unwrap_err(),
        "<input>:6:10: invalid l2_swimlane_records.json: aicore_tasks[3]: 4 columns, expected [core_id, task_token, reg_task_id, start, end, receive_to_start]"
    );
}

/// Found by a review: a row ending before it started reached sched-overhead, whose window
/// (`clamp(first start, last end)`) panicked, and critical-path, which printed a makespan of
/// 2^64 ticks less a little.
#[test]
fn a_row_that_ends_before_it_starts_is_refused_naming_it() {
    let json = format!(
        "{{\"chip_swimlane_level\":2,{META},\n\"aicore_tasks\":[\n[0,1,0,10,20,0],\n[0,2,1,30,29,0]],\n\"aicpu_tasks\":[[0,0,5,21],[0,1,25,24]]}}"
    );
    assert_eq!(
        read(&json).unwrap_err(),
        "<input>:4:15: invalid l2_swimlane_records.json: aicore_tasks[1]: end 29 is before start 30"
    );
    let json = json.replace("[0,2,1,30,29,0]", "[0,2,1,30,30,0]");
    assert_eq!(
        read(&json).unwrap_err(),
        "<input>:5:37: invalid l2_swimlane_records.json: aicpu_tasks[1]: finish 24 is before dispatch 25"
    );
    // A dispatch that took no time is a row like any other (here round a kernel of no time).
    read(
        &json
            .replace("[0,2,1,30,30,0]", "[0,2,1,25,25,0]")
            .replace("[0,1,25,24]", "[0,1,25,25]"),
    )
    .unwrap();
}

/// Found by a review: one `core_to_thread` entry of 2^31 − 1 made the converter write an
/// `AICPU_<n>` track for every id below it (7.6 GB in 5 s), and a core id of 2^31 + 8 wrapped
/// its track id onto core 8's.
#[test]
fn thread_and_core_ids_past_what_a_trace_can_show_are_refused() {
    let meta = format!(
        "{},\"core_to_thread\":[0,2147483647,1,0]}}",
        &META[..META.len() - 1]
    );
    assert_eq!(
        read(&format!("{{\"chip_swimlane_level\":3,{meta}}}")).unwrap_err(),
        "<input>: invalid l2_swimlane_records.json: metadata.core_to_thread[1]: thread 2147483647 is not below the 4 cores it maps (a scheduler thread serves at least one core)"
    );
    assert_eq!(
        read(&format!("{{\"chip_swimlane_level\":1,{META},\"aicore_tasks\":[[2147483656,1,0,10,20,0]]}}")).unwrap_err(),
        format!("<input>:1:{}: invalid l2_swimlane_records.json: aicore_tasks[0]: core_id 2147483656 is past the 900 cores a trace can show", META.len() + 66)
    );
}

/// Found by a review: `metadata.simpler.scheduler_threads` of 2^31 aborted the converter on a
/// 51 GB allocation (one list per thread), and 50 000 000 made a 5.4 GB trace of a 3.6 KB file.
#[test]
fn scheduler_threads_past_the_cores_are_refused() {
    let meta = |threads: u64, cores: usize| {
        let types = vec!["\"aiv\""; cores].join(",");
        format!(
            "{{\"chip_swimlane_level\":3,\"metadata\":{{\"clock_freq_hz\":1000000000,\"core_types\":[{types}],\
             \"simpler\":{{\"version\":2,\"clock\":\"monotonic_ns\",\"clusters\":1,\"scheduler_threads\":{threads}}}}}}}"
        )
    };
    assert_eq!(
        read(&meta(2147483648, 4)).unwrap_err(),
        "<input>: invalid l2_swimlane_records.json: metadata.simpler.scheduler_threads: 2147483648 is past the 900 threads a trace can show"
    );
    assert_eq!(
        read(&meta(5, 4)).unwrap_err(),
        "<input>: invalid l2_swimlane_records.json: metadata.simpler.scheduler_threads: 5 is more than the 4 cores of metadata.core_types (a scheduler thread serves at least one core)"
    );
    assert_eq!(
        read(&meta(901, 1000)).unwrap_err(),
        "<input>: invalid l2_swimlane_records.json: metadata.simpler.scheduler_threads: 901 is past the 900 threads a trace can show"
    );
    assert_eq!(read(&meta(4, 4)).unwrap().0.scheduler_threads, Some(4));
    assert_eq!(read(&meta(0, 4)).unwrap().0.scheduler_threads, Some(0));
}

#[test]
fn build_phases_are_written_only_when_given_and_read_back() {
    let header = WriteHeader::for_clusters(Level::AicoreTiming, 1, 1);
    let w = SwimlaneWriter::begin(Vec::new(), &header).unwrap();
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    assert!(!text.contains("simpler_build_phases"), "{text}");

    let mut w = SwimlaneWriter::begin(Vec::new(), &header).unwrap();
    w.build_phase(&BuildPhaseRecord {
        phase: "orchestration",
        start_cycles: 10,
        end_cycles: 40,
        inference_ns: Some(12),
    })
    .unwrap();
    w.build_phase(&BuildPhaseRecord {
        phase: "launch",
        start_cycles: 45,
        end_cycles: 60,
        inference_ns: None,
    })
    .unwrap();
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    assert!(
        text.ends_with(
            "\"simpler_build_phases\":[\n{\"phase\":\"orchestration\",\"start_cycles\":10,\"end_cycles\":40,\"inference_ns\":12},\n\
             {\"phase\":\"launch\",\"start_cycles\":45,\"end_cycles\":60}\n]}\n"
        ),
        "{text}"
    );
    let (_, rows) = read(&text).unwrap();
    let got: Vec<(&str, u64, u64, Option<u64>)> = rows
        .build_phases
        .iter()
        .map(|b| (b.phase.as_str(), b.start_ns, b.end_ns, b.inference_ns))
        .collect();
    assert_eq!(
        got,
        [("orchestration", 10, 40, Some(12)), ("launch", 45, 60, None)]
    );
}

/// Found by a review: a repeated aicore row was reported as "1 aicore_tasks rows have no
/// aicpu_tasks row", which is not what is wrong with it. Both rows are kept and only the first
/// takes the aicpu row, as the original's reader does; the note now says the key repeats.
#[test]
fn a_repeated_aicore_key_is_noted_as_such() {
    let json = format!(
        "{{\"chip_swimlane_level\":2,{META},\"aicore_tasks\":[[1,7,0,10,20,0],[1,7,0,10,20,0],[2,8,0,30,40,0]],\n\
         \"aicpu_tasks\":[[1,0,5,25],[2,0,28,45]]}}"
    );
    let (header, all) = read(&json).unwrap();
    assert_eq!(all.tasks.len(), 3);
    assert_eq!(
        header.notes,
        vec![
            "1 aicore_tasks rows repeat a (core_id, reg_task_id) key: only the first of each takes its aicpu_tasks row, as the original's reader does"
                .to_string(),
            "the records carry no kernel ids or blocks (the original's layout): they come from deps.json".to_string(),
        ]
    );
}

/// Our own layout (`metadata.simpler`): every time is one, 0 included.
const OURS: &str = "\"metadata\":{\"clock_freq_hz\":1000000000,\"num_cores\":4,\"core_types\":[\"aic\",\"aiv\",\"aiv\",\"aiv\"],\"simpler\":{\"version\":2,\"clock\":\"monotonic_ns\",\"clusters\":1,\"scheduler_threads\":1}}";

/// A level-2 file of `meta` with one row on core 1: `aicore` and `aicpu` as written.
fn one_row(meta: &str, aicore: &str, aicpu: &str) -> String {
    format!("{{\"chip_swimlane_level\":2,{meta},\"aicore_tasks\":[[1,5,0,500,600,0],{aicore}],\"aicpu_tasks\":[[1,0,400,700],{aicpu}]}}")
}

/// Found by a review: a row whose kernel started before its dispatch (a start of 1, or of 0
/// in our layout), received before the clock's zero (`receive_to_start` 2^64 − 1) or was
/// dispatched after its end gave an Exec% of 512.6 or 104.5, a negative head overhead and a
/// negative propagation, with exit 0; sched-overhead clamped the same rows to other numbers.
#[test]
fn a_row_in_an_impossible_order_is_refused_naming_it_and_its_dispatch() {
    let err = |meta: &str, aicore: &str, aicpu: &str| read(&one_row(meta, aicore, aicpu)).unwrap_err();
    for meta in [OURS, META] {
        assert_eq!(
            err(meta, "[2,6,0,1,900,0]", "[2,0,800,950]"),
            "<input>: invalid l2_swimlane_records.json: aicore_tasks[1]: start 1 is before its dispatch 800 \
             (aicpu_tasks[1]): a core receives a task only after the scheduler dispatches it"
        );
        // Dispatched after the kernel's end.
        assert!(err(meta, "[2,6,0,810,900,0]", "[2,0,950,960]")
            .ends_with("aicore_tasks[1]: start 810 is before its dispatch 950 (aicpu_tasks[1]): a core receives a task only after the scheduler dispatches it"));
        assert_eq!(
            err(meta, "[2,6,0,850,900,100]", "[2,0,800,950]"),
            "<input>: invalid l2_swimlane_records.json: aicore_tasks[1]: receive 750 (start 850 - receive_to_start 100) \
             is before its dispatch 800 (aicpu_tasks[1]): a core receives a task only after the scheduler dispatches it"
        );
        assert_eq!(
            err(meta, "[2,6,0,850,900,18446744073709551615]", "[2,0,800,950]"),
            "<input>: invalid l2_swimlane_records.json: aicore_tasks[1]: receive_to_start 18446744073709551615 is \
             more than start 850: the core would have received the task before the clock's zero"
        );
        assert_eq!(
            err(meta, "[2,6,0,850,990,0]", "[2,0,800,950]"),
            "<input>: invalid l2_swimlane_records.json: aicore_tasks[1]: end 990 is after its finish 950 \
             (aicpu_tasks[1]): the scheduler sees a kernel finish only after it ends"
        );
        // In order, to the tick: read.
        read(&one_row(meta, "[2,6,0,850,950,50]", "[2,0,800,950]")).unwrap();
    }
    // Our writer never writes a 0: a start of 0 is a time, before the dispatch.
    assert!(err(OURS, "[2,6,0,0,900,0]", "[2,0,800,950]")
        .ends_with("aicore_tasks[1]: start 0 is before its dispatch 800 (aicpu_tasks[1]): a core receives a task only after the scheduler dispatches it"));
}

/// Found by a review: in the original's layout a 0 is "not recorded", but a row starting at 0
/// was drawn from the trace's 0 and counted in Exec, and a dispatch of 0 made a latency of the
/// whole clock. Such rows are left out, or kept without stamps, and counted in a note; a tool
/// that takes tick 0 as a time (critical-path) still gets the row.
#[test]
fn the_originals_zeros_are_left_out_and_counted() {
    let json = format!(
        "{{\"chip_swimlane_level\":2,{META},\"aicore_tasks\":[[1,5,0,500,600,0],[2,6,0,0,900,0],[3,7,0,0,0,0],[1,8,1,700,800,0]],\
         \"aicpu_tasks\":[[1,0,400,700],[2,0,800,950],[1,1,0,850]]}}"
    );
    let (h, all) = read(&json).unwrap();
    let rows: Vec<(u64, Option<u64>, u64, Option<u64>)> = all
        .tasks
        .iter()
        .map(|t| (t.task_id, t.dispatch_ns, t.start_ns, t.finish_ns))
        .collect();
    // 50 MHz, base cycle 400: row 0 from dispatch 0 ns; row 3 has no stamps.
    assert_eq!(rows, [(5, Some(0), 2000, Some(6000)), (8, None, 6000, None)]);
    assert_eq!(
        h.notes[..2],
        [
            "2 aicore_tasks rows have a start of 0 (not recorded, in the original's layout) and are left out \
             of the trace and the statistics (aicore_tasks[1], aicore_tasks[2])",
            "1 aicpu_tasks rows have a dispatch or finish of 0 (not recorded, in the original's layout): \
             their rows are kept without scheduler stamps (aicpu_tasks[2])",
        ]
    );
    #[derive(Default)]
    struct Ticks(Vec<u64>);
    impl SwimlaneSink for Ticks {
        fn task(&mut self, row: TaskRow) {
            self.0.push(row.task_id);
        }
        fn zero_is_a_time(&self) -> bool {
            true
        }
    }
    let mut ticks = Ticks::default();
    let h = read_swimlane_from(json.as_bytes(), &mut ticks).unwrap();
    assert_eq!(ticks.0, [5, 6, 7, 8]);
    assert!(!h.notes.iter().any(|n| n.contains("start of 0")), "{:?}", h.notes);
}

/// Found by a review: a clock of 2^64 − 1 Hz was read, and every time became 0 ns (a total
/// test time of 0.00 us, a makespan of 0).
#[test]
fn a_clock_past_100_ghz_is_refused() {
    let err = read("{\"chip_swimlane_level\":1,\"metadata\":{\"clock_freq_hz\":18446744073709551615}}")
        .unwrap_err();
    assert_eq!(
        err,
        "<input>: invalid l2_swimlane_records.json: metadata.clock_freq_hz 18446744073709552000 is more than \
         100000000000 cycles per second (100 GHz): no device clock runs that fast, and every time would read as 0 ns"
    );
    read("{\"chip_swimlane_level\":1,\"metadata\":{\"clock_freq_hz\":100000000000}}").unwrap();
}

/// Found by a review: a scheduler or orchestrator phase that started after it ended was read
/// as one of no time, where an AICore row in that state is refused.
#[test]
fn a_phase_that_ends_before_it_starts_is_refused_naming_it() {
    let phases = "[[{\"kind\":\"complete\",\"start_cycles\":100,\"end_cycles\":110}],\n[{\"kind\":\"dispatch\",\"start_cycles\":100,\"end_cycles\":110},\n{\"kind\":\"dispatch\",\"start_cycles\":130,\"end_cycles\":120}]]";
    assert_eq!(
        read(&format!("{{\"chip_swimlane_level\":3,{META},\"aicpu_scheduler_phases\":{phases}}}")).unwrap_err(),
        "<input>:3:56: invalid l2_swimlane_records.json: aicpu_scheduler_phases[1][1]: start_cycles 130 is after end_cycles 120"
    );
    let host = "[[{\"submit_idx\":0,\"task_id\":5,\"start_host_ns\":7000000500,\"end_host_ns\":7000000400}]]";
    assert_eq!(
        read(&format!("{{\"chip_swimlane_level\":4,{META},\"host_orchestrator_phases\":{host}}}")).unwrap_err(),
        format!(
            "<input>:1:{}: invalid l2_swimlane_records.json: host_orchestrator_phases[0][0]: start_host_ns 7000000500 is after end_host_ns 7000000400",
            META.len() + 136
        )
    );
    let orch = "[[{\"submit_idx\":0,\"task_id\":5,\"start_cycles\":9,\"end_cycles\":8}]]";
    assert!(read(&format!(
        "{{\"chip_swimlane_level\":4,{META},\"aicpu_orchestrator_phases\":{orch}}}"
    ))
    .unwrap_err()
    .ends_with("aicpu_orchestrator_phases[0][0]: start_cycles 9 is after end_cycles 8"));
    let build = "[{\"phase\":\"launch\",\"start_cycles\":9,\"end_cycles\":8}]";
    assert!(read(&format!(
        "{{\"chip_swimlane_level\":1,{OURS},\"simpler_build_phases\":{build}}}"
    ))
    .unwrap_err()
    .ends_with("simpler_build_phases[0]: start_cycles 9 is after end_cycles 8"));
}

/// The bound on times (2^53 ns after the first) holds for phases and spans too: the tools sum
/// their durations.
#[test]
fn phases_past_104_days_are_refused_naming_them() {
    let phases = "[[{\"kind\":\"dispatch\",\"start_cycles\":100,\"end_cycles\":9007199254740993}]]";
    assert_eq!(
        read(&format!("{{\"chip_swimlane_level\":3,{OURS},\"aicpu_scheduler_phases\":{phases}}}")).unwrap_err(),
        "<input>: invalid l2_swimlane_records.json: aicpu_scheduler_phases[0][0]: 9007199254740993 cycles at \
         1000000000 Hz is more than 104 days after the earliest timestamp (0): not a run's timing"
    );
    let host = "[[{\"submit_idx\":0,\"start_host_ns\":5,\"end_host_ns\":6},{\"submit_idx\":1,\"start_host_ns\":7,\"end_host_ns\":9007199254740998}]]";
    assert_eq!(
        read(&format!("{{\"chip_swimlane_level\":4,{META},\"host_orchestrator_phases\":{host}}}")).unwrap_err(),
        "<input>: invalid l2_swimlane_records.json: host_orchestrator_phases[0][1]: end_host_ns 9007199254740998 \
         is more than 104 days after the earliest submit (5): not a run's timing"
    );
}

/// Found by a review: errors reading the original's `l2_perf_records.json` called it
/// "invalid l2_swimlane_records.json".
#[test]
fn errors_name_the_file_under_the_name_it_has() {
    let dir = tempfile::tempdir().unwrap();
    for name in FILE_NAMES {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            "{\"chip_swimlane_level\":9,\n\"metadata\":{\"clock_freq_hz\":1}}",
        )
        .unwrap();
        assert_eq!(
            read_swimlane_file(&path).unwrap_err().to_string(),
            format!(
                "{}: invalid {name}: chip_swimlane_level 9 is not a recorded level (1 to 4)",
                path.display()
            )
        );
        std::fs::write(&path, "{\"chip_swimlane_level\":1,\n\"aicore_tasks\":[[1]]}").unwrap();
        assert_eq!(
            read_swimlane_file(&path).unwrap_err().to_string(),
            format!(
                "{}:2:19: invalid {name}: aicore_tasks[0]: 1 columns, expected [core_id, task_token, reg_task_id, start, end, receive_to_start]",
                path.display()
            )
        );
    }
    let other = dir.path().join("records.json");
    std::fs::write(&other, "{").unwrap();
    assert!(read_swimlane_file(&other)
        .unwrap_err()
        .to_string()
        .contains(": invalid l2_swimlane_records.json: "));
}

/// Found by a review: a folder holding l2_swimlane_records.json and a chip_swimlane_records.json
/// that differs (a copy whose hard links broke, then edited) was read as one file by some
/// tools and as the other by others, silently. Every tool now takes [`find_in`]'s file and
/// warns with [`differing_copies`].
#[test]
fn differing_copies_under_two_names_are_named_with_the_one_used() {
    let dir = tempfile::tempdir().unwrap();
    let l2 = dir.path().join(FILE_NAME);
    let chip = dir.path().join(CHIP_FILE_NAME);
    std::fs::write(&chip, "{\"a\":1}").unwrap();
    assert_eq!(find_in(dir.path()), Some(chip.clone()));
    assert_eq!(differing_copies(&chip), None);
    std::fs::write(&l2, "{\"a\":1}").unwrap();
    assert_eq!(find_in(dir.path()), Some(l2.clone()));
    // Same bytes, separate files: nothing to say; a hard link is not even compared.
    assert_eq!(differing_copies(&l2), None);
    std::fs::remove_file(&chip).unwrap();
    std::fs::hard_link(&l2, &chip).unwrap();
    assert_eq!(differing_copies(&l2), None);
    std::fs::remove_file(&chip).unwrap();
    let said = |used: &Path, others: &str| {
        format!(
            "{} holds {} and {others}, which differ (a run writes one file under these names; \
             one was edited or replaced since): using {}",
            dir.path().display(),
            used.file_name().unwrap().to_string_lossy(),
            used.display()
        )
    };
    // Same size, other content; then another size.
    std::fs::write(&chip, "{\"a\":2}").unwrap();
    assert_eq!(differing_copies(&l2), Some(said(&l2, CHIP_FILE_NAME)));
    std::fs::write(&chip, "{\"a\":10}").unwrap();
    assert_eq!(differing_copies(&l2), Some(said(&l2, CHIP_FILE_NAME)));
    assert_eq!(differing_copies(&chip), Some(said(&chip, FILE_NAME)));
    std::fs::write(dir.path().join(PERF_FILE_NAME), "{}").unwrap();
    assert_eq!(
        differing_copies(&l2),
        Some(said(&l2, "chip_swimlane_records.json and l2_perf_records.json"))
    );
    // A file under another name is the user's choice: no sibling to compare.
    assert_eq!(differing_copies(&dir.path().join("mine.json")), None);
}

/// Found by a review: a `simpler_task_info` row naming a scheduler thread the run did not have
/// (500 of 1) lost its flows in the trace without a word, and a block index past its task's
/// block count was drawn as data.
#[test]
fn task_info_naming_a_thread_or_a_block_the_run_did_not_have_is_refused() {
    let good = write(Level::OrchPhases);
    assert!(read(&good).is_ok());
    let thread = good.replace("[4,0,1,-1,-1,4,1]", "[4,0,1,-1,-1,4,2]");
    assert_eq!(
        read(&thread).unwrap_err(),
        "<input>: invalid l2_swimlane_records.json: simpler_task_info[0]: sched_thread 2 is not one of the \
         run's 2 scheduler thread(s) (metadata.simpler.scheduler_threads)"
    );
    let block = good.replace("[4,0,1,-1,-1,4,1]", "[4,1,1,-1,-1,4,1]");
    let err = read(&block).unwrap_err();
    assert!(
        err.contains("simpler_task_info[0]") && err.contains("block_idx 1 is not below block_num 1"),
        "{err}"
    );
}
