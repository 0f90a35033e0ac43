//! Errors of loading and running a workload carry their kind and what it names, not only a
//! message.

use std::path::Path;

use simpler_runtime::config::{ConfigErrorKind, Settings};
use simpler_runtime::{FatalCode, RunError};
use simpler_workloads::{load, load_str, run_from_deps, run_workload, ErrorKind, Overrides};

#[test]
fn a_missing_file_is_a_read_error_naming_it() {
    let e = load(Path::new("/nonexistent/w.json")).unwrap_err();
    match e.kind() {
        ErrorKind::Read { path, source } => {
            assert_eq!(path, Path::new("/nonexistent/w.json"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(e.to_string(), "reading /nonexistent/w.json");
    assert!(
        format!("{e:#}").starts_with("reading /nonexistent/w.json: "),
        "{e:#}"
    );
}

fn small() -> simpler_workloads::Workload {
    load_str(
        r#"{ "constants": { "N": 8 }, "tensors": [ { "name": "a", "shape": [8] } ],
             "body": [ { "submit": { "kernel": "noop", "args": [ { "inout": "a" } ] } } ] }"#,
        "t",
    )
    .unwrap()
}

#[test]
fn param_errors_name_the_constant() {
    let w = small();
    let run = |p: &str| {
        let o = Overrides {
            params: vec![p.to_string()],
            ..Default::default()
        };
        run_workload(&w, &o).unwrap_err().into_kind()
    };
    match run("M=3") {
        ErrorKind::UnknownConstant { name, constants } => {
            assert_eq!((name.as_str(), constants.as_str()), ("M", "N"))
        }
        other => panic!("{other:?}"),
    }
    match run("N=x") {
        ErrorKind::ParamNotInteger { name, value, .. } => {
            assert_eq!((name.as_str(), value.as_str()), ("N", "x"))
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(run("N"), ErrorKind::ParamNotNameValue { pair } if pair == "N"));
}

#[test]
fn a_refused_configuration_and_a_fatal_run_keep_their_runtime_errors() {
    let w = small();
    let o = Overrides {
        settings: Settings {
            clusters: Some(0),
            ..Default::default()
        },
        ..Default::default()
    };
    match run_workload(&w, &o).unwrap_err().into_kind() {
        ErrorKind::Config(c) => assert!(matches!(
            c.kind(),
            ConfigErrorKind::OutOfRange {
                field: "clusters",
                ..
            }
        )),
        other => panic!("{other:?}"),
    }
    // A scope holding more tasks than its ring's window admits: SCOPE_DEADLOCK.
    let w = load_str(
        r#"{ "runtime_env": { "ring_task_window": 4 },
             "body": [ { "repeat": { "var": "i", "count": 8, "body": [ { "dummy": {} } ] } } ] }"#,
        "t",
    )
    .unwrap();
    let e = run_workload(&w, &Overrides::default()).unwrap_err();
    match e.into_run_error() {
        Ok(RunError::Fatal { fatal, .. }) => assert_eq!(fatal.code, FatalCode::ScopeDeadlock),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unreadable_deps_json_is_a_deps_error() {
    let e = run_from_deps(Path::new("/nonexistent/deps.json"), &Overrides::default()).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::Deps(_)), "{e:?}");
}
