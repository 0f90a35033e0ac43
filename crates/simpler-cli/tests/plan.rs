//! `simpler plan` end to end: the docs' path from a fatal to a working `runtime_env`
//! (`docs/sizing-rings.md`), and its errors.

mod common;
use common::{simpler, text};

#[test]
fn from_a_fatal_to_a_working_runtime_env() {
    // The fatal.
    let out = simpler(&["run", "vector_example", "--runtime-env", "ring_task_window=4"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("fatal 1 (SCOPE_DEADLOCK): scope at vector_example.rs:90"),
        "{err}"
    );

    // The recording, the prediction, the plan.
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("vec");
    let p = prefix.to_str().unwrap();
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-scope-stats",
        "--output-prefix",
        p,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simpler(&["plan", p, "--check", "ring_task_window=4"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "deadlock predicted: fatal 1 (SCOPE_DEADLOCK) on ring 1: ring_task_window=4 but the open scopes pinned by the \
         scope at vector_example.rs:90 come to hold 4 tasks (needs 5)\n"
    );
    // No deadlock predicted, but the dependency pool's need depends on timing and this
    // recording has no deps.json for its worst case: not proven (exit 6).
    let out = simpler(&["plan", p, "--check", "ring_task_window=8"]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout)
            .starts_with("no deadlock predicted from the holds, but not proven:\n  ring_dep_pool ring 0: "),
        "{}",
        text(&out.stdout)
    );
    // Two rings run out between the same boundaries: ring 0's heap may come first (the real
    // run stops on it, at its first task), so both are named, ring 0's first, and exit 5.
    let out = simpler(&["plan", p, "--check", "ring_task_window=4,ring_heap=1024"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("deadlock predicted: fatal 2 (HEAP_RING_DEADLOCK) on ring 0: ring_heap=1024 "),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with("  or first: fatal 1 (SCOPE_DEADLOCK) on ring 1: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("cannot tell which of these 3 comes first"),
        "{stdout}"
    );
    let out = simpler(&[
        "run",
        "vector_example",
        "--runtime-env",
        "ring_task_window=4",
        "--runtime-env",
        "ring_heap=1024",
    ]);
    assert_eq!(out.status.code(), Some(66));
    assert!(
        text(&out.stderr).contains("fatal 2 (HEAP_RING_DEADLOCK): heap of ring 0 "),
        "{}",
        text(&out.stderr)
    );

    let out = simpler(&["plan", p, "--verify", "1"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("ring_task_window      1       16384           4           8           8          16  vector_example.rs:90"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\"ring_task_window\": [8, 16, 4, 4],"),
        "{stdout}"
    );
    // Found by a review: "all minimums together: pass" read as a guarantee, and the minimums
    // of synthetic_100k failed 5 of 5 fresh runs (the dependency pool's need is timing's).
    assert!(
        stdout.contains(
            "all minimums together: passed its run (minimums leave no margin: the dependency pool's need \
             depends on timing, and a later run may fail); suggested sizes: pass"
        ),
        "{stdout}"
    );
    assert!(prefix.join("scope_stats/plan.json").is_file());
    let html = std::fs::read_to_string(prefix.join("scope_stats/scope_stats.html")).unwrap();
    assert!(html.contains("<section id=\"capacity-plan\">"));

    // The flags it prints complete the run.
    let flags = stdout.lines().find(|l| l.starts_with("--runtime-env ")).unwrap();
    let mut args = vec!["run", "vector_example"];
    args.extend(flags.split(' '));
    let out = simpler(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("golden OK (16384 elements)"));
}

/// A run folder's example is re-run with the parameters its run.json recorded: a plan of
/// `chain_barrier --param n=200` re-ran the default n=64, so its "verified" dependency pool (129)
/// was below what the recorded graph's one scope holds.
#[test]
fn a_run_folder_is_verified_with_its_own_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("cb");
    let p = prefix.to_str().unwrap();
    let out = simpler(&[
        "run",
        "chain_barrier",
        "--param",
        "n=200",
        "--enable-scope-stats",
        "--output-prefix",
        p,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let manifest = common::read_json(&prefix.join("run.json"));
    assert_eq!(manifest["params"], serde_json::json!({ "n": "200" }));
    let out = simpler(&["plan", p, "--verify", "1"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("capacity plan for example chain_barrier (n=200)"),
        "{stdout}"
    );
    // The dependency pool's verified minimum covers the barrier's n = 200 explicit dependencies,
    // which it needs at once (the rest depends on timing): re-running n=64 "verified" 129.
    let pool = stdout
        .lines()
        .find(|l| l.starts_with("ring_dep_pool         1"))
        .unwrap();
    let cols: Vec<u64> = pool
        .split_whitespace()
        .skip(2)
        .take(4)
        .map(|c| c.parse().unwrap())
        .collect();
    assert!(
        cols[3] >= 200,
        "the verified minimum cannot hold the barrier's deps: {stdout}"
    );
    // --param belongs to an example name, not to a folder that records its own.
    let out = simpler(&["plan", p, "--param", "n=8"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--param sets a built-in example's parameters"),
        "{}",
        text(&out.stderr)
    );
    // With an example name it sets the run.
    let out = simpler(&["plan", "chain_barrier", "--param", "n=100", "--verify", "0"]);
    assert!(
        text(&out.stdout).contains("capacity plan for example chain_barrier (n=100)"),
        "{}",
        text(&out.stdout)
    );
    let out = simpler(&["plan", "chain_barrier", "--param", "size=8"]);
    assert_eq!(out.status.code(), Some(1));
}

/// Found by a review: a run folder of a workload file is planned by replaying its deps.json,
/// which merges sibling scopes (deps.json does not show where they began), so its verified
/// windows can be far above what the file's scopes need; the plan said nothing of it.
#[test]
fn a_workload_run_folder_says_its_replay_merges_sibling_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("wl");
    let p = prefix.to_str().unwrap();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/vector_example.json");
    let out = simpler(&[
        "run",
        file,
        "--enable-scope-stats",
        "--enable-dep-gen",
        "--output-prefix",
        p,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simpler(&["plan", p, "--verify", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("capacity plan for replay of "),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains(&format!(
            "note: {p} holds a run of a workload vector_example; its deps.json is replayed, and a replay puts \
             the consecutive sibling scopes of each depth into one scope"
        )),
        "{}",
        text(&out.stderr)
    );
    // An example's folder is re-run as the example: no note.
    let ex = dir.path().join("ex");
    let e = ex.to_str().unwrap();
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-scope-stats",
        "--enable-dep-gen",
        "--output-prefix",
        e,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simpler(&["plan", e, "--verify", "0"]);
    assert!(!text(&out.stderr).contains("note:"), "{}", text(&out.stderr));
}

/// Found by a review: the samples of a run that stopped on a fatal end inside the scope that
/// drove it (its end sample never came), and the plan read them as complete: `--check` at
/// the very size that failed said "no deadlock predicted", and the plan suggested sizes that
/// failed again. A stopped recording is now re-recorded at the default sizes when the folder
/// names what to run, refused when it does not, and `--check` on it says what it can.
#[test]
fn a_recording_that_stopped_is_not_planned_as_if_complete() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("vec");
    let p = prefix.to_str().unwrap();
    let out = simpler(&[
        "run",
        "vector_example",
        "--runtime-env",
        "ring_task_window=4",
        "--enable-scope-stats",
        "--output-prefix",
        p,
    ]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    let stopped =
        "the recorded run stopped on fatal 1 (SCOPE_DEADLOCK): scope at vector_example.rs:90 already \
                   holds 3 tasks on ring 1";
    let out = simpler(&["plan", p, "--check", "ring_task_window=4"]);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with(stopped), "{stdout}");
    assert!(
        stdout.ends_with("deadlock predicted: these sizes are at most the recorded run's, which stopped\n"),
        "{stdout}"
    );
    let out = simpler(&["plan", p, "--check", "ring_task_window=8"]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("\nnot proven: no deadlock predicted from the samples before the stop; "),
        "{}",
        text(&out.stdout)
    );
    // The plan records the example again, at the default sizes: ring 1's window needs 8.
    let out = simpler(&["plan", p, "--verify", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("note: {p}: {stopped}, whose task window is 4 slots")),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout)
            .contains("ring_task_window      1       16384           4           8           8          16  vector_example.rs:90"),
        "{}",
        text(&out.stdout)
    );
    // A workload file's folder names nothing to run again in full (its deps.json holds what
    // was submitted before the stop): refused.
    let wl = dir.path().join("wl");
    let w = wl.to_str().unwrap();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/vector_example.json");
    let out = simpler(&[
        "run",
        file,
        "--runtime-env",
        "ring_task_window=4",
        "--enable-scope-stats",
        "--enable-dep-gen",
        "--output-prefix",
        w,
    ]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    let out = simpler(&["plan", w, "--verify", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(
            "the folder names nothing to run again in full (no built-in example in its run.json; a deps.json \
             holds only what was submitted before the stop): record a run that completes"
        ),
        "{}",
        text(&out.stderr)
    );
}

/// Found by a review: a recording made at a capacity below what its peak asks never to wait
/// was throttled there, so its peak (and the never-waits sizes from it) can be below what the
/// run needs; the plan did not say so.
#[test]
fn a_recording_throttled_by_its_capacity_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tools/plan/tests/data/streaming.json"
    );
    let plan_of = |name: &str, env: &[&str]| {
        let p = dir.path().join(name).to_str().unwrap().to_owned();
        let mut args = vec!["run", file, "--enable-scope-stats", "--output-prefix", &p];
        args.extend(env);
        let out = simpler(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let out = simpler(&["plan", &p, "--verify", "0"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    // Recorded at a window of 8 on ring 1: its peak is the 8 that capacity let through.
    let throttled = plan_of("w8", &["--runtime-env", "ring_task_window=16384,8,4,4"]);
    assert!(
        throttled.contains(
            "\n  ring_task_window ring 1: recorded at 8, below the size its peak asks never to wait (16): \
             back-pressure may have held the occupancy down"
        ),
        "{throttled}"
    );
    // At the default sizes its peak is far above that, and nothing is said.
    let free = plan_of("default", &[]);
    assert!(!free.contains("recorded at"), "{free}");
}

#[test]
fn plan_errors_name_what_is_wrong() {
    let out = simpler(&["plan", "no_such_thing"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no_such_thing: not a run folder"),
        "{}",
        text(&out.stderr)
    );
    let out = simpler(&["plan", "vector_example", "--check", "ring_task_window=6"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--check") && err.contains("ring_task_window") && err.contains("power of two"),
        "{err}"
    );
    // --check errors are usage errors that quote the pair as given, once.
    let out = simpler(&["plan", "vector_example", "--check", "ring_heap=1:2:3"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: invalid value 'ring_heap=1:2:3' for '--check <KEY=VALUE[,..]>': `ring_heap=1:2:3`: a value is one number or 4 `:`-separated numbers (one per ring)\n"),
        "{err}"
    );
    let out = simpler(&["plan", "vector_example", "--check", "ring_heap=1000"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.matches("must be at least 1024 bytes").count(), 1, "{err}");
    let out = simpler(&["plan", "vector_example", "--check", ""]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("give at least one KEY=VALUE"),
        "{}",
        text(&out.stderr)
    );
    // Found by a review: a cut deps.json was read as a workload file and refused for its
    // `tasks` key, and a file that is not UTF-8 was an error "writing" it.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    common::dep_gen_run(&run);
    let deps = std::fs::read(run.join("deps.json")).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &deps[..2000]).unwrap();
    let out = simpler(&["plan", cut.to_str().unwrap(), "--verify", "0"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}: not valid JSON: EOF while parsing a value at line 1 column 2000\n",
            cut.display()
        )
    );
    // Where it stops being UTF-8 (found by a review: no place was named), as a deps.json to
    // plan from and as a workload file to run.
    let bytes = dir.path().join("bytes.json");
    std::fs::write(&bytes, b"{\n  \"x\xff\": 1}").unwrap();
    for args in [
        ["plan", bytes.to_str().unwrap()],
        ["run", bytes.to_str().unwrap()],
    ] {
        let out = simpler(&args);
        assert_eq!(
            (out.status.code(), text(&out.stderr)),
            (
                Some(1),
                format!(
                    "error: reading {}: not valid UTF-8 at line 2, column 5 (byte offset 6)\n",
                    bytes.display()
                )
            ),
            "{args:?}"
        );
    }
    // A broken scope_stats.jsonl: the file and the line.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("scope_stats.jsonl");
    std::fs::write(&f, "{\"fatal\":false,\"dropped\":0,\"total\":1,\"task_window_max\":null,\"heap_max\":null,\"dep_pool_max\":null,\"tensormap_max\":null}\n{\"site\":\"a.rs:1\"}\n").unwrap();
    let out = simpler(&["plan", f.to_str().unwrap(), "--verify", "0"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("scope_stats.jsonl") && err.contains("line 2"),
        "{err}"
    );
}

/// Found by a review: a recording cut to its first 100 samples (of 202) was planned from
/// without a word, under an empty name, and `scope-stats-plot` said so only inside its HTML.
/// Now `plan` refuses a recording that lacks samples its metadata counts, and the report warns
/// on the console; a whole copy outside its run folder is planned under its own path.
#[test]
fn a_recording_missing_samples_is_not_planned_from() {
    let dir = tempfile::tempdir().unwrap();
    let workload = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/synthetic_100k.json");
    let run = dir.path().join("run");
    let out = simpler(&[
        "run",
        workload,
        "--enable-scope-stats",
        "--output-prefix",
        run.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let whole = std::fs::read_to_string(run.join("scope_stats/scope_stats.jsonl")).unwrap();
    assert_eq!(whole.lines().count(), 203, "the metadata line and 202 samples");
    let cut_dir = dir.path().join("cut");
    std::fs::create_dir(&cut_dir).unwrap();
    let cut = cut_dir.join("scope_stats.jsonl");
    let first_101: String = whole.lines().take(101).map(|l| format!("{l}\n")).collect();
    std::fs::write(&cut, first_101).unwrap();
    let out = simpler(&["plan", cut.to_str().unwrap(), "--verify", "0"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}: the file has 100 samples where its metadata line says the run took 202: the file was cut or \
             edited; a plan needs every sample (peaks read from the rest can be understated): record the run again\n",
            cut.display()
        )
    );
    let out = simpler(&["scope-stats-plot", cut.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "warning: {}: the file has 100 samples where its metadata line says the run took 202",
            cut.display()
        )),
        "{}",
        text(&out.stderr)
    );

    std::fs::write(&cut, &whole).unwrap();
    let out = simpler(&["plan", cut.to_str().unwrap(), "--verify", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(&format!(
            "capacity plan for {} (202 scope samples)",
            cut.display()
        )),
        "{}",
        text(&out.stdout)
    );
}

/// Found by a review: a scope site with a newline (a hand-edited or hostile file) split the
/// plan's table into rows of its own; it is shown escaped.
#[test]
fn a_site_with_a_newline_stays_in_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-scope-stats",
        "--output-prefix",
        run.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let file = run.join("scope_stats/scope_stats.jsonl");
    let text_in = std::fs::read_to_string(&file).unwrap();
    let edited = text_in.replace("\"vector_example.rs:90\"", "\"x\\n=== fake \\u001b[31m\"");
    assert_ne!(edited, text_in);
    let copy = dir.path().join("edited.jsonl");
    std::fs::write(&copy, edited).unwrap();
    let out = simpler(&["plan", copy.to_str().unwrap(), "--verify", "0"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("  x\\n=== fake \\u{1b}[31m\n"), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("===")), "{stdout}");
}

/// A shipped workload's capture re-runs at the default sizes: `--from-deps` merges its 100
/// sibling scopes into one of 100,000 tasks, so it widens that ring's task window and, since
/// nothing of the merged scope retires until it ends, its dependency pool to the most
/// producers the window's tasks can have pending (a bound no timing exceeds). Before, only the
/// window was widened and the re-run stopped on DEP_POOL_OVERFLOW (exit 68).
#[test]
fn from_deps_of_synthetic_100k_completes_at_default_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("s");
    let p = prefix.to_str().unwrap();
    let workload = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/synthetic_100k.json");
    let out = simpler(&["run", workload, "--enable-dep-gen", "--output-prefix", p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let deps = prefix.join("deps.json");
    let out = simpler(&["run", "--from-deps", deps.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("approximated    ring 1's task window raised from 16384 to 131072"),
        "{stdout}"
    );
    assert!(
        stdout.contains("approximated    ring 1's dependency pool raised from 16384 to "),
        "{stdout}"
    );
    // A re-run that stops says, once, what it approximated (the library no longer prints it
    // itself: the error carries it to the command).
    let out = simpler(&[
        "run",
        "--from-deps",
        deps.to_str().unwrap(),
        "--runtime-env",
        "ring_dep_pool=4",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(68), "{stderr}");
    assert_eq!(
        stderr
            .matches(": approximated: ring 1's task window raised from 16384 to 131072")
            .count(),
        1,
        "{stderr}"
    );
}

/// `simpler run vector_example --runtime hbg --enable-scope-stats` into `run`, with `more`.
fn hbg_recording(run: &std::path::Path, more: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "vector_example",
        "--runtime",
        "hbg",
        "--enable-scope-stats",
    ];
    args.extend_from_slice(more);
    args.extend(["--output-prefix", run.to_str().unwrap()]);
    simpler(&args)
}

/// Found by a review: a recording named from inside its `scope_stats/` folder
/// (`scope_stats.jsonl`, whose folder as spelled has no name) was taken for a copy: its run's
/// manifest went unread, so the plan of an hbg run assumed tmr's reclaim, named no example
/// and verified nothing. It plans as the same recording named from outside does.
#[test]
fn a_recording_named_from_inside_its_folder_is_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("r");
    let out = hbg_recording(&run, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let inside = common::simpler_in(
        &run.join("scope_stats"),
        &["plan", "scope_stats.jsonl", "--verify", "1"],
    );
    let recording = run.join("scope_stats/scope_stats.jsonl");
    let outside = simpler(&["plan", recording.to_str().unwrap(), "--verify", "1"]);
    let inside = text(&inside.stdout);
    assert!(
        inside.contains("capacity plan for example vector_example (size=16384)")
            && inside.contains("verified: ")
            && inside.contains("hbg reclaims nothing while it builds the graph"),
        "{inside}"
    );
    // The table and the runtime_env are the same (the verified runs' wall times differ).
    let table = |s: &str| -> String {
        s.lines()
            .filter(|l| l.starts_with("ring_") || l.contains('['))
            .collect()
    };
    assert_eq!(table(&inside), table(&text(&outside.stdout)));
}

/// Found by a review: a recording run whose result was wrong failed the plan with "the run
/// completed with a wrong result" and nothing else; it now says which check failed, as
/// `simpler run` does.
#[test]
fn a_recording_with_a_wrong_result_says_which_check_failed() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::wrong_golden_workload(dir.path());
    let out = simpler(&["plan", path.to_str().unwrap(), "--verify", "0"]);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(1),
            format!(
                "error: the recording run of workload {} failed: the run completed with a wrong \
                 result: f: FAILED, 16384 of 16384 elements differ; first at [0]: got 47, \
                 expected 48\n",
                path.display()
            )
        )
    );
}

/// Found by a review: the folder of an hbg run that stopped was recorded again, and planned,
/// on tmr (nowhere said), and the suggested sizes stopped hbg with a fatal.
#[test]
fn a_stopped_recording_is_planned_again_on_its_runs_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("r");
    let out = hbg_recording(&run, &["--runtime-env", "ring_task_window=4"]);
    assert!(
        text(&out.stderr).contains("error: fatal 3 (FLOW_CONTROL_DEADLOCK)"),
        "{}",
        text(&out.stderr)
    );
    let out = simpler(&["plan", run.to_str().unwrap(), "--verify", "1"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "so the plan records example vector_example (size=16384) again on hbg at the default sizes"
        ),
        "{stderr}"
    );
    assert!(stdout.contains(" runs on hbg, "), "{stdout}");
    // Its runtime_env, pasted, runs on hbg.
    let mut args = vec![
        "run".to_string(),
        "vector_example".into(),
        "--runtime".into(),
        "hbg".into(),
    ];
    for line in stdout.lines().filter(|l| l.trim_start().starts_with("\"ring_")) {
        // `    "ring_task_window": [16, 4, 4, 4],`
        let (key, list) = line.trim().trim_end_matches(',').split_once(": ").unwrap();
        let list: String = list
            .trim_matches(['[', ']'])
            .split(", ")
            .collect::<Vec<_>>()
            .join(",");
        args.extend([
            "--runtime-env".into(),
            format!("{}={list}", key.trim_matches('"')),
        ]);
    }
    assert_eq!(args.len(), 4 + 2 * 3, "{stdout}");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = simpler(&args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
}

/// Found by a review: two outputs no task reads are re-created by the replay as 1024-byte
/// buffers (deps.json does not record their size), so the plan of the deps.json sized the
/// heap for those, and `--check` said "every size is at least what no wrap and no timing can
/// exceed" of a ring_heap the real run deadlocked at. Both now say so: the plan under its
/// heading, `--check` as "not proven" (exit 6).
#[test]
fn a_plan_of_a_replay_that_approximates_says_its_sizes_are_the_replays() {
    let dir = tempfile::tempdir().unwrap();
    let workload = dir.path().join("unread.json");
    let submit = |label: &str, out: &str| {
        serde_json::json!({ "submit": { "label": label, "kernel": "add_scalar",
            "args": [ { "input": "a" }, { "output": out, "shape": [65536] } ],
            "scalars": [ { "f32": 1.0 }, { "u32": 3 } ] } })
    };
    let w = serde_json::json!({
        "name": "unread",
        "tensors": [ { "name": "a", "dtype": "FLOAT32", "shape": [65536], "fill": { "constant": 1.0 } } ],
        "body": [ { "scope": { "body": [ submit("t0", "x"), submit("t1", "y") ] } } ]
    });
    std::fs::write(&workload, w.to_string()).unwrap();
    let run = dir.path().join("run");
    let out = simpler(&[
        "run",
        workload.to_str().unwrap(),
        "--enable-dep-gen",
        "--output-prefix",
        run.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let deps = run.join("deps.json");
    let caveat = format!(
        "caveat: the replay of {} approximates what deps.json does not record, so its sizes are the replay's: 2 \
         OUTPUT argument(s) are never read in the capture, so their sizes are unknown: allocated as 1024-byte \
         buffers (heap use may differ)\n",
        deps.display()
    );
    let out = simpler(&["plan", deps.to_str().unwrap(), "--verify", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.lines().nth(1).map(|l| format!("{l}\n")),
        Some(caveat.clone()),
        "{stdout}"
    );
    let out = simpler(&[
        "plan",
        deps.to_str().unwrap(),
        "--check",
        "ring_heap=1024:6144:1024:1024",
    ]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stdout));
    assert_eq!(
        text(&out.stdout),
        format!(
            "no deadlock predicted from the holds, but not proven:\n  {}",
            caveat.trim_start_matches("caveat: ")
        )
    );
    // The real run at those sizes: the heap of ring 1 holds 256 KiB outputs, not 1 KiB ones.
    let out = simpler(&[
        "run",
        workload.to_str().unwrap(),
        "--runtime-env",
        "ring_heap=1024,6144,1024,1024",
    ]);
    assert_eq!(out.status.code(), Some(66), "{}", text(&out.stderr));
}

/// Found by a review: `plan --output-prefix` into an earlier run's folder removed that run's
/// files without a word (`simpler run` lists them). The recording's claim says so now.
#[test]
fn a_recording_kept_in_an_earlier_runs_folder_names_the_files_it_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p");
    let p = p.to_str().unwrap();
    let out = simpler(&["run", "vector_example", "--enable-dep-gen", "--output-prefix", p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = simpler(&["plan", "chain_barrier", "--verify", "0", "--output-prefix", p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "note: {p}: removed 4 file(s) an earlier run left in this folder: deps.json, deps_viewer.txt, \
             name_map.json, run.json\nwrote {p}/scope_stats/plan.json and {p}/scope_stats/scope_stats.html\n"
        )
    );
}

/// Found by a review: a graph `plan` refuses as incomplete passed once re-run with
/// `run --from-deps --allow-incomplete`: the re-run's run.json said `completed`, every tool
/// took its files for a whole run's, and `plan` sized the rings for 2 of the 5 tasks. The
/// re-run's manifest now carries why its input may be incomplete.
#[test]
fn a_rerun_of_an_incomplete_graph_is_not_planned_as_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (fatal, rerun) = (dir.path().join("fatal"), dir.path().join("rerun"));
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--runtime-env",
        "ring_heap=65536",
        "--output-prefix",
        fatal.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(66), "{}", text(&out.stderr));
    let out = simpler(&[
        "run",
        "--from-deps",
        fatal.join("deps.json").to_str().unwrap(),
        "--allow-incomplete",
        "--enable-dep-gen",
        "--enable-scope-stats",
        "--output-prefix",
        rerun.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rerun.join("run.json")).unwrap()).unwrap();
    assert_eq!(m["status"], "completed");
    let why = m["incomplete_input"].as_str().unwrap();
    assert!(
        why.contains("that did not complete: fatal (2 HEAP_RING_DEADLOCK"),
        "{why}"
    );
    for input in [rerun.clone(), rerun.join("deps.json")] {
        let out = simpler(&["plan", input.to_str().unwrap(), "--verify", "0"]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(
            err.contains("a re-run of a graph that may be incomplete (--allow-incomplete): ")
                && err.contains("refusing to plan from a graph that may be incomplete"),
            "{err}"
        );
    }
    // The re-run's own view says so too.
    let view = std::fs::read_to_string(rerun.join("deps_viewer.txt")).unwrap();
    assert!(
        view.contains("a re-run of a graph that may be incomplete"),
        "{view}"
    );
}
