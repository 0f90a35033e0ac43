//! Golden files for the text view.
//!
//! Each case in `tests/testdata/text/` is a `<name>.deps.json` plus its expected
//! `<name>.deps_viewer.txt` (full edge mode). Optional files next to them:
//!
//! - `<name>.deps_viewer_<mode>.txt` (`reduced`, `omitted`, `reduced_dataflow`,
//!   `omitted_dataflow`): expected output of the other edge modes;
//! - `<name>.name_map*.json`, `<name>.l2_swimlane_records.json`: placed next to the input as
//!   `name_map*.json` / `l2_swimlane_records.json` (auto-discovered siblings);
//! - `<name>.func_names.json`: passed as `--func-names`.
//!
//! The case runs on a copy in a temporary directory; the `source_deps_json:` line of the
//! output is compared as `<name>.deps.json`. `UPDATE_GOLDEN=1 cargo test -p
//! simpler-deps-viewer golden` rewrites the expected files from the current output (review the
//! diff before committing it).

use std::fs;
use std::path::{Path, PathBuf};

use simpler_deps_viewer::{run, Args, EdgeMode};

use simpler_testkit_golden::Goldens;

use crate::util::testdata;

struct Case {
    name: String,
    dir: PathBuf,
}

fn cases() -> Vec<Case> {
    let dir = testdata("text");
    let mut cases: Vec<Case> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".deps.json").map(str::to_string))
        .map(|name| Case {
            name,
            dir: dir.clone(),
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

/// Copies the case into `tmp` and returns (deps.json path, --func-names path).
fn stage(case: &Case, tmp: &Path) -> (PathBuf, Option<PathBuf>) {
    let prefix = format!("{}.", case.name);
    let mut func_names = None;
    for entry in fs::read_dir(&case.dir).unwrap() {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        let staged = if rest == "deps.json"
            || rest == "l2_swimlane_records.json"
            || (rest.starts_with("name_map") && rest.ends_with(".json"))
        {
            tmp.join(rest)
        } else if rest == "func_names.json" {
            let path = tmp.join("func_names.json");
            func_names = Some(path.clone());
            path
        } else {
            continue;
        };
        fs::copy(case.dir.join(&file), staged).unwrap();
    }
    (tmp.join("deps.json"), func_names)
}

fn expected_name(case: &str, mode: EdgeMode) -> String {
    match mode {
        EdgeMode::Full => format!("{case}.deps_viewer.txt"),
        other => format!("{case}.deps_viewer_{}.txt", other.name()),
    }
}

#[test]
fn text_view_matches_golden_files() {
    let mut goldens = Goldens::new();
    let update = goldens.blessing();
    let cases = cases();
    assert!(cases.len() >= 10, "testdata/text lost its cases");
    for case in &cases {
        let tmp = tempfile::tempdir().unwrap();
        let (deps_json, func_names) = stage(case, tmp.path());
        for mode in [
            EdgeMode::Full,
            EdgeMode::Reduced,
            EdgeMode::Omitted,
            EdgeMode::ReducedDataflow,
            EdgeMode::OmittedDataflow,
        ] {
            let expected_path = case.dir.join(expected_name(&case.name, mode));
            let bless_new = update && mode == EdgeMode::Full;
            if !expected_path.exists() && !bless_new {
                assert!(
                    mode != EdgeMode::Full,
                    "{}: missing {}",
                    case.name,
                    expected_path.display()
                );
                continue;
            }
            let out = tmp.path().join(format!("out_{}.txt", mode.name()));
            let args = Args {
                deps_json: Some(deps_json.clone()),
                output: Some(out.clone()),
                func_names: func_names.clone(),
                edge_mode: mode,
                ..Args::default()
            };
            if let Err(e) = run(args) {
                goldens.fail(format!("{} ({}): {e:#}", case.name, mode.name()));
                continue;
            }
            let actual = fs::read_to_string(&out).unwrap().replace(
                &format!("source_deps_json: {}\n", deps_json.display()),
                &format!("source_deps_json: {}.deps.json\n", case.name),
            );
            goldens.check(
                &format!("{} ({})", case.name, mode.name()),
                &expected_path,
                &actual,
            );
        }
    }
    assert!(goldens.checked() >= cases.len());
    goldens.finish();
}
