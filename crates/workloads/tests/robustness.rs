//! The workload loader and `--from-deps` against structured random mutations of valid files:
//! never a panic, and a loader error names the file and where in it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use proptest::prelude::*;
use simpler_runtime::config::Settings;
use simpler_workloads::{load, run_from_deps, Overrides};

#[path = "../../simpler-artifacts/tests/support/mutate.rs"]
mod mutate;
use mutate::{apply, cases, mutation};

fn file(rel: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(160), ..ProptestConfig::default() })]

    #[test]
    fn workload_files(edits in prop::collection::vec(mutation(), 1..4)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.json");
        std::fs::write(&path, apply(file("../../workloads/chain_barrier.json"), &edits)).unwrap();
        let r = catch_unwind(AssertUnwindSafe(|| load(&path).map(drop)));
        let r = r.map_err(|_| TestCaseError::fail("the loader panicked"))?;
        if let Err(e) = r {
            let m = format!("{e:#}");
            let shown = path.display().to_string();
            prop_assert!(m.starts_with(&shown) || m.starts_with(&format!("reading {shown}")), "{m}");
        }
    }
}

proptest! {
    // Each case re-runs a graph: fewer of them.
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn from_deps_inputs(edits in prop::collection::vec(mutation(), 1..3)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        std::fs::write(&path, apply(file("tests/data/vector_shape_deps.json"), &edits)).unwrap();
        let o = Overrides {
            settings: Settings {
                timeout: Some(std::time::Duration::from_secs(20)),
                ..Default::default()
            },
            ..Default::default()
        };
        let r = catch_unwind(AssertUnwindSafe(|| run_from_deps(&path, &o).map(drop)));
        let r = r.map_err(|_| TestCaseError::fail("--from-deps panicked"))?;
        if let Err(e) = r {
            let m = format!("{e:#}");
            prop_assert!(!m.is_empty());
        }
    }
}
