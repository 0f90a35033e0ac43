//! Bad input gives a clear error naming the file and the place, and no trace is written.

use std::fs;
use std::path::Path;

use simpler_swimlane::{convert, ErrorKind};

const GOOD: &str = "{\"chip_swimlane_level\":1,\"metadata\":{\"clock_freq_hz\":1000000000,\"core_types\":[\"aiv\"]},\n\"aicore_tasks\":[[0,1,0,10,20,0]]}\n";

fn convert_err(records: &Path, deps: Option<&Path>, names: Option<&Path>) -> simpler_swimlane::Error {
    let err = convert(records, None, deps, names).unwrap_err();
    assert!(
        !records.with_file_name("merged_swimlane.json").exists(),
        "no trace is written on error"
    );
    err
}

#[test]
fn missing_records_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("chip_swimlane_records.json");
    let err = convert_err(&records, None, None);
    assert!(
        format!("{err:#}").starts_with(&format!("{}: cannot read", records.display())),
        "{err:#}"
    );
}

#[test]
fn a_bad_row_names_file_line_column_and_row() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("chip_swimlane_records.json");
    fs::write(
        &records,
        "{\"chip_swimlane_level\":1,\"metadata\":{\"clock_freq_hz\":1000000000},\n\"aicore_tasks\":[\n[0,1,0,10,20,0],\n[0,2,1,30,40,0],\n[0,3,2,50,60,0],\n[0,4,3,\"x\",80,0]]}\n",
    )
    .unwrap();
    let err = convert_err(&records, None, None);
    assert_eq!(
        err.to_string(),
        format!(
            "{}:6:10: invalid chip_swimlane_records.json: aicore_tasks[3]: invalid type: string \"x\", expected an integer",
            records.display()
        )
    );
    match err.kind() {
        ErrorKind::Records(e) => assert_eq!((e.line(), e.column()), (Some(6), Some(10))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_level_the_original_does_not_record_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("chip_swimlane_records.json");
    fs::write(
        &records,
        GOOD.replace("\"chip_swimlane_level\":1", "\"chip_swimlane_level\":5"),
    )
    .unwrap();
    assert_eq!(
        convert_err(&records, None, None).to_string(),
        format!(
            "{}: invalid chip_swimlane_records.json: chip_swimlane_level 5 is not a recorded level (1 to 4)",
            records.display()
        )
    );
}

#[test]
fn bad_deps_and_name_maps_name_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("chip_swimlane_records.json");
    fs::write(&records, GOOD).unwrap();
    let deps = dir.path().join("deps.json");
    fs::write(
        &deps,
        "{\"tasks\":[],\"tensors\":[],\n\"edges\":[{\"pred\":\"0\"}]}",
    )
    .unwrap();
    let err = convert_err(&records, None, None);
    assert!(matches!(err.kind(), ErrorKind::Deps(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2:21: invalid deps.json: edges[0]: missing field `succ`",
            deps.display()
        )
    );
    fs::remove_file(&deps).unwrap();
    let names = dir.path().join("names.json");
    fs::write(&names, "[1, 2]").unwrap();
    let err = convert_err(&records, None, Some(&names));
    assert!(matches!(err.kind(), ErrorKind::NameMap(_)), "{err:?}");
    assert!(err.to_string().starts_with(&names.display().to_string()), "{err}");
}

#[test]
fn an_unwritable_output_names_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("chip_swimlane_records.json");
    fs::write(&records, GOOD).unwrap();
    let out = records.join("trace.json");
    let err = convert(&records, Some(&out), None, None).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Publish(_)), "{err:?}");
    assert!(err.to_string().contains(&out.display().to_string()), "{err}");
}
