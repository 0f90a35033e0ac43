//! Every statement and argument feature in one small workload, with its golden values and the
//! exact wired edges under both runtimes.

use simpler_core::{DepFlags, TaskId};
use simpler_runtime::config::Settings;
use simpler_runtime::RuntimeKind;
use simpler_workloads::{load_str, run_workload, Overrides};

/// splitmix64 (the reference algorithm), to predict the seeded random fill independently.
fn splitmix(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

fn workload() -> String {
    let r: Vec<String> = splitmix(7, 16)
        .iter()
        .map(|u| format!("{}", (100.0 * u).trunc()))
        .collect();
    format!(
        r#"{{
 "constants": {{ "N": 8 }},
 "tensors": [
   {{ "name": "x", "shape": [4, "N"], "fill": {{ "formula": "k" }} }},
   {{ "name": "r", "shape": [16], "dtype": "INT32", "fill": {{ "random": {{ "seed": 7, "min": 0, "max": 100 }} }} }},
   {{ "name": "y", "shape": [4, "N"] }},
   {{ "name": "z", "shape": [32], "dtype": "INT32" }},
   {{ "name": "w", "shape": [16] }},
   {{ "name": "h", "shape": [16], "dtype": "FLOAT16" }}
 ],
 "body": [
   {{ "submit": {{ "label": "spmd", "kernel": "add_scalar", "block_num": 4,
                  "args": [ {{ "input": "x" }}, {{ "output_existing": "y" }} ], "scalars": [ 1.0 ] }} }},
   {{ "submit": {{ "label": "strided", "kernel": "copy",
                  "args": [ {{ "input": "y", "slice": {{ "dim": 1, "step": 2 }} }},
                            {{ "output_existing": "z", "view": {{ "shape": [16] }}, "reshape": [4, 4] }} ] }} }},
   {{ "scope": {{ "mode": "manual", "body": [
     {{ "alloc": {{ "label": "a", "outputs": [ {{ "name": "buf", "shape": [16], "dtype": "INT32" }} ] }} }},
     {{ "submit": {{ "label": "f", "kernel": "fill", "args": [ {{ "output_existing": "buf" }} ],
                    "scalars": [ 5 ], "deps": [ "a" ] }} }},
     {{ "submit": {{ "label": "slow", "kernel": "busy", "scalars": [ 1000 ], "deps_wait": [ "f" ] }} }},
     {{ "submit": {{ "label": "c", "kernel": "copy", "deps": [ "f", "slow" ],
                    "args": [ {{ "input": "buf" }}, {{ "output_existing": "z", "view": {{ "shape": [16], "offsets": [16] }} }} ] }} }}
   ] }} }},
   {{ "submit": {{ "label": "wv", "kernel": "fill", "args": [ {{ "output_existing": "w", "view": {{ "shape": [8] }} }} ], "scalars": [ 2.0 ] }} }},
   {{ "submit": {{ "label": "rv", "kernel": "noop", "args": [ {{ "input": "w", "view": {{ "shape": [8], "offsets": [8] }}, "version": 1 }} ] }} }},
   {{ "submit": {{ "label": "rd", "kernel": "noop", "args": [ {{ "input": "w", "view": {{ "shape": [8], "offsets": [8] }} }} ] }} }},
   {{ "submit": {{ "label": "md", "kernel": "noop", "args": [ {{ "input": "w", "view": {{ "shape": [8] }}, "manual_dep": true }} ] }} }},
   {{ "submit": {{ "label": "rw", "kernel": "noop", "args": [ {{ "input": "w", "view": {{ "shape": [4], "offsets": [2] }} }} ] }} }},
   {{ "submit": {{ "label": "nd", "kernel": "noop", "args": [ {{ "no_dep": "w" }} ] }} }},
   {{ "dummy": {{ "label": "v", "args": [ {{ "input": "r" }} ] }} }},
   {{ "submit": {{ "kernel": "copy", "deps_wait": [ "v" ], "args": [ {{ "input": "r" }}, {{ "output_existing": "h" }} ] }} }}
 ],
 "checks": [
   {{ "tensor": "y", "expect": {{ "formula": "k + 1" }} }},
   {{ "tensor": "z", "view": {{ "shape": [16] }}, "expect": {{ "formula": "(k / 4) * 8 + (k % 4) * 2 + 1" }} }},
   {{ "tensor": "z", "view": {{ "shape": [16], "offsets": [16] }}, "expect": {{ "constant": 5 }}, "tolerance": 0 }},
   {{ "tensor": "w", "expect": {{ "values": [2,2,2,2,2,2,2,2,0,0,0,0,0,0,0,0] }} }},
   {{ "tensor": "h", "expect": {{ "values": [{}] }}, "tolerance": 0 }}
 ]
}}"#,
        r.join(", ")
    )
}

#[test]
fn features_give_their_goldens_and_exact_edges() {
    let w = load_str(&workload(), "features").unwrap();
    assert_eq!(w.task_count(), 14);
    for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let o = Overrides {
            settings: Settings {
                runtime: Some(kind),
                record_fanin: Some(true),
                ..Default::default()
            },
            ..Default::default()
        };
        let out = run_workload(&w, &o).unwrap();
        for c in &out.checks {
            assert!(c.passed(), "{kind:?}: {}", c.describe());
        }
        assert_eq!(out.checks.len(), 5);
        // Submit order: spmd strided [alloc f slow c] wv rv rd md rw nd v copy.
        let ids: Vec<TaskId> = match kind {
            RuntimeKind::Tmr => {
                let mut v = vec![TaskId::new(0, 0), TaskId::new(0, 1)];
                v.extend((0..4).map(|l| TaskId::new(1, l)));
                v.extend((2..10).map(|l| TaskId::new(0, l)));
                v
            }
            RuntimeKind::Hbg => (0..14).map(|l| TaskId::new(0, l)).collect(),
        };
        let (w, wr) = (DepFlags::WAIT, DepFlags::WAIT_RETAIN);
        let mut want: Vec<(TaskId, TaskId, DepFlags)> = [
            (0, 1, w),   // spmd -> strided: tensor map (y)
            (2, 3, wr),  // alloc -> f: explicit (manual scope: no creator edge)
            (3, 4, w),   // f -> slow: deps_wait
            (3, 5, wr),  // f -> c
            (4, 5, wr),  // slow -> c
            (6, 7, w),   // wv -> rv: a newer version overlaps although the slices are disjoint
            (6, 10, w),  // wv -> rw: overlapping slice; rd (disjoint), md (manual_dep), nd (no_dep) get none
            (12, 13, w), // dummy v -> copy: deps_wait
        ]
        .map(|(p, s, f)| (ids[p], ids[s], f))
        .to_vec();
        want.sort();
        assert_eq!(out.report.wired_edges().unwrap(), want, "{kind:?}");
        assert_eq!(out.report.tasks, 14);
        assert_eq!(out.report.completed, 14);
    }
}

#[test]
fn from_deps_of_a_real_capture_with_an_alloc_task_says_what_it_lost() {
    let w = load_str(&workload(), "features").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = Overrides {
        settings: Settings {
            enable_dep_gen: Some(true),
            output_prefix: Some(dir.path().to_path_buf()),
            ..Default::default()
        },
        ..Default::default()
    };
    run_workload(&w, &o).unwrap();
    let re = simpler_workloads::run_from_deps(&dir.path().join("deps.json"), &Overrides::default()).unwrap();
    let fd = re.from_deps.unwrap();
    assert_eq!(fd.tasks, 13, "dep_gen does not capture the alloc task");
    assert_eq!(
        fd.not_reproduced,
        vec![
            "task 4294967296 (ring 1, local 0) is not in tasks[] (an alloc_tensors task: dep_gen does not \
             capture them): its 0 creator/tensormap edge(s) and 1 explicit dep(s) are not reproduced, and \
             its buffers were allocated as external tensors"
                .to_string()
        ]
    );
    // Every other captured pair is wired again, nothing extra: md's manual_dep (which deps.json
    // does not record) is inferred from the missing tensor-map edge.
    assert_eq!(
        fd.approximations,
        vec![
            "1 argument(s) overlap an earlier writer but have no tensor-map edge in the capture: re-run \
             with manual_dep (deps.json does not record manual_dep)"
                .to_string()
        ]
    );
    assert_eq!((fd.edges.captured, fd.edges.wired), (7, 7), "{fd:?}");
    assert_eq!((fd.edges.missing.len(), fd.edges.extra.len()), (0, 0), "{fd:?}");
}
