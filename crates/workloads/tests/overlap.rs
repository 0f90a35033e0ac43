//! deps.json's `overlap` is true containment: a whole write read back transposed, reshaped or
//! through a stepped slice is `covered`; a read reaching past a partial write is `other`.

use simpler_artifacts::deps::{read_deps_file, EdgeSource, Overlap};
use simpler_runtime::config::Settings;
use simpler_runtime::RuntimeKind;
use simpler_workloads::{load_str, run_workload, Overrides};

const WORKLOAD: &str = r#"{
  "tensors": [ { "name": "X", "shape": [8, 16] } ],
  "body": [
    { "submit": { "label": "whole", "kernel": "noop", "args": [ { "output_existing": "X" } ] } },
    { "submit": { "label": "transposed", "kernel": "noop", "args": [ { "input": "X", "transpose": [0, 1] } ] } },
    { "submit": { "label": "stepped", "kernel": "noop",
                  "args": [ { "input": "X", "slice": [ { "dim": 1, "start": 1, "step": 3 }, { "dim": 0, "step": 2 } ] } ] } },
    { "submit": { "label": "reshaped", "kernel": "noop", "args": [ { "input": "X", "reshape": [128] } ] } },
    { "submit": { "label": "top_half", "kernel": "noop",
                  "args": [ { "output_existing": "X", "view": { "shape": [4, 16], "offsets": [0, 0] } } ] } },
    { "submit": { "label": "middle", "kernel": "noop",
                  "args": [ { "input": "X", "view": { "shape": [4, 16], "offsets": [2, 0] }, "transpose": [0, 1] } ] } },
    { "submit": { "label": "inside_top", "kernel": "noop",
                  "args": [ { "input": "X", "view": { "shape": [2, 8], "offsets": [1, 4] }, "transpose": [0, 1] } ] } }
  ]
}"#;

#[test]
fn covered_means_the_producer_holds_every_element_the_consumer_reads() {
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let dir = tempfile::tempdir().unwrap();
        let w = load_str(WORKLOAD, "overlap").unwrap();
        let o = Overrides {
            settings: Settings {
                runtime: Some(kind),
                enable_dep_gen: Some(true),
                output_prefix: Some(dir.path().to_path_buf()),
                ..Default::default()
            },
            ..Default::default()
        };
        run_workload(&w, &o).unwrap();
        let d = read_deps_file(&dir.path().join("deps.json")).unwrap();
        let index = |id: u64| d.tasks.iter().position(|t| t.task_id == id).unwrap();
        let mut got: Vec<(usize, usize, Overlap)> = d
            .edges
            .iter()
            .filter(|e| e.source == EdgeSource::Tensormap)
            .map(|e| (index(e.pred), index(e.succ), e.overlap.unwrap()))
            .collect();
        got.sort_by_key(|&(p, s, _)| (s, p));
        assert_eq!(
            got,
            [
                (0, 1, Overlap::Covered), // whole → transposed
                (0, 2, Overlap::Covered), // whole → stepped in both dimensions
                (0, 3, Overlap::Covered), // whole → reshaped
                (0, 5, Overlap::Covered), // whole → rows 2..6, transposed
                (4, 5, Overlap::Other),   // rows 0..4 → rows 2..6: rows 4 and 5 were not written
                (0, 6, Overlap::Covered),
                (4, 6, Overlap::Covered), // rows 0..4 → a transposed box inside them
            ],
            "{kind:?}"
        );
    }
}
