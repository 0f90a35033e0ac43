//! Kernel names: `--func-names`, else the newest sibling `name_map*.json`, else `func_<id>`.
//!
//! A map is a flat `{"<id>": "<name>"}` object or an object whose `callable_id_to_name` member
//! is one (the form `simpler run` writes). Entries whose value is not a string are ignored.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// Kernel id → display name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    names: HashMap<i32, String>,
}

impl Names {
    /// Builds a map from `(id, name)` pairs.
    pub fn from_pairs<I: IntoIterator<Item = (i32, String)>>(pairs: I) -> Names {
        Names {
            names: pairs.into_iter().collect(),
        }
    }

    /// Loads the map at `path`; errors name the file and, for bad JSON, the line and column.
    pub fn load(path: &Path) -> anyhow::Result<Names> {
        let file = File::open(path).with_context(|| format!("{}: cannot read name map", path.display()))?;
        let value: serde_json::Value = serde_json::from_reader(BufReader::new(file)).map_err(|e| {
            let text = e.to_string();
            let what = text.split(" at line ").next().unwrap_or(&text).to_string();
            anyhow::anyhow!(
                "{}:{}:{}: invalid name map: {what}",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        let serde_json::Value::Object(mut top) = value else {
            bail!("{}: invalid name map: expected a JSON object", path.display());
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
        Ok(Names { names })
    }

    /// The name of kernel `func_id`: the mapped name, else `func_<id>`.
    pub fn name(&self, func_id: i32) -> String {
        match self.names.get(&func_id) {
            Some(name) => name.clone(),
            None => format!("func_{func_id}"),
        }
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

/// Finds the newest `name_map*.json` in `dir` (by modification time, then name).
pub fn discover(dir: &Path) -> Option<PathBuf> {
    fs::read_dir(dir)
        .ok()?
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

/// Loads `explicit` if given (an error if it cannot be read), else the newest `name_map*.json`
/// in `dir` (a warning on stderr if it cannot be read). Returns the map and the file it came
/// from; an empty map (every kernel `func_<id>`) when there is none.
pub fn resolve(explicit: Option<&Path>, dir: &Path) -> anyhow::Result<(Names, Option<PathBuf>)> {
    if let Some(path) = explicit {
        return Ok((Names::load(path)?, Some(path.to_path_buf())));
    }
    let Some(found) = discover(dir) else {
        return Ok((Names::default(), None));
    };
    match Names::load(&found) {
        Ok(names) => Ok((names, Some(found))),
        Err(e) => {
            eprintln!("warning: ignoring name map: {e:#}");
            Ok((Names::default(), None))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_and_nested_maps_load_and_fall_back_to_func_ids() {
        let dir = tempfile::tempdir().unwrap();
        let flat = dir.path().join("flat.json");
        fs::write(
            &flat,
            r#"{"0": "kernel_add", " 1 ": "kernel_mul", "x": "y", "2": 3}"#,
        )
        .unwrap();
        let map = Names::load(&flat).unwrap();
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
        let map = Names::load(&nested).unwrap();
        assert_eq!((map.name(2), map.name(0)), ("kernel_sub".into(), "func_0".into()));
    }

    #[test]
    fn bad_maps_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\n  \"0\": kernel}").unwrap();
        let err = Names::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}:2:8: invalid name map: expected value", bad.display())
        );
        fs::write(&bad, "[1]").unwrap();
        let err = Names::load(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}: invalid name map: expected a JSON object", bad.display())
        );
    }

    #[test]
    fn explicit_beats_discovery_and_a_broken_sibling_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(resolve(None, dir.path()).unwrap(), (Names::default(), None));
        let sibling = dir.path().join("name_map_vec.json");
        fs::write(&sibling, r#"{"0": "a"}"#).unwrap();
        let (names, from) = resolve(None, dir.path()).unwrap();
        assert_eq!((names.name(0), from), ("a".into(), Some(sibling.clone())));
        let explicit = dir.path().join("mine.json");
        fs::write(&explicit, r#"{"0": "b"}"#).unwrap();
        let (names, _) = resolve(Some(&explicit), dir.path()).unwrap();
        assert_eq!(names.name(0), "b");
        fs::write(&sibling, "{").unwrap();
        assert_eq!(resolve(None, dir.path()).unwrap(), (Names::default(), None));
    }
}
