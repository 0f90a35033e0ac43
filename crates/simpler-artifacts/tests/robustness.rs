//! Every reader against structured random mutations of a valid file (truncation, byte
//! substitution with JSON-significant characters, duplicated and deleted spans): never a panic,
//! and every error names where — the file and a line/column, a line, or an entry path.
//!
//! Case counts keep the suite fast; `PROPTEST_CASES=5000 cargo test -p simpler-artifacts
//! --test robustness --release` is the longer run.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use proptest::prelude::*;

#[path = "support/mutate.rs"]
mod mutate;
use mutate::{apply, cases, mutation};
use simpler_artifacts::deps::read_deps_file;
use simpler_artifacts::name_map::NameMap;
use simpler_artifacts::scope_stats::Reader;
use simpler_artifacts::swimlane::read_swimlane_file;

fn testdata(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Writes `bytes` to a fresh file named `name` and runs `read` on it, catching panics.
fn read_mutated(
    name: &str,
    bytes: &[u8],
    read: impl FnOnce(&Path) -> Result<(), String>,
) -> (PathBuf, Result<(), String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let result = catch_unwind(AssertUnwindSafe(|| read(&path)));
    let result =
        result.unwrap_or_else(|_| panic!("the reader panicked on {}", String::from_utf8_lossy(bytes)));
    // Keep the folder alive until the reader is done.
    drop(dir);
    (path, result)
}

/// `message` starts with `path` and names a line and column (`path:L:C:`), or names an entry.
fn names_the_location(path: &Path, message: &str) -> bool {
    let Some(rest) = message.strip_prefix(&path.display().to_string()) else {
        return false;
    };
    let line_col = rest
        .strip_prefix(':')
        .and_then(|r| r.split_once(':'))
        .is_some_and(|(l, r)| {
            l.parse::<usize>().is_ok() && r.split(':').next().is_some_and(|c| c.parse::<usize>().is_ok())
        });
    line_col || rest.starts_with(": invalid ") || rest.starts_with(": cannot read ")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(192), ..ProptestConfig::default() })]

    #[test]
    fn deps_json(edits in prop::collection::vec(mutation(), 1..4)) {
        let bytes = apply(testdata("tools/deps-viewer/tests/testdata/text/sources_and_overlaps.deps.json"), &edits);
        let (path, r) = read_mutated("deps.json", &bytes, |p| read_deps_file(p).map(drop).map_err(|e| e.to_string()));
        if let Err(m) = r {
            prop_assert!(names_the_location(&path, &m), "{m}");
        }
    }

    #[test]
    fn swimlane_records(edits in prop::collection::vec(mutation(), 1..4)) {
        let bytes = apply(testdata("../tests/interop/swimlane/level4_orchestrator/chip_swimlane_records.json"), &edits);
        let (path, r) = read_mutated("l2_swimlane_records.json", &bytes, |p| {
            read_swimlane_file(p).map(drop).map_err(|e| e.to_string())
        });
        if let Err(m) = r {
            prop_assert!(names_the_location(&path, &m), "{m}");
        }
    }

    #[test]
    fn name_map(edits in prop::collection::vec(mutation(), 1..4)) {
        let bytes = apply(testdata("tools/deps-viewer/tests/testdata/text/vector_example_tmr.name_map.json"), &edits);
        let (path, r) = read_mutated("name_map.json", &bytes, |p| NameMap::load(p).map(drop).map_err(|e| e.to_string()));
        if let Err(m) = r {
            prop_assert!(names_the_location(&path, &m), "{m}");
        }
    }

    #[test]
    fn scope_stats_jsonl(edits in prop::collection::vec(mutation(), 1..4)) {
        let bytes = apply(testdata("tools/scope-stats-plot/tests/data/vector_example.jsonl"), &edits);
        let (_, r) = read_mutated("scope_stats.jsonl", &bytes, |p| {
            let mut reader = Reader::open(p).map_err(|e| e.to_string())?;
            while let Some(s) = reader.next_sample() {
                s.map_err(|e| e.to_string())?;
            }
            Ok(())
        });
        // The reader's errors carry the line ("line N: ..."), or say what is missing overall.
        if let Err(m) = r {
            prop_assert!(m.starts_with("line ") || m.contains("empty") || m.contains("metadata"), "{m}");
        }
    }
}
