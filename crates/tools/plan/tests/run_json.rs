//! A run folder's `run.json` as `simpler plan` reads it: one that is there but cannot be read
//! is an error naming it (not taken for none), with the field of a type error, and a parameter
//! it recorded that the example refuses is said of the file and its field, not of a `--param`
//! flag no one gave (found by a review).

use simpler_artifacts::testing::names_in;
use std::path::{Path, PathBuf};

use simpler_artifacts::manifest::RunManifest;
use simpler_plan::analysis::analyze_file;
use simpler_plan::target::{Target, Trial};
use simpler_plan::{plan, record, Args};
use simpler_runtime::{RuntimeEnv, RuntimeKind};

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

/// Found by a review: a scope_stats.jsonl that the folder's run.json does not list (another
/// run's, copied in) was planned with a warning only, as the folder's run: the peaks of one
/// run under the subject, parameters, runtime and verified runs of another, and plan.json and
/// the HTML report written into the folder. It is refused, naming the file and the run, and
/// the message says how to plan the recording alone (a copy outside a scope_stats/ folder).
#[test]
fn a_recording_its_run_json_does_not_list_is_not_planned_as_that_runs() {
    let (dir, folder) = run_folder("vector_example", &[]);
    let path = folder.join("run.json");
    let mut m = RunManifest::read(&path).unwrap();
    m.diagnostics.retain(|d| d.name != "scope_stats");
    m.write(&folder).unwrap();
    let recording = folder.join("scope_stats/scope_stats.jsonl");
    let before = names_in(&folder.join("scope_stats"));
    let expected = format!(
        "{} is not a file of run {} (per {}): it is left over from an earlier run or was put there by hand, so \
         that run's example, parameters and runtime are not the recording's; refusing to plan the two together. \
         To plan from the recording alone, copy it out of its scope_stats/ folder and give the copy (`simpler \
         plan COPY.jsonl`)",
        recording.display(),
        m.run_id,
        path.display()
    );
    assert_eq!(plan_error(&folder), expected);
    // The file given as such is its folder's too: it is in the folder's scope_stats/.
    assert_eq!(plan_error(&recording), expected);
    let check = Args {
        check: Some(simpler_plan::parse_check("ring_task_window=8").unwrap()),
        ..args(&folder)
    };
    assert_eq!(format!("{:#}", simpler_plan::run(check).unwrap_err()), expected);
    assert_eq!(names_in(&folder.join("scope_stats")), before);

    // The copy the message suggests is planned on its own.
    let copy = dir.path().join("recording.jsonl");
    std::fs::copy(&recording, &copy).unwrap();
    let (p, _) = plan(
        &Args {
            verify: 0,
            ..args(&copy)
        },
        None,
    )
    .unwrap();
    assert_eq!(p.subject, copy.display().to_string());
}

/// Found by a review: a deps.json of a run that stopped was refused with `run --from-deps`'s
/// advice, "--allow-incomplete re-runs it anyway", a flag `plan` does not take. `plan` refuses
/// it in its own words, and says what to plan instead.
#[test]
fn an_incomplete_deps_json_is_refused_in_plans_own_words() {
    let e = simpler_examples::find("chain_barrier").unwrap();
    let target = Target::example(e, vec!["n=2000".into()]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("run");
    let env = RuntimeEnv::from_pairs(["ring_dep_pool=1000"]).unwrap();
    let trial = target.run(RuntimeKind::Tmr, &env, Some(&folder));
    assert!(matches!(trial, Trial::Fatal { .. }), "{trial:?}");
    let path = folder.join("run.json");
    // As `simpler run chain_barrier --param n=2000` writes it.
    let mut m = RunManifest::read(&path).unwrap();
    m.subject = "chain_barrier (n_2000)".into();
    m.params.insert("n".into(), "2000".into());
    m.write(&folder).unwrap();
    let deps = folder.join("deps.json");
    let why = format!(
        "{} comes from run {} that did not complete: fatal (4 DEP_POOL_OVERFLOW; run.json has the message)",
        deps.display(),
        m.run_id
    );
    let refusal =
        "refusing to plan from a graph that may be incomplete: its sizes would be those of the part \
                   captured; ";
    assert_eq!(
        plan_error(&deps),
        format!("{why}\n{refusal}plan what the run ran, recorded afresh: `simpler plan chain_barrier --param n=2000`")
    );
    let check = Args {
        check: Some(simpler_plan::parse_check("ring_dep_pool=1000").unwrap()),
        ..args(&deps)
    };
    assert_eq!(
        format!("{:#}", simpler_plan::run(check).unwrap_err()),
        format!("{why}\n{refusal}plan what the run ran, recorded afresh: `simpler plan chain_barrier --param n=2000`")
    );
    // A run of no built-in example: no command to suggest.
    m.subject = "workload w.json".into();
    m.params.clear();
    m.write(&folder).unwrap();
    assert_eq!(
        plan_error(&deps),
        format!("{why}\n{refusal}record the run again with --enable-dep-gen, to completion, and plan that")
    );
}

/// A run folder replayed from its deps.json (no built-in example in its run.json) whose
/// deps.json changed after the run: the verified search's replay is refused in `plan`'s words.
#[test]
fn a_run_folders_changed_deps_json_is_refused_in_plans_own_words() {
    let (_dir, folder) = run_folder("chain_barrier", &["n=16"]);
    let path = folder.join("run.json");
    let mut m = RunManifest::read(&path).unwrap();
    m.subject = "workload w.json".into();
    m.params.clear();
    m.write(&folder).unwrap();
    let deps = folder.join("deps.json");
    let text = std::fs::read_to_string(&deps).unwrap();
    let bytes = text.len();
    std::fs::write(&deps, format!("{text}\n")).unwrap();
    assert_eq!(
        plan_error(&folder),
        format!(
            "the recording run of replay of {deps} at the recorded sizes failed: {deps} has {} bytes but run {} \
             wrote {bytes}: it changed after the run\nrefusing to plan from a graph that may be incomplete: its \
             sizes would be those of the part captured; record the run again with --enable-dep-gen, to \
             completion, and plan that",
            bytes + 1,
            m.run_id,
            deps = deps.display()
        )
    );
}
