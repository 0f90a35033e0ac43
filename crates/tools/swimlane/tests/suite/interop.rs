//! The interop folder `tests/interop/swimlane/` (its README says what each case holds): every
//! case's records file, converted with its sibling deps.json and name map, must give exactly
//! the golden trace, statistics and reader notes in its `expected/` folder, and the same trace
//! again when its sections are formatted on several threads in chunks of one or two items.
//!
//! `SIMPLER_BLESS=1 cargo test -p simpler-swimlane --test tests interop` rewrites the goldens;
//! read the diff before committing.

use std::fs;
use std::path::Path;

use simpler_artifacts::swimlane::find_in;
use simpler_swimlane::{Args, Parallelism};

use crate::util::interop_dir;

/// Compares `actual` with the golden file at `path`, or rewrites it under `SIMPLER_BLESS`.
fn check_golden(path: &Path, actual: &str) -> Option<String> {
    if std::env::var_os("SIMPLER_BLESS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, actual).unwrap();
        return None;
    }
    let expected = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (expected != actual).then(|| {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        format!(
            "{} differs from the conversion at line {} (SIMPLER_BLESS=1 rewrites it):\n  golden: {:?}\n  actual: {:?}",
            path.display(),
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        )
    })
}

#[test]
fn every_case_gives_its_golden_trace_statistics_and_notes() {
    let mut cases: Vec<_> = fs::read_dir(interop_dir())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert_eq!(
        cases.len(),
        5,
        "the cases listed in tests/interop/swimlane/README.md"
    );
    let mut problems = Vec::new();
    for case in &cases {
        let work = tempfile::tempdir().unwrap();
        let records = find_in(case).unwrap_or_else(|| panic!("{}: no records file", case.display()));
        for file in [
            records.as_path(),
            &case.join("deps.json"),
            &case.join("name_map.json"),
        ] {
            fs::copy(file, work.path().join(file.file_name().unwrap())).unwrap();
        }
        let copy = work.path().join(records.file_name().unwrap());
        let summary = simpler_swimlane::convert(&copy, None, None, None).unwrap();
        let trace = fs::read_to_string(&summary.output).unwrap();
        // Formatted on more threads than cores, in chunks of one or two items: the same bytes.
        for (threads, max_chunk_items) in [(3, 1), (2, 2)] {
            let parallelism = Parallelism {
                threads,
                max_chunk_items,
            };
            let out = work
                .path()
                .join(format!("chunked_{threads}_{max_chunk_items}.json"));
            let args = Args {
                records: None,
                output: Some(out.clone()),
                deps_json: None,
                func_names: None,
                overhead: false,
            };
            let again = simpler_swimlane::convert_parallel(&copy, &args, parallelism).unwrap();
            assert_eq!(again.flows, summary.flows, "{}", case.display());
            assert_eq!(again.slices, summary.slices, "{}", case.display());
            problems.extend(check_golden(
                &case.join("expected/merged_swimlane.json"),
                &fs::read_to_string(&out).unwrap(),
            ));
        }
        serde_json::from_str::<serde_json::Value>(&trace).expect("the trace is JSON");
        let mut stats = Vec::new();
        summary.write_statistics(&mut stats).unwrap();
        let notes: String = summary.notes.iter().map(|n| format!("{n}\n")).collect();
        let expected = case.join("expected");
        for (name, actual) in [
            ("merged_swimlane.json", trace),
            ("statistics.txt", String::from_utf8(stats).unwrap()),
            ("notes.txt", notes),
        ] {
            problems.extend(check_golden(&expected.join(name), &actual));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
