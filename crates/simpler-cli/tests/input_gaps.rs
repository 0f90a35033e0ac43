//! Bad input the binary took without a word (found by a review): each is now an error that
//! names where (file, field, key, flag), with its exit status.

mod common;

use std::path::Path;

use common::{dep_gen_run, read_json, simpler, simpler_cmd, text};

/// `(exit code, stdout, stderr)` of `simpler args`.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = simpler(args);
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

/// A `--from-deps` view past the `buffer_numel` its file states re-ran on a buffer grown to fit
/// it (the re-run's deps.json said 20000 where the input said 16384), exit 0, nothing said; a
/// `buffer_numel` of 0 under a 16384-element view likewise.
#[test]
fn from_deps_refuses_a_view_past_its_stated_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    dep_gen_run(&base);
    let captured = read_json(&base.join("deps.json"));
    let t = &captured["tensors"][0];
    let arg = &captured["tasks"][0]["args"][0];
    assert_eq!(arg["tensor_id"], t["tensor_id"]);
    let addr: u64 = t["buffer_addr"].as_str().unwrap().parse().unwrap();
    let id = t["tensor_id"].as_str().unwrap();
    for (name, shape, numel) in [("wide.json", 20000u64, "16384"), ("zero.json", 16384, "0")] {
        let mut v = captured.clone();
        v["tasks"][0]["args"][0]["shape"] = serde_json::json!([shape]);
        v["tensors"][0]["buffer_numel"] = numel.into();
        let path = dir.path().join(name);
        std::fs::write(&path, v.to_string()).unwrap();
        let rerun = dir.path().join(format!("rerun_{name}"));
        let (code, stdout, stderr) = run(&[
            "run",
            "--from-deps",
            path.to_str().unwrap(),
            "--enable-dep-gen",
            "--output-prefix",
            rerun.to_str().unwrap(),
        ]);
        let bytes = numel.parse::<u64>().unwrap() * 4;
        assert_eq!(
            stderr,
            format!(
                "error: {}: tasks[0] (task_id 0) args[0]: its view (start_offset 0, shape [{shape}], strides [1], \
                 FLOAT32) ends at byte {}, past the end of its buffer {addr:#x}: {bytes} bytes (tensors[0] \
                 (tensor_id {id}) buffer_numel {numel} of FLOAT32); a view lies within its buffer\n",
                path.display(),
                shape * 4
            ),
            "{name}"
        );
        assert_eq!((code, stdout.as_str()), (Some(1), ""), "{name}");
        assert!(!Path::new(&rerun).join("deps.json").exists(), "{name}");
    }
}

/// A `SIMPLER_RING_*` value that is not UTF-8 was taken as unset: the default heap ran, exit 0.
#[test]
fn a_ring_variable_that_is_not_utf8_is_an_error_naming_it() {
    use std::os::unix::ffi::OsStringExt;
    let out = simpler_cmd(&["run", "vector_example"])
        .env("SIMPLER_RING_HEAP", std::ffi::OsString::from_vec(vec![0xff]))
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stderr),
        "error: environment variable SIMPLER_RING_HEAP: its value `\\xff` is not valid UTF-8; ring_heap is one \
         number or 4 comma-separated numbers (one per ring)\n"
    );
    assert_eq!((out.status.code(), text(&out.stdout).as_str()), (Some(2), ""));
}

/// `plan --check` took the last of a key given twice, and `--runtime-env` too; a workload file
/// refuses a duplicate key.
#[test]
fn a_ring_size_key_given_twice_is_an_error() {
    let (code, stdout, stderr) = run(&[
        "plan",
        "vector_example",
        "--check",
        "ring_heap=1024,ring_heap=2048",
    ]);
    assert_eq!(
        stderr,
        "error: invalid value 'ring_heap=1024,ring_heap=2048' for '--check <KEY=VALUE[,..]>': runtime_env: \
         duplicate key `ring_heap` (`ring_heap=1024`, then `ring_heap=2048`); give each key once\n\n\
         For more information, try '--help'.\n"
    );
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
    let (code, stdout, stderr) = run(&[
        "run",
        "vector_example",
        "--runtime-env",
        "ring_heap=1048576",
        "--runtime-env",
        "ring_heap=2097152",
    ]);
    assert_eq!(
        stderr,
        "error: runtime_env: duplicate key `ring_heap` (`ring_heap=1048576`, then `ring_heap=2097152`); give \
         each key once\n"
    );
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
}

/// `+1024` and ` 1024` were taken as 1024, on the command line and in a workload file's text.
#[test]
fn a_ring_size_with_a_sign_or_spaces_is_refused() {
    let plain = |p: &str| {
        format!(
            "runtime_env ring_heap: `{p}` is not written plainly: a number is decimal digits only, without a sign \
             or spaces"
        )
    };
    for value in ["+1048576", " 1048576"] {
        let pair = format!("ring_heap={value}");
        let (code, stdout, stderr) = run(&["run", "vector_example", "--runtime-env", &pair]);
        assert_eq!(stderr, format!("error: {}\n", plain(value)));
        assert_eq!((code, stdout.as_str()), (Some(2), ""), "{pair}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/vector_example.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["runtime_env"] = serde_json::json!({ "ring_heap": "+1048576" });
    let path = dir.path().join("w.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let (code, stdout, stderr) = run(&["run", path.to_str().unwrap()]);
    assert_eq!(
        stderr,
        format!(
            "error: {}: runtime_env.ring_heap: {}\n",
            path.display(),
            plain("+1048576")
        )
    );
    assert_eq!((code, stdout.as_str()), (Some(1), ""));
}

/// `dump-viewer --expect 1e400` compared every element with `inf`.
#[test]
fn dump_viewer_refuses_an_expected_value_past_f64() {
    let (code, stdout, stderr) = run(&["dump-viewer", "no_such_dump", "--expect", "1e400"]);
    assert_eq!(
        stderr,
        "error: invalid value '1e400' for '--expect <VALUE>': \"1e400\" is beyond the largest finite value an f64 \
         holds (1.7976931348623157e308); write inf (or -inf) for an infinite one\n\n\
         For more information, try '--help'.\n"
    );
    assert_eq!((code, stdout.as_str()), (Some(2), ""));
}
