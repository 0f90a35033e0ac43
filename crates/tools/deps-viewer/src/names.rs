//! Kernel id → function name maps (`--func-names`, or a sibling `name_map*.json`).
//!
//! Two shapes are accepted: a flat `{"<id>": "<name>"}` object, or an object whose
//! `callable_id_to_name` member is such a map (the form `simpler run` writes). Entries whose
//! value is not a string are ignored.

use std::path::Path;

pub use simpler_artifacts::name_map::{discover, NameMap};

/// Loads `explicit` if given (an error if it cannot be read), else the discovered sibling of
/// `deps_json` (a warning on stderr if it cannot be read, and no map).
pub fn resolve(explicit: Option<&Path>, deps_json: &Path) -> anyhow::Result<Option<NameMap>> {
    let dir = deps_json
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (map, from) = simpler_artifacts::name_map::resolve(explicit, dir)?;
    Ok(from.map(|_| map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};

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
