//! `diagnostics.enable_l2_swimlane` takes `true`/`false` or the original's level number.

use simpler_artifacts::swimlane::{read_swimlane_file, Level};
use simpler_runtime::config::Settings;
use simpler_workloads::{load_str, run_workload, Overrides};

fn workload(switch: &str) -> String {
    format!(
        r#"{{ "name": "lvl", "diagnostics": {{ "enable_l2_swimlane": {switch} }},
             "body": [ {{ "submit": {{ "kernel": "noop" }} }} ] }}"#
    )
}

#[test]
fn a_level_number_sets_the_recorded_level() {
    for (switch, level) in [
        ("1", Level::AicoreTiming),
        ("3", Level::SchedPhases),
        ("true", Level::OrchPhases),
    ] {
        let w = load_str(&workload(switch), "lvl").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let o = Overrides {
            settings: Settings {
                output_prefix: Some(dir.path().to_path_buf()),
                ..Default::default()
            },
            ..Default::default()
        };
        run_workload(&w, &o).unwrap();
        let file = read_swimlane_file(&dir.path().join("l2_swimlane_records.json")).unwrap();
        assert_eq!(file.header.level, level, "{switch}");
    }
}

#[test]
fn a_level_out_of_range_names_the_field() {
    let Err(err) = load_str(&workload("7"), "lvl") else {
        panic!("level 7 was accepted");
    };
    assert!(
        err.to_string()
            .contains("diagnostics.enable_l2_swimlane: 7 is not a swimlane level: 0 (off) to 4 (everything), or true/false"),
        "{err}"
    );
}
