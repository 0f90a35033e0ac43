//! What the binary's tests share: running `simpler`, reading its output and its JSON files.
// Each test file uses its own subset.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// A `simpler` command with `args`, to adjust (environment, pipes) before running.
pub fn simpler_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_simpler"));
    c.args(args);
    c
}

/// Runs `simpler` with `args` in the current folder.
pub fn simpler(args: &[&str]) -> Output {
    simpler_cmd(args).output().expect("the binary runs")
}

/// Runs `simpler` with `args` in `dir`.
pub fn simpler_in(dir: &Path, args: &[&str]) -> Output {
    simpler_cmd(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A JSON file's value.
pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The arguments of `simpler run SUBJECT` with every diagnostic on, writing into `prefix`
/// (the README's main job when `subject` is vector_example).
pub fn every_diagnostic<'a>(subject: &'a str, prefix: &'a Path) -> [&'a str; 7] {
    [
        "run",
        subject,
        "--enable-scope-stats",
        "--enable-dep-gen",
        "--enable-l2-swimlane",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]
}

/// Runs vector_example with dep_gen into `prefix` and asserts that it succeeded.
pub fn dep_gen_run(prefix: &Path) -> Output {
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

/// `workloads/vector_example.json` with a golden that cannot pass (`f` checked against 48,
/// where the kernels compute 47), written into `dir` as `wrong.json`: its path.
pub fn wrong_golden_workload(dir: &Path) -> std::path::PathBuf {
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/vector_example.json");
    let wrong = std::fs::read_to_string(source)
        .unwrap()
        .replace(r#""constant": 47.0"#, r#""constant": 48.0"#)
        .replace(
            "./schema.json",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/schema.json"),
        );
    let path = dir.join("wrong.json");
    std::fs::write(&path, wrong).unwrap();
    path
}

/// Exit status, stdout and stderr of `simpler args`; asserts the process did not panic (101)
/// or abort (134), for the tests of hostile input.
pub fn run_checked(args: &[&str]) -> (i32, String, String) {
    let out = simpler(args);
    let code = out.status.code().expect("exited, not killed by a signal");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(code != 101 && code != 134, "{args:?} crashed ({code}): {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (code, stdout, stderr)
}
