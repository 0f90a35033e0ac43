//! `--from-deps` on the original's deps.json files (`tests/interop/deps/` at the repository
//! root): what each re-run reproduces, and every default it fills, must match the case's
//! expected report (e.g. `tests/interop/deps/from_deps_minimal/expected/from_deps.txt`). Runs
//! under `hbg`, which wires the whole logical graph, so the comparison does not depend on
//! timing.
//!
//! `UPDATE_GOLDEN=1 cargo test -p simpler-workloads --test interop` rewrites the expected
//! files (review the diff before committing).

use std::fmt::Write as _;
use std::path::PathBuf;

use simpler_runtime::config::Settings;
use simpler_runtime::RuntimeKind;
use simpler_testkit_golden::{case_dirs, Goldens};
use simpler_workloads::{run_from_deps, Overrides};

fn interop_deps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/deps")
}

/// What the re-run of `deps` says, as the lines the golden file holds.
fn report(deps: &std::path::Path) -> String {
    let overrides = Overrides {
        settings: Settings {
            runtime: Some(RuntimeKind::Hbg),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut s = String::new();
    let out = match run_from_deps(deps, &overrides) {
        Ok(out) => out,
        Err(e) => {
            let text = e.to_string().replace(&deps.display().to_string(), "deps.json");
            let _ = writeln!(s, "error: {text}");
            return s;
        }
    };
    let fd = out.from_deps.as_ref().expect("a --from-deps outcome");
    let _ = writeln!(
        s,
        "tasks {} · external buffers {} · output buffers {}",
        fd.tasks, fd.external_buffers, fd.output_buffers
    );
    let e = &fd.edges;
    let _ = writeln!(
        s,
        "edges {} captured, {} wired, missing {:?}, extra {:?}",
        e.captured, e.wired, e.missing, e.extra
    );
    for n in &fd.not_reproduced {
        let _ = writeln!(s, "NOT REPRODUCED  {n}");
    }
    for n in &fd.approximations {
        let _ = writeln!(s, "approximated    {n}");
    }
    let _ = writeln!(s, "complete: {}", fd.complete());
    s
}

#[test]
fn the_originals_files_re_run_with_every_default_stated() {
    let cases = case_dirs(&interop_deps(), "expected/from_deps.txt", 9);
    let mut goldens = Goldens::new();
    for case in &cases {
        let actual = report(&case.join("deps.json"));
        goldens.check("--from-deps", &case.join("expected/from_deps.txt"), &actual);
    }
    goldens.finish();
}
