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

/// Found by a review: an empty view starting past its buffer's end (a legal empty slice at
/// the end) grew the re-run's buffer to reach it; a buffer no longer whole rows of 16 made
/// two disjoint column halves overlap, and the replay lost the captured edge and wired a false
/// one, exiting 0. Both runtimes now re-wire exactly the captured pair.
#[test]
fn an_empty_view_past_the_end_does_not_resize_the_replayed_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("rep.json");
    std::fs::write(
        &w,
        r#"{ "name": "rep", "tensors": [ {"name":"A","shape":[16,16]} ], "body": [
         {"submit":{"label":"left","kernel":"fill","args":[{"inout":"A","view":{"shape":[16,8],"offsets":[0,0]}}],"scalars":[1]}},
         {"submit":{"label":"right","kernel":"fill","args":[{"inout":"A","view":{"shape":[16,8],"offsets":[0,8]}}],"scalars":[2]}},
         {"submit":{"label":"e","kernel":"noop","args":[{"input":"A","view":{"shape":[0,14],"offsets":[16,2]}}]}},
         {"submit":{"label":"r","kernel":"noop","args":[{"input":"A","view":{"shape":[16,8],"offsets":[0,8]}}]}} ] }"#,
    )
    .unwrap();
    for runtime in ["tmr", "hbg"] {
        let run = dir.path().join(format!("run-{runtime}"));
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
        let (code, out, err) = simpler(&[
            "run",
            "--from-deps",
            run.join("deps.json").to_str().unwrap(),
            "--runtime",
            runtime,
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("edges      1 of 1 captured (pred, succ) pairs wired; 0 missing, 0 extra"),
            "{runtime}: {out}"
        );
    }
}
