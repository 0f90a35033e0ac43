//! Flag rejection, missing input and malformed input.

use std::fs;

use simpler_deps_viewer::{run, Args, Direction, Engine, Format};

use crate::util::testdata;

fn vector_example() -> std::path::PathBuf {
    testdata("text").join("vector_example.deps.json")
}

#[test]
fn html_only_flags_are_rejected_in_text_mode_as_usage_errors() {
    let cases: [(Args, &str); 3] = [
        (
            Args {
                engine: Some(Engine::Dot),
                ..Args::default()
            },
            "--engine",
        ),
        (
            Args {
                direction: Some(Direction::Lr),
                ..Args::default()
            },
            "--direction",
        ),
        (
            Args {
                show_tensor_info: true,
                ..Args::default()
            },
            "--show-tensor-info",
        ),
    ];
    for (mut args, flag) in cases {
        // Rejected before the input is even resolved: this path does not exist.
        args.deps_json = Some("/nonexistent/deps.json".into());
        let err = run(args).unwrap_err();
        let clap_err = err
            .downcast_ref::<clap::Error>()
            .unwrap_or_else(|| panic!("{flag}: not a clap error: {err:#}"));
        assert_eq!(clap_err.kind(), clap::error::ErrorKind::ArgumentConflict);
        assert_eq!(clap_err.exit_code(), 2);
        assert_eq!(
            clap_err.to_string(),
            format!("error: {flag} is only valid with --format html\n")
        );
    }
}

/// Found by a review: `-o deps.json` replaced the run's graph with its own view.
#[test]
fn an_output_that_is_the_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let deps = dir.path().join("deps.json");
    fs::copy(vector_example(), &deps).unwrap();
    let before = fs::read(&deps).unwrap();
    let args = Args {
        deps_json: Some(deps.clone()),
        output: Some(dir.path().join(".").join("deps.json")),
        ..Args::default()
    };
    let err = run(args).unwrap_err();
    let clap_err = err.downcast_ref::<clap::Error>().expect("a usage error");
    assert_eq!(
        clap_err.to_string(),
        format!(
            "error: --output {} is the deps.json being viewed; choose another file\n",
            dir.path().join(".").join("deps.json").display()
        )
    );
    assert_eq!(fs::read(&deps).unwrap(), before);
}

#[test]
fn html_flags_are_accepted_with_html_format() {
    // Validation passes; the run then fails only on the missing input.
    let args = Args {
        deps_json: Some("/nonexistent/deps.json".into()),
        format: Format::Html,
        engine: Some(Engine::Sfdp),
        direction: Some(Direction::Tb),
        show_tensor_info: true,
        ..Args::default()
    };
    let err = run(args).unwrap_err();
    assert!(err.downcast_ref::<clap::Error>().is_none());
    assert!(format!("{err:#}").starts_with("/nonexistent/deps.json: cannot read deps.json: "));
}

#[test]
fn missing_input_names_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope/deps.json");
    let err = run(Args {
        deps_json: Some(missing.clone()),
        ..Args::default()
    })
    .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "{}: cannot read deps.json: No such file or directory (os error 2)",
            missing.display()
        )
    );
}

#[test]
fn malformed_input_names_the_path_and_json_location() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("deps.json");
    let good = fs::read_to_string(vector_example()).unwrap();
    // A value is missing on line 4, column 36 (the `}` after `"succ":`).
    let pretty =
        "{\n  \"tasks\": [],\n  \"tensors\": [],\n  \"edges\": [ {\"pred\": \"0\", \"succ\": } ]\n}\n";
    fs::write(&bad, pretty).unwrap();
    let err = run(Args {
        deps_json: Some(bad.clone()),
        ..Args::default()
    })
    .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "{}:4:36: invalid deps.json: edges[0]: expected value",
            bad.display()
        )
    );
    // Truncated file: the location is the end of the input.
    fs::write(&bad, &good[..good.len() / 2]).unwrap();
    let err = format!(
        "{:#}",
        run(Args {
            deps_json: Some(bad.clone()),
            ..Args::default()
        })
        .unwrap_err()
    );
    assert!(
        err.starts_with(&format!("{}:1:", bad.display()))
            && err.contains("invalid deps.json: tensors[2]: EOF"),
        "{err}"
    );
    // Wrong types are located too.
    fs::write(
        &bad,
        "{\"tasks\":[{\"task_id\":\"x\"}],\"tensors\":[],\"edges\":[]}",
    )
    .unwrap();
    let err = format!(
        "{:#}",
        run(Args {
            deps_json: Some(bad.clone()),
            ..Args::default()
        })
        .unwrap_err()
    );
    assert_eq!(
        err,
        format!(
            "{}:1:24: invalid deps.json: tasks[0].task_id: invalid value: string \"x\", expected an unsigned \
             64-bit integer as a decimal string",
            bad.display()
        )
    );
    // No output file is left behind on failure.
    assert!(!tmp.path().join("deps_viewer.txt").exists());
}

#[test]
fn write_text_view_writes_next_to_the_input() {
    let tmp = tempfile::tempdir().unwrap();
    let deps = tmp.path().join("deps.json");
    fs::copy(vector_example(), &deps).unwrap();
    let out = simpler_deps_viewer::write_text_view(&deps).unwrap();
    assert_eq!(out, tmp.path().join("deps_viewer.txt"));
    let text = fs::read_to_string(&out).unwrap();
    assert!(text.starts_with(&format!(
        "SUMMARY\n  source_deps_json: {}\n  tasks: 5\n",
        deps.display()
    )));
    assert!(text.contains("\nTASK INDEX\nTASK (0, 0) kind=submit func_id=[-1,0,-1] fanin=0 fanout=3\n"));
}

#[test]
fn focus_limits_the_text_view_to_a_neighbourhood() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("focus.txt");
    run(Args {
        deps_json: Some(vector_example()),
        output: Some(out.clone()),
        focus: Some("1,0".into()),
        depth: Some(1),
        ..Args::default()
    })
    .unwrap();
    let text = fs::read_to_string(&out).unwrap();
    let index: Vec<&str> = text
        .lines()
        .skip_while(|l| *l != "TASK INDEX")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(
        index,
        [
            "TASK (0, 0) kind=submit func_id=[-1,0,-1] fanin=0 fanout=1",
            "TASK (1, 0) kind=submit func_id=[-1,1,-1] fanin=1 fanout=1",
            "TASK (1, 2) kind=submit func_id=[-1,2,-1] fanin=1 fanout=0",
        ]
    );
    assert!(text.contains("  tasks: 3\n  unique_task_edges: 2\n  annotated_edges: 2\n"));
}

#[test]
fn errors_have_kinds_with_the_offending_values() {
    use simpler_deps_viewer::ErrorKind;

    // A malformed deps.json: the read error has the path, line and column.
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("deps.json");
    fs::write(
        &bad,
        "{\n  \"tasks\": [],\n  \"tensors\": [],\n  \"edges\": [ {\"pred\": \"0\", \"succ\": } ]\n}\n",
    )
    .unwrap();
    let err = run(Args {
        deps_json: Some(bad.clone()),
        ..Args::default()
    })
    .unwrap_err();
    match err.kind() {
        ErrorKind::Read(e) => {
            assert_eq!(e.path(), bad);
            assert_eq!((e.line(), e.column()), (Some(4), Some(36)));
            assert!(e.io_error().is_none());
        }
        other => panic!("not a read error: {other:?}"),
    }

    // A usage error is a kind too, and hands out its clap error.
    let err = run(Args {
        engine: Some(Engine::Dot),
        ..Args::default()
    })
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Usage(_)), "{err:?}");
    assert_eq!(
        err.usage().map(clap::Error::kind),
        Some(clap::error::ErrorKind::ArgumentConflict)
    );

    // A bad --focus names the text and keeps the parse error as its cause.
    let err = run(Args {
        deps_json: Some(vector_example()),
        focus: Some("1,x".into()),
        ..Args::default()
    })
    .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::InvalidFocus { text, .. } if text == "1,x"),
        "{err:?}"
    );
    assert!(std::error::Error::source(&err).is_some());
    assert!(
        format!("{err:#}").ends_with(": invalid digit found in string"),
        "{err:#}"
    );

    // A focus task that is not in the graph names its raw id.
    let err = run(Args {
        deps_json: Some(vector_example()),
        output: Some(tmp.path().join("out.txt")),
        focus: Some("7,7".into()),
        ..Args::default()
    })
    .unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::FocusNotInGraph { id } if *id == (7 << 32) + 7),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "--focus task (7, 7) (30064771079) is not in the graph"
    );
}

/// Found by a review: an edge into a task `tasks[]` does not list made that task an alloc task
/// with a fan-in (`kind=alloc ... fanin=1`), which no alloc task has. It is shown as unknown,
/// and the view says why.
#[test]
fn a_succ_that_tasks_does_not_list_is_unknown_not_an_alloc_task() {
    let tmp = tempfile::tempdir().unwrap();
    let deps = tmp.path().join("deps.json");
    fs::write(
        &deps,
        r#"{"tasks":[{"task_id":"0","kernel_ids":[-1,0,-1],"block_num":1}],"tensors":[],
            "edges":[{"pred":"5","succ":"0","source":"creator"},{"pred":"0","succ":"77","source":"explicit"}]}"#,
    )
    .unwrap();
    let out = tmp.path().join("view.txt");
    run(Args {
        deps_json: Some(deps.clone()),
        output: Some(out.clone()),
        ..Args::default()
    })
    .unwrap();
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        text.contains(&format!(
            "  warning: {}: 1 task(s) with predecessors are not in tasks[] (first: (0, 77)): only alloc tasks \
             are left out, and they have none; shown as kind=unknown\n",
            deps.display()
        )),
        "{text}"
    );
    assert!(text.contains("TASK 77 kind=unknown"), "{text}");
    assert!(
        text.contains("TASK 5 kind=alloc"),
        "the creator without a fan-in stays an alloc task: {text}"
    );
}
