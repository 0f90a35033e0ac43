//! What each swimlane level records, on the vector example (5 tasks, one kernel row each).

use simpler_artifacts::swimlane::{read_swimlane_file, Level, CHIP_FILE_NAME, FILE_NAME};
use simpler_examples::{find, Params};
use simpler_runtime::{CallConfig, RuntimeKind};

fn record(kind: RuntimeKind, level: Level) -> (tempfile::TempDir, simpler_artifacts::swimlane::SwimlaneFile) {
    let dir = tempfile::tempdir().unwrap();
    let ex = find("vector_example").unwrap();
    let params = Params::parse(ex.name(), &[], ex.params()).unwrap();
    let cfg = CallConfig {
        runtime: kind,
        scheduler_threads: 1,
        enable_l2_swimlane: true,
        l2_swimlane_level: level,
        output_prefix: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let o = ex.run(&cfg, &params).unwrap();
    assert!(o.golden.passed());
    let file = read_swimlane_file(&dir.path().join(FILE_NAME)).unwrap();
    (dir, file)
}

#[test]
fn each_level_records_what_the_original_s_level_does() {
    for kind in RuntimeKind::ALL {
        for level in Level::ALL {
            let (dir, f) = record(kind, level);
            let what = format!("{kind:?} level {}", level.number());
            assert_eq!(f.header.level, level, "{what}");
            assert_eq!(f.tasks.len(), 5, "{what}");
            assert!(f.header.has_task_info, "{what}");
            let mut funcs: Vec<i32> = f.tasks.iter().map(|t| t.func_id).collect();
            funcs.sort();
            assert_eq!(funcs, [0, 0, 1, 1, 2], "{what}");
            // Dispatch and finish from level 2, in order around the kernel.
            for t in &f.tasks {
                match (level.has_dispatch(), t.dispatch_ns, t.finish_ns) {
                    (true, Some(d), Some(fin)) => {
                        assert!(
                            d <= t.start_ns && t.start_ns <= t.end_ns && t.end_ns <= fin,
                            "{what}: {t:?}"
                        )
                    }
                    (false, None, None) => {}
                    other => panic!("{what}: dispatch/finish {other:?}"),
                }
            }
            // Phases from level 3: every task row has its dispatch and complete phase.
            let count = |name: &str| f.phases.iter().filter(|p| p.kind == name).count();
            if level.has_sched_phases() {
                assert_eq!((count("dispatch"), count("complete")), (5, 5), "{what}");
                // One scheduler thread serves every core.
                let cores = 3 * f.header.clusters.unwrap() as usize;
                assert_eq!(f.header.core_to_thread, Some(vec![0; cores]), "{what}");
                let pops: u64 = f.phases.iter().filter_map(|p| p.pop_hit).sum();
                assert_eq!(pops, 5, "{what}: every dispatch was a pop that hit");
                assert!(f.phases.iter().all(|p| p.start_ns <= p.end_ns), "{what}");
            } else {
                assert!(f.phases.is_empty(), "{what}");
                assert_eq!(f.header.core_to_thread, None, "{what}");
            }
            // Submit spans at level 4: the 5 submits plus none for the root (no alloc here).
            if level.has_orch_phases() {
                let mut idx: Vec<u64> = f.orchestrator.iter().map(|o| o.submit_idx).collect();
                idx.sort();
                assert_eq!(idx, [0, 1, 2, 3, 4], "{what}");
            } else {
                assert!(f.orchestrator.is_empty(), "{what}");
            }
            // The original's tools find the same file under their name.
            let chip = std::fs::read(dir.path().join(CHIP_FILE_NAME)).unwrap();
            assert_eq!(chip, std::fs::read(dir.path().join(FILE_NAME)).unwrap(), "{what}");
        }
    }
}
