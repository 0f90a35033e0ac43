//! A run folder's `run.json` as `simpler plan` reads it: one that is there but cannot be read
//! is an error naming it (not taken for none), with the field of a type error, and a parameter
//! it recorded that the example refuses is said of the file and its field, not of a `--param`
//! flag no one gave (found by a review).

use std::path::{Path, PathBuf};

use simpler_artifacts::manifest::RunManifest;
use simpler_plan::analysis::analyze_file;
use simpler_plan::target::Target;
use simpler_plan::{plan, record, Args};
use simpler_runtime::RuntimeKind;

/// A recording of `example` with `params` in `<tmp>/run`, and that folder.
fn run_folder(example: &str, params: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let e = simpler_examples::find(example).unwrap();
    let target = Target::example(e, params.iter().map(|p| p.to_string()).collect()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    record(&target, RuntimeKind::Tmr, &folder).unwrap();
    (dir, folder)
}

fn args(input: &Path) -> Args {
    Args {
        input: input.to_path_buf(),
        runtime: None,
        verify: 1,
        check: None,
        output_prefix: None,
        params: Vec::new(),
    }
}

/// The error of a plan of `input`, with every cause, as `simpler plan` prints it.
fn plan_error(input: &Path) -> String {
    match plan(&args(input), None) {
        Ok(_) => panic!("{} was planned", input.display()),
        Err(e) => format!("{e:#}"),
    }
}

const MANIFEST: &str =
    "the run's manifest, from which the plan takes the runtime, how the run ended and the example's parameters";

#[test]
fn a_run_json_that_is_there_but_cannot_be_read_is_an_error_naming_it() {
    let (_dir, folder) = run_folder("vector_example", &[]);
    let path = folder.join("run.json");
    let recording = folder.join("scope_stats/scope_stats.jsonl");
    let mut m = RunManifest::read(&path).unwrap();

    m.schema = 999;
    m.write(&folder).unwrap();
    let schema = format!(
        "{MANIFEST}: {}: invalid run.json: schema 999 is not one this build reads (it reads 1)",
        path.display()
    );
    assert_eq!(plan_error(&folder), schema);
    assert_eq!(plan_error(&recording), schema);

    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let folder_error = format!(
        "{MANIFEST}: {}: cannot read run.json: Is a directory (os error 21)",
        path.display()
    );
    assert_eq!(plan_error(&folder), folder_error);
    // The runtime is read from it for the analysis, and `--check` reads how the run ended.
    assert_eq!(
        format!("{:#}", analyze_file(&recording).unwrap_err()),
        folder_error
    );
    let check = Args {
        check: Some(simpler_plan::parse_check("ring_task_window=8").unwrap()),
        ..args(&folder)
    };
    assert_eq!(
        format!("{:#}", simpler_plan::run(check).unwrap_err()),
        folder_error
    );

    // A type error names the field, with its line and column.
    std::fs::remove_dir(&path).unwrap();
    m.schema = 1;
    m.write(&folder).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let bytes = text.find("\"bytes\": ").unwrap() + "\"bytes\": ".len();
    let line = text[..bytes].lines().count();
    let end = bytes + text[bytes..].find(|c: char| !c.is_ascii_digit()).unwrap();
    std::fs::write(&path, format!("{}\"many\"{}", &text[..bytes], &text[end..])).unwrap();
    let column = bytes - text[..bytes].rfind('\n').unwrap() + "\"many\"".len() - 1;
    assert_eq!(
        plan_error(&folder),
        format!(
            "{MANIFEST}: {}:{line}:{column}: invalid run.json: diagnostics[0].files[0].bytes: invalid type: \
             string \"many\", expected u64",
            path.display()
        )
    );
}

#[test]
fn a_recorded_parameter_the_example_refuses_is_the_run_jsons_not_a_flags() {
    let (_dir, folder) = run_folder("chain_barrier", &["n=16"]);
    let path = folder.join("run.json");
    // As `simpler run chain_barrier --param n=16` writes it.
    let mut m = RunManifest::read(&path).unwrap();
    m.subject = "chain_barrier (n_16)".into();

    // Out of range: the example says so when it runs.
    m.params.insert("n".into(), "9000".into());
    m.write(&folder).unwrap();
    assert_eq!(
        plan_error(&folder),
        format!(
            "the recording run of example chain_barrier (n=9000) at the recorded sizes failed: {}: params.n = \
             \"9000\": at most 8000 producers: each may hold two entries of the default dependency pool (16384) \
             at once, its chain successor's and the barrier's",
            path.display()
        )
    );
    m.params.insert("n".into(), "0".into());
    m.write(&folder).unwrap();
    assert_eq!(
        plan_error(&folder),
        format!(
            "the recording run of example chain_barrier (n=0) at the recorded sizes failed: {}: params.n = \"0\": \
             must be at least 1",
            path.display()
        )
    );

    // A key the example does not take: refused before anything runs (it was dropped without a
    // word, and the folder's deps.json replayed instead).
    m.params.insert("n".into(), "16".into());
    m.params.insert("size".into(), "4".into());
    m.write(&folder).unwrap();
    assert_eq!(
        plan_error(&folder),
        format!(
            "{}: params.size: chain_barrier has no parameter `size`; valid parameters: n",
            path.display()
        )
    );
}
