//! An earlier trace at the output is removed as the conversion begins (its space freed while
//! the inputs are read), never an input, and never before the records file is known to exist.

use std::fs;

use simpler_swimlane::{convert, ConvertSummary};

use crate::util::{deps_json, level2_records, Row, Trace};

fn records() -> String {
    let row = Row {
        core: 0,
        task: 1,
        reg: 0,
        dispatch: 1.0,
        receive: 1.5,
        start: 1.6,
        end: 2.0,
        finish: 2.5,
    };
    level2_records(&["aiv"], &[row])
}

/// The one Worker View slice of [`records`], read back from the trace at `path`.
fn worker_slices(path: &std::path::Path) -> usize {
    let trace = Trace::read(path);
    trace
        .events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 4)
        .count()
}

fn report(summary: &ConvertSummary) -> String {
    let mut out = Vec::new();
    summary.write_report(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn an_earlier_trace_is_replaced_and_the_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let records_path = dir.path().join("l2_swimlane_records.json");
    fs::write(&records_path, records()).unwrap();
    let out = dir.path().join("merged_swimlane.json");
    let summary = convert(&records_path, None, None, None).unwrap();
    assert!(!summary.replaced_earlier);
    assert!(!report(&summary).contains("was removed"));
    let first = fs::read(&out).unwrap();

    fs::write(&out, "an earlier trace").unwrap();
    let summary = convert(&records_path, None, None, None).unwrap();
    assert!(summary.replaced_earlier);
    assert!(
        report(&summary).contains(&format!(
            "(The earlier {} was removed when the conversion began.)",
            out.display()
        )),
        "{}",
        report(&summary)
    );
    assert_eq!(fs::read(&out).unwrap(), first);
    assert_eq!(worker_slices(&out), 1);
}

/// The price of removing it first: a conversion that fails on its inputs leaves no trace.
#[test]
fn a_conversion_that_fails_on_its_inputs_leaves_no_earlier_trace() {
    let dir = tempfile::tempdir().unwrap();
    let records_path = dir.path().join("l2_swimlane_records.json");
    fs::write(&records_path, records()).unwrap();
    fs::write(
        dir.path().join("deps.json"),
        "{\"tasks\":[],\"edges\":[{\"pred\":\"0\"}]}",
    )
    .unwrap();
    let out = dir.path().join("merged_swimlane.json");
    fs::write(&out, "an earlier trace").unwrap();
    convert(&records_path, None, None, None).unwrap_err();
    assert!(!out.exists());
}

/// A records path that names no file fails before anything is removed.
#[test]
fn a_missing_records_file_keeps_the_earlier_trace() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged_swimlane.json");
    fs::write(&out, "an earlier trace").unwrap();
    let missing = dir.path().join("l2_swimlane_records.json");
    convert(&missing, None, None, None).unwrap_err();
    assert_eq!(fs::read_to_string(&out).unwrap(), "an earlier trace");
}

/// An output given as an input's path is refused before anything is touched (it used to be
/// read first and replaced by the final rename: the run's own records or graph, gone).
#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let records_path = dir.path().join("l2_swimlane_records.json");
    fs::write(&records_path, records()).unwrap();
    let e = convert(&records_path, Some(&records_path), None, None).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("is an input of this command; choose another file"),
        "{e}"
    );
    assert_eq!(fs::read_to_string(&records_path).unwrap(), records());

    let deps = dir.path().join("deps.json");
    let graph = deps_json(&[(1, [-1, 0, -1], 1)], &[]);
    fs::write(&deps, &graph).unwrap();
    let e = convert(&records_path, Some(&deps), Some(&deps), None).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("is an input of this command; choose another file"),
        "{e}"
    );
    assert_eq!(fs::read_to_string(&deps).unwrap(), graph);
}
