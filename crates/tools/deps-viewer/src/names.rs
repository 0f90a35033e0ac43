//! Kernel id → function name maps (`--func-names`, or a sibling `name_map*.json`).
//!
//! Two shapes are accepted: a flat `{"<id>": "<name>"}` object, or an object whose
//! `callable_id_to_name` member is such a map (the form `simpler run` writes). Entries whose
//! value is not a string are ignored.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// A loaded name map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    names: HashMap<String, String>,
}

impl NameMap {
    /// Builds a map from `(id, name)` pairs.
    pub fn from_pairs<I: IntoIterator<Item = (i64, String)>>(pairs: I) -> NameMap {
        NameMap {
            names: pairs
                .into_iter()
                .map(|(id, name)| (id.to_string(), name))
                .collect(),
        }
    }

    /// Loads the map at `path`; errors name the file and the JSON error location.
    pub fn load(path: &Path) -> anyhow::Result<NameMap> {
        let file = File::open(path).with_context(|| format!("{}: cannot read name map", path.display()))?;
        let value: serde_json::Value = serde_json::from_reader(BufReader::new(file)).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}:{}: invalid name map: {}",
                path.display(),
                e.line(),
                e.column(),
                e
            )
        })?;
        let serde_json::Value::Object(mut top) = value else {
            bail!("{}: invalid name map: expected a JSON object", path.display());
        };
        let map = match top.remove("callable_id_to_name") {
            Some(serde_json::Value::Object(inner)) if !inner.is_empty() => inner,
            Some(other) => {
                top.insert("callable_id_to_name".into(), other);
                top
            }
            None => top,
        };
        let names = map
            .into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(name) => Some((k.trim().to_string(), name)),
                _ => None,
            })
            .collect();
        Ok(NameMap { names })
    }

    /// The name of kernel `id`, if the map has one.
    pub fn get(&self, id: i32) -> Option<&str> {
        self.names.get(&id.to_string()).map(String::as_str)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Returns true if and only if the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Finds the newest `name_map*.json` in `dir` (by modification time, then name).
pub fn discover(dir: &Path) -> Option<PathBuf> {
    let entries = fs::read_dir(dir).ok()?;
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("name_map") && name.ends_with(".json")
        })
        .filter_map(|e| {
            let modified = e.metadata().ok()?.modified().ok()?;
            Some((modified, e.file_name(), e.path()))
        })
        .max()
        .map(|(_, _, path)| path)
}

/// Loads `explicit` if given (an error if it cannot be read), else the discovered sibling of
/// `deps_json` (a warning on stderr if it cannot be read, and no map).
pub fn resolve(explicit: Option<&Path>, deps_json: &Path) -> anyhow::Result<Option<NameMap>> {
    if let Some(path) = explicit {
        return NameMap::load(path).map(Some);
    }
    let dir = deps_json.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Some(found) = discover(dir) else {
        return Ok(None);
    };
    match NameMap::load(&found) {
        Ok(map) => Ok(Some(map)),
        Err(e) => {
            eprintln!("warning: ignoring name map: {e:#}");
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_and_nested_maps_load() {
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
