//! Input and output paths: the default deps.json and the default output file.

use std::path::{Path, PathBuf};

use simpler_artifacts::find::newest_run_artifact;

use crate::cli::{EdgeMode, Format};
use crate::{Error, ErrorKind};

/// Where runs write their artifacts, relative to the working directory.
pub const OUTPUTS_DIR: &str = "outputs";

/// File name of the dependency graph.
pub const DEPS_FILE: &str = "deps.json";

/// Returns `explicit`, or the newest run's `deps.json` under `./outputs/`
/// ([`resolve_input_under`]).
pub fn resolve_input(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    resolve_input_under(explicit, Path::new(OUTPUTS_DIR))
}

/// Returns `explicit`, or the `deps.json` of the newest run under `root` (the folder of the
/// newest `run.json`; `simpler_artifacts::find::newest_run_artifact`). A newest run without
/// one is [`ErrorKind::NotInNewestRun`], which says why and names the newest other deps.json;
/// an older run's graph is never shown as if it were the latest's. Without any `run.json`
/// under `root` (the original runtime's files), the newest `deps.json` anywhere under it;
/// [`ErrorKind::NoInput`] if there is none.
pub fn resolve_input_under(explicit: Option<&Path>, root: &Path) -> Result<PathBuf, Error> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    match newest_run_artifact(root, &[DEPS_FILE], "dep_gen")? {
        Some(path) => Ok(path),
        None => Err(ErrorKind::NoInput {
            dir: root.to_path_buf(),
        }
        .into()),
    }
}

/// The default output next to `deps_json`: `deps_viewer[_<mode>][_focus_<ring>_<local>].<ext>`.
pub fn default_output(deps_json: &Path, format: Format, mode: EdgeMode, focus: Option<u64>) -> PathBuf {
    let mut stem = String::from("deps_viewer");
    if mode != EdgeMode::Full {
        stem.push('_');
        stem.push_str(mode.name());
    }
    if let Some(id) = focus {
        let (ring, local) = simpler_artifacts::deps::split_task_id(id);
        stem.push_str(&format!("_focus_{ring}_{local}"));
    }
    let ext = match format {
        Format::Text => "txt",
        Format::Html => "html",
    };
    deps_json.with_file_name(format!("{stem}.{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::testing::{put, run_json};

    #[test]
    fn default_output_names() {
        let input = Path::new("outputs/run_1/deps.json");
        let out = |f, m, focus| default_output(input, f, m, focus);
        assert_eq!(
            out(Format::Text, EdgeMode::Full, None),
            Path::new("outputs/run_1/deps_viewer.txt")
        );
        assert_eq!(
            out(Format::Html, EdgeMode::Full, None),
            Path::new("outputs/run_1/deps_viewer.html")
        );
        assert_eq!(
            out(Format::Text, EdgeMode::Omitted, None),
            Path::new("outputs/run_1/deps_viewer_omitted.txt")
        );
        assert_eq!(
            out(Format::Html, EdgeMode::Reduced, Some(4_294_967_298)),
            Path::new("outputs/run_1/deps_viewer_reduced_focus_1_2.html")
        );
        assert_eq!(
            default_output(Path::new("deps.json"), Format::Text, EdgeMode::Full, None),
            Path::new("deps_viewer.txt")
        );
    }

    #[test]
    fn without_run_json_the_newest_deps_json_anywhere_is_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_input_under(None, dir.path()).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::NoInput { .. }), "{err}");
        put(&dir.path().join("a/deep/deps.json"), "{}", 20);
        put(&dir.path().join("b/deps.json"), "{}", 10);
        put(&dir.path().join("b/other.json"), "{}", 30);
        assert_eq!(
            resolve_input_under(None, dir.path()).unwrap(),
            dir.path().join("a/deep/deps.json")
        );
        let explicit = Path::new("x/deps.json");
        assert_eq!(resolve_input_under(Some(explicit), dir.path()).unwrap(), explicit);
    }

    /// Found by a review: the newest run, run without --enable-dep-gen, has no deps.json, and
    /// the viewer showed an earlier run's (it printed the path, but the graph was read as the
    /// latest run's). It now fails, says why, and names the earlier file to pass.
    #[test]
    fn a_newest_run_without_deps_json_is_an_error_naming_the_earlier_one() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("run_a"), dir.path().join("run_b"));
        put(
            &a.join("run.json"),
            &run_json(
                "completed",
                r#"[{"name":"dep_gen","outcome":"written","files":[{"name":"deps.json","bytes":2}]}]"#,
            ),
            10,
        );
        put(&a.join("deps.json"), "{}", 9);
        put(&b.join("run.json"), &run_json("completed", "[]"), 20);
        let err = resolve_input_under(None, dir.path()).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::NotInNewestRun(_)), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "the newest run, {}, has no deps.json: its run.json lists no dep_gen: the run did \
                 not ask for it; the newest deps.json is {}: pass it to use it",
                b.display(),
                a.join("deps.json").display()
            )
        );
        put(&b.join("deps.json"), "{}", 19);
        assert_eq!(
            resolve_input_under(None, dir.path()).unwrap(),
            b.join("deps.json")
        );
    }
}
