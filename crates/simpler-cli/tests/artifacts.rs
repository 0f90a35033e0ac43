//! Artifacts you can trust, end to end through the `simpler` binary: an output folder belongs
//! to one run (lock, earlier run removed), no file appears under its final name before it is
//! complete (full disk, interrupts, kill -9), the run manifest says how the run ended, exit
//! statuses tell the truth, and every tool warns about an artifact of a failed or stale run.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use simpler_artifacts::testing::mount_tmpfs;

mod common;
use common::{dep_gen_run, every_diagnostic, read_json, simpler, simpler_cmd, simpler_in, text};

/// A workload of `n` busy tasks of 20 ms each in one scope: a run that lasts seconds.
/// `n` tasks of 20 ms in a chain (INOUT on one tensor): independent `busy` tasks would run side
/// by side on the virtual cores and end too soon.
fn slow_workload(dir: &Path, n: u32) -> PathBuf {
    let path = dir.join("slow.json");
    let w = serde_json::json!({
        "name": "slow",
        "constants": { "N": n, "US": 20000 },
        "tensors": [ { "name": "X", "shape": [16] } ],
        "body": [ { "scope": { "body": [
            { "repeat": { "var": "i", "count": "N", "body": [
                { "submit": { "kernel": "busy", "args": [ { "inout": "X" } ], "scalars": [ { "u64": "US" } ] } }
            ] } }
        ] } } ]
    });
    std::fs::write(&path, w.to_string()).unwrap();
    path
}

/// Starts a slow run with every diagnostic into `prefix` and waits until it has claimed the
/// folder (its manifest says `running`). The caller waits for the child it gets back.
#[allow(clippy::zombie_processes)]
fn start_slow_run(dir: &Path, prefix: &Path) -> Child {
    let workload = slow_workload(dir, 200);
    let mut child = simpler_cmd(&every_diagnostic(workload.to_str().unwrap(), prefix))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let m = prefix.join("run.json");
        if m.exists() && read_json(&m)["status"] == "running" {
            return child;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the slow run never started");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("sh")
        .args(["-c", &format!("kill -{sig} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Every file under `dir` (relative, `/`-separated), hidden ones included.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// Hidden work files (temporaries, spill parts) under `dir`, the lock file aside.
fn temporaries(dir: &Path) -> Vec<String> {
    files(dir)
        .into_iter()
        .filter(|f| {
            let name = f.rsplit('/').next().unwrap();
            name.starts_with('.') && name != ".simpler.lock"
        })
        .collect()
}

fn assert_no_temporaries(dir: &Path) {
    let left = temporaries(dir);
    assert!(left.is_empty(), "temporaries left in {}: {left:?}", dir.display());
}

/// Every file the folder holds besides the lock and the manifest is one the manifest lists,
/// with the size it lists.
fn assert_only_manifest_files(prefix: &Path) -> Value {
    let m = read_json(&prefix.join("run.json"));
    let mut listed: Vec<(String, u64)> = Vec::new();
    for d in m["diagnostics"].as_array().unwrap() {
        for f in d["files"].as_array().unwrap() {
            listed.push((f["name"].as_str().unwrap().into(), f["bytes"].as_u64().unwrap()));
        }
    }
    for f in m["views"].as_array().unwrap() {
        listed.push((f["name"].as_str().unwrap().into(), f["bytes"].as_u64().unwrap()));
    }
    for f in files(prefix) {
        if f == "run.json" || f == ".simpler.lock" {
            continue;
        }
        let Some((_, bytes)) = listed.iter().find(|(n, _)| *n == f) else {
            panic!("{f} is not a file of the run in {}: {m:#}", prefix.display());
        };
        assert_eq!(std::fs::metadata(prefix.join(&f)).unwrap().len(), *bytes, "{f}");
    }
    m
}

#[test]
fn success_then_fatal_into_one_folder_leaves_nothing_of_the_first_run() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let p = prefix.to_str().unwrap();
    let all = ["--enable-scope-stats", "--enable-dep-gen", "--enable-l2-swimlane"];
    let mut args = vec!["run", "vector_example", "--output-prefix", p];
    args.extend(all);
    let ok = simpler(&args);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert_eq!(read_json(&prefix.join("run.json"))["status"], "completed");

    args.extend(["--runtime-env", "ring_heap=65536"]);
    let fatal = simpler(&args);
    let stdout = text(&fatal.stdout);
    assert_eq!(fatal.status.code(), Some(64 + 2), "HEAP_RING_DEADLOCK: {stdout}");
    assert!(
        stdout.contains("removed    9 file(s) an earlier run left in this folder"),
        "{stdout}"
    );

    let m = assert_only_manifest_files(&prefix);
    assert_eq!(m["status"], "fatal");
    assert_eq!(m["fatal"]["code"], 2);
    assert_eq!(m["fatal"]["name"], "HEAP_RING_DEADLOCK");
    // The views are this run's: the text view counts deps.json's tasks, the report shows the
    // fatal (and the warning banner of a run that did not complete).
    let deps = read_json(&prefix.join("deps.json"));
    let tasks = deps["tasks"].as_array().unwrap().len();
    assert_eq!(tasks, 2);
    let view = std::fs::read_to_string(prefix.join("deps_viewer.txt")).unwrap();
    assert!(view.contains(&format!("tasks: {tasks}\n")), "{view}");
    let html = std::fs::read_to_string(prefix.join("scope_stats/scope_stats.html")).unwrap();
    assert!(html.contains("class=\"run-warning\"") && !html.contains("Healthy"));
}

#[test]
fn a_second_run_into_a_busy_folder_fails_at_once_and_names_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("shared");
    let mut first = start_slow_run(dir.path(), &prefix);
    let t0 = Instant::now();
    let second = simpler(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    let waited = t0.elapsed();
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(&format!("is in use by another run (pid {}, run ", first.id())),
        "{stderr}"
    );
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first run was still going"
    );
    assert!(
        waited < Duration::from_secs(5),
        "refused at once, not after {waited:?}"
    );
    // Found by a review: a tool wrote its view of another run into a folder a run held.
    let other = dir.path().join("other");
    dep_gen_run(&other);
    let view = prefix.join("deps_viewer_other.txt");
    let tool = simpler(&[
        "deps-viewer",
        other.join("deps.json").to_str().unwrap(),
        "-o",
        view.to_str().unwrap(),
    ]);
    let stderr = text(&tool.stderr);
    assert_eq!(tool.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot write {}: its folder is in use by a run of another process (pid {}, run ",
            view.display(),
            first.id()
        )),
        "{stderr}"
    );
    assert!(!view.exists());
    // Nor into one of the run's own subfolders (found by a review: only the folder's own lock
    // was looked for, so a write into `scope_stats/` went ahead).
    let stats = dir.path().join("stats");
    let rec = simpler(&[
        "run",
        "vector_example",
        "--enable-scope-stats",
        "--output-prefix",
        stats.to_str().unwrap(),
    ]);
    assert!(rec.status.success(), "{}", text(&rec.stderr));
    let report = prefix.join("scope_stats").join("scope_stats.html");
    let tool = simpler(&[
        "scope-stats-plot",
        stats.join("scope_stats/scope_stats.jsonl").to_str().unwrap(),
        "--out-dir",
        prefix.join("scope_stats").to_str().unwrap(),
    ]);
    let stderr = text(&tool.stderr);
    assert_eq!(tool.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot write {}: its folder is in use by a run of another process (pid {}, run ",
            report.display(),
            first.id()
        )),
        "{stderr}"
    );
    // Nor from inside one, into `.` (found by a review: `.` names no folder as spelled, and
    // the run's was not found above it).
    let sub = prefix.join("scope_stats");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !sub.is_dir() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let tool = simpler_in(
        &sub,
        &[
            "deps-viewer",
            other.join("deps.json").to_str().unwrap(),
            "-o",
            "other.txt",
        ],
    );
    let stderr = text(&tool.stderr);
    assert_eq!(tool.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot write other.txt: its folder is in use by a run of another process (pid {}, run ",
            first.id()
        )),
        "{stderr}"
    );
    assert!(!sub.join("other.txt").exists());

    let out = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let m = assert_only_manifest_files(&prefix);
    assert_eq!(m["status"], "completed");
    let deps = read_json(&prefix.join("deps.json"));
    assert_eq!(deps["tasks"].as_array().unwrap().len(), 200);
    simpler_artifacts::swimlane::read_swimlane_file(&prefix.join("l2_swimlane_records.json")).unwrap();
    assert_no_temporaries(&prefix);
}

#[test]
fn default_folders_never_collide() {
    let dir = tempfile::tempdir().unwrap();
    let outputs = dir.path().join("outputs");
    // Another run's folders under every default name of the next seconds: a run must not
    // write into any of them.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let taken: Vec<PathBuf> = (now.saturating_sub(1)..now + 30)
        .map(|s| {
            let stamp = simpler_artifacts::time::stamp_of(s);
            let d = outputs.join(format!("vector_example_default_{stamp}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("other.txt"), "not yours").unwrap();
            d
        })
        .collect();
    for _ in 0..2 {
        let out = simpler_cmd(&["run", "vector_example", "--enable-dep-gen"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    for d in &taken {
        assert_eq!(files(d), ["other.txt"], "{} was left alone", d.display());
    }
    let fresh: Vec<_> = std::fs::read_dir(&outputs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !taken.contains(p))
        .collect();
    assert_eq!(fresh.len(), 2, "two runs, two new folders: {fresh:?}");
    for f in &fresh {
        assert!(f.join("run.json").exists() && f.join("deps.json").exists());
    }
}

#[test]
fn a_write_that_fails_leaves_no_partial_file_and_exits_diagnostic_lost() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let out = simpler_cmd(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--enable-scope-stats",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ])
    .env("SIMPLER_FAULT_WRITE", "deps.json:fail=100")
    .output()
    .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "requested diagnostics were not fully written: dep_gen failed: no deps.json: cannot write"
        ) && stderr.contains("deps.json: No space left on device"),
        "{stderr}"
    );
    assert!(!prefix.join("deps.json").exists());
    assert_no_temporaries(&prefix);
    let m = assert_only_manifest_files(&prefix);
    assert_eq!(m["status"], "completed");
    let dep_gen = &m["diagnostics"].as_array().unwrap()[1];
    assert_eq!(
        (dep_gen["name"].as_str(), dep_gen["outcome"].as_str()),
        (Some("dep_gen"), Some("failed"))
    );

    // The args dump's manifest fails after its payloads were written: no args.bin is left
    // without the manifest that describes it (it was, a file run.json did not list).
    let out = simpler_cmd(&[
        "run",
        "vector_example",
        "--dump-args",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ])
    .env("SIMPLER_FAULT_WRITE", "args_dump.json:fail=100")
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(!prefix.join("args_dump/args.bin").exists());
    assert_only_manifest_files(&prefix);

    // A tool's output: the text view fails after 50 bytes; no deps_viewer.txt appears.
    dep_gen_run(&prefix);
    std::fs::remove_file(prefix.join("deps_viewer.txt")).unwrap();
    let out = simpler_cmd(&["deps-viewer", prefix.join("deps.json").to_str().unwrap()])
        .env("SIMPLER_FAULT_WRITE", "deps_viewer.txt:fail=50")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("deps_viewer.txt: No space left on device"),
        "{}",
        text(&out.stderr)
    );
    assert!(!prefix.join("deps_viewer.txt").exists());
    assert_no_temporaries(&prefix);
}

/// Found by a review: a disk that filled before the run's last manifest write left `run.json`
/// saying `running`, which every reader (and `deps-viewer`'s check) takes for a process that
/// died, though the run completed. The `running` manifest (about 270 bytes) fits under the
/// injected limit and the final one does not; it is written into the space the claim set
/// aside, and nothing hidden is left behind.
#[test]
fn a_full_disk_at_the_last_manifest_write_still_records_how_the_run_ended() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let out = simpler_cmd(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ])
    .env("SIMPLER_FAULT_WRITE", "run.json:fail=400")
    .output()
    .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let m = assert_only_manifest_files(&prefix);
    assert_eq!(m["status"], "completed", "{m:#}");
    assert_eq!(m["diagnostics"][0]["outcome"], "written", "{m:#}");
    assert_eq!(m["views"][0]["name"], "deps_viewer.txt", "{m:#}");
    assert_no_temporaries(&prefix);
}

/// Found by a review: scope stats whose body file could not be written (a full disk, a file
/// size limit) were published as a metadata line without samples, marked "written", and the
/// run exited 0; `plan` then sized rings from no samples. The body fails at the run's close
/// (vector_example's few samples sit in the writer's buffer until then) and mid-run (a
/// workload of 3000 scopes), after 500 bytes, which the metadata line alone fits in: either way scope stats fail, nothing is published, the body
/// file is removed, and the message names it.
#[test]
fn scope_stats_whose_samples_cannot_be_written_fail_and_publish_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let workload = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/synthetic_100k.json");
    let cases: [&[&str]; 2] = [
        &["vector_example"],
        &[workload, "--param", "S=3000", "--param", "G=1"],
    ];
    for (i, case) in cases.iter().enumerate() {
        let prefix = dir.path().join(format!("run{i}"));
        let mut args = vec!["run"];
        args.extend_from_slice(case);
        args.extend([
            "--enable-scope-stats",
            "--enable-dep-gen",
            "--output-prefix",
            prefix.to_str().unwrap(),
        ]);
        let out = simpler_cmd(&args)
            .env("SIMPLER_FAULT_WRITE", "scope_stats.jsonl:fail=500")
            .output()
            .unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(3), "{case:?}\n{stdout}\n{stderr}");
        assert!(
            stderr.contains("requested diagnostics were not fully written: scope_stats failed")
                && stderr.contains(".body: No space left on device"),
            "{case:?}\n{stderr}"
        );
        assert!(!prefix.join("scope_stats/scope_stats.jsonl").exists(), "{case:?}");
        assert_no_temporaries(&prefix);
        assert_no_temporaries(&prefix.join("scope_stats"));
        let m = assert_only_manifest_files(&prefix);
        let entries = m["diagnostics"].as_array().unwrap();
        let ss = entries.iter().find(|d| d["name"] == "scope_stats").unwrap();
        assert_eq!(ss["outcome"], "failed", "{case:?}: {ss}");
        let reason = ss["reason"].as_str().unwrap();
        assert!(
            reason.contains("samples received, none published"),
            "{case:?}: {reason}"
        );
        let dg = entries.iter().find(|d| d["name"] == "dep_gen").unwrap();
        assert_eq!(
            dg["outcome"], "written",
            "{case:?}: the other diagnostic is unharmed"
        );
    }
}

/// A real full disk: a 256 KiB tmpfs, where this machine lets the test mount one (root with
/// CAP_SYS_ADMIN); elsewhere the test says it skipped.
#[test]
fn a_full_tmpfs_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mnt) = mount_tmpfs(dir.path(), "tiny", "256k") else {
        return;
    };
    let prefix = mnt.join("run");
    let out = simpler(&[
        "run",
        "chain_barrier",
        "--param",
        "n=4000",
        "--enable-dep-gen",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    let files_left = files(&prefix);
    // Found by a review: the swimlane's and the args dump's failures on a full disk did not
    // say which file they were writing. Every diagnostic on, into a 16 KiB tmpfs.
    let _ = Command::new("umount").arg(&mnt).status();
    let small = mount_tmpfs(dir.path(), "small", "16k").expect("mounted once already");
    let every = simpler(&every_diagnostic("vector_example", &small.join("every")));
    let _ = Command::new("umount").arg(&small).status();
    let failed: Vec<String> = text(&every.stdout)
        .lines()
        .filter(|l| l.contains("FAILED:"))
        .map(str::to_string)
        .collect();
    assert_eq!(every.status.code(), Some(3), "{failed:?}");
    assert!(!failed.is_empty());
    for line in &failed {
        assert!(line.contains(small.to_str().unwrap()), "names no file: {line}");
    }
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(!files_left.contains(&"deps.json".to_string()), "{files_left:?}");
    assert!(
        files_left
            .iter()
            .all(|f| !f.starts_with('.') || f == ".simpler.lock"),
        "{files_left:?}"
    );
}

/// Runs vector_example with its full args dump into a tmpfs of `size` and returns its output
/// with what `inspect` read of the run's folder before the tmpfs went; `None` (the test
/// skips) where no tmpfs can be mounted.
fn full_dump_on_a_tmpfs<T>(
    size: &str,
    inspect: impl FnOnce(&Path) -> T,
) -> Option<(std::process::Output, T)> {
    let dir = tempfile::tempdir().unwrap();
    let mnt = mount_tmpfs(dir.path(), "small", size)?;
    let prefix = mnt.join("run");
    let out = simpler(&[
        "run",
        "vector_example",
        "--dump-args=2",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    let seen = inspect(&prefix);
    let _ = Command::new("umount").arg(&mnt).status();
    Some((out, seen))
}

/// Found by a review: the args dump's payloads were streamed into a part file and then copied
/// into `args.bin`, so the dump took twice its size on disk at its close: a 1200 KiB tmpfs
/// refused vector_example's full dump (an 852 KB args.bin). The part file is now renamed.
/// Skipped where no tmpfs can be mounted, as above.
#[test]
fn the_args_dump_needs_its_own_size_on_disk_not_twice_it() {
    let Some((out, (bin, left))) = full_dump_on_a_tmpfs("1200k", |prefix| {
        let bin = std::fs::metadata(prefix.join("args_dump/args.bin")).map(|m| m.len());
        (bin, files(prefix))
    }) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(bin.unwrap(), 851_968);
    assert!(left.iter().all(|f| !f.contains(".part")), "{left:?}");
}

/// Found by a review: an args dump that failed on a full disk said why, but not how much was
/// lost (its part files are removed, so every record captured goes). vector_example's full
/// dump is 18 records and 851,968 payload bytes; a 400 KiB tmpfs holds half of it.
#[test]
fn an_args_dump_that_fails_on_a_full_disk_counts_what_it_lost() {
    let Some((out, (manifest, left))) = full_dump_on_a_tmpfs("400k", |prefix| {
        (std::fs::read_to_string(prefix.join("run.json")), files(prefix))
    }) else {
        return;
    };
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let m: Value = serde_json::from_str(&manifest.unwrap()).unwrap();
    let dump = m["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "args_dump")
        .unwrap();
    assert_eq!(dump["outcome"], "failed");
    let reason = dump["reason"].as_str().unwrap();
    assert!(reason.contains("No space left on device"), "{reason}");
    assert!(
        reason.ends_with("; no args dump was written (18 captured records, 851968 payload bytes lost)"),
        "{reason}"
    );
    assert!(
        text(&out.stdout).contains("18 captured records, 851968 payload bytes lost"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(left, [".simpler.lock", "name_map.json", "run.json"], "{left:?}");
}

#[test]
fn sigint_during_a_long_run_closes_unproven_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let child = start_slow_run(dir.path(), &prefix);
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "INT");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let m = assert_only_manifest_files(&prefix);
    assert_eq!(m["status"], "interrupted");
    assert_eq!(m["fatal"]["name"], "INTERRUPTED");
    // Found by a review: the summary counted a kernel that ended in the grace period, the
    // fatal (raised before it) did not. The fatal now says both counts, and they add up.
    let stderr = text(&out.stderr);
    let count_after = |text: &str, words: &str| -> Option<u64> {
        text.split(words).nth(1)?.split(' ').next()?.parse().ok()
    };
    let summary = count_after(&stderr, "stopped after ").expect(&stderr);
    let fatal = m["fatal"]["message"].as_str().unwrap();
    let at_stop = count_after(fatal, "interrupted (SIGINT/SIGTERM) after ").expect(fatal);
    let later = count_after(fatal, "tasks completed (and ").unwrap_or(0);
    assert_eq!(at_stop + later, summary, "{fatal} / {stderr}");
    let outcome = |name: &str| {
        let d = m["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
            .unwrap();
        d["outcome"].as_str().unwrap().to_string()
    };
    // Without producer-stop proof the trace cannot be checked: no deps.json.
    assert_eq!(outcome("dep_gen"), "withheld");
    assert!(!prefix.join("deps.json").exists());
    // What the host already held is written, and marked partial.
    assert_eq!(outcome("l2_swimlane"), "partial");
    simpler_artifacts::swimlane::read_swimlane_file(&prefix.join("l2_swimlane_records.json")).unwrap();
    assert_no_temporaries(&prefix);
}

/// An interrupt while a large workload is still being read stops before the run claims its
/// folder: the earlier run's files stay (the claim removed all nine, leaving an empty
/// `interrupted` run; with `--from-deps` the graph being re-run went too).
#[test]
fn sigint_before_the_run_starts_leaves_the_folder_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let first = simpler(&every_diagnostic("vector_example", &prefix));
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let before = files(&prefix);
    let manifest = std::fs::read(prefix.join("run.json")).unwrap();
    // A million submits: expanding them takes over a second, the interrupt comes at 0.3 s.
    let big = dir.path().join("big.json");
    let w = serde_json::json!({
        "tensors": [ { "name": "X", "shape": [4_000_000] } ],
        "body": [ { "repeat": { "var": "i", "count": 1_000_000, "body": [
            { "submit": { "kernel": "noop", "args": [ { "inout": "X", "view": { "shape": [4], "offsets": ["i*4"] } } ] } }
        ] } } ]
    });
    std::fs::write(&big, w.to_string()).unwrap();
    let child = simpler_cmd(&[
        "run",
        big.to_str().unwrap(),
        "--enable-dep-gen",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "INT");
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted before the run started"), "{stderr}");
    assert_eq!(files(&prefix), before);
    assert_eq!(std::fs::read(prefix.join("run.json")).unwrap(), manifest);
}

/// A run that timed out dumped the arguments of the task that ran, not of the one it stopped
/// in: its args_dump.json says `complete: false` itself (it said true, and run.json
/// `written`), and the manifest marks the dump partial with the reason.
#[test]
fn the_args_dump_of_a_timed_out_run_is_not_complete() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let w = dir.path().join("hang.json");
    let workload = serde_json::json!({
        "tensors": [ { "name": "X", "shape": [16] } ],
        "body": [
            { "submit": { "kernel": "noop", "args": [ { "inout": "X" } ], "dump": true } },
            { "submit": { "kernel": "busy", "args": [ { "inout": "X" } ], "scalars": [ { "u64": 5_000_000 } ], "dump": true } }
        ]
    });
    std::fs::write(&w, workload.to_string()).unwrap();
    let out = simpler(&[
        "run",
        w.to_str().unwrap(),
        "--dump-args",
        "--timeout-secs",
        "1",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(100), "{}", text(&out.stderr));
    let dump = read_json(&prefix.join("args_dump/args_dump.json"));
    assert_eq!(dump["complete"], false);
    let m = read_json(&prefix.join("run.json"));
    let entry = m["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "args_dump")
        .unwrap();
    assert_eq!(entry["outcome"], "partial");
    assert_eq!(
        entry["reason"],
        "the run stopped before every task ran: the arguments of tasks that never ran or never completed were not captured"
    );
}

/// A run without any diagnostic writes nothing to the --output-prefix it was given, and says
/// so (it said nothing, and the earlier run's deps.json then read as this run's).
#[test]
fn an_output_prefix_without_a_diagnostic_is_said_to_be_unused() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    dep_gen_run(&prefix);
    let before = files(&prefix);
    let p = prefix.to_str().unwrap();
    let out = simpler(&["run", "chain_barrier", "--output-prefix", p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "note: no diagnostic is on (--enable-scope-stats, --enable-dep-gen, --enable-l2-swimlane, \
             --dump-args), so this run writes nothing to {p}; any files there are an earlier run's\n"
        )
    );
    assert_eq!(files(&prefix), before);
}

/// The task a run stopped in is in the timeline or counted: a kernel that failed has its row
/// (it ran, from start to the failure), and a kernel still running at a timeout is counted in
/// the partial outcome. Both were missing without a word, the outcome `written`.
#[test]
fn the_swimlane_of_a_stopped_run_keeps_or_counts_the_task_it_stopped_in() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, last: serde_json::Value, extra: &[&str]| {
        let w = dir.path().join(format!("{name}.json"));
        let workload = serde_json::json!({
            "tensors": [ { "name": "X", "shape": [16] } ],
            "body": [
                { "repeat": { "var": "i", "count": 3, "body": [
                    { "submit": { "kernel": "noop", "args": [ { "inout": "X" } ] } } ] } },
                { "submit": { "kernel": "busy", "args": [ { "inout": "X" } ], "scalars": [ { "u64": last } ] } }
            ]
        });
        std::fs::write(&w, workload.to_string()).unwrap();
        let prefix = dir.path().join(name);
        let mut args = vec![
            "run",
            w.to_str().unwrap(),
            "--enable-l2-swimlane=1",
            "--output-prefix",
        ];
        args.push(prefix.to_str().unwrap());
        args.extend(extra);
        let out = simpler(&args);
        let records =
            simpler_artifacts::swimlane::read_swimlane_file(&prefix.join("l2_swimlane_records.json"))
                .unwrap();
        let m = read_json(&prefix.join("run.json"));
        let entry = m["diagnostics"][0].clone();
        (out.status.code(), records.tasks.len(), entry)
    };
    // busy refuses more than a minute: KERNEL_FAILED (104) in the fourth task.
    let (code, rows, entry) = run("failed", serde_json::json!(99_999_999_999u64), &[]);
    assert_eq!((code, rows), (Some(104), 4), "{entry}");
    // A five-second kernel and a one-second timeout: three rows, one counted.
    let (code, rows, entry) = run("timeout", serde_json::json!(5_000_000), &["--timeout-secs", "1"]);
    assert_eq!((code, rows), (Some(100), 3), "{entry}");
    assert_eq!(entry["outcome"], "partial");
    assert_eq!(
        entry["reason"],
        "1 row(s) of tasks whose kernels had not ended when the run stopped were not written"
    );
}

#[test]
fn a_second_sigint_exits_at_once_leaving_only_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let workload = slow_workload(dir.path(), 200);
    // The first interrupt stops the run; its close then stalls writing the swimlane records.
    let mut child = simpler_cmd(&[
        "run",
        workload.to_str().unwrap(),
        "--enable-l2-swimlane",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ])
    .env("SIMPLER_FAULT_WRITE", "l2_swimlane_records.json:stall=100")
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !prefix.join("run.json").exists() {
        assert!(Instant::now() < deadline, "the run never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, "INT");
    let mut line = String::new();
    while !line.contains("simpler: stalled writing l2_swimlane_records.json") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the close never stalled"
        );
    }
    let t0 = Instant::now();
    signal(&child, "INT");
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(t0.elapsed() < Duration::from_secs(5), "exited at once");
    // Only a temporary is left (never a partial file under the final name), and the manifest
    // still says the run had not finished; the next run into the folder removes the temporary.
    assert!(!prefix.join("l2_swimlane_records.json").exists());
    let left = temporaries(&prefix);
    assert!(
        left.iter().any(|t| t.starts_with(".l2_swimlane_records.json.")),
        "{left:?}"
    );
    assert_eq!(read_json(&prefix.join("run.json"))["status"], "running");
    dep_gen_run(&prefix);
    assert_no_temporaries(&prefix);
}

#[test]
fn sigint_during_the_text_view_write_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    dep_gen_run(&prefix);
    std::fs::remove_file(prefix.join("deps_viewer.txt")).unwrap();
    let mut child = simpler_cmd(&["deps-viewer", prefix.join("deps.json").to_str().unwrap()])
        .env("SIMPLER_FAULT_WRITE", "deps_viewer.txt:stall=100")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("simpler: stalled writing deps_viewer.txt") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the writer never stalled"
        );
    }
    // Mid-write: the temporary holds the first 100 bytes, the final name does not exist.
    assert_eq!(temporaries(&prefix).len(), 1, "{:?}", temporaries(&prefix));
    signal(&child, "INT");
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(!prefix.join("deps_viewer.txt").exists());
    assert_no_temporaries(&prefix);
}

#[test]
fn after_kill_9_the_next_run_removes_the_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let mut child = start_slow_run(dir.path(), &prefix);
    let deadline = Instant::now() + Duration::from_secs(20);
    while temporaries(&prefix).is_empty() {
        assert!(Instant::now() < deadline, "no spill files appeared");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, "KILL");
    let _ = child.wait();
    let left = temporaries(&prefix);
    assert!(!left.is_empty());
    // The dead run's manifest still says running: every tool warns about its files.
    assert_eq!(read_json(&prefix.join("run.json"))["status"], "running");

    let out = dep_gen_run(&prefix);
    let stdout = text(&out.stdout);
    for t in &left {
        assert!(stdout.contains(t.as_str()), "{t} reported as removed: {stdout}");
    }
    assert_no_temporaries(&prefix);
    assert_only_manifest_files(&prefix);
}

#[test]
fn every_tool_warns_about_an_artifact_of_a_failed_or_stale_run() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("fatal");
    let p = prefix.to_str().unwrap();
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-scope-stats",
        "--enable-dep-gen",
        "--enable-l2-swimlane",
        "--runtime-env",
        "ring_heap=65536",
        "--output-prefix",
        p,
    ]);
    assert_eq!(out.status.code(), Some(66));
    let deps = prefix.join("deps.json");
    let jsonl = prefix.join("scope_stats/scope_stats.jsonl");
    let records = prefix.join("l2_swimlane_records.json");
    let failed = "that did not complete: fatal (2 HEAP_RING_DEADLOCK";
    for args in [
        vec!["deps-viewer", deps.to_str().unwrap()],
        vec!["scope-stats-plot", jsonl.to_str().unwrap()],
        vec!["swimlane", records.to_str().unwrap()],
    ] {
        let out = simpler(&args);
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains("warning: ") && stderr.contains(failed),
            "{args:?}: {stderr}"
        );
    }
    let html_out = dir.path().join("view.html");
    let out = simpler(&[
        "deps-viewer",
        deps.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        html_out.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&html_out).unwrap();
    assert!(html.contains("class=\"run-warning\"") && html.contains("did not complete"));

    // --from-deps refuses the graph of a failed run unless told otherwise.
    let out = simpler(&["run", "--from-deps", deps.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--allow-incomplete re-runs it anyway"),
        "{}",
        text(&out.stderr)
    );
    let out = simpler(&["run", "--from-deps", deps.to_str().unwrap(), "--allow-incomplete"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(failed));

    // A stale file: a deps.json put into a completed run's folder by hand.
    let good = dir.path().join("good");
    dep_gen_run(&good);
    std::fs::copy(&deps, good.join("deps.json")).unwrap();
    let out = simpler(&["deps-viewer", good.join("deps.json").to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("it changed after the run"), "{stderr}");
    // Timing of one run joined with the dependencies of another.
    let out = simpler(&[
        "swimlane",
        records.to_str().unwrap(),
        "--deps-json",
        good.join("deps.json").to_str().unwrap(),
    ]);
    assert!(
        text(&out.stderr).contains("come from different runs"),
        "{}",
        text(&out.stderr)
    );
}

/// Views read far from the command's stderr: the text view of a failed run's deps.json and
/// the Perfetto trace of its records say inside that the run did not complete (a `warning:`
/// line in SUMMARY; a `simpler: WARNING` process above the others, one slice per warning),
/// and so do critical-path's copies of the trace; a completed run's views carry neither.
/// Found left alone by session 38: only stderr and the HTML views warned.
#[test]
fn the_views_of_a_failed_run_say_so_inside_not_only_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let all = ["--enable-dep-gen", "--enable-l2-swimlane"];
    let fatal = dir.path().join("fatal");
    let mut args = vec!["run", "vector_example"];
    args.extend(all);
    args.extend([
        "--runtime-env",
        "ring_heap=65536",
        "--output-prefix",
        fatal.to_str().unwrap(),
    ]);
    assert_eq!(simpler(&args).status.code(), Some(66));
    let good = dir.path().join("good");
    let mut args = vec!["run", "vector_example"];
    args.extend(all);
    args.extend(["--output-prefix", good.to_str().unwrap()]);
    let out = simpler(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let failed = "that did not complete: fatal (2 HEAP_RING_DEADLOCK";
    let txt = std::fs::read_to_string(fatal.join("deps_viewer.txt")).unwrap();
    let summary = txt.split("\n\n").next().unwrap();
    let expected = format!(
        "\n  warning: {} comes from run ",
        fatal.join("deps.json").display()
    );
    assert!(
        summary.contains(&expected) && summary.contains(failed),
        "{summary}"
    );
    let txt = std::fs::read_to_string(good.join("deps_viewer.txt")).unwrap();
    assert!(!txt.contains("warning"), "{txt}");

    // The slices of the warnings process (pid 12), by name.
    let warnings_in = |trace: &Path| -> Vec<String> {
        let v = read_json(trace);
        let events = v["traceEvents"].as_array().unwrap();
        let named = events.iter().any(|e| {
            e["pid"] == 12 && e["name"] == "process_name" && e["args"]["name"] == "simpler: WARNING"
        });
        let slices: Vec<String> = events
            .iter()
            .filter(|e| e["pid"] == 12 && e["ph"] == "X")
            .map(|e| {
                assert_eq!(e["args"]["warning"], e["name"]);
                e["name"].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(named, !slices.is_empty(), "{}", trace.display());
        slices
    };
    let slices = warnings_in(&fatal.join("merged_swimlane.json"));
    assert_eq!(slices.len(), 2, "{slices:?}"); // the records and the deps.json
    assert!(slices.iter().all(|w| w.contains(failed)), "{slices:?}");
    assert!(warnings_in(&good.join("merged_swimlane.json")).is_empty());

    // Timing of one run with the dependencies of another: the trace says that too, and
    // critical-path's traces, copies of the merged trace, keep the warnings. (The failed run
    // itself may have stopped before any task finished, which critical-path refuses.)
    let out = simpler(&[
        "swimlane",
        good.join("l2_swimlane_records.json").to_str().unwrap(),
        "--deps-json",
        fatal.join("deps.json").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let slices = warnings_in(&good.join("merged_swimlane.json"));
    assert_eq!(slices.len(), 2, "{slices:?}");
    assert!(
        slices[0].contains(failed) && slices[1].contains("come from different runs"),
        "{slices:?}"
    );
    let out = simpler(&["critical-path", good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for cpm in ["CPM_static.json", "CPM_observed.json"] {
        assert_eq!(warnings_in(&good.join(cpm)), slices, "{cpm}");
    }
}

/// `simpler swimlane` removes an earlier trace at its output as it begins; when the
/// conversion then fails, it says so beside the error.
#[test]
fn a_failed_swimlane_conversion_says_the_earlier_trace_was_removed() {
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("l2_swimlane_records.json");
    std::fs::write(
        &records,
        "{\"chip_swimlane_level\":1,\"metadata\":{\"clock_freq_hz\":1000000000,\"core_types\":[\"aiv\"]},\n\"aicore_tasks\":[[0,1,0,10,20,0]]}\n",
    )
    .unwrap();
    let deps = dir.path().join("deps.json");
    std::fs::write(&deps, "{\"tasks\":[],\"edges\":[{\"pred\":\"0\"}]}").unwrap();
    let trace = dir.path().join("merged_swimlane.json");
    std::fs::write(&trace, "an earlier trace").unwrap();
    let out = simpler(&["swimlane", records.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning: the earlier {} was removed when the conversion began; no trace replaces it",
            trace.display()
        )) && stderr.contains(&format!("error: {}:", deps.display())),
        "{stderr}"
    );
    assert!(!trace.exists());
    assert_no_temporaries(dir.path());
}

#[test]
fn a_run_whose_folder_cannot_be_claimed_never_started_and_exits_1_not_3() {
    let dir = tempfile::tempdir().unwrap();
    let taken = dir.path().join("a_file");
    std::fs::write(&taken, "not a folder").unwrap();
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--output-prefix",
        taken.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("File exists"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&taken).unwrap(), "not a folder");
}

/// Found by a review: a run refused because its `running` manifest could not be written had
/// already removed the earlier run's files, and its error did not say so.
#[test]
fn a_run_refused_after_removing_the_earlier_files_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    dep_gen_run(&prefix);
    let out = simpler_cmd(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ])
    .env("SIMPLER_FAULT_WRITE", "run.json:fail=10")
    .output()
    .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: run refused before it started: output folder {}: cannot write the run manifest, after removing \
             the earlier run's deps.json, deps_viewer.txt, name_map.json, run.json: No space left on device",
            prefix.display()
        )),
        "{stderr}"
    );
    assert_eq!(files(&prefix), [".simpler.lock"]);
}

/// Found by a review: with the run's deps.json missing because dep_gen failed, critical-path
/// asked whether the run used --enable-dep-gen, and deps-viewer warned the file was not one of
/// the run's before failing on "No such file". Both now say what run.json says.
#[test]
fn a_tool_missing_its_input_says_what_the_runs_manifest_says() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let out = simpler_cmd(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--enable-l2-swimlane",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ])
    .env("SIMPLER_FAULT_WRITE", "deps.json:fail=10")
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let why = format!(
        "its run.json says dep_gen failed: no deps.json: cannot write {}: No space left on device",
        prefix.join("deps.json").display()
    );
    let out = simpler(&["critical-path", prefix.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(&why), "{}", text(&out.stderr));
    let deps = prefix.join("deps.json");
    let out = simpler(&["deps-viewer", deps.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("error: {}: no such file: {why}", deps.display())),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// Found by a review: `swimlane -o` onto the run's deps.json or records, and `deps-viewer -o`
/// onto the records, replaced them and exited 0.
#[test]
fn no_tool_writes_its_output_over_the_runs_artifacts() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = simpler(&[
        "run",
        "vector_example",
        "--enable-dep-gen",
        "--enable-l2-swimlane",
        "--output-prefix",
        run.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (deps, records) = (run.join("deps.json"), run.join("l2_swimlane_records.json"));
    let before = (std::fs::read(&deps).unwrap(), std::fs::read(&records).unwrap());
    let p = |p: &Path| p.to_str().unwrap().to_string();
    for (args, code) in [
        (vec!["swimlane".into(), p(&records), "-o".into(), p(&deps)], 1),
        (vec!["swimlane".into(), p(&records), "-o".into(), p(&records)], 1),
        (vec!["deps-viewer".into(), p(&deps), "-o".into(), p(&records)], 2),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = simpler(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains("choose another file"), "{args:?}: {stderr}");
    }
    assert_eq!(
        (std::fs::read(&deps).unwrap(), std::fs::read(&records).unwrap()),
        before,
        "the run's files are as it wrote them"
    );
    // Its views may be rewritten.
    let out = simpler(&["swimlane", &p(&records)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// Found by a review: given relative to the run's folder, a path into one of its subfolders
/// (`scope_stats/scope_stats.jsonl`, `args_dump/args.bin`, or `args.bin` from inside
/// `args_dump/`) was not matched with the manifest's list, so `-o` replaced the run's file and
/// exited 0, and a tool reading the run's own dump or scope stats warned that they were no
/// file of the run.
#[test]
fn a_relative_output_into_a_runs_subfolder_is_refused_as_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("r");
    let mut args = every_diagnostic("vector_example", &run).to_vec();
    args.push("--dump-args=2");
    let out = simpler(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dump = run.join("args_dump");
    let files = [
        "scope_stats/scope_stats.jsonl",
        "args_dump/args_dump.json",
        "args_dump/args.bin",
    ];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(run.join(f)).unwrap())
        .collect();
    let id = read_json(&run.join("run.json"))["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let manifest = std::fs::canonicalize(&run).unwrap().join("run.json");
    for (in_dir, args, shown, artifact, code) in [
        (
            &run,
            ["deps-viewer", "deps.json", "-o", files[0]],
            files[0],
            "scope_stats",
            2,
        ),
        (
            &run,
            ["swimlane", "l2_swimlane_records.json", "-o", files[1]],
            files[1],
            "args_dump",
            1,
        ),
        (
            &run,
            ["deps-viewer", "deps.json", "-o", files[2]],
            files[2],
            "args_dump",
            2,
        ),
        (
            &dump,
            ["deps-viewer", "../deps.json", "-o", "args.bin"],
            "args.bin",
            "args_dump",
            2,
        ),
    ] {
        let out = simpler_in(in_dir, &args);
        assert_eq!(
            (out.status.code(), text(&out.stderr)),
            (
                Some(code),
                format!(
                    "error: --output {shown} is the {artifact} artifact of run {id} (per {}); a tool \
                     never replaces the run's files: choose another file\n",
                    manifest.display()
                )
            ),
            "{args:?}"
        );
    }
    let after: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(run.join(f)).unwrap())
        .collect();
    assert!(before == after, "the run's files are as it wrote them");
    // Read the same way, they are the run's own: no warning.
    for args in [
        ["dump-viewer", "args_dump"].as_slice(),
        &["scope-stats-plot", "scope_stats/scope_stats.jsonl"],
    ] {
        let out = simpler_in(&run, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out.stderr));
        assert!(
            !text(&out.stderr).contains("warning"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// Runs `simpler args` with its stdout closed at once (the reader went away, as `head -1`'s
/// does), and its stderr too when `stderr` is set (`2>&1 | head -1`).
fn with_closed_output(args: &[&str], stderr: bool) -> std::process::Output {
    let mut child = simpler_cmd(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    if stderr {
        drop(child.stderr.take());
    }
    child.wait_with_output().unwrap()
}

/// Found by a review: `simpler run ... | head -1` closed stdout after a line and `println!`
/// panicked (exit 101) before the views were written, leaving a `run.json` that listed none.
/// A closed stdout now only loses the summary: the run writes its files and exits 0, and so
/// does `deps-viewer`, whose reduction report came before its view.
#[test]
fn a_closed_stdout_loses_the_summary_not_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let closed = |args: &[&str]| with_closed_output(args, false);
    let out = closed(&every_diagnostic("vector_example", &prefix));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let manifest = read_json(&prefix.join("run.json"));
    let views: Vec<&str> = manifest["views"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        views,
        [
            "scope_stats/scope_stats.html",
            "deps_viewer.txt",
            "merged_swimlane.json"
        ]
    );
    for v in views {
        assert!(prefix.join(v).is_file(), "{v}");
    }
    let deps = prefix.join("deps.json");
    let out = closed(&["deps-viewer", deps.to_str().unwrap(), "--edge-mode", "reduced"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(prefix.join("deps_viewer_reduced.txt").is_file());
}

/// Found by a review: `simpler run ... 2>&1 | head -3` closed stderr as well, and the first
/// warning after that (`no deps.json next to` the records, a run with swimlane alone)
/// panicked, exit 101, before the views were written; `dump-viewer DIR | head -1` failed with
/// "Broken pipe". Closed output streams lose text only.
#[test]
fn closed_output_streams_lose_text_not_files_nor_the_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let closed = |args: &[&str]| with_closed_output(args, true).status;
    let status = closed(&[
        "run",
        "vector_example",
        "--enable-l2-swimlane",
        "--dump-args=2",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    assert_eq!(status.code(), Some(0));
    let manifest = read_json(&prefix.join("run.json"));
    assert_eq!(
        manifest["views"][0]["name"], "merged_swimlane.json",
        "{manifest:#}"
    );
    assert!(prefix.join("merged_swimlane.json").is_file());
    // A listing and a comparison keep their exit status: 0, and 1 when the values differ.
    let dump = prefix.join("args_dump");
    assert_eq!(closed(&["dump-viewer", dump.to_str().unwrap()]).code(), Some(0));
    let expect = [
        "dump-viewer",
        dump.to_str().unwrap(),
        "-i",
        "0",
        "--expect",
        "12345",
    ];
    assert_eq!(closed(&expect).code(), Some(1));
    assert_eq!(
        simpler(&expect).status.code(),
        Some(1),
        "the same comparison, read"
    );
}

/// Sets the modification time of `path` to `secs` after a fixed instant.
fn set_mtime(path: &Path, secs: u64) {
    let t = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

/// Found by a review: given no path, `deps-viewer` showed the newest deps.json anywhere under
/// ./outputs/, an earlier run's when the newest run had none (it ran without
/// --enable-dep-gen), which a user reads as the latest run's graph. Every tool that finds its
/// input there reads the newest run's file, or says why that run has none and names the
/// earlier file to pass.
#[test]
fn tools_given_no_input_read_the_newest_runs_file_or_say_why_it_has_none() {
    let dir = tempfile::tempdir().unwrap();
    let run = |prefix: &str, diagnostics: &[&str]| {
        let mut args = vec!["run", "vector_example", "--output-prefix", prefix];
        args.extend(diagnostics);
        let out = common::simpler_in(dir.path(), &args);
        assert!(out.status.success(), "{}", text(&out.stderr));
    };
    run(
        "outputs/a",
        &["--enable-dep-gen", "--enable-l2-swimlane", "--dump-args"],
    );
    run("outputs/b", &["--enable-scope-stats"]);
    let outputs = dir.path().join("outputs");
    set_mtime(&outputs.join("a/run.json"), 10);
    set_mtime(&outputs.join("b/run.json"), 20);
    let fails = |tool: &str| {
        let out = common::simpler_in(dir.path(), &[tool]);
        assert_eq!(out.status.code(), Some(1), "{tool}: {}", text(&out.stderr));
        text(&out.stderr)
    };
    assert_eq!(
        fails("deps-viewer"),
        "error: the newest run, outputs/b, has no deps.json: its run.json lists no dep_gen: the \
         run did not ask for it; the newest deps.json is outputs/a/deps.json: pass it to use it\n"
    );
    assert_eq!(
        fails("swimlane"),
        "error: the newest run, outputs/b, has no l2_swimlane_records.json, \
         chip_swimlane_records.json or l2_perf_records.json: its run.json lists no l2_swimlane: \
         the run did not ask for it; the newest of them is outputs/a/l2_swimlane_records.json: \
         pass it to use it\n"
    );
    assert_eq!(
        fails("dump-viewer"),
        "error: the newest run, outputs/b, has no args_dump/args_dump.json: its run.json lists no \
         args_dump: the run did not ask for it; the newest args_dump/args_dump.json is \
         outputs/a/args_dump/args_dump.json: pass it to use it\n"
    );
    // The newest run's files when it has them.
    set_mtime(&outputs.join("a/run.json"), 30);
    let out = common::simpler_in(dir.path(), &["deps-viewer"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("Wrote outputs/a/deps_viewer.txt ("),
        "{}",
        text(&out.stdout)
    );
}

/// Found by a review: `run --from-deps FE/deps.json --output-prefix FE` removed the graph it
/// was re-running, as "a file an earlier run left in this folder". The run now refuses the
/// folder before claiming it, and the input stays.
#[test]
fn a_run_refuses_an_output_folder_that_would_remove_its_own_input() {
    let dir = tempfile::tempdir().unwrap();
    dep_gen_run(&dir.path().join("first"));
    let folder = dir.path().join("FE");
    std::fs::create_dir(&folder).unwrap();
    let input = folder.join("deps.json");
    std::fs::copy(dir.path().join("first/deps.json"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = simpler(&[
        "run",
        "--from-deps",
        input.to_str().unwrap(),
        "--enable-scope-stats",
        "--output-prefix",
        folder.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {} is this run's input, but the run's output folder {} would remove it: a run \
             claiming a folder removes the files an earlier run left there, deps.json among them; \
             copy the input elsewhere or choose another --output-prefix\n",
            input.display(),
            folder.display()
        )
    );
    assert_eq!(std::fs::read(&input).unwrap(), before, "the input is untouched");
    assert!(!folder.join("run.json").exists(), "the folder was not claimed");
}

/// Found by a review: a run whose result check failed left a run.json saying `completed` and
/// nothing else, so whoever opened the folder later could not tell its results were wrong.
#[test]
fn a_failed_result_check_is_recorded_in_the_manifest_and_said_by_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let workload = common::wrong_golden_workload(dir.path());
    let prefix = dir.path().join("run");
    let out = simpler(&[
        "run",
        workload.to_str().unwrap(),
        "--enable-dep-gen",
        "--enable-scope-stats",
        "--enable-l2-swimlane",
        "--output-prefix",
        prefix.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = "f: FAILED, 16384 of 16384 elements differ; first at [0]: got 47, expected 48";
    // Found by a review: the run's own views were rendered before the manifest said the check
    // failed, so they showed the run as clean (the tools, run afterwards, warned).
    for view in [
        "deps_viewer.txt",
        "merged_swimlane.json",
        "scope_stats/scope_stats.html",
    ] {
        let text = std::fs::read_to_string(prefix.join(view)).unwrap();
        assert!(
            text.contains(&format!("whose result check failed: {failed}")),
            "{view}"
        );
    }
    assert!(
        text(&out.stdout).contains(&format!(
            "  manifest   {} (completed, result check failed)\n",
            prefix.join("run.json").display()
        )),
        "{}",
        text(&out.stdout)
    );
    let m = read_json(&prefix.join("run.json"));
    assert_eq!(m["status"], "completed");
    assert_eq!(m["failed_check"], failed);
    let deps = prefix.join("deps.json");
    let view = simpler(&[
        "deps-viewer",
        deps.to_str().unwrap(),
        "-o",
        dir.path().join("v.txt").to_str().unwrap(),
    ]);
    assert!(view.status.success(), "{}", text(&view.stderr));
    assert_eq!(
        text(&view.stderr),
        format!(
            "warning: {} comes from run {} whose result check failed: {failed}\n",
            deps.display(),
            m["run_id"].as_str().unwrap()
        )
    );
}

/// Found by a review: a workload file's `output_prefix` could name any folder the user can
/// write (an absolute path, `../..`), and the run's claim then cleaned it. `--output-prefix`
/// still names any folder.
#[test]
fn a_workload_files_output_prefix_must_stay_under_the_starting_folder() {
    let dir = tempfile::tempdir().unwrap();
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/vector_example.json");
    let victim = dir.path().join("victim");
    for prefix in [victim.to_str().unwrap(), "../victim", "runs/../../victim"] {
        let w: String = std::fs::read_to_string(source)
            .unwrap()
            .replace(
                "./schema.json",
                concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/schema.json"),
            )
            .replacen(
                "{",
                &format!(r#"{{ "diagnostics": {{ "enable_dep_gen": true, "output_prefix": {prefix:?} }},"#),
                1,
            );
        let file = dir.path().join("w.json");
        std::fs::write(&file, w).unwrap();
        let out = common::simpler_in(dir.path(), &["run", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: {}: diagnostics.output_prefix: {prefix:?} leads out of the folder the run starts \
                 in: a workload file names only a folder under it (a relative path without `..`); give \
                 --output-prefix for any other\n",
                file.display()
            )
        );
        assert!(!victim.exists());
        let ok = common::simpler_in(
            dir.path(),
            &["run", file.to_str().unwrap(), "--output-prefix", "mine"],
        );
        assert!(ok.status.success(), "{}", text(&ok.stderr));
        assert!(dir.path().join("mine/deps.json").exists());
        std::fs::remove_dir_all(dir.path().join("mine")).unwrap();
    }
}

/// The `PATH` under which a Graphviz `dot` is a stand-in in `dir/bin` running the shell
/// `script` (before the machine's own folders).
fn path_with_fake_dot(dir: &Path, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let dot = bin.join("dot");
    std::fs::write(&dot, format!("#!/bin/sh\n{script}")).unwrap();
    std::fs::set_permissions(&dot, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// A `dot` that, while `deps-viewer` waits for its layout, runs `simpler run vector_example
/// --enable-dep-gen` into `$VICTIM` (a run that claims the folder whose graph is being viewed,
/// and finishes), then answers with an empty drawing.
const DOT_RERUNNING_THE_FOLDER: &str = "cat >/dev/null\n\"$SIMPLER\" run vector_example --enable-dep-gen \
     --output-prefix \"$VICTIM\" >\"$VICTIM.log\" 2>&1 || exit 9\necho '<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>'\n";

#[test]
fn a_view_whose_input_another_run_replaced_while_it_was_read_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("f");
    dep_gen_run(&folder);
    let first = read_json(&folder.join("run.json"))["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = path_with_fake_dot(dir.path(), DOT_RERUNNING_THE_FOLDER);
    let deps = folder.join("deps.json");
    let view = folder.join("view.html");
    let out = simpler_cmd(&[
        "deps-viewer",
        deps.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        view.to_str().unwrap(),
    ])
    .env("PATH", path)
    .env("SIMPLER", env!("CARGO_BIN_EXE_simpler"))
    .env("VICTIM", &folder)
    .output()
    .unwrap();
    let stderr = text(&out.stderr);
    let m = read_json(&folder.join("run.json"));
    let second = m["run_id"].as_str().unwrap();
    assert_eq!(m["status"], "completed", "the run inside `dot` ran: {stderr}");
    assert_ne!(first, second);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "cannot write {}: {} was replaced while it was read (it was run {first}'s; it is now run \
             {second}'s): another run claimed its folder, or something else wrote it; the output would \
             not be a view of what the folder holds, so nothing was written; run the command again",
            view.display(),
            deps.display()
        )),
        "{stderr}"
    );
    // The folder holds the second run's files and nothing of the first's.
    assert!(!view.exists());
    assert_only_manifest_files(&folder);
    assert_no_temporaries(&folder);
}

#[test]
fn a_view_of_one_run_written_into_another_runs_folder_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    dep_gen_run(&a);
    dep_gen_run(&b);
    let run_of = |f: &Path| {
        read_json(&f.join("run.json"))["run_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let view = b.join("view_of_a.txt");
    let out = simpler(&[
        "deps-viewer",
        a.join("deps.json").to_str().unwrap(),
        "-o",
        view.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let canonical = std::fs::canonicalize(&b).unwrap();
    assert!(
        stderr.contains(&format!(
            "warning: {} goes into the folder of run {} (per {}), but is made from {} (run {}), not \
             from that run's files",
            view.display(),
            run_of(&b),
            canonical.join("run.json").display(),
            a.join("deps.json").display(),
            run_of(&a)
        )),
        "{stderr}"
    );
    assert!(view.exists(), "asked for: written");
    // Into its own run's folder: nothing to say.
    let own = simpler(&[
        "deps-viewer",
        a.join("deps.json").to_str().unwrap(),
        "-o",
        a.join("v.txt").to_str().unwrap(),
    ]);
    assert!(
        !text(&own.stderr).contains("goes into the folder of run"),
        "{}",
        text(&own.stderr)
    );
}

/// A tool that does not stop within 2 s of an interrupt exits anyway (the watchdog of
/// `install_interrupt_handler`): here `deps-viewer` waits for a Graphviz `dot` that never
/// answers (a stand-in that writes its pid and sleeps). Found by a review: a tool blocked
/// reading ignored SIGTERM until SIGKILL; since every input is checked for a regular file, only
/// a child such as `dot` can still block a tool.
#[test]
fn a_tool_blocked_on_a_child_exits_two_seconds_after_one_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("f");
    dep_gen_run(&folder);
    let marker = dir.path().join("dot.pid");
    let path = path_with_fake_dot(
        dir.path(),
        "echo $$ > \"$MARKER.tmp\"\nmv \"$MARKER.tmp\" \"$MARKER\"\nexec sleep 60\n",
    );
    let view = folder.join("view.html");
    let tool = simpler_cmd(&[
        "deps-viewer",
        folder.join("deps.json").to_str().unwrap(),
        "--format",
        "html",
        "-o",
        view.to_str().unwrap(),
    ])
    .env("PATH", path)
    .env("MARKER", &marker)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "dot never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let dot_pid = std::fs::read_to_string(&marker).unwrap().trim().to_string();
    let kill = |sig: &str, pid: &str| Command::new("kill").args([sig, pid]).status().unwrap();
    assert!(kill("-TERM", &tool.id().to_string()).success());
    let out = tool.wait_with_output().unwrap();
    kill("-KILL", &dot_pid);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.ends_with(
            "simpler: interrupted; stopping (interrupt again to exit at once)\nsimpler: still running 2 s after the \
             interrupt (blocked reading its input?); exiting now\n"
        ),
        "{stderr}"
    );
    assert!(!view.exists());
    assert_no_temporaries(&folder);
}

/// Found by a review: `scope-stats-plot A/... --out-dir B/scope_stats` replaced run B's report
/// with one of run A's samples that named neither its source nor its run, and read "Healthy"
/// as B's. The page now names its source and run, and says it is not of the folder's run.
#[test]
fn a_scope_stats_report_names_its_source_and_says_when_it_is_in_another_runs_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for (name, prefix) in [("vector_example", &a), ("chain_barrier", &b)] {
        let out = simpler(&[
            "run",
            name,
            "--enable-scope-stats",
            "--output-prefix",
            prefix.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let run_a = read_json(&a.join("run.json"))["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let jsonl = a.join("scope_stats/scope_stats.jsonl");
    let own = std::fs::read_to_string(a.join("scope_stats/scope_stats.html")).unwrap();
    let source = format!(
        "Source: <code id=\"jsonl-source\">{} (run {run_a})</code>",
        jsonl.display()
    );
    assert!(own.contains(&source), "the run's own report names its source");
    assert!(!own.contains("not of the run whose folder holds it"));
    let out = simpler(&[
        "scope-stats-plot",
        jsonl.to_str().unwrap(),
        "--out-dir",
        b.join("scope_stats").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(b.join("scope_stats/scope_stats.html")).unwrap();
    assert!(page.contains(&source), "{page}");
    assert!(
        page.contains("Warning: this report is not of the run whose folder holds it."),
        "{page}"
    );
}

/// Waits until each collector of [`start_slow_run`]'s run made its work files in `prefix`:
/// dep_gen's parts, the swimlane spills, the scope-stats body (made at the first sample).
fn wait_for_work_files(prefix: &Path) {
    let made = || {
        let names = files(prefix);
        [".deps.", ".swimlane.", "scope_stats/.scope_stats."]
            .iter()
            .all(|part| names.iter().any(|n| n.contains(part)))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !made() {
        assert!(Instant::now() < deadline, "{:?}", files(prefix));
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Found by a review: a run folder renamed while its run went on got a second folder at its
/// old path, whose `run.json` listed the name map as written there (it was in the renamed
/// folder, whose own `run.json` said `running` for ever), and the summary said "name map
/// written" at the old path. Now no file of the run makes the folder again: the run follows
/// it at its close, so there is one folder, its manifest final, each file listed where it is
/// with its size, and each file the run could not write failed with the move as its reason.
/// (The move lands at some point of the run's start: which files made it is not fixed. The
/// next test moves the folder once every collector has made its files.)
#[test]
fn a_run_folder_moved_while_the_run_goes_on_is_followed_not_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let moved = dir.path().join("moved");
    let child = start_slow_run(dir.path(), &prefix);
    std::fs::rename(&prefix, &moved).unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(!prefix.exists(), "a second folder at the old path: {stdout}");
    let note = format!(
        "the output folder {} was moved to {} while the run went on; the run wrote the rest there",
        prefix.display(),
        moved.canonicalize().unwrap().display()
    );
    assert!(stdout.contains(&format!("  folder     {note}\n")), "{stdout}");
    let m = read_json(&moved.join("run.json"));
    assert_eq!(m["status"], "completed");
    let mut failed = 0;
    for d in m["diagnostics"].as_array().unwrap() {
        if d["outcome"] == "written" {
            for f in d["files"].as_array().unwrap() {
                let on_disk = std::fs::metadata(moved.join(f["name"].as_str().unwrap())).map(|m| m.len());
                assert_eq!(on_disk.ok(), f["bytes"].as_u64(), "{f}");
            }
        } else {
            failed += 1;
            let reason = d["reason"].as_str().unwrap();
            assert!(reason.ends_with(&format!("({note})")), "{reason}");
        }
    }
    let code = out.status.code();
    assert_eq!(code, Some(if failed == 0 { 0 } else { 3 }), "{stderr}");
}

/// A run folder removed while its run goes on is not made again by the run's later files or
/// its manifest, and a new folder at its old name gets none of them (found by a review: the
/// close wrote into whatever had the old name): each says it was not written, the name map
/// written before says it went with the folder, and the summary says why.
#[test]
fn a_run_folder_removed_while_the_run_goes_on_is_not_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let child = start_slow_run(dir.path(), &prefix);
    // Removed once the collectors made their files (one that they make as they start goes to
    // whatever folder has the name then: a known limit, docs/diagnostics.md).
    wait_for_work_files(&prefix);
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Err(e) = std::fs::remove_dir_all(&prefix) {
        assert!(Instant::now() < deadline, "{e}");
    }
    // A new folder of the user's at its old name is not the run's: nothing goes into it.
    std::fs::create_dir(&prefix).unwrap();
    std::fs::write(prefix.join("mine.txt"), "mine").unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(files(&prefix), ["mine.txt"], "{stdout}");
    let note = format!(
        "the output folder {} was removed while the run went on; nothing more was written",
        prefix.display()
    );
    assert!(stdout.contains(&format!("  folder     {note}\n")), "{stdout}");
    assert!(stdout.contains("  manifest   FAILED: "), "{stdout}");
    assert!(!stdout.contains("(completed)"), "{stdout}");
    assert_eq!(out.status.code(), Some(3), "{stderr}");
}

/// The files every collector made before a move are found where they are now at the close:
/// moved once they all exist, the run writes every artifact into the moved folder, complete.
#[test]
fn a_run_folder_moved_after_its_files_were_made_gets_every_artifact() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("run");
    let moved = dir.path().join("moved");
    let child = start_slow_run(dir.path(), &prefix);
    wait_for_work_files(&prefix);
    std::fs::rename(&prefix, &moved).unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(!prefix.exists(), "a second folder at the old path: {stdout}");
    assert!(stdout.contains("  folder     the output folder "), "{stdout}");
    let m = read_json(&moved.join("run.json"));
    assert_eq!(m["status"], "completed");
    let names: Vec<&str> = m["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert_eq!(d["outcome"], "written", "{d}");
            d["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, ["scope_stats", "dep_gen", "l2_swimlane", "name_map"]);
    let deps = read_json(&moved.join("deps.json"));
    assert_eq!(deps["tasks"].as_array().unwrap().len(), 200);
    assert_eq!(deps["edges"].as_array().unwrap().len(), 199);
    let temporaries = temporaries(&moved);
    assert!(temporaries.is_empty(), "{temporaries:?}");
}
