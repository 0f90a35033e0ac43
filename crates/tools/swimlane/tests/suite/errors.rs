//! Bad input: every error names the file and, for bad content, where and what.

use std::fs;
use std::path::Path;

use simpler_swimlane::{convert, run, Args};

use crate::util::testdata;

fn vector_records() -> String {
    fs::read_to_string(testdata("vector_example/l2_swimlane_records.json")).unwrap()
}

fn convert_err(records: &Path) -> String {
    let out = records.with_file_name("merged_swimlane.json");
    let err = convert(records, None, None, None).unwrap_err();
    assert!(!out.exists(), "no trace is written on error");
    format!("{err:#}")
}

#[test]
fn missing_records_file() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    assert_eq!(
        convert_err(&records),
        format!(
            "{}: cannot read l2_swimlane_records.json: No such file or directory (os error 2)",
            records.display()
        )
    );
    let err = run(Args {
        records: Some(records.clone()),
        ..Args::default()
    })
    .unwrap_err();
    assert!(format!("{err:#}").starts_with(&format!("{}: cannot read", records.display())));
}

#[test]
fn malformed_records_json() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    let text = vector_records();
    let cut = text.find("\"start_ns\":5100").unwrap();
    fs::write(&records, &text[..cut]).unwrap();
    assert_eq!(
        convert_err(&records),
        format!(
            "{}:6:153: invalid l2_swimlane_records.json: tasks[3]: EOF while parsing a value",
            records.display()
        )
    );
    fs::write(
        &records,
        text.replacen("\"dispatch_ns\":3400,", "\"dispatch_ns\":3400,,", 1),
    )
    .unwrap();
    assert_eq!(
        convert_err(&records),
        format!(
            "{}:4:154: invalid l2_swimlane_records.json: tasks[1]: key must be a string",
            records.display()
        )
    );
}

#[test]
fn record_without_a_needed_field_names_row_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    fs::write(&records, vector_records().replacen("\"end_ns\":4500,", "", 1)).unwrap();
    assert_eq!(
        convert_err(&records),
        format!(
            "{}:4:186: invalid l2_swimlane_records.json: tasks[1]: missing field `end_ns`",
            records.display()
        )
    );
    fs::write(
        &records,
        vector_records().replacen("{\"task_id\":\"4294967297\",\"submit_start_ns\":550,", "{", 1),
    )
    .unwrap();
    assert_eq!(
        convert_err(&records),
        format!(
            "{}:13:21: invalid l2_swimlane_records.json: orchestrator[2]: missing field `task_id`",
            records.display()
        )
    );
    fs::write(
        &records,
        vector_records().replacen("\"scheduler_threads\":2,", "", 1),
    )
    .unwrap();
    assert_eq!(
        convert_err(&records),
        format!(
            "{}:16:2: invalid l2_swimlane_records.json: missing field `scheduler_threads`",
            records.display()
        )
    );
}

#[test]
fn bad_deps_and_name_maps_name_their_files() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    fs::write(&records, vector_records()).unwrap();
    let out = dir.path().join("out.json");

    let missing = dir.path().join("nope/deps.json");
    let err = convert(&records, Some(&out), Some(&missing), None).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "{}: cannot read deps.json: No such file or directory (os error 2)",
            missing.display()
        )
    );

    let sibling = dir.path().join("deps.json");
    fs::write(
        &sibling,
        "{\"tasks\":[],\"tensors\":[],\n\"edges\":[{\"pred\":\"0\",\"arg\":0}]}",
    )
    .unwrap();
    let err = convert(&records, Some(&out), None, None).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "{}:2:29: invalid deps.json: missing field `succ`",
            sibling.display()
        )
    );
    fs::remove_file(&sibling).unwrap();

    let names = dir.path().join("names.json");
    let err = convert(&records, Some(&out), None, Some(&names)).unwrap_err();
    assert!(
        format!("{err:#}").starts_with(&format!("{}: cannot read name map: ", names.display())),
        "{err:#}"
    );
    assert!(!out.exists());
}

#[test]
fn unwritable_output_names_the_output() {
    let dir = tempfile::tempdir().unwrap();
    // The output's folder cannot exist: a file has its name.
    fs::write(dir.path().join("not_a_dir"), "").unwrap();
    let out = dir.path().join("not_a_dir/merged_swimlane.json");
    let records = testdata("vector_example/l2_swimlane_records.json");
    let err = convert(&records, Some(&out), None, None).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!("cannot write {}: File exists (os error 17)", out.display())
    );
}

#[test]
fn errors_have_kinds_that_say_which_input_failed_and_where() {
    use simpler_swimlane::ErrorKind;

    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    fs::write(&records, vector_records().replacen("\"end_ns\":4500,", "", 1)).unwrap();
    let err = convert(&records, None, None, None).unwrap_err();
    match err.kind() {
        ErrorKind::Records(e) => {
            assert_eq!(e.path(), records);
            assert_eq!((e.line(), e.column()), (Some(4), Some(186)));
            assert_eq!(e.missing_field(), Some("end_ns"));
        }
        other => panic!("not a records error: {other:?}"),
    }

    fs::write(&records, vector_records()).unwrap();
    let out = dir.path().join("out.json");
    let sibling = dir.path().join("deps.json");
    fs::write(
        &sibling,
        "{\"tasks\":[],\"tensors\":[],\n\"edges\":[{\"pred\":\"0\",\"arg\":0}]}",
    )
    .unwrap();
    let err = convert(&records, Some(&out), None, None).unwrap_err();
    match err.kind() {
        ErrorKind::Deps(e) => {
            assert_eq!(e.path(), sibling);
            assert_eq!((e.line(), e.column()), (Some(2), Some(29)));
            assert_eq!(e.missing_field(), Some("succ"));
        }
        other => panic!("not a deps error: {other:?}"),
    }
    fs::remove_file(&sibling).unwrap();

    let names = dir.path().join("names.json");
    let err = convert(&records, Some(&out), None, Some(&names)).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::NameMap(_)), "{err:?}");

    fs::write(dir.path().join("not_a_dir"), "").unwrap();
    let out = dir.path().join("not_a_dir/merged_swimlane.json");
    let err = convert(&records, Some(&out), None, None).unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::Publish(e) if e.path == out),
        "{err:?}"
    );
}
