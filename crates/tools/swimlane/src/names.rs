//! Kernel names: `--func-names`, else the newest sibling `name_map*.json`, else `func_<id>`.
//!
//! A map is a flat `{"<id>": "<name>"}` object or an object whose `callable_id_to_name` member
//! is one (the form `simpler run` writes). Entries whose value is not a string are ignored.

pub use simpler_artifacts::name_map::{discover, resolve, NameMap as Names};

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
