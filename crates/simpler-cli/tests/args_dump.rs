//! `--dump-args` and `simpler dump-viewer` through the binary: the flag's levels, a workload
//! file's level and selection, the viewer's listing and export, and the "diagnostic lost"
//! status of a dump that could not keep everything.

mod common;
use common::{read_json, simpler, text};
use simpler_artifacts::testing::names_in;

#[test]
fn level_2_run_then_viewer_exports_f_as_the_golden() {
    level_2_run_exports_f("tmr", "0x0000000100000003");
}

/// On `hbg` the example's three-argument tasks keep their arguments in the argument arena
/// (`crates/simpler-runtime/src/ring/arg_arena.rs`): the dump reads them from there.
#[test]
fn level_2_run_on_hbg_exports_f_as_the_golden() {
    level_2_run_exports_f("hbg", "0x0000000000000004");
}

fn level_2_run_exports_f(runtime: &str, f_task: &str) {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let p = prefix.to_str().unwrap();
    let out = simpler(&[
        "run",
        "vector_example",
        "--runtime",
        runtime,
        "--dump-args=2",
        "--output-prefix",
        p,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(
            "(18 entries, 851968 payload bytes; dropped 0 records / 0 bytes, truncated 0 entries / 0 bytes)"
        ),
        "{}",
        text(&out.stdout)
    );
    let m = read_json(&prefix.join("run.json"));
    let entry = m["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "args_dump")
        .unwrap()
        .clone();
    assert_eq!(entry["outcome"], "written");
    assert_eq!(entry["files"][0]["name"], "args_dump/args_dump.json");
    assert_eq!(entry["files"][1]["name"], "args_dump/args.bin");
    assert_eq!(entry["files"][1]["bytes"], 851968);

    let listing = simpler(&["dump-viewer", p]);
    assert!(listing.status.success());
    assert_eq!(
        text(&listing.stdout).lines().count(),
        2 + 18,
        "{}",
        text(&listing.stdout)
    );
    let exp = dir.path().join("exp");
    let out = simpler(&[
        "dump-viewer",
        p,
        "--task",
        f_task,
        "--role",
        "output",
        "--export",
        "--out",
        exp.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(exp.join(format!("task_{f_task}_after_out2.npy"))).unwrap();
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let data = &bytes[10 + hlen..];
    assert_eq!(data.len(), 16384 * 4);
    assert!(data
        .chunks_exact(4)
        .all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) == 47.0));
    let missing = simpler(&["dump-viewer", p, "--task", "0x77"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stderr).contains("task 0x77 is not in the dump"),
        "{}",
        text(&missing.stderr)
    );
}

#[test]
fn a_truncating_dump_exits_with_diagnostic_lost() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run");
    // 300000 f32 = 1200000 bytes per tensor, more than a 1 MiB buffer: 13 payloads truncated.
    let out = simpler(&[
        "run",
        "vector_example",
        "--param",
        "size=300000",
        "--dump-args=2",
        "--output-prefix",
        p.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let cut = 13 * (1_200_000 - (1 << 20));
    assert!(
        text(&out.stdout).contains(&format!("13 payloads were truncated ({cut} bytes not kept)")),
        "{}",
        text(&out.stdout)
    );
    let m = read_json(&p.join("args_dump/args_dump.json"));
    assert_eq!(
        (
            m["truncated_args"].as_u64(),
            m["truncated_bytes"].as_u64(),
            m["complete"].as_bool()
        ),
        (Some(13), Some(cut), Some(false))
    );
}

#[test]
fn the_bare_flag_is_level_1_and_a_workload_file_selects() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bare");
    let out = simpler(&[
        "run",
        "vector_example",
        "--dump-args",
        "--output-prefix",
        p.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let m = read_json(&p.join("args_dump/args_dump.json"));
    assert_eq!(
        (m["dump_args_level"].as_u64(), m["total_args"].as_u64()),
        (Some(1), Some(0)),
        "nothing selected"
    );

    let bad = simpler(&["run", "vector_example", "--dump-args=4"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("is not 0 (off), 1 (partial), 2 (full) or 3 (hybrid)"),
        "{}",
        text(&bad.stderr)
    );

    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/vector_example.json");
    let mut w: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    w["diagnostics"] = serde_json::json!({ "dump_args": 1 });
    w["body"][1]["scope"]["body"][2]["submit"]["dump"] = serde_json::json!([2]);
    let wf = dir.path().join("w.json");
    std::fs::write(&wf, w.to_string()).unwrap();
    let p = dir.path().join("file");
    let out = simpler(&[
        "run",
        wf.to_str().unwrap(),
        "--output-prefix",
        p.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let m = read_json(&p.join("args_dump/args_dump.json"));
    let args = m["args"].as_array().unwrap();
    assert_eq!(args.len(), 1);
    assert_eq!(
        (
            args[0]["task_id"].as_str(),
            args[0]["arg_index"].as_u64(),
            args[0]["role"].as_str()
        ),
        (Some("0x0000000100000002"), Some(2), Some("output"))
    );

    w["body"][1]["scope"]["body"][2]["submit"]["dump"] = serde_json::json!([7]);
    std::fs::write(&wf, w.to_string()).unwrap();
    let out = simpler(&[
        "run",
        wf.to_str().unwrap(),
        "--output-prefix",
        p.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("body[1].scope.body[2].submit.dump[0]: argument 7 does not exist: the task has 4"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_viewer_defaults_to_the_newest_dump_under_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let none = common::simpler_in(dir.path(), &["dump-viewer"]);
    assert_eq!(none.status.code(), Some(1));
    assert!(
        text(&none.stderr).contains(
            "error: no args_dump/args_dump.json found under outputs; pass the folder of one (run with --dump-args"
        ),
        "{}",
        text(&none.stderr)
    );
    let out = common::simpler_in(dir.path(), &["run", "vector_example", "--dump-args=2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list = common::simpler_in(
        dir.path(),
        &[
            "dump-viewer",
            "--task",
            "0x0000000100000003",
            "--role",
            "output",
            "--expect",
            "47",
        ],
    );
    assert!(
        list.status.success(),
        "{}{}",
        text(&list.stdout),
        text(&list.stderr)
    );
    assert_eq!(
        text(&list.stdout).trim(),
        "after task 0x0000000100000003 output arg 2: equal (16384 elements)"
    );
}

/// Found by a review: `total_args: 999` over 18 entries was listed without a word. The listing
/// still works (the original's files must read) and standard error names both numbers.
#[test]
fn the_viewer_warns_of_counts_that_disagree_with_the_entries() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run");
    let out = simpler(&[
        "run",
        "vector_example",
        "--dump-args=2",
        "--output-prefix",
        p.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json = p.join("args_dump/args_dump.json");
    let t = std::fs::read_to_string(&json)
        .unwrap()
        .replacen("\"total_args\":18,", "\"total_args\":999,", 1);
    std::fs::write(&json, t).unwrap();
    let list = simpler(&["dump-viewer", p.to_str().unwrap()]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    assert_eq!(text(&list.stdout).lines().count(), 2 + 18);
    assert!(
        text(&list.stderr).contains(&format!(
            "warning: {}: total_args is 999 but args has 18 entries",
            json.display()
        )),
        "{}",
        text(&list.stderr)
    );
}

/// Found by a review: the viewer met a run folder whose dump failed (or was never asked for)
/// with "run with --dump-args to produce one"; it now says what the run's manifest says. The
/// dump's own args_dump.json is taken for its folder.
#[test]
fn a_missing_dump_is_explained_by_the_runs_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let failed = dir.path().join("failed");
    let out = common::simpler_cmd(&[
        "run",
        "vector_example",
        "--dump-args",
        "--output-prefix",
        failed.to_str().unwrap(),
    ])
    .env("SIMPLER_FAULT_WRITE", "args_dump.json:fail=100")
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let out = simpler(&["dump-viewer", failed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "error: no args_dump.json in {} or its args_dump/ (its run.json says args_dump failed: cannot write {}",
            failed.display(),
            failed.join("args_dump/args_dump.json").display()
        )),
        "{err}"
    );
    let other = dir.path().join("other");
    common::dep_gen_run(&other);
    let out = simpler(&["dump-viewer", other.to_str().unwrap()]);
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: no args_dump.json in {} or its args_dump/ (its run.json lists no args_dump: the run did not ask for it)\n",
            other.display()
        )
    );
    let good = dir.path().join("good");
    let out = simpler(&[
        "run",
        "vector_example",
        "--dump-args=2",
        "--output-prefix",
        good.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let by_dir = simpler(&["dump-viewer", good.to_str().unwrap()]);
    let by_file = simpler(&[
        "dump-viewer",
        good.join("args_dump/args_dump.json").to_str().unwrap(),
    ]);
    assert!(by_file.status.success(), "{}", text(&by_file.stderr));
    assert_eq!(text(&by_file.stdout), text(&by_dir.stdout));
    // A NaN tolerance compared every difference as equal.
    let out = simpler(&["dump-viewer", good.to_str().unwrap(), "--diff", "--atol", "nan"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid value 'nan' for '--atol <ATOL>': a tolerance is a number ≥ 0"),
        "{}",
        text(&out.stderr)
    );
}

/// Runs vector_example with `--dump-args=2` and `extra` into `prefix`; returns the status code.
fn dump_run(prefix: &std::path::Path, extra: &[&str]) -> Option<i32> {
    let mut args = vec!["run", "vector_example", "--dump-args=2"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--output-prefix", prefix.to_str().unwrap()]);
    simpler(&args).status.code()
}

/// Found by a review: `--diff-with` a dump whose run stopped on a fatal printed 18 "MISSING in
/// the other dump" and "18 compared entries differ" without a word on that dump (read as a
/// regression), and that dump alone said "no entry matches the filters" with no filter given.
/// The other dump gets the primary's checks, its incompleteness explains what is missing there,
/// and an empty dump says it holds no entries and why.
#[test]
fn a_dump_whose_run_stopped_early_is_named_in_a_diff_and_its_emptiness_explained() {
    let dir = tempfile::tempdir().unwrap();
    let (good, fatal) = (dir.path().join("good"), dir.path().join("fatal"));
    assert_eq!(dump_run(&good, &[]), Some(0));
    // A heap smaller than the first task's outputs: the run stops before any task runs, whatever
    // the timing (at 100000, the first task sometimes ran and was dumped first).
    assert_eq!(dump_run(&fatal, &["--runtime-env", "ring_heap=60000"]), Some(66));
    let id = read_json(&fatal.join("run.json"))["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (g, f) = (good.to_str().unwrap(), fatal.to_str().unwrap());
    let out = simpler(&["dump-viewer", g, "--diff-with", f]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "warning: the other dump: {f}/args_dump/args_dump.json comes from run {id} that did not complete: \
             fatal (2 HEAP_RING_DEADLOCK; run.json has the message)\n\
             warning: the other dump {f}/args_dump is incomplete: its run {id} stopped on fatal 2 \
             HEAP_RING_DEADLOCK before every selected task was captured (args_dump.json says complete: false); \
             an entry missing there was not captured, not found different\n\
             error: 18 compared entries differ, are incomplete or are missing; 18 of them are only missing in \
             the other dump, which is incomplete: see the warning above\n"
        )
    );
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 19, "{stdout}");
    assert!(
        lines[..18]
            .iter()
            .all(|l| l.ends_with(": MISSING in the other dump, which is incomplete")),
        "{stdout}"
    );
    assert_eq!(
        lines[18],
        format!(
            "18 of the 18 matched entries are MISSING in the other dump {f}/args_dump, which is incomplete: \
             its run {id} stopped on fatal 2 HEAP_RING_DEADLOCK before every selected task was captured \
             (args_dump.json says complete: false); they were not captured there, which says nothing of \
             their data"
        )
    );
    let out = simpler(&["dump-viewer", f]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "warning: {f}/args_dump/args_dump.json comes from run {id} that did not complete: fatal \
             (2 HEAP_RING_DEADLOCK; run.json has the message)\n\
             error: {f}/args_dump/args_dump.json holds no entries: its run {id} stopped on fatal 2 \
             HEAP_RING_DEADLOCK before any task was dumped (args_dump.json says complete: false)\n"
        )
    );
}

/// Found by a review: an export into a folder holding an earlier export (here another run's)
/// that failed part-way left some new files and some old ones, with nothing saying which. An
/// export replaces the earlier one as a whole (other files are left), and a failed one removes
/// what it wrote and says so.
#[test]
fn an_export_replaces_the_earlier_one_and_a_failed_one_leaves_none_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let (big, small) = (dir.path().join("big"), dir.path().join("small"));
    assert_eq!(dump_run(&big, &[]), Some(0));
    assert_eq!(dump_run(&small, &["--param", "size=64"]), Some(0));
    let out_dir = dir.path().join("export");
    let o = out_dir.to_str().unwrap();
    let export = |prefix: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["dump-viewer", prefix.to_str().unwrap(), "--export", "--out", o];
        args.extend_from_slice(extra);
        common::simpler_cmd(&args)
    };
    let first = export(&big, &[]).output().unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    let big_names = names_in(&out_dir);
    assert_eq!(big_names.len(), 18);
    std::fs::write(out_dir.join("notes.txt"), "mine").unwrap();

    // The small run's export fails on the file of task 2's output: its position in the dump's
    // capture order is how many files were written before it.
    let failing = "task_0x0000000100000002_after_out2.npy";
    let m = read_json(&small.join("args_dump/args_dump.json"));
    let k = m["args"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["task_id"] == "0x0000000100000002" && e["stage"] == "after_completion")
        .unwrap();
    let failed = export(&small, &[])
        .env("SIMPLER_FAULT_WRITE", format!("{failing}:fail=10"))
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(
        text(&failed.stderr),
        format!(
            "error: export to {o} failed after {k} of 18 file(s): cannot write {o}/{failing}: No space left \
             on device (injected by SIMPLER_FAULT_WRITE after 10 bytes); the export is incomplete: the {k} \
             file(s) written were removed, as were the 18 file(s) of the earlier export (before writing): \
             {o} holds no exported file\n"
        )
    );
    assert_eq!(names_in(&out_dir), ["notes.txt"]);

    // Again without the fault, over the big run's export: the small run's 18 files only.
    let first = export(&big, &[]).output().unwrap();
    assert!(first.status.success());
    let again = export(&small, &[]).output().unwrap();
    assert_eq!(
        text(&again.stdout).lines().last().unwrap(),
        format!("exported 18 file(s) to {o} (replacing the 18 file(s) of an earlier export)")
    );
    let mut expected = big_names.clone();
    expected.push("notes.txt".into());
    expected.sort();
    assert_eq!(names_in(&out_dir), expected);
    // 64 f32 after a 128-byte header (the big run's were 16384).
    assert_eq!(
        std::fs::metadata(out_dir.join(failing)).unwrap().len(),
        128 + 64 * 4
    );
    // A filtered export replaces it too: the folder holds what the last export wrote.
    let one = export(&small, &["--task", "0x0000000100000002"])
        .output()
        .unwrap();
    assert_eq!(
        text(&one.stdout).lines().last().unwrap(),
        format!("exported 4 file(s) to {o} (replacing the 18 file(s) of an earlier export)")
    );
    assert_eq!(
        names_in(&out_dir),
        [
            "notes.txt",
            "task_0x0000000100000002_after_out2.npy",
            "task_0x0000000100000002_before_in0.npy",
            "task_0x0000000100000002_before_in1.npy",
            "task_0x0000000100000002_before_in3.npy"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("notes.txt")).unwrap(),
        "mine"
    );
}
