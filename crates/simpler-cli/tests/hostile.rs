//! Hostile input through the `simpler` binary: every case that once panicked, aborted, ran the
//! host out of memory, escaped the output folder or misled, now gives a clear error (never exit
//! 101 or 134) or works, and documented limits hold at their edge.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{every_diagnostic, run_checked, simpler_in, text};

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

/// A run of vector_example with every diagnostic into `dir/name`.
fn vector_run(dir: &Path, name: &str) -> PathBuf {
    let prefix = dir.join(name);
    let (code, _, stderr) = run_checked(&every_diagnostic("vector_example", &prefix));
    assert_eq!(code, 0, "{stderr}");
    prefix
}

#[test]
fn case_1_a_kernel_name_longer_than_a_format_width() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = vector_run(dir.path(), "run");
    let long = "k".repeat(70_000);
    write(&prefix, "name_map.json", &format!("{{\"0\": \"{long}\"}}"));
    let records = prefix.join("l2_swimlane_records.json");
    let (code, stdout, stderr) = run_checked(&["swimlane", records.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&long), "the name is printed whole");
}

#[test]
fn case_2_ring_sizes_past_host_memory_are_refused() {
    for env in [
        "ring_heap=18446744073709551615",
        "ring_heap=1099511627776",
        "ring_task_window=1073741824",
    ] {
        let (code, _, stderr) = run_checked(&["run", "vector_example", "--runtime-env", env]);
        let key = env.split('=').next().unwrap();
        assert_eq!(code, 2, "{env}: {stderr}");
        assert!(
            stderr.contains(&format!("error: runtime_env {key}="))
                && stderr.contains("of host memory")
                && stderr.contains(&format!("lower {key}")),
            "{env}: {stderr}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_simpler"))
        .args(["run", "vector_example"])
        .env("SIMPLER_RING_HEAP", "18446744073709551615")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // The same through a workload file's runtime_env is an error of the file (exit 1) at its
    // JSON path; it was a usage error (exit 2) naming neither.
    let dir = tempfile::tempdir().unwrap();
    let w = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workloads/vector_example.json"
    ))
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&w).unwrap();
    v["runtime_env"] = serde_json::json!({ "ring_heap": 1099511627776u64 });
    let file = write(dir.path(), "big.json", &v.to_string());
    let (code, _, stderr) = run_checked(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    let lead = format!(
        "error: {}: runtime_env.ring_heap: runtime_env ring_heap=1099511627776,1099511627776,1099511627776,1099511627776 needs 4.0 TiB of host memory",
        file.display()
    );
    assert!(stderr.starts_with(&lead), "{stderr}");
    assert!(
        stderr.ends_with(
            "; lower ring_heap (accepted: at least 1024 bytes per ring, all rings' buffers within this machine's memory)\n"
        ),
        "{stderr}"
    );
    // The command line's value overrides the file's: the file is not blamed.
    let (code, _, stderr) = run_checked(&[
        "run",
        file.to_str().unwrap(),
        "--runtime-env",
        "ring_heap=1099511627777",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with("error: runtime_env ring_heap=1099511627777,"),
        "{stderr}"
    );
    // tensormap_capacity out of range, and a float ring size: errors of the file at their path,
    // saying what is accepted (exit 2 naming neither, and "did not match any variant of untagged
    // enum EnvValue").
    for (name, edit, want) in [
        (
            "capacity.json",
            serde_json::json!({ "tensormap_capacity": 18446744073709551615u64 }),
            "tensormap_capacity: 18446744073709551615 is out of range; it must be in [1, 2147483647]".to_string(),
        ),
        (
            "float.json",
            serde_json::json!({ "runtime_env": { "ring_heap": 1e9 } }),
            "runtime_env.ring_heap: invalid type: floating point `1000000000.0`, expected a whole number of 0 or \
             more (every ring), a list of 4 of them (one per ring), or a string of either (\"1024\" or \
             \"1024,2048,4096,8192\") at line 1 column "
                .to_string(),
        ),
    ] {
        let mut v = v.clone();
        for (k, x) in edit.as_object().unwrap() {
            v[k] = x.clone();
        }
        let file = write(dir.path(), name, &v.to_string());
        let (code, _, stderr) = run_checked(&["run", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {stderr}");
        let want = format!("error: {}: {want}", file.display());
        assert!(stderr.starts_with(&want), "{name}: {stderr}");
    }
}

#[test]
fn case_3_a_huge_timeout_means_no_timeout() {
    let (code, stdout, stderr) =
        run_checked(&["run", "vector_example", "--timeout-secs", "18446744073709551615"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("golden OK"));
}

fn workload_with_expr(dir: &Path, expr: &str) -> PathBuf {
    let w = serde_json::json!({
        "name": "deep",
        "tensors": [ { "name": "X", "shape": [expr] } ],
        "body": [ { "submit": { "kernel": "noop", "args": [ { "input": "X" } ] } } ]
    });
    write(dir, "deep.json", &w.to_string())
}

#[test]
fn case_4_deep_expressions_are_an_error_not_a_stack_overflow() {
    let dir = tempfile::tempdir().unwrap();
    for expr in [
        format!("{}1{}", "(".repeat(30_000), ")".repeat(30_000)),
        format!("{}1", "-".repeat(1_000_000)),
    ] {
        let file = workload_with_expr(dir.path(), &expr);
        let (code, _, stderr) = run_checked(&["run", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("parentheses and signs nested deeper than 256"),
            "{stderr}"
        );
        assert!(
            stderr.len() < 2000,
            "the message quotes a bounded part: {} bytes",
            stderr.len()
        );
    }
    // At the limit it works.
    let ok = workload_with_expr(dir.path(), &format!("{}16{}", "(".repeat(255), ")".repeat(255)));
    let (code, _, stderr) = run_checked(&["run", ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn case_5_a_workload_name_is_never_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("a/b/work");
    std::fs::create_dir_all(&work).unwrap();
    for name in [
        "../../escaped",
        "/tmp/simpler-escaped-abs",
        "a/b/c",
        ".hidden",
        "",
    ] {
        let w = serde_json::json!({
            "name": name,
            "tensors": [ { "name": "X", "shape": [16] } ],
            "body": [ { "submit": { "kernel": "noop", "args": [ { "input": "X" } ] } } ],
            "diagnostics": { "enable_dep_gen": true }
        });
        let file = write(&work, "w.json", &w.to_string());
        let (code, _, stderr) = {
            let out = simpler_in(&work, &["run", file.to_str().unwrap()]);
            (out.status.code().unwrap(), text(&out.stdout), text(&out.stderr))
        };
        assert_eq!(code, 1, "{name:?}: {stderr}");
        assert!(stderr.contains(": name: the name "), "{name:?}: {stderr}");
    }
    assert!(!Path::new("/tmp/simpler-escaped-abs").exists());
    let mut all = Vec::new();
    let mut stack = vec![dir.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            all.push(p);
        }
    }
    assert_eq!(
        all.len(),
        4,
        "only a/, a/b/, a/b/work/ and the workload file: {all:?}"
    );
}

#[test]
fn case_6_a_hostile_kernel_name_cannot_break_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = vector_run(dir.path(), "run");
    write(
        &prefix,
        "name_map.json",
        r#"{"0": "<!--<script>", "1": "</script><b>x", "2": "a\u2028b"}"#,
    );
    let deps = prefix.join("deps.json");
    let html = dir.path().join("page.html");
    let (code, _, stderr) = run_checked(&[
        "deps-viewer",
        deps.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let page = std::fs::read_to_string(&html).unwrap();
    for raw in ["<!--<script>", "</script><b>"] {
        assert!(!page.contains(raw), "{raw:?} reached the page unescaped");
    }
    // Inside the inline scripts nothing can open a comment or a tag, or end a JS line.
    let mut scripts = 0;
    for chunk in page.split("<script").skip(1) {
        let body = &chunk[chunk.find('>').unwrap() + 1..chunk.find("</script>").unwrap()];
        for bad in ["<!--", "<script", "\u{2028}", "\u{2029}"] {
            assert!(!body.contains(bad), "{bad:?} inside a script element");
        }
        scripts += 1;
    }
    assert!(scripts >= 2, "{scripts}");
    assert!(
        page.contains(r"\u003c!--\u003cscript\u003e"),
        "the name is in the data, escaped"
    );
}

#[test]
fn case_7_a_dot_layout_too_big_for_the_host_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("big");
    let (code, _, stderr) = run_checked(&[
        "run",
        "chain_barrier",
        "--param",
        "n=3500",
        "--enable-dep-gen",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let deps = prefix.join("deps.json");
    let (code, _, stderr) = run_checked(&["deps-viewer", deps.to_str().unwrap(), "--format", "html"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("so it is refused past 3000. Use --engine sfdp, or show one task's neighbourhood"),
        "{stderr}"
    );
}

#[test]
fn case_8_documented_limits_hold_at_their_edge() {
    let (code, stdout, stderr) = run_checked(&["run", "chain_barrier", "--param", "n=8000"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("tasks      8002"), "{stdout}");
    let (code, _, stderr) = run_checked(&["run", "chain_barrier", "--param", "n=8001"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--param n=8001: at most 8000 producers"),
        "{stderr}"
    );

    // 64 scope levels, the root included: 63 nested scope statements work, 64 do not.
    let dir = tempfile::tempdir().unwrap();
    let nested = |levels: usize| {
        let mut body =
            serde_json::json!([ { "submit": { "kernel": "noop", "args": [ { "input": "X" } ] } } ]);
        for _ in 0..levels {
            body = serde_json::json!([ { "scope": { "body": body } } ]);
        }
        let w = serde_json::json!({ "name": "nested", "tensors": [ { "name": "X", "shape": [16] } ], "body": body });
        write(dir.path(), &format!("n{levels}.json"), &w.to_string())
    };
    let (code, _, stderr) = run_checked(&["run", nested(63).to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run_checked(&["run", nested(64).to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stderr.contains("scopes nest deeper than 64"), "{stderr}");
    // JSON nested past what any workload needs is refused before it is parsed.
    let deep = write(
        dir.path(),
        "deep.json",
        &format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
    );
    let (code, _, stderr) = run_checked(&["run", deep.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("line 1 column 257: JSON nested deeper than 256 levels"),
        "{stderr}"
    );
}

#[test]
fn case_9_from_deps_reports_every_block_num_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let deps = serde_json::json!({
        "tasks": [
            { "task_id": "4294967296", "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 0, "args": [] },
            { "task_id": "4294967297", "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1000000, "args": [] }
        ],
        "tensors": [],
        "edges": []
    });
    let file = write(dir.path(), "deps.json", &deps.to_string());
    let (code, stdout, stderr) = run_checked(&["run", "--from-deps", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("approximated    2 task(s) have a block_num the runtime cannot launch (it takes 1..=65535): re-run with the nearest one (first: task 4294967296 (ring 1, local 0) block_num 0 -> 1)"),
        "{stdout}"
    );
}

/// A malformed capture is an error (exit 1) naming the file, the task and the field: a task id
/// on ring 9 re-ran on ring 3 (exit 0), and 40 arguments stopped the run with fatal 5 (exit 69)
/// naming no task.
#[test]
fn case_12_from_deps_refuses_a_malformed_capture() {
    let dir = tempfile::tempdir().unwrap();
    let task = |id: u64, args: usize| {
        let args: Vec<_> = (0..args)
            .map(|k| serde_json::json!({ "idx": k, "type": "INPUT", "tensor_id": "7", "dtype": "FLOAT32", "shape": [4], "start_offset": "0", "strides": [1] }))
            .collect();
        serde_json::json!({ "task_id": id.to_string(), "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1, "args": args })
    };
    let tensors = serde_json::json!([{ "tensor_id": "7", "buffer_addr": "4096", "version": 0, "dtype": "FLOAT32", "buffer_numel": "4" }]);
    for (name, tasks, want) in [
        (
            "ring9.json",
            vec![task(0, 1), task(9 << 32, 1)],
            "tasks[1] (task_id 38654705664): task_id: ring 9 (a task id is ring << 32 | local); the runtime has rings 0 to 3",
        ),
        (
            "many_args.json",
            vec![task(0, 1), task(1, 40)],
            "tasks[1] (task_id 1): args: 40 tensor arguments; a task takes at most 32",
        ),
    ] {
        let deps = serde_json::json!({ "tasks": tasks, "tensors": tensors, "edges": [] });
        let file = write(dir.path(), name, &deps.to_string());
        let (code, _, stderr) = run_checked(&["run", "--from-deps", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert_eq!(stderr, format!("error: {}: {want}\n", file.display()), "{name}");
    }
}

/// External tensors that cannot all fit in the host's memory (1,024 of 4 GiB: 4 TiB) are
/// refused before any is allocated; they once ran the host out of memory one page at a time
/// (a `--from-deps` capture naming a million 64 KiB buffers).
#[test]
fn case_11_external_tensors_past_host_memory_are_refused_before_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let tensors: Vec<String> = (0..1024)
        .map(|i| format!("{{\"name\": \"t{i}\", \"dtype\": \"FLOAT32\", \"shape\": [1073741824]}}"))
        .collect();
    let file = write(
        dir.path(),
        "huge.json",
        &format!(
            "{{\"name\": \"huge\", \"tensors\": [{}], \"body\": []}}",
            tensors.join(",")
        ),
    );
    let (code, _, stderr) = run_checked(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the 1024 external tensor(s) need 4.0 TiB of host memory, more than this machine's")
            && stderr.contains("(the largest, `t1023`, takes 4.0 GiB); none was allocated"),
        "{stderr}"
    );
}

#[test]
fn case_10_duplicates_backwards_counters_and_hints() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Duplicate keys: deps.json sections, name maps, the scope-stats metadata line.
    let deps = write(
        d,
        "dup.json",
        r#"{"tasks":[],"tasks":[],"tensors":[],"edges":[]}"#,
    );
    let (code, _, stderr) = run_checked(&["deps-viewer", deps.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("dup.json:1:20: invalid deps.json: duplicate field `tasks`"),
        "{stderr}"
    );

    let prefix = vector_run(d, "run");
    write(&prefix, "name_map.json", "{\"0\": \"a\",\n \"0\": \"b\"}");
    let deps = prefix.join("deps.json");
    let names = prefix.join("name_map.json");
    let (code, _, stderr) = run_checked(&[
        "deps-viewer",
        deps.to_str().unwrap(),
        "--func-names",
        names.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("name_map.json:2:5: invalid name map: duplicate key `0`"),
        "{stderr}"
    );
    // Found beside the graph (not asked for), it is skipped with the same message.
    let (code, _, stderr) = run_checked(&["deps-viewer", deps.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("warning: ignoring name map: ") && stderr.contains("duplicate key `0`"),
        "{stderr}"
    );

    let jsonl = prefix.join("scope_stats/scope_stats.jsonl");
    let original = std::fs::read_to_string(&jsonl).unwrap();
    let dup = original.replacen("{\"fatal\":false,", "{\"fatal\":false,\"fatal\":true,", 1);
    let copy = write(d, "dup.jsonl", &dup);
    let (code, _, stderr) = run_checked(&["scope-stats-plot", copy.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stderr.contains("duplicate key `fatal`"), "{stderr}");

    // A counter that goes backwards is invalid input, not a negative peak.
    let mut lines: Vec<String> = original.lines().map(String::from).collect();
    let mut sample: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    sample["task_window_start"] = 100_000.into();
    lines[1] = sample.to_string();
    let back = write(d, "back.jsonl", &(lines.join("\n") + "\n"));
    let (code, _, stderr) = run_checked(&["scope-stats-plot", back.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("line 2") && stderr.contains("task_window_start 100000 is past task_window_end"),
        "{stderr}"
    );

    // A task id listed twice.
    let twice = write(
        d,
        "twice.json",
        r#"{"tasks":[{"task_id":"4294967296","kernel_ids":[-1,0,-1],"block_num":1,"args":[]},
                   {"task_id":"4294967296","kernel_ids":[-1,1,-1],"block_num":1,"args":[]}],
           "tensors":[],"edges":[]}"#,
    );
    let (code, _, stderr) = run_checked(&["deps-viewer", twice.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("tasks[1]: task_id 4294967296 ((1, 0)) is listed twice (first at tasks[0])"),
        "{stderr}"
    );

    // A cycle: the warning says what the view shows.
    let cycle = write(
        d,
        "cycle.json",
        r#"{"tasks":[],"tensors":[],"edges":[{"pred":"1","succ":"2","source":"explicit"},{"pred":"2","succ":"1","source":"explicit"}]}"#,
    );
    let (code, _, stderr) = run_checked(&["deps-viewer", cycle.to_str().unwrap(), "--edge-mode", "omitted"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("so --edge-mode omitted shows none"), "{stderr}");

    // Hints name the flag; a zero timeout says what it counted.
    let (code, _, stderr) = run_checked(&["run", "vector_example", "--timeout-secs", "0"]);
    assert_eq!(code, 100, "{stderr}");
    assert!(stderr.contains("raise the timeout (--timeout-secs"), "{stderr}");
    assert!(!stderr.contains("of (orchestration still running)"), "{stderr}");

    // A negative func id says so.
    let w = serde_json::json!({
        "name": "neg", "tensors": [ { "name": "X", "shape": [16] } ],
        "body": [ { "submit": { "kernel": -1, "args": [ { "input": "X" } ] } } ]
    });
    let file = write(d, "neg.json", &w.to_string());
    let (code, _, stderr) = run_checked(&["run", file.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stderr.contains("func id -1 is negative"), "{stderr}");

    // --output-prefix with no diagnostic creates and prints nothing.
    let unused = d.join("unused");
    let (code, stdout, _) = run_checked(&[
        "run",
        "vector_example",
        "--output-prefix",
        unused.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert!(!stdout.contains("artifacts") && !unused.exists(), "{stdout}");
}

#[test]
#[cfg(unix)]
fn no_command_writes_outside_the_folder_it_was_given() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let prefix = dir.path().join("run");
    std::fs::create_dir(&prefix).unwrap();
    // Every name the run or a view writes, and the lock and the scope_stats folder, as links
    // pointing outside.
    let mut names: Vec<&str> = simpler_artifacts::output_folder::RUN_FILES
        .iter()
        .copied()
        .filter(|n| !n.contains('/'))
        .collect();
    names.extend(["deps_viewer.txt", ".simpler.lock"]);
    for n in &names {
        write(&outside, n, "sentinel");
        symlink(outside.join(n), prefix.join(n)).unwrap();
    }
    let outside_stats = outside.join("stats");
    std::fs::create_dir(&outside_stats).unwrap();
    symlink(&outside_stats, prefix.join("scope_stats")).unwrap();

    vector_run(dir.path(), "run");
    let deps = prefix.join("deps.json");
    for args in [
        vec!["deps-viewer", deps.to_str().unwrap()],
        vec!["deps-viewer", deps.to_str().unwrap(), "--format", "html"],
        vec![
            "scope-stats-plot",
            prefix.join("scope_stats/scope_stats.jsonl").to_str().unwrap(),
        ],
        vec![
            "swimlane",
            prefix.join("l2_swimlane_records.json").to_str().unwrap(),
        ],
    ] {
        let (code, _, stderr) = run_checked(&args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
    for n in &names {
        assert_eq!(
            std::fs::read_to_string(outside.join(n)).unwrap(),
            "sentinel",
            "{n}"
        );
    }
    assert_eq!(
        std::fs::read_dir(&outside_stats).unwrap().count(),
        0,
        "nothing written through the link"
    );
    assert!(!std::fs::symlink_metadata(prefix.join("scope_stats"))
        .unwrap()
        .file_type()
        .is_symlink());

    // The args dump's folder as a link: the next run's dump lands in a real folder.
    let outside_dump = outside.join("dump");
    std::fs::create_dir(&outside_dump).unwrap();
    symlink(&outside_dump, prefix.join("args_dump")).unwrap();
    let (code, _, stderr) = run_checked(&[
        "run",
        "vector_example",
        "--dump-args=2",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        std::fs::read_dir(&outside_dump).unwrap().count(),
        0,
        "nothing written through the link"
    );
    assert!(prefix.join("args_dump/args_dump.json").is_file());
}

/// Found by a review: links planted after the run, where a tool writes a view under a name
/// of its own choosing, were written through (the files outside replaced, the links left).
/// The tools now replace such a link with their file; a link the user names with `-o` is
/// still written through (`publish.rs`, `a_link_is_written_through_...`).
#[test]
fn a_link_at_a_name_a_tool_chose_is_replaced_not_written_through() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let prefix = vector_run(dir.path(), "run");
    let names = [
        "deps_viewer.txt",
        "deps_viewer.html",
        "critical_path_report.md",
        "CPM_static.json",
        "CPM_observed.json",
        "scope_stats/scope_stats.html",
        "scope_stats/plan.json",
    ];
    for (k, n) in names.iter().enumerate() {
        let target = write(&outside, &format!("victim{k}"), "sentinel");
        let _ = std::fs::remove_file(prefix.join(n));
        symlink(&target, prefix.join(n)).unwrap();
    }
    let (deps, jsonl) = (
        prefix.join("deps.json"),
        prefix.join("scope_stats/scope_stats.jsonl"),
    );
    let (deps, jsonl, run) = (
        deps.to_str().unwrap(),
        jsonl.to_str().unwrap(),
        prefix.to_str().unwrap(),
    );
    for args in [
        vec!["deps-viewer", deps],
        vec!["deps-viewer", deps, "--format", "html"],
        vec!["critical-path", run],
        vec!["scope-stats-plot", jsonl],
        vec!["plan", jsonl, "--verify", "0"],
    ] {
        let (code, _, stderr) = run_checked(&args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
    }
    for (k, n) in names.iter().enumerate() {
        let victim = std::fs::read_to_string(outside.join(format!("victim{k}"))).unwrap();
        assert_eq!(victim, "sentinel", "{n} was written through");
        let md = std::fs::symlink_metadata(prefix.join(n)).unwrap();
        assert!(md.is_file() && md.len() > 0, "{n} is the tool's file now");
    }
}

/// Found by a review: the HTML view's layout raised its address-space limit to half the
/// machine's memory, which a hard `ulimit -v` below that refuses, so every layout failed
/// ("Graphviz `dot` failed ... ulimit: error setting limit"). A lower limit now stays.
#[test]
fn the_html_view_lays_out_under_a_lower_memory_limit_than_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = vector_run(dir.path(), "run");
    let out = dir.path().join("view.html");
    let half = simpler_artifacts::host::mem_total_bytes().unwrap() / 2 / 1_000_000;
    let (code, _, stderr) = run_bounded(
        dir.path(),
        (half / 2).max(4000),
        &[
            "deps-viewer",
            prefix.join("deps.json").to_str().unwrap(),
            "--format",
            "html",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::read_to_string(&out).unwrap().contains("<svg"));
}

/// Runs `simpler args` in `dir` under an address-space limit of `limit_mb` MB (none when 0),
/// waiting at most 30 s: a command still running then is killed and the test fails (a named
/// pipe blocks `open` for ever). Returns the exit status, stdout and stderr; a crash (101, 134,
/// a signal) fails the test.
#[cfg(unix)]
fn run_bounded(dir: &Path, limit_mb: u64, args: &[&str]) -> (i32, String, String) {
    use std::io::Read;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(if limit_mb > 0 {
            format!("ulimit -v {}; exec \"$0\" \"$@\"", limit_mb * 1024)
        } else {
            "exec \"$0\" \"$@\"".to_string()
        })
        .arg(env!("CARGO_BIN_EXE_simpler"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still running after 30 s (blocked opening its input?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let code = status
        .code()
        .unwrap_or_else(|| panic!("{args:?}: killed by a signal: {stderr}"));
    assert!(code != 101 && code != 134, "{args:?} crashed ({code}): {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (code, stdout, stderr)
}

/// Found by a review: a named pipe in place of an input hung the command in `open` for ever
/// (and `run` ignored SIGTERM there). Each reader now refuses it before opening it, with the
/// args dump's words (`simpler_artifacts::input::open_regular`).
#[test]
#[cfg(unix)]
fn case_13_a_named_pipe_in_place_of_an_input_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = vector_run(dir.path(), "run");
    let records = prefix.join("l2_swimlane_records.json");
    for name in ["x.json", "deps.json", "names.json", "s.jsonl"] {
        let ok = Command::new("mkfifo")
            .arg(dir.path().join(name))
            .status()
            .unwrap();
        assert!(ok.success());
    }
    let pipe = "is a named pipe (FIFO), expected a regular file";
    let records = records.to_str().unwrap();
    for (args, expected) in [
        (vec!["run", "x.json"], format!("error: reading x.json: {pipe}\n")),
        (
            vec!["run", "--from-deps", "deps.json"],
            format!("error: deps.json: cannot read deps.json: {pipe}\n"),
        ),
        (
            vec!["deps-viewer", "deps.json", "-o", "out.txt"],
            format!("error: deps.json: cannot read deps.json: {pipe}\n"),
        ),
        (
            vec!["swimlane", records, "--deps-json", "deps.json", "-o", "t.json"],
            format!("error: deps.json: cannot read deps.json: {pipe}\n"),
        ),
        (
            vec!["swimlane", records, "--func-names", "names.json", "-o", "t.json"],
            format!("error: names.json: cannot read name map: {pipe}\n"),
        ),
        (
            vec!["plan", "s.jsonl", "--verify", "0"],
            format!("error: s.jsonl: cannot open s.jsonl: {pipe}\n"),
        ),
        (
            vec!["scope-stats-plot", "s.jsonl", "--out-dir", "o"],
            format!("error: cannot open s.jsonl: {pipe}\n"),
        ),
        (
            vec!["swimlane", "x.json", "-o", "t.json"],
            format!("error: x.json: cannot read l2_swimlane_records.json: {pipe}\n"),
        ),
    ] {
        let (code, _, stderr) = run_bounded(dir.path(), 0, &args);
        assert_eq!((code, stderr.as_str()), (1, expected.as_str()), "{args:?}");
    }
}

/// Found by a review: a scope_stats.jsonl line and a workload file were read whole, with no
/// limit: `/dev/zero` aborted the process (`memory allocation of 4294967296 bytes failed`) and
/// a sparse 3 GB file took 3 GB before it was refused at line 1. A line is now at most
/// `scope_stats::MAX_LINE_BYTES` (1 MiB) and a workload file `simpler_workloads::MAX_FILE_BYTES`
/// (64 MiB), each refused after a read of that much; the commands run here under a 2 GB
/// address-space limit, which the unbounded reads broke. A deps.json past 64 MiB still plans.
#[test]
#[cfg(unix)]
fn case_14_an_input_past_its_size_limit_is_refused_after_a_bounded_read() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["big.json", "big.jsonl"] {
        std::fs::File::create(dir.path().join(name))
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
    }
    let long = "a line longer than 1 MiB (a scope_stats.jsonl record is one short line)";
    for (args, expected) in [
        (
            vec!["run", "big.json"],
            "error: reading big.json: a file of 3 GiB (3221225472 bytes): a workload file is at most 64 MiB\n"
                .to_string(),
        ),
        (
            vec!["plan", "big.json", "--verify", "0"],
            "error: big.json: not valid JSON: expected value at line 1 column 1\n".to_string(),
        ),
        (
            vec!["scope-stats-plot", "big.jsonl", "--out-dir", "o"],
            format!("error: big.jsonl: not a scope_stats.jsonl: line 1: {long}\n"),
        ),
        (
            vec!["plan", "big.jsonl", "--verify", "0"],
            format!("error: big.jsonl: line 1: {long}\n"),
        ),
    ] {
        let (code, _, stderr) = run_bounded(dir.path(), 2000, &args);
        assert_eq!((code, stderr.as_str()), (1, expected.as_str()), "{args:?}");
    }

    // At the edge: a metadata line of exactly 1 MiB (padded with blanks) reads; one byte more,
    // on line 1 or on a sample's line, does not.
    let meta = r#"{"fatal": false, "dropped": 0, "total": 0, "task_window_max": [8, 4, 4, 4], "heap_max": [1024, 1024, 1024, 1024], "dep_pool_max": [16, 16, 16, 16], "tensormap_max": 64}"#;
    let begin = r#"{"site": "a.rs:7", "phase": "begin", "depth": 1, "ring": 1, "task_window_start": 0, "task_window_end": 0, "heap_start": 0, "heap_end": 0, "dep_pool_start": 1, "dep_pool_end": 1, "tensormap": 0, "run_epoch": 7, "buf_seq": 0}"#;
    let pad = |line: &str, len: usize| format!("{line}{}\n", " ".repeat(len - line.len()));
    write(dir.path(), "edge.jsonl", &pad(meta, 1 << 20));
    write(dir.path(), "over.jsonl", &pad(meta, (1 << 20) + 1));
    write(
        dir.path(),
        "over3.jsonl",
        &format!("{meta}\n{begin}\n{}", pad(begin, (1 << 20) + 1)),
    );
    let (code, _, stderr) = run_bounded(
        dir.path(),
        0,
        &["scope-stats-plot", "edge.jsonl", "--out-dir", "e"],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run_bounded(
        dir.path(),
        0,
        &["scope-stats-plot", "over.jsonl", "--out-dir", "e"],
    );
    assert_eq!(
        (code, stderr.as_str()),
        (
            1,
            format!("error: over.jsonl: not a scope_stats.jsonl: line 1: {long}\n").as_str()
        )
    );
    let (code, _, stderr) = run_bounded(
        dir.path(),
        0,
        &["scope-stats-plot", "over3.jsonl", "--out-dir", "e"],
    );
    assert_eq!(
        (code, stderr.as_str()),
        (1, format!("error: over3.jsonl: line 3: {long}\n").as_str())
    );

    // A workload file of exactly 64 MiB runs;
    // a deps.json past 64 MiB is still told from a workload file, and planned.
    let w = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../workloads/vector_example.json"
    ))
    .unwrap();
    write(
        dir.path(),
        "edge.json",
        &format!("{w}{}", " ".repeat((64 << 20) - w.len())),
    );
    let (code, _, stderr) = run_bounded(dir.path(), 0, &["run", "edge.json"]);
    assert_eq!(code, 0, "{stderr}");
    let prefix = vector_run(dir.path(), "run");
    let deps = std::fs::read_to_string(prefix.join("deps.json")).unwrap();
    write(
        dir.path(),
        "deps.json",
        &format!("{deps}{}", " ".repeat(65 << 20)),
    );
    let (code, stdout, stderr) = run_bounded(dir.path(), 0, &["plan", "deps.json", "--verify", "0"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("capacity plan for replay of deps.json "),
        "{stdout}"
    );
}

/// Found by a review: showing one element, or a payload's first and last elements, read the
/// whole payload into memory and decoded it (three times the payload: 5.9 GB for 2 GB). Under
/// a 2 GB address-space limit, a 3 GiB payload (a sparse file) is shown by the elements shown.
#[test]
fn case_15_a_huge_payload_is_shown_without_holding_it() {
    use std::io::{Seek, SeekFrom, Write};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("args_dump");
    std::fs::create_dir_all(&d).unwrap();
    let bytes: u64 = 3 << 30;
    let entry = |dtype: &str, size: u64| {
        serde_json::json!({
            "task_id": "0x0000000100000000", "arg_index": 0, "role": "input",
            "stage": "before_dispatch", "dtype": dtype, "is_contiguous": true,
            "shape": [bytes / size], "numel": bytes / size, "bin_offset": 0, "bin_size": bytes
        })
    };
    let mut bin = std::fs::File::create(d.join("args.bin")).unwrap();
    bin.seek(SeekFrom::Start(20)).unwrap();
    bin.write_all(&1.5f32.to_le_bytes()).unwrap();
    bin.seek(SeekFrom::Start(bytes - 4)).unwrap();
    bin.write_all(&(-2.0f32).to_le_bytes()).unwrap();
    drop(bin);
    for (dtype, size, element, values) in [
        (
            "FLOAT32",
            4,
            "  element [5] (flat 5) = 1.5\n",
            "  [0, 0, 0, 0, 0, 1.5, 0, 0, ... 805306352 more ..., 0, 0, 0, 0, 0, 0, 0, -2]\n",
        ),
        (
            "FP8E4M3FN",
            1,
            "  element [20] (flat 20) = bytes 00\n",
            "  (dtype FP8E4M3FN is not decoded: bytes in hex) [00 00 00 00 00 00 00 00, ... 3221225456 more bytes ..., \
             00 00 00 00 00 00 00 c0]\n",
        ),
    ] {
        let manifest = serde_json::json!({
            "total_args": 1, "before_dispatch": 1, "input_args": 1, "args": [entry(dtype, size)]
        });
        write(&d, "args_dump.json", &manifest.to_string());
        let at = if size == 4 { "5" } else { "20" };
        let (code, stdout, stderr) = run_bounded(dir.path(), 2000, &["dump-viewer", "args_dump", "--element", at]);
        assert_eq!(code, 0, "{dtype}: {stderr}");
        assert!(stdout.ends_with(element), "{dtype}: {stdout}");
        let (code, stdout, stderr) = run_bounded(dir.path(), 2000, &["dump-viewer", "args_dump", "--values"]);
        assert_eq!(code, 0, "{dtype}: {stderr}");
        assert!(stdout.ends_with(values), "{dtype}: {stdout}");
    }
}

/// Found by a review: under an address-space limit (`ulimit -v`) a heap the machine's memory
/// would hold was refused by the allocator, and the run aborted (a panic in `vec!`); so did
/// the reservation of a tensor map capacity near its maximum, without any limit. Both now run
/// or refuse with an error naming the key, and no folder is claimed for a refused heap.
#[test]
fn case_16_sizes_the_host_refuses_are_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run_bounded(
        dir.path(),
        1000,
        &[
            "run",
            "vector_example",
            "--runtime-env",
            "ring_heap=1500000000",
            "--enable-dep-gen",
            "--output-prefix",
            "r",
        ],
    );
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: invalid configuration: runtime_env ring_heap: the host refused the 1.4 GiB of ring 0's heap \
             (an address-space limit such as `ulimit -v`, or the kernel's overcommit rules); lower ring_heap\n"
        )
    );
    assert!(!dir.path().join("r").exists(), "no folder claimed");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/vector_example.json");
    let mut w: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(source).unwrap()).unwrap();
    w["tensormap_capacity"] = 2147483647u64.into();
    w["$schema"] = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/schema.json").into();
    write(dir.path(), "big_map.json", &w.to_string());
    let (code, stdout, stderr) = run_bounded(dir.path(), 0, &["run", "big_map.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("f: OK (16384 elements)"), "{stdout}");
}

/// Found by a review: an external tensor the host refused (4 GiB under `ulimit -v`) was
/// named, but not where it is declared. The error now says the file and `tensors[k]`.
#[test]
fn an_external_tensor_the_host_refuses_is_named_with_its_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "big.json",
        r#"{ "tensors": [ { "name": "small", "shape": [4] }, { "name": "X", "shape": [1073741824] } ],
  "body": [ { "submit": { "kernel": "noop", "args": [ { "inout": "X" } ] } } ] }"#,
    );
    let (code, _, stderr) = run_bounded(dir.path(), 2000, &["run", "big.json"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            1,
            "error: big.json: tensors[1]: allocating external tensor `X`: the host refused the \
             4294967296 bytes of a FLOAT32 buffer of shape [1073741824]\n"
        )
    );
}
