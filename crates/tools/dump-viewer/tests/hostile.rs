//! A manifest is input: hostile ids, file names and sizes give errors, never a file outside
//! the export folder, a read of another file, or a giant allocation.

use std::fs;
use std::path::Path;

use simpler_artifacts::args_dump::ReadError;
use simpler_dump_viewer::{self as viewer, Args, ErrorKind};

fn manifest(dir: &Path, bin_file: &str, task_id: &str, bin_offset: u64, bin_size: u64) {
    let d = dir.join("args_dump");
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("args.bin"), [0u8; 16]).unwrap();
    fs::write(
        d.join("args_dump.json"),
        format!(
            r#"{{"run_dir":"args_dump","dump_args_level":2,"total_args":1,"bin_file":"{bin_file}",
"args":[{{"task_id":"{task_id}","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_offset":{bin_offset},"bin_size":{bin_size}}}]}}"#
        ),
    )
    .unwrap();
}

fn export(dir: &Path) -> Result<(), simpler_dump_viewer::Error> {
    let args = Args {
        dir: Some(dir.to_path_buf()),
        export: true,
        format: "npy".into(),
        ..Args::default()
    };
    viewer::run_to(&args, &mut Vec::new())
}

#[test]
fn a_task_id_that_is_a_path_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    manifest(dir.path(), "args.bin", "../../../escaped", 0, 16);
    let e = export(dir.path()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::BadEntry { index: 0, .. }), "{e}");
    assert!(!dir.path().join("escaped").exists());
    assert!(fs::read_dir(dir.path())
        .unwrap()
        .all(|e| e.unwrap().file_name() != "escaped"));
    let export_dir = dir.path().join("args_dump/export");
    let written = fs::read_dir(&export_dir).map_or(0, |d| d.count());
    assert_eq!(written, 0);
}

#[test]
fn a_bin_file_that_is_a_path_is_refused() {
    for bad in ["../../etc/passwd", "/etc/passwd", "sub/args.bin", ".."] {
        let dir = tempfile::tempdir().unwrap();
        manifest(dir.path(), bad, "0x0000000000000000", 0, 16);
        let e = export(dir.path()).unwrap_err();
        match e.kind() {
            ErrorKind::Read(ReadError::Invalid { message, .. }) => {
                assert!(
                    message.contains("is not a file name beside the manifest"),
                    "{message}"
                )
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn a_payload_past_the_end_of_args_bin_is_an_error_not_an_allocation() {
    for (offset, size) in [(0, 1u64 << 60), (8, 16), (u64::MAX, 2)] {
        let dir = tempfile::tempdir().unwrap();
        manifest(dir.path(), "args.bin", "0x0000000000000000", offset, size);
        let e = export(dir.path()).unwrap_err();
        match e.kind() {
            ErrorKind::Read(ReadError::Invalid { message, .. }) => {
                assert!(
                    message.contains("lies past the end of the 16-byte file"),
                    "{message}"
                )
            }
            other => panic!("{offset}+{size}: {other:?}"),
        }
    }
}
