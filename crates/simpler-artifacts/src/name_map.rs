//! `name_map.json`: kernel id → kernel name, shared by the viewers and the trace converter.
//!
//! A map is a flat `{"<id>": "<name>"}` object, or an object whose `callable_id_to_name` member
//! is one. Keys are trimmed; entries whose key is not an integer or whose value is not a string
//! are ignored. `simpler run` writes the flat form next to every run's artifacts.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

/// File name `simpler run` writes.
pub const FILE_NAME: &str = "name_map.json";

/// Why a name map could not be loaded; the message names the file (and the JSON location).
#[derive(Debug)]
pub struct NameMapError(String);

impl std::fmt::Display for NameMapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NameMapError {}

/// Kernel id → name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    names: HashMap<i32, String>,
}

impl NameMap {
    /// Builds a map from `(id, name)` pairs.
    pub fn from_pairs<I: IntoIterator<Item = (i32, String)>>(pairs: I) -> NameMap {
        NameMap {
            names: pairs.into_iter().collect(),
        }
    }

    /// Loads the map at `path`.
    pub fn load(path: &Path) -> Result<NameMap, NameMapError> {
        let file = File::open(path)
            .map_err(|e: io::Error| NameMapError(format!("{}: cannot read name map: {e}", path.display())))?;
        let crate::unique_keys::UniqueKeys(value) =
            serde_json::from_reader(BufReader::new(file)).map_err(|e| {
                let text = e.to_string();
                let what = text.split(" at line ").next().unwrap_or(&text).to_string();
                NameMapError(format!(
                    "{}:{}:{}: invalid name map: {what}",
                    path.display(),
                    e.line(),
                    e.column()
                ))
            })?;
        let serde_json::Value::Object(mut top) = value else {
            return Err(NameMapError(format!(
                "{}: invalid name map: expected a JSON object",
                path.display()
            )));
        };
        let map = match top.remove("callable_id_to_name") {
            Some(serde_json::Value::Object(inner)) => inner,
            _ => top,
        };
        let names = map
            .into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(name) => Some((k.trim().parse().ok()?, name)),
                _ => None,
            })
            .collect();
        Ok(NameMap { names })
    }

    /// The name of kernel `id`, if mapped.
    pub fn get(&self, id: i32) -> Option<&str> {
        self.names.get(&id).map(String::as_str)
    }

    /// The name of kernel `id`, else `func_<id>`.
    pub fn name(&self, id: i32) -> String {
        self.get(id).map_or_else(|| format!("func_{id}"), str::to_string)
    }

    /// Number of mapped kernels.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Returns true if and only if no kernel is mapped.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// The newest `name_map*.json` in `dir` (by modification time, then name).
pub fn discover(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("name_map") && name.ends_with(".json")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.file_name(), e.path())))
        .max()
        .map(|(_, _, path)| path)
}

/// `explicit` if given (an error if it cannot be read), else the newest `name_map*.json` in
/// `dir` (a warning on stderr if it cannot be read). Returns the map and the file it came from;
/// an empty map and `None` when there is none.
pub fn resolve(explicit: Option<&Path>, dir: &Path) -> Result<(NameMap, Option<PathBuf>), NameMapError> {
    if let Some(path) = explicit {
        return Ok((NameMap::load(path)?, Some(path.to_path_buf())));
    }
    let Some(found) = discover(dir) else {
        return Ok((NameMap::default(), None));
    };
    match NameMap::load(&found) {
        Ok(names) => Ok((names, Some(found))),
        Err(e) => {
            eprintln!("warning: ignoring name map: {e}");
            Ok((NameMap::default(), None))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};

    #[test]
    fn flat_and_nested_maps_load() {
        let dir = std::env::temp_dir().join(format!("simpler-name-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let flat = dir.join("flat.json");
        std::fs::write(
            &flat,
            r#"{"0": "kernel_add", " 1 ": "kernel_mul", "x": "y", "2": 3}"#,
        )
        .unwrap();
        let map = NameMap::load(&flat).unwrap();
        assert_eq!(
            (map.name(0), map.name(1), map.name(2), map.len()),
            ("kernel_add".into(), "kernel_mul".into(), "func_2".into(), 2)
        );
        let nested = dir.join("nested.json");
        std::fs::write(
            &nested,
            r#"{"callable_id_to_name": {"2": "kernel_sub"}, "0": "x"}"#,
        )
        .unwrap();
        let map = NameMap::load(&nested).unwrap();
        assert_eq!((map.get(2), map.get(0)), (Some("kernel_sub"), None));
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{\"0\": }").unwrap();
        assert_eq!(
            NameMap::load(&bad).unwrap_err().to_string(),
            format!("{}:1:7: invalid name map: expected value", bad.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn flat_and_nested_maps_fall_back_to_func_ids() {
        let dir = tempfile::tempdir().unwrap();
        let flat = dir.path().join("flat.json");
        fs::write(
            &flat,
            r#"{"0": "kernel_add", " 1 ": "kernel_mul", "x": "y", "2": 3}"#,
        )
        .unwrap();
        let map = NameMap::load(&flat).unwrap();
        assert_eq!(
            (map.name(0), map.name(1), map.name(2), map.len()),
            ("kernel_add".into(), "kernel_mul".into(), "func_2".into(), 2)
        );
        let nested = dir.path().join("nested.json");
        fs::write(
            &nested,
            r#"{"callable_id_to_name": {"2": "kernel_sub"}, "0": "x"}"#,
        )
        .unwrap();
        let map = NameMap::load(&nested).unwrap();
        assert_eq!((map.name(2), map.name(0)), ("kernel_sub".into(), "func_0".into()));
    }

    #[test]
    fn bad_maps_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\n  \"0\": kernel}").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}:2:8: invalid name map: expected value", bad.display())
        );
        fs::write(&bad, "[1]").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: invalid name map: expected a JSON object", bad.display())
        );
    }

    #[test]
    fn explicit_beats_discovery_and_a_broken_sibling_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(resolve(None, dir.path()).unwrap(), (NameMap::default(), None));
        let sibling = dir.path().join("name_map_vec.json");
        fs::write(&sibling, r#"{"0": "a"}"#).unwrap();
        let (names, from) = resolve(None, dir.path()).unwrap();
        assert_eq!((names.name(0), from), ("a".into(), Some(sibling.clone())));
        let explicit = dir.path().join("mine.json");
        fs::write(&explicit, r#"{"0": "b"}"#).unwrap();
        let (names, _) = resolve(Some(&explicit), dir.path()).unwrap();
        assert_eq!(names.name(0), "b");
        fs::write(&sibling, "{").unwrap();
        assert_eq!(resolve(None, dir.path()).unwrap(), (NameMap::default(), None));
    }

    #[test]
    fn flat_and_nested_maps_count_only_string_entries() {
        let dir = tempfile::tempdir().unwrap();
        let flat = dir.path().join("flat.json");
        fs::write(&flat, r#"{"0": "kernel_add", "1": "kernel_mul", "x": 3}"#).unwrap();
        let map = NameMap::load(&flat).unwrap();
        assert_eq!(
            (map.get(0), map.get(1), map.get(2)),
            (Some("kernel_add"), Some("kernel_mul"), None)
        );
        assert_eq!(map.len(), 2);

        let nested = dir.path().join("nested.json");
        fs::write(
            &nested,
            r#"{"callable_id_to_name": {"2": "kernel_sub"}, "other": "x"}"#,
        )
        .unwrap();
        let map = NameMap::load(&nested).unwrap();
        assert_eq!((map.get(2), map.len()), (Some("kernel_sub"), 1));
    }

    #[test]
    fn malformed_map_names_file_and_location() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\n  \"0\": kernel}").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "{}:2:8: invalid name map: expected value",
                bad.display()
            )),
            "{err}"
        );
        fs::write(&bad, "[1]").unwrap();
        let err = NameMap::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: invalid name map: expected a JSON object", bad.display())
        );
    }

    #[test]
    fn discovery_picks_the_newest_sibling() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(discover(dir.path()), None);
        let old = dir.path().join("name_map_a.json");
        let new = dir.path().join("name_map_b.json");
        fs::write(&old, "{}").unwrap();
        fs::write(&new, "{}").unwrap();
        fs::write(dir.path().join("other.json"), "{}").unwrap();
        let t = std::time::SystemTime::now();
        File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(t + std::time::Duration::from_secs(60))
            .unwrap();
        File::options()
            .write(true)
            .open(&new)
            .unwrap()
            .set_modified(t)
            .unwrap();
        assert_eq!(discover(dir.path()), Some(old));
    }
}
