//! A manifest is input: hostile ids, file names and sizes give errors, never a file outside
//! the export folder, a read of another file, or a giant allocation.

use std::fs;
use std::path::Path;

use simpler_artifacts::args_dump::ReadError;
use simpler_artifacts::testing::{put, run_json};
use simpler_dump_viewer::{self as viewer, Args, ErrorKind};

fn manifest(dir: &Path, bin_file: &str, task_id: &str, bin_offset: u64, bin_size: u64) {
    manifest_with(
        dir,
        bin_file,
        &format!(
            r#"{{"task_id":"{task_id}","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_offset":{bin_offset},"bin_size":{bin_size}}}"#
        ),
    );
}

/// A manifest of the one entry `entry` (a JSON object) over 16 zero bytes in `bin_file`.
fn manifest_with(dir: &Path, bin_file: &str, entry: &str) {
    let d = dir.join("args_dump");
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("args.bin"), [0u8; 16]).unwrap();
    fs::write(
        d.join("args_dump.json"),
        format!(
            r#"{{"run_dir":"args_dump","dump_args_level":2,"total_args":1,"bin_file":"{bin_file}",
"args":[{entry}]}}"#
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
    // Refused when the manifest is read (it was, before, when the export named its file).
    match e.kind() {
        ErrorKind::Read(ReadError::Invalid { message, .. }) => assert_eq!(
            message,
            "args[0]: task_id `../../../escaped` is not a task id (hex, `0x0000000100000002`)"
        ),
        other => panic!("{other:?}"),
    }
    assert!(!dir.path().join("escaped").exists());
    assert!(fs::read_dir(dir.path())
        .unwrap()
        .all(|e| e.unwrap().file_name() != "escaped"));
    let export_dir = dir.path().join("args_dump/export");
    let written = fs::read_dir(&export_dir).map_or(0, |d| d.count());
    assert_eq!(written, 0);
}

/// Found by a review: an entry with a payload and no `bin_offset` was read at offset 0, so it
/// showed (and `--expect` checked) another entry's bytes. An entry without a payload may leave
/// it out.
#[test]
fn a_payload_without_its_offset_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let entry = r#"{"task_id":"0x0000000000000000","func_id":[0],"arg_index":0,"role":"input",
"stage":"before_dispatch","kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_size":16}"#;
    manifest_with(dir.path(), "args.bin", entry);
    match export(dir.path()).unwrap_err().kind() {
        ErrorKind::Read(ReadError::Invalid { message, .. }) => assert_eq!(
            message,
            "args[0]: bin_size 16 but no bin_offset: where its payload starts in the payload file \
             is unknown"
        ),
        other => panic!("{other:?}"),
    }
    manifest_with(dir.path(), "args.bin", &entry.replace("16}", "0}"));
    export(dir.path()).unwrap();
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

/// One UINT8 tensor entry of `n` elements, `bin_size` n, at `offset`.
fn bytes_entry(offset: u64, n: u64) -> String {
    format!(
        r#"{{"task_id":"0x0000000000000000","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"tensor","dtype":"UINT8","shape":[{n}],"bin_offset":{offset},"bin_size":{n}}}"#
    )
}

#[test]
fn a_payload_past_the_end_of_args_bin_is_an_error_not_an_allocation() {
    for (offset, size) in [(0, 1u64 << 60), (8, 16), (u64::MAX, 2)] {
        let dir = tempfile::tempdir().unwrap();
        manifest_with(dir.path(), "args.bin", &bytes_entry(offset, size));
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

/// Found by a review: the export's completeness test used `numel`, its header the shape, so a
/// 16-byte payload went out under a 1000 × 1000 header NumPy cannot load.
#[test]
fn a_numel_that_is_not_the_shapes_product_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    manifest_with(
        dir.path(),
        "args.bin",
        r#"{"task_id":"0x0000000000000000","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"tensor","dtype":"FLOAT32","shape":[1000,1000],"numel":4,"bin_offset":0,"bin_size":16}"#,
    );
    match export(dir.path()).unwrap_err().kind() {
        ErrorKind::Read(ReadError::Invalid { message, .. }) => assert_eq!(
            message,
            "args[0]: numel 4 is not the product of its shape [1000, 1000]"
        ),
        other => panic!("{other:?}"),
    }
}

/// Found by a review: a scalar whose dtype was written in lower case was listed as 2.0 but
/// exported as the bits of 0.0 (its dtype compared as written, not upper-cased).
#[test]
fn a_lower_case_dtype_is_read_as_its_upper_case_name() {
    let dir = tempfile::tempdir().unwrap();
    manifest_with(
        dir.path(),
        "args.bin",
        r#"{"task_id":"0x0000000000000000","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"scalar","dtype":"float32","value":2.0,"bin_offset":0,"bin_size":0}"#,
    );
    export(dir.path()).unwrap();
    let files: Vec<_> = fs::read_dir(dir.path().join("args_dump/export"))
        .unwrap()
        .map(|e| fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(files.len(), 1);
    let npy = &files[0];
    assert!(String::from_utf8_lossy(npy).contains("'descr': '<f4'"));
    assert_eq!(npy[npy.len() - 4..], 2.0f32.to_le_bytes());
}

/// Found by a review: a dump whose run stopped early (`complete: false`, nothing counted as
/// dropped) was listed without a word.
#[test]
fn a_dump_its_run_did_not_finish_is_listed_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let entry = r#"{"task_id":"0x0000000000000001","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_offset":0,"bin_size":16}"#;
    manifest_with(dir.path(), "args.bin", entry);
    let json = dir.path().join("args_dump/args_dump.json");
    let text = fs::read_to_string(&json)
        .unwrap()
        .replacen('{', r#"{"complete":false,"#, 1);
    fs::write(&json, text).unwrap();
    let mut out = Vec::new();
    let args = Args {
        dir: Some(dir.path().to_path_buf()),
        ..Args::default()
    };
    viewer::run_to(&args, &mut out).unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("WARNING: the dump is incomplete: args_dump.json says complete: false"),
        "{out}"
    );
}

/// The reader's message for the manifest of the one FLOAT32 entry of shape `shape`, `bin_size`
/// and `truncated` (`Ok` when it reads).
fn bin_size_check(shape: &str, bin_size: u64, truncated: bool) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    manifest_with(
        dir.path(),
        "args.bin",
        &format!(
            r#"{{"task_id":"0x0000000000000000","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"tensor","dtype":"FLOAT32","shape":{shape},"bin_offset":0,"bin_size":{bin_size},"truncated":{truncated}}}"#
        ),
    );
    match viewer::open(&dir.path().join("args_dump")) {
        Ok(_) => Ok(()),
        Err(e) => match e.kind() {
            ErrorKind::Read(ReadError::Invalid { message, .. }) => Err(message.clone()),
            other => panic!("{other:?}"),
        },
    }
}

/// Found by a review: a `bin_size` that was not the tensor's bytes (half of them, an odd count,
/// 2 GiB for 16384 f32) was read and compared as if it were.
#[test]
fn a_bin_size_that_is_not_the_tensors_bytes_is_refused() {
    assert_eq!(bin_size_check("[4]", 16, false), Ok(()));
    assert_eq!(bin_size_check("[4]", 0, false), Ok(()));
    assert_eq!(bin_size_check("[4]", 8, true), Ok(()));
    assert_eq!(
        bin_size_check("[4]", 8, false),
        Err(
            "args[0]: bin_size 8 does not match numel 4 × 4 bytes (FLOAT32) = 16: expected 0, 16, \
             or less with truncated: true (truncated is false)"
                .into()
        )
    );
    assert_eq!(
        bin_size_check("[2, 2]", 15, false),
        Err(
            "args[0]: bin_size 15 does not match numel 4 × 4 bytes (FLOAT32) = 16: expected 0, 16, \
             or less with truncated: true (truncated is false)"
                .into()
        )
    );
    assert_eq!(
        bin_size_check("[1]", 16, true),
        Err(
            "args[0]: bin_size 16 does not match numel 1 × 4 bytes (FLOAT32) = 4: expected 0, 4, \
             or less with truncated: true"
                .into()
        )
    );
    assert_eq!(
        bin_size_check("[1099511627776, 1099511627776]", 16, false),
        Err("args[0]: the element count of shape [1099511627776, 1099511627776] overflows u64".into())
    );
    assert_eq!(
        bin_size_check("[4611686018427387904]", 16, false),
        Err("args[0]: numel 4611686018427387904 × 4 bytes (FLOAT32) overflows u64".into())
    );
}

/// Found by a review: `bin_file: null` left every payload empty, so a comparison saw 0 elements.
#[test]
fn a_payload_without_a_payload_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    manifest(dir.path(), "args.bin", "0x0000000000000000", 0, 16);
    let json = dir.path().join("args_dump/args_dump.json");
    let text = fs::read_to_string(&json)
        .unwrap()
        .replace(r#""bin_file":"args.bin""#, r#""bin_file":null"#);
    fs::write(&json, text).unwrap();
    match viewer::open(&dir.path().join("args_dump")).unwrap_err().kind() {
        ErrorKind::Read(ReadError::Invalid { message, .. }) => assert_eq!(
            message,
            "args[0]: bin_size 16 but bin_file is null: an entry of a dump without a payload file has bin_size 0"
        ),
        other => panic!("{other:?}"),
    }
}

/// Found by a review: an 8 TiB `bin_size` over a sparse 8 TiB `args.bin` aborted the process
/// ("memory allocation of 8796093022208 bytes failed"). Skipped where the file system cannot
/// hold such a sparse file, or where the kernel grants any allocation (overcommit 1).
#[test]
fn a_huge_payload_over_a_sparse_file_is_an_error_not_an_abort() {
    let n = 1u64 << 43;
    if fs::read_to_string("/proc/sys/vm/overcommit_memory").is_ok_and(|s| s.trim() == "1") {
        eprintln!("SKIPPED: vm.overcommit_memory is 1, an 8 TiB allocation would be granted");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    manifest_with(dir.path(), "args.bin", &bytes_entry(0, n));
    let bin = fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("args_dump/args.bin"))
        .unwrap();
    if let Err(e) = bin.set_len(n) {
        eprintln!("SKIPPED: the file system holds no sparse file of {n} bytes: {e}");
        return;
    }
    let e = export(dir.path()).unwrap_err();
    match e.kind() {
        ErrorKind::Read(ReadError::Invalid { message, .. }) => assert!(
            message.starts_with(
                "the payload of task 0x0000000000000000 arg 0 (8796093022208 bytes) cannot be held in memory: "
            ),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
}

/// Runs `f` on another thread and fails the test when it takes more than 20 s (a FIFO blocks
/// `open` forever).
fn within_20s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("still blocked after 20 s")
}

fn mkfifo(path: &Path) {
    let _ = fs::remove_file(path);
    let ok = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(ok.success());
}

/// Found by a review: a FIFO named args.bin (or args_dump.json) blocked the viewer in `open`
/// forever.
#[test]
fn a_fifo_in_place_of_a_dump_file_is_refused_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    manifest(dir.path(), "args.bin", "0x0000000000000000", 0, 16);
    let bin = dir.path().join("args_dump/args.bin");
    mkfifo(&bin);
    let d = dir.path().to_path_buf();
    let e = within_20s(move || export(&d).unwrap_err().to_string());
    assert_eq!(
        e,
        format!(
            "{}: is a named pipe (FIFO), expected a regular file",
            bin.display()
        )
    );
    let json = dir.path().join("args_dump/args_dump.json");
    mkfifo(&json);
    let d = dir.path().join("args_dump");
    let e = within_20s(move || viewer::open(&d).unwrap_err().to_string());
    assert_eq!(
        e,
        format!(
            "{}: is a named pipe (FIFO), expected a regular file",
            json.display()
        )
    );
}

/// Found by a review: a manifest that is not UTF-8 said "stream did not contain valid UTF-8",
/// neither where nor (in the viewer) which check.
#[test]
fn a_manifest_that_is_not_utf8_says_where() {
    let dir = tempfile::tempdir().unwrap();
    manifest(dir.path(), "args.bin", "0x0000000000000000", 0, 16);
    let json = dir.path().join("args_dump/args_dump.json");
    let mut bytes = fs::read(&json).unwrap();
    let at = bytes.windows(7).position(|w| w == b"FLOAT32").unwrap() + 2;
    bytes[at] = 0xff;
    fs::write(&json, &bytes).unwrap();
    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    let column = at - bytes[..at].iter().rposition(|&b| b == b'\n').unwrap();
    assert_eq!(line, 3);
    let e = viewer::open(&dir.path().join("args_dump")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:{line}:{column}: not valid UTF-8 at byte offset {at}: a manifest is UTF-8 JSON",
            json.display()
        )
    );
}

/// Found by a review: `total_args: 999` over 18 entries read without a word. The counts are
/// warnings (the original's files must still read), each naming both numbers.
#[test]
fn top_level_counts_that_disagree_with_the_entries_are_named() {
    let dir = tempfile::tempdir().unwrap();
    manifest(dir.path(), "args.bin", "0x0000000000000000", 0, 16);
    let d = dir.path().join("args_dump");
    let dump = viewer::open(&d).unwrap();
    let json = d.join("args_dump.json").display().to_string();
    assert_eq!(
        dump.count_mismatches(),
        [
            format!("{json}: before_dispatch is 0 but args has 1 entries with stage before_dispatch"),
            format!("{json}: input_args is 0 but args has 1 entries with role input")
        ]
    );
    let text = fs::read_to_string(d.join("args_dump.json")).unwrap().replacen(
        r#""total_args":1,"#,
        r#""total_args":999,"before_dispatch":1,"input_args":1,"truncated_args":2,"#,
        1,
    );
    fs::write(d.join("args_dump.json"), text).unwrap();
    let dump = viewer::open(&d).unwrap();
    assert_eq!(
        dump.count_mismatches(),
        [
            format!("{json}: total_args is 999 but args has 1 entries"),
            format!("{json}: truncated_args is 2 but args has 0 entries with truncated: true")
        ]
    );
}

/// The viewer's output and result for `args` over `dir`.
fn view(dir: &Path, args: Args) -> (String, Result<(), String>) {
    let mut out = Vec::new();
    let r = viewer::run_to(
        &Args {
            dir: Some(dir.to_path_buf()),
            format: "npy".into(),
            ..args
        },
        &mut out,
    );
    (String::from_utf8(out).unwrap(), r.map_err(|e| e.to_string()))
}

/// Found by a review: the original's FP8/FP4 tensors were shown and compared as their raw
/// byte values (`--expect 1` said "got 56" of FP8E4M3FN 1.0). They are bytes, shown in hex as
/// the original's viewer shows them, and a comparison refuses them.
#[test]
fn fp8_and_fp4_are_shown_as_bytes_and_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    manifest_with(
        dir.path(),
        "args.bin",
        r#"{"task_id":"0x0000000000000000","func_id":[0],"arg_index":0,"role":"input","stage":"before_dispatch",
"kind":"tensor","dtype":"FP8E4M3FN","shape":[4],"bin_offset":0,"bin_size":4}"#,
    );
    fs::write(dir.path().join("args_dump/args.bin"), [0x38, 0x40, 0xb8, 0x7f]).unwrap();
    let (out, r) = view(dir.path(), Args::default());
    r.unwrap();
    assert!(
        out.ends_with(
            "[0] task 0x0000000000000000 before input arg 0 FP8E4M3FN shape [4]\n  \
             (dtype FP8E4M3FN is not decoded: bytes in hex) [38 40 b8 7f]\n"
        ),
        "{out}"
    );
    let (out, r) = view(
        dir.path(),
        Args {
            element: Some("2".into()),
            ..Args::default()
        },
    );
    r.unwrap();
    assert!(out.ends_with("  element [2] (flat 2) = bytes b8\n"), "{out}");
    let (out, r) = view(
        dir.path(),
        Args {
            expect: Some("1".parse().unwrap()),
            ..Args::default()
        },
    );
    assert_eq!(
        (out.as_str(), r),
        (
            "",
            Err("dtype FP8E4M3FN cannot be decoded for a comparison".into())
        )
    );
    // FP4E2M1, two elements a byte: no element size, so no bin_size check and no --element.
    let json = dir.path().join("args_dump/args_dump.json");
    let text = fs::read_to_string(&json)
        .unwrap()
        .replace("FP8E4M3FN", "FP4E2M1")
        .replace("\"shape\":[4]", "\"shape\":[8]");
    fs::write(&json, text).unwrap();
    let (out, r) = view(dir.path(), Args::default());
    r.unwrap();
    assert!(
        out.ends_with("  (dtype FP4E2M1 is not decoded: bytes in hex) [38 40 b8 7f]\n"),
        "{out}"
    );
    let (_, r) = view(
        dir.path(),
        Args {
            element: Some("2".into()),
            ..Args::default()
        },
    );
    assert_eq!(r, Err("dtype FP4E2M1 cannot be decoded for --element".into()));
}

/// A dump in `dir`/args_dump of `entries` (JSON objects; `{i}` in each becomes its arg index)
/// over `bin`.
fn dump_of(dir: &Path, entries: &[&str], bin: &[u8]) -> std::path::PathBuf {
    let d = dir.join("args_dump");
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("args.bin"), bin).unwrap();
    let args: Vec<String> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            format!(
                r#"{{"task_id":"0x0000000000000000","func_id":[0],"arg_index":{i},"role":"input","stage":"before_dispatch",{e}}}"#
            )
        })
        .collect();
    fs::write(
        d.join("args_dump.json"),
        format!(
            r#"{{"run_dir":"args_dump","dump_args_level":2,"total_args":{},"before_dispatch":{0},"input_args":{0},
"bin_file":"args.bin","args":[{}]}}"#,
            entries.len(),
            args.join(",")
        ),
    )
    .unwrap();
    d
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Found by a review: scalars were compared as raw bits (FLOAT32 2.0 vs 2.25 printed "this
/// 1073741800 vs other 1074790400"), a u64 above 2^53 through f64 (equal to its neighbour),
/// and a "$Inf" scalar exported as NaN.
#[test]
fn scalars_compare_and_export_by_their_decoded_value() {
    let this = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let d = dump_of(
        this.path(),
        &[
            r#""kind":"scalar","dtype":"FLOAT32","value":2.0"#,
            r#""kind":"scalar","dtype":"UINT64","value":4607182418800017408"#,
            r#""kind":"scalar","dtype":"FLOAT32","value":"$Inf""#,
        ],
        &[],
    );
    dump_of(
        other.path(),
        &[
            r#""kind":"scalar","dtype":"FLOAT32","value":2.25"#,
            r#""kind":"scalar","dtype":"UINT64","value":4607182418800017409"#,
            r#""kind":"scalar","dtype":"FLOAT32","value":"$Inf""#,
        ],
        &[],
    );
    let (out, r) = view(
        this.path(),
        Args {
            diff_with: Some(other.path().to_path_buf()),
            ..Args::default()
        },
    );
    assert_eq!(
        out,
        "before task 0x0000000000000000 input arg 0: DIFFERS: scalar this 2 vs other 2.25; |diff| 0.25\n\
         before task 0x0000000000000000 input arg 1: DIFFERS: scalar this 4607182418800017408 vs other \
         4607182418800017409; |diff| 1\n\
         before task 0x0000000000000000 input arg 2: equal (scalar inf)\n"
    );
    assert_eq!(
        r,
        Err("2 compared entries differ, are incomplete or are missing".into())
    );
    let dump = viewer::open(&d).unwrap();
    let files = viewer::export(&dump, &[2], viewer::Format::Npy, &this.path().join("x")).unwrap();
    let npy = fs::read(&files[0]).unwrap();
    assert_eq!(npy[npy.len() - 4..], f32::INFINITY.to_le_bytes());
}

/// Found by a review: an entry without a payload (level 3's unselected tensors, the original's
/// overwritten ones) printed "equal (0 elements)", a truncated one "equal" on its kept
/// elements, and --expect skipped scalars; each exited 0.
#[test]
fn comparisons_pass_only_on_data_they_compared() {
    let dir = tempfile::tempdir().unwrap();
    let tensor = r#""kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_offset":0,"bin_size":0"#;
    dump_of(dir.path(), &[tensor], &[]);
    let expect = |dir: &Path, v: &str| {
        view(
            dir,
            Args {
                expect: Some(v.parse().unwrap()),
                ..Args::default()
            },
        )
    };
    assert_eq!(
        expect(dir.path(), "0"),
        (
            "before task 0x0000000000000000 input arg 0: no data (bin_size 0); not compared\n".into(),
            Err("nothing compared: none of the 1 matched entries has data".into())
        )
    );
    // Against a dump whose twin was overwritten: not compared, nothing to compare.
    let other = tempfile::tempdir().unwrap();
    dump_of(
        other.path(),
        &[r#""kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_size":0,"overwritten":true"#],
        &[],
    );
    let full = tempfile::tempdir().unwrap();
    let full_tensor = r#""kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_offset":0,"bin_size":16"#;
    dump_of(full.path(), &[full_tensor], &f32s(&[1.0; 4]));
    assert_eq!(
        view(
            full.path(),
            Args {
                diff_with: Some(other.path().to_path_buf()),
                ..Args::default()
            }
        ),
        (
            "before task 0x0000000000000000 input arg 0: DATA OVERWRITTEN (host too slow) in the other \
             dump; not compared\n"
                .into(),
            Err("nothing compared: none of the 1 matched entries has data in both dumps".into())
        )
    );
    // A truncated payload: INCOMPLETE, and not a pass, whether its kept elements match or not.
    let cut = tempfile::tempdir().unwrap();
    let truncated =
        r#""kind":"tensor","dtype":"FLOAT32","shape":[4],"bin_offset":0,"bin_size":8,"truncated":true"#;
    dump_of(cut.path(), &[truncated], &f32s(&[1.0, 1.0]));
    assert_eq!(
        expect(cut.path(), "1"),
        (
            "before task 0x0000000000000000 input arg 0: INCOMPLETE: kept 2 of 4 elements (truncated); \
             the 2 elements compared are equal\n"
                .into(),
            Err("1 compared entries differ, are incomplete or are missing".into())
        )
    );
    assert_eq!(
        view(
            full.path(),
            Args {
                diff_with: Some(cut.path().to_path_buf()),
                ..Args::default()
            }
        )
        .0,
        "before task 0x0000000000000000 input arg 0: INCOMPLETE: other kept 2 of 4 elements (truncated); \
         the 2 elements compared are equal\n"
    );
    // Scalars under --expect: compared by value. With a tensor without data beside them, the
    // scalar alone decides.
    let s = tempfile::tempdir().unwrap();
    dump_of(
        s.path(),
        &[r#""kind":"scalar","dtype":"FLOAT32","value":2.0"#, tensor],
        &[],
    );
    assert_eq!(
        expect(s.path(), "2"),
        (
            "before task 0x0000000000000000 input arg 0: equal (scalar 2)\n\
             before task 0x0000000000000000 input arg 1: no data (bin_size 0); not compared\n"
                .into(),
            Ok(())
        )
    );
    assert_eq!(
        expect(s.path(), "3").0,
        "before task 0x0000000000000000 input arg 0: DIFFERS: scalar got 2 vs expected 3; |diff| 1\n\
         before task 0x0000000000000000 input arg 1: no data (bin_size 0); not compared\n"
    );
}

/// Found by a review: with no folder, the viewer read the newest `outputs/*/args_dump` by its
/// file's time, an earlier run's when the newest run dumped nothing. The newest run's dump is
/// read, or the error says why it has none and where the earlier one is.
#[test]
fn the_default_dump_is_the_newest_runs_or_an_error_naming_the_earlier_one() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("run_a"), dir.path().join("run_b"));
    let err = viewer::locate_under(dir.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "no args_dump/args_dump.json found under {}; pass the folder of one (run with \
             --dump-args to produce one)",
            dir.path().display()
        )
    );
    put(&a.join("run.json"), &run_json("completed", "[]"), 10);
    put(&a.join("args_dump/args_dump.json"), "{}", 9);
    assert_eq!(viewer::locate_under(dir.path()).unwrap(), a.join("args_dump"));
    put(&b.join("run.json"), &run_json("completed", "[]"), 20);
    let err = viewer::locate_under(dir.path()).unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::NotInNewestRun(_)), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "the newest run, {}, has no args_dump/args_dump.json: its run.json lists no args_dump: \
             the run did not ask for it; the newest args_dump/args_dump.json is {}: pass it to use it",
            b.display(),
            a.join("args_dump/args_dump.json").display()
        )
    );
    put(&b.join("args_dump/args_dump.json"), "{}", 19);
    assert_eq!(viewer::locate_under(dir.path()).unwrap(), b.join("args_dump"));
}

/// A dump of no entry at `dir`/args_dump whose top-level keys start with `keys` (`"k":v,`).
fn empty_dump(dir: &Path, keys: &str) -> std::path::PathBuf {
    let d = dir.join("args_dump");
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("args.bin"), []).unwrap();
    fs::write(
        d.join("args_dump.json"),
        format!(r#"{{{keys}"run_dir":"args_dump","total_args":0,"bin_file":"args.bin","args":[]}}"#),
    )
    .unwrap();
    d
}

/// Found by a review: a dump of no entry (its run stopped on a fatal before any task was
/// dumped) said "no entry matches the filters" with no filter given. It says the dump holds no
/// entries, and why, by its args_dump.json and its run's run.json.
#[test]
fn an_empty_dump_says_it_holds_no_entries_and_why() {
    let cases = [
        (
            r#""dump_args_level":2,"complete":false,"#,
            None,
            "args_dump.json says complete: false: the run that wrote it stopped before any task was dumped",
        ),
        (
            r#""dump_args_level":2,"complete":false,"#,
            Some("timeout"),
            "its run r timed out before any task was dumped (args_dump.json says complete: false)",
        ),
        (
            r#""dump_args_level":2,"dropped_records":3,"dropped_bytes":48,"complete":false,"#,
            None,
            "all 3 of its records were dropped (48 payload bytes; args_dump.json counts them)",
        ),
        (
            r#""dump_args_level":1,"complete":true,"#,
            None,
            "at level 1 only the arguments a task selects are dumped, and no task of the run selected any",
        ),
        (
            r#""dump_args_level":2,"complete":true,"#,
            None,
            "the run that wrote it captured no argument (it ran no task with a kernel)",
        ),
    ];
    for (keys, status, why) in cases {
        let dir = tempfile::tempdir().unwrap();
        let d = empty_dump(dir.path(), keys);
        if let Some(status) = status {
            let files = r#"[{"name":"args_dump","outcome":"partial","reason":"x","files":[
{"name":"args_dump/args_dump.json","bytes":1},{"name":"args_dump/args.bin","bytes":0}]}]"#;
            put(&dir.path().join("run.json"), &run_json(status, files), 0);
        }
        for args in [
            Args::default(),
            Args {
                index: Some(0),
                ..Args::default()
            },
        ] {
            assert_eq!(
                view(dir.path(), args),
                (
                    String::new(),
                    Err(format!("{}/args_dump.json holds no entries: {why}", d.display()))
                ),
                "{keys}"
            );
        }
    }
}

/// Found by a review: `--diff-with` a dump that is incomplete reported its missing entries as
/// plain differences. The report says they are explained by that dump being incomplete.
#[test]
fn entries_missing_in_an_incomplete_other_dump_are_said_to_be_explained_by_it() {
    let this = tempfile::tempdir().unwrap();
    let tensor = r#""kind":"tensor","dtype":"FLOAT32","shape":[1],"bin_offset":0,"bin_size":4"#;
    dump_of(this.path(), &[tensor, tensor], &f32s(&[1.0]));
    let other = tempfile::tempdir().unwrap();
    let d = empty_dump(other.path(), r#""dump_args_level":2,"complete":false,"#);
    let (out, r) = view(
        this.path(),
        Args {
            diff_with: Some(other.path().to_path_buf()),
            ..Args::default()
        },
    );
    assert_eq!(
        out,
        format!(
            "before task 0x0000000000000000 input arg 0: MISSING in the other dump, which is incomplete\n\
             before task 0x0000000000000000 input arg 1: MISSING in the other dump, which is incomplete\n\
             2 of the 2 matched entries are MISSING in the other dump {}, which is incomplete: \
             args_dump.json says complete: false: the run that wrote it stopped before every selected task \
             was captured; they were not captured there, which says nothing of their data\n",
            d.display()
        )
    );
    assert_eq!(
        r,
        Err(
            "2 compared entries differ, are incomplete or are missing; 2 of them are only missing in the \
             other dump, which is incomplete: see the warning above"
                .into()
        )
    );
}

/// Found by a review: an export that failed part-way left some of its files beside an earlier
/// export's, with nothing saying which. The earlier export's files are removed first (other
/// files are left), and a failure removes what it wrote and says how far it got.
#[test]
fn a_failed_export_removes_what_it_wrote_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // Entry 1's payload lies past the end of args.bin: read (and failed) when it is exported.
    dump_of(
        dir.path(),
        &[
            r#""kind":"tensor","dtype":"FLOAT32","shape":[1],"bin_offset":0,"bin_size":4"#,
            r#""kind":"tensor","dtype":"FLOAT32","shape":[1],"bin_offset":4,"bin_size":4"#,
        ],
        &f32s(&[1.0]),
    );
    let out_dir = dir.path().join("args_dump/export");
    fs::create_dir_all(out_dir.join("task_0x0000000000000000_before_in9.npy.d")).unwrap();
    for name in [
        "task_0x0000000000000005_after_out2.npy",
        "task_0x0000000000000005_before_inout3.bin",
        "notes.txt",
        "task_0x5_after_out2.npy",
    ] {
        fs::write(out_dir.join(name), "earlier").unwrap();
    }
    let (_, r) = view(
        dir.path(),
        Args {
            export: true,
            ..Args::default()
        },
    );
    let o = out_dir.display();
    let bin = dir.path().join("args_dump/args.bin");
    assert_eq!(
        r,
        Err(format!(
            "export to {o} failed after 1 of 2 file(s): {}: the payload of task 0x0000000000000000 arg 1 (4 bytes \
             at offset 4) lies past the end of the 4-byte file; the export is incomplete: the 1 file(s) written \
             were removed, as were the 2 file(s) of the earlier export (before writing): {o} holds no exported \
             file",
            bin.display()
        ))
    );
    let mut names: Vec<String> = fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "notes.txt",
            "task_0x0000000000000000_before_in9.npy.d",
            "task_0x5_after_out2.npy"
        ]
    );
}

#[test]
fn export_names_are_recognized_exactly() {
    for yes in [
        "task_0x0000000100000002_after_out2.npy",
        "task_0x00000001000000ab_before_inout10.bin",
        "task_0x0000000000000000_before_in0.npy",
    ] {
        assert!(viewer::is_export_name(yes), "{yes}");
    }
    for no in [
        "task_0x000000010000002_after_out2.npy",
        "task_0x0000000100000002_after_out.npy",
        "task_0x0000000100000002_during_out2.npy",
        "task_0x0000000100000002_after_out2.npy.tmp",
        "task_0x0000000100000002_after_put2.npy",
        ".task_0x0000000100000002_after_out2.npy.1.0.tmp",
        "task_0x000000010000000g_after_out2.npy",
        "notes.txt",
    ] {
        assert!(!viewer::is_export_name(no), "{no}");
    }
}
