//! Input and output paths: the default deps.json and the default output file.

use std::path::{Path, PathBuf};

use crate::cli::{EdgeMode, Format};
use crate::{Error, ErrorKind};

/// Where runs write their artifacts, relative to the working directory.
pub const OUTPUTS_DIR: &str = "outputs";

/// Returns `explicit`, or the newest `deps.json` anywhere under `./outputs/`
/// ([`ErrorKind::NoInput`] if there is none).
pub fn resolve_input(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    match newest_deps_json(Path::new(OUTPUTS_DIR)) {
        Some(path) => Ok(path),
        None => Err(ErrorKind::NoInput {
            dir: PathBuf::from(OUTPUTS_DIR),
        }
        .into()),
    }
}

/// The newest `deps.json` under `root` (recursively, by modification time, then path).
pub fn newest_deps_json(root: &Path) -> Option<PathBuf> {
    simpler_artifacts::find::newest_named(root, "deps.json")
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
    use std::fs;
    use std::time::SystemTime;

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
    fn newest_deps_json_searches_recursively() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(newest_deps_json(dir.path()), None);
        let a = dir.path().join("a/deep");
        let b = dir.path().join("b");
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        fs::write(a.join("deps.json"), "{}").unwrap();
        fs::write(b.join("deps.json"), "{}").unwrap();
        fs::write(b.join("other.json"), "{}").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(30);
        fs::File::options()
            .write(true)
            .open(a.join("deps.json"))
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert_eq!(newest_deps_json(dir.path()), Some(a.join("deps.json")));
    }
}
