//! The original's deps.json files (`tests/interop/deps/` at the repository root; its README
//! lists the cases): each case's text view, in every edge mode that has an expected file, and
//! where present the HTML page's `depStats` (the detail panel's data: markers, fan-in/fan-out
//! per kernel name) must match `expected/`.
//!
//! `UPDATE_GOLDEN=1 cargo test -p simpler-deps-viewer --test tests interop` rewrites the
//! existing expected files from the current output (review the diff before committing).

use std::fs;
use std::path::{Path, PathBuf};

use simpler_deps_viewer::{run, Args, EdgeMode, Format};

use simpler_testkit_golden::{case_dirs, Goldens};

use crate::html::have_graphviz;

/// `tests/interop/deps` at the repository root.
fn interop_deps() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/interop/deps")
}

const MODES: [EdgeMode; 5] = [
    EdgeMode::Full,
    EdgeMode::Reduced,
    EdgeMode::Omitted,
    EdgeMode::ReducedDataflow,
    EdgeMode::OmittedDataflow,
];

/// Copies a case's inputs (`deps.json`, `name_map*.json`) into `tmp`; returns the deps.json.
fn stage(case: &Path, tmp: &Path) -> PathBuf {
    for entry in fs::read_dir(case).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), tmp.join(entry.file_name())).unwrap();
        }
    }
    tmp.join("deps.json")
}

fn text_name(mode: EdgeMode) -> String {
    match mode {
        EdgeMode::Full => "deps_viewer.txt".into(),
        m => format!("deps_viewer_{}.txt", m.name()),
    }
}

/// The `depStats` object of a page, one node per line.
fn dep_stats(page: &str) -> String {
    let start = page.find("const depStats = ").expect("depStats") + "const depStats = ".len();
    let end = start + page[start..].find(";\n").expect("end of depStats");
    let value: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
    let mut out = String::new();
    for (node, stats) in value.as_object().unwrap() {
        out.push_str(&format!("{node}: {stats}\n"));
    }
    out
}

#[test]
fn the_originals_files_give_the_expected_views() {
    let cases = case_dirs(&interop_deps(), "deps.json", 9);
    let mut goldens = Goldens::new();
    for case in &cases {
        let label = case.file_name().unwrap().to_string_lossy().into_owned();
        let tmp = tempfile::tempdir().unwrap();
        let deps_json = stage(case, tmp.path());
        for mode in MODES {
            let name = text_name(mode);
            if !case.join("expected").join(&name).exists() {
                assert!(mode != EdgeMode::Full, "{}: no expected/{name}", case.display());
                continue;
            }
            let out = tmp.path().join(format!("out_{}.txt", mode.name()));
            let args = Args {
                deps_json: Some(deps_json.clone()),
                output: Some(out.clone()),
                edge_mode: mode,
                ..Args::default()
            };
            if let Err(e) = run(args) {
                goldens.fail(format!("{label} ({}): {e:#}", mode.name()));
                continue;
            }
            let actual = fs::read_to_string(&out).unwrap().replace(
                &format!("source_deps_json: {}\n", deps_json.display()),
                "source_deps_json: deps.json\n",
            );
            goldens.check(&label, &case.join("expected").join(&name), &actual);
        }
        if case.join("expected/dep_stats.txt").exists() && have_graphviz() {
            let out = tmp.path().join("page.html");
            let args = Args {
                deps_json: Some(deps_json.clone()),
                output: Some(out.clone()),
                format: Format::Html,
                ..Args::default()
            };
            run(args).unwrap();
            let page = fs::read_to_string(&out).unwrap();
            goldens.check(&label, &case.join("expected/dep_stats.txt"), &dep_stats(&page));
        }
    }
    goldens.finish();
}
