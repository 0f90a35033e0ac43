//! The `simpler` binary on the original's files (`tests/interop/` at the repository root):
//! every tool says on stderr what the file leaves unknown, and exits 0.

use std::path::{Path, PathBuf};
use std::process::Command;

fn interop(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop")
        .join(rel)
}

/// Runs `simpler` with `args`; returns (exit code, stdout, stderr).
fn simpler(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_simpler"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn deps_viewer_notes_what_the_file_does_not_say() {
    let dir = tempfile::tempdir().unwrap();
    let deps = interop("deps/no_kernel_ids/deps.json");
    let out = dir.path().join("view.txt");
    let (code, stdout, stderr) =
        simpler(&["deps-viewer", deps.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("Wrote "), "{stdout}");
    assert_eq!(
        stderr,
        format!(
            "note: {}: deps.json has no kernel_ids for 3 task(s): their kernels and task names are unknown\n",
            deps.display()
        )
    );
}

#[test]
fn from_deps_lists_every_default_it_fills() {
    let deps = interop("deps/from_deps_minimal/deps.json");
    let (code, stdout, stderr) = simpler(&["run", "--from-deps", deps.to_str().unwrap(), "--runtime", "hbg"]);
    assert_eq!(code, 0, "{stderr}");
    for line in [
        "  approximated    5 task(s) have no scope: re-run in auto scopes",
        "  approximated    7 tensor(s) have no version: re-run at version 0",
        "  approximated    6 edge(s) have no arg: manual_dep is not inferred for the arguments of their consumers",
    ] {
        assert!(stdout.lines().any(|l| l == line), "missing {line:?} in\n{stdout}");
    }
}

#[test]
fn from_deps_refuses_an_edges_only_file_with_the_reason() {
    let deps = interop("deps/edges_only/deps.json");
    let (code, _, stderr) = simpler(&["run", "--from-deps", deps.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("deps.json has no tasks[]: task kinds, kernels (and so task names) and block counts are unknown: there is nothing to re-run"),
        "{stderr}"
    );
}

#[test]
fn scope_stats_plot_renders_a_version_4_file() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("scope_stats.jsonl");
    std::fs::copy(interop("scope_stats/v4/scope_stats.jsonl"), &jsonl).unwrap();
    let (code, _, stderr) = simpler(&["scope-stats-plot", jsonl.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(dir.path().join("scope_stats.html")).unwrap();
    assert!(page.contains("id=\"dep_pool-unknown\""));
}

/// Found by a review, two ways a replay lost a captured edge and exited 0:
/// - an empty view starting past its buffer's end (a legal empty slice at the end) grew the
///   re-run's buffer to reach it; a buffer no longer whole rows of 16 made two disjoint column
///   halves overlap: the captured edge lost, a false one wired;
/// - `manual_dep` was inferred against the tensor map as it was before the task, not as its
///   earlier INOUT argument left it (having removed the entry it covered): the second argument
///   was marked manual_dep, never registered, and the later reader's edge was lost.
///
/// Both runtimes now re-wire exactly the captured pairs.
#[test]
fn a_replay_rewires_exactly_what_was_captured() {
    let dir = tempfile::tempdir().unwrap();
    let empty_view = r#"{ "name": "rep", "tensors": [ {"name":"A","shape":[16,16]} ], "body": [
         {"submit":{"label":"left","kernel":"fill","args":[{"inout":"A","view":{"shape":[16,8],"offsets":[0,0]}}],"scalars":[1]}},
         {"submit":{"label":"right","kernel":"fill","args":[{"inout":"A","view":{"shape":[16,8],"offsets":[0,8]}}],"scalars":[2]}},
         {"submit":{"label":"e","kernel":"noop","args":[{"input":"A","view":{"shape":[0,14],"offsets":[16,2]}}]}},
         {"submit":{"label":"r","kernel":"noop","args":[{"input":"A","view":{"shape":[16,8],"offsets":[0,8]}}]}} ] }"#;
    let two_inouts = r#"{ "name": "self2", "tensors": [ {"name":"X","shape":[8,8]} ], "body": [
         {"submit":{"label":"E","kernel":"fill","args":[{"inout":"X","view":{"shape":[1,4],"offsets":[0,0]}}],"scalars":[1]}},
         {"submit":{"label":"b","kernel":"noop","args":[{"inout":"X","view":{"shape":[2,4],"offsets":[0,0]}},{"inout":"X","view":{"shape":[1,8],"offsets":[0,0]}}]}},
         {"submit":{"label":"r","kernel":"noop","args":[{"input":"X","view":{"shape":[1,4],"offsets":[0,4]}}]}} ] }"#;
    for (name, text, pairs) in [("empty_view", empty_view, 1), ("two_inouts", two_inouts, 2)] {
        let w = dir.path().join(format!("{name}.json"));
        std::fs::write(&w, text).unwrap();
        for runtime in ["tmr", "hbg"] {
            let run = dir.path().join(format!("{name}-{runtime}"));
            let (code, _, err) = simpler(&[
                "run",
                w.to_str().unwrap(),
                "--runtime",
                runtime,
                "--enable-dep-gen",
                "--output-prefix",
                run.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{err}");
            let deps = run.join("deps.json");
            let (code, out, err) =
                simpler(&["run", "--from-deps", deps.to_str().unwrap(), "--runtime", runtime]);
            assert_eq!(code, 0, "{err}");
            assert!(
                out.contains(&format!(
                    "edges      {pairs} of {pairs} captured (pred, succ) pairs wired; 0 missing, 0 extra"
                )) && !out.contains("approximated"),
                "{name} on {runtime}: {out}"
            );
        }
    }
}
