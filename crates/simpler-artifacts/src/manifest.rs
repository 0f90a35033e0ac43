//! `run.json`, the run manifest: which run an output folder holds, how that run ended, and
//! every file it wrote (name and size). A run writes it when it starts (status `running`) and
//! again, last, when everything else is written; tools read it to warn when an artifact comes
//! from a run that did not complete, or is not the file the run wrote (stale or changed).
//!
//! The spec's own formats (deps.json, scope_stats.jsonl, ...) stay untouched: the manifest is
//! an extra file beside them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::publish::{publish_bytes_with, Options, PublishError, Published};
use crate::read_error::JsonReadError;

/// File name of the manifest in an output folder.
pub const FILE_NAME: &str = "run.json";
/// The manifest schema this crate writes.
pub const SCHEMA: u32 = 1;

/// The manifest of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunManifest {
    /// Schema version ([`SCHEMA`]).
    pub schema: u32,
    /// Unique across processes: start time, process id and a per-process counter.
    pub run_id: String,
    /// `tmr` or `hbg`.
    pub runtime: String,
    /// What ran: an example and its case, a workload file, or a re-run of a deps.json.
    pub subject: String,
    /// An example's parameters, every one (defaults included), as `--param KEY=VALUE` takes
    /// them: what `simpler plan` re-runs a run folder with. Empty for other subjects.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub params: std::collections::BTreeMap<String, String>,
    /// Start time (RFC 3339, UTC).
    pub started: String,
    /// End time, once the run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// How the run ended (`running` while it goes on, or if its process died).
    pub status: RunStatus,
    /// The fatal that stopped the run, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fatal: Option<FatalInfo>,
    /// Each requested diagnostic's outcome and files, in the order they were closed.
    #[serde(default)]
    pub diagnostics: Vec<DiagnosticEntry>,
    /// Reports derived from the artifacts after the run (HTML report, text view, trace).
    #[serde(default)]
    pub views: Vec<FileEntry>,
    /// The run's result check that failed (an example's golden, a workload file's first
    /// failing check), as the run printed it; absent when every check passed or the run had
    /// none. The artifacts are then complete and the run's own, but its results were wrong:
    /// [`check`] says so to every tool that reads them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_check: Option<String>,
    /// For a re-run of a deps.json taken with `--allow-incomplete`: why that graph may be
    /// incomplete (its own run's manifest said so). This run's artifacts cover only what the
    /// graph held, and [`check_complete`] says so to every tool that reads them (found by a
    /// review: one such re-run made the partial graph pass as a whole run's, and `plan` sized
    /// rings from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_input: Option<String>,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still going, or its process died before it could say otherwise.
    Running,
    /// Every task completed.
    Completed,
    /// Stopped on a fatal error.
    Fatal,
    /// Stopped because it did not finish in time (SCHEDULER_TIMEOUT).
    Timeout,
    /// Stopped by SIGINT or SIGTERM.
    Interrupted,
}

impl RunStatus {
    /// The name written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Fatal => "fatal",
            RunStatus::Timeout => "timeout",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// The fatal that stopped a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FatalInfo {
    /// Numeric code (as in the original runtime).
    pub code: u32,
    /// Upper-case name, e.g. `HEAP_RING_DEADLOCK`.
    pub name: String,
    /// The full message.
    pub message: String,
}

/// One requested diagnostic's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticEntry {
    /// `scope_stats`, `dep_gen`, `l2_swimlane` or `name_map`.
    pub name: String,
    /// What became of it.
    pub outcome: Outcome,
    /// Why it was withheld, failed or is partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The files it wrote, relative to the output folder.
    #[serde(default)]
    pub files: Vec<FileEntry>,
}

/// What became of a requested diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Written, complete.
    Written,
    /// Written, but records were lost or the run was cut short (`reason` says which).
    Partial,
    /// Deliberately not written (`reason` says why: an unclean trace, an unproven stop, ...).
    Withheld,
    /// Writing failed (`reason` holds the error).
    Failed,
}

impl Outcome {
    /// The name written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Written => "written",
            Outcome::Partial => "partial",
            Outcome::Withheld => "withheld",
            Outcome::Failed => "failed",
        }
    }
}

/// A file a run wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Path relative to the output folder, with `/` separators.
    pub name: String,
    /// Size in bytes when it was written.
    pub bytes: u64,
}

impl FileEntry {
    /// The entry of a file just published under `folder`.
    pub fn of<T>(folder: &Path, published: &Published<T>) -> FileEntry {
        FileEntry {
            name: relative_name(folder, &published.path),
            bytes: published.bytes,
        }
    }
}

/// `path` relative to `folder`, with `/` separators (the file name alone when it is elsewhere).
pub fn relative_name(folder: &Path, path: &Path) -> String {
    match path.strip_prefix(folder) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

impl RunManifest {
    /// Every file the manifest lists (diagnostics, then views).
    pub fn files(&self) -> impl Iterator<Item = &FileEntry> {
        self.diagnostics
            .iter()
            .flat_map(|d| d.files.iter())
            .chain(&self.views)
    }

    /// The entry of `name` (relative, `/`-separated) and the diagnostic that wrote it, if any.
    pub fn find(&self, name: &str) -> Option<(&FileEntry, Option<&DiagnosticEntry>)> {
        for d in &self.diagnostics {
            if let Some(f) = d.files.iter().find(|f| f.name == name) {
                return Some((f, Some(d)));
            }
        }
        self.views.iter().find(|f| f.name == name).map(|f| (f, None))
    }

    /// Writes `<folder>/run.json` through the publish path.
    /// The folder must exist: a run's folder that is gone (moved or removed while the run
    /// went on) is not made again for its manifest alone.
    pub fn write(&self, folder: &Path) -> Result<Published<()>, PublishError> {
        let options = Options::default().in_existing_folder();
        publish_bytes_with(&folder.join(FILE_NAME), options, self.to_text().as_bytes())
    }

    /// The file's text, as [`RunManifest::write`] publishes it (also for a writer that places
    /// it otherwise: a run's reserved space on a full disk).
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("the manifest serializes");
        text.push('\n');
        text
    }

    /// Reads a manifest file. An error names the file and, for content it cannot take, the line,
    /// the column and the field (`diagnostics[1].files[0].bytes: invalid type: ...`). A
    /// `schema` other than [`SCHEMA`] (a later build's manifest, whose fields may be others) is
    /// refused as such, before any other field is read.
    pub fn read(path: &Path) -> Result<RunManifest, JsonReadError> {
        /// The one field read first.
        #[derive(Deserialize)]
        struct Schema {
            schema: Option<u64>,
        }
        let text = std::fs::read(path).map_err(|e| JsonReadError::io(path, FILE_NAME, e))?;
        match parse::<Schema>(path, &text)?.schema {
            Some(schema) if schema != u64::from(SCHEMA) => Err(JsonReadError::invalid(
                path,
                FILE_NAME,
                format!("schema {schema} is not one this build reads (it reads {SCHEMA})"),
            )),
            _ => parse(path, &text),
        }
    }

    /// [`RunManifest::read`], or `None` when nothing at all is at `path` (a folder of the
    /// original runtime's, or files put together by hand). Anything there that cannot be read
    /// (a folder, a file that is not a manifest, a later schema, a dangling link) is an error:
    /// a manifest that is there but unreadable is not one that is absent.
    pub fn read_if_present(path: &Path) -> Result<Option<RunManifest>, JsonReadError> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            _ => RunManifest::read(path).map(Some),
        }
    }

    /// One line on how the run ended, e.g. `fatal 2 HEAP_RING_DEADLOCK: ...`.
    pub fn status_line(&self) -> String {
        match (&self.status, &self.fatal) {
            (RunStatus::Completed, _) => "completed".into(),
            (s, Some(f)) => format!("{} ({} {}; run.json has the message)", s.as_str(), f.code, f.name),
            (RunStatus::Running, None) => {
                "running: still going, or its process died before it finished".into()
            }
            (s, None) => s.as_str().into(),
        }
    }
}

/// `T` from the JSON `text` of the manifest at `path`; an error names the line and column and,
/// for a value of the wrong type or a missing field, the field (`diagnostics[1].files[0].bytes`).
fn parse<'de, T: Deserialize<'de>>(path: &Path, text: &'de [u8]) -> Result<T, JsonReadError> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = e.path().to_string();
        // Malformed JSON has no field to name (its path can be `?`): the line and column do.
        let data = e.inner().classify() == serde_json::error::Category::Data;
        let field = (data && field != ".").then_some(field);
        JsonReadError::json(path, FILE_NAME, e.into_inner(), field)
    })?;
    de.end()
        .map_err(|e| JsonReadError::json(path, FILE_NAME, e, None))?;
    Ok(value)
}

/// The manifest that governs an artifact ([`find_for`]), and the artifact's name in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Governing {
    /// The `run.json`, under the folder's canonical path.
    pub manifest: PathBuf,
    /// The folder it is in (canonical).
    pub folder: PathBuf,
    /// The artifact's name as the manifest would list it (`deps.json`,
    /// `scope_stats/scope_stats.jsonl`).
    pub name: String,
}

/// The manifest that governs `artifact`: `run.json` in its folder or the folder above (for
/// `scope_stats/scope_stats.jsonl`), with the artifact's name in it. Anything named `run.json`
/// counts, a folder or a dangling link too: reading it then says what is wrong with it, where
/// skipping it took the run's files for a manifest-less folder's (found by a review).
///
/// The folders are the real ones (the artifact's folder canonical), not the path's spelling:
/// spelled relative (`scope_stats/scope_stats.jsonl` inside the run's folder, or `args.bin`
/// inside `args_dump/`), the folder above was `.` again, or the name lost its subfolder, and a
/// tool took the run's own file for none of its (found by a review: `deps-viewer deps.json -o
/// scope_stats/scope_stats.jsonl` replaced the run's scope stats). `None` when the artifact's
/// folder does not exist (nothing there is any run's yet) or the path names no file.
pub fn find_for(artifact: &Path) -> Option<Governing> {
    let file = artifact.file_name()?;
    let parent = match artifact.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(parent).ok()?;
    let mut name = file.to_string_lossy().into_owned();
    let mut folder = dir.as_path();
    for level in 0..2 {
        let manifest = folder.join(FILE_NAME);
        if std::fs::symlink_metadata(&manifest).is_ok() {
            return Some(Governing {
                manifest,
                folder: folder.to_path_buf(),
                name,
            });
        }
        if level == 0 {
            name = format!("{}/{name}", folder.file_name()?.to_string_lossy());
            folder = folder.parent()?;
        }
    }
    None
}

/// The id of the run that wrote `artifact`: that of the manifest that governs it
/// ([`find_for`]) when the manifest lists it. `None` without a readable manifest (a file of the
/// original runtime's, or written by hand), and when the manifest does not list the file: a
/// leftover, or a file read while another run claimed its folder, whose `running` manifest
/// lists nothing yet (found by a review: a trace converted during such a claim was stamped
/// with the new run's id). A manifest that is there but unreadable gives `None` too:
/// [`check`], which every caller runs on the same file, says why.
pub fn run_id_of(artifact: &Path) -> Option<String> {
    let g = find_for(artifact)?;
    let m = RunManifest::read(&g.manifest).ok()?;
    m.find(&g.name).is_some().then_some(m.run_id)
}

/// The warning that a run's timing (`records`) and its dependencies (`deps`) come from two
/// different runs, by their manifests; `None` when they share a run or either has none.
pub fn mixed_runs(records: &Path, deps: &Path) -> Option<String> {
    let (a, b) = (run_id_of(records)?, run_id_of(deps)?);
    (a != b).then(|| {
        format!(
            "the timing ({}, run {a}) and the dependencies ({}, run {b}) come from different runs; \
             edges may join unrelated tasks",
            records.display(),
            deps.display()
        )
    })
}

/// The warning that few of a deps.json's edges join two tasks the timing records hold
/// (`joined` of `edges`, `first_unjoined` one that does not): a deps.json of another run, or
/// records of a run cut short. Quiet when at least half are joined: a run's own deps.json
/// joins all of its edges but those of tasks without rows (dummy and alloc tasks below level
/// 4, tasks a stopped run never ran).
pub fn few_timed_edges(
    deps: &Path,
    edges: usize,
    joined: usize,
    first_unjoined: Option<(u64, u64)>,
) -> Option<String> {
    if edges == 0 || joined * 2 >= edges {
        return None;
    }
    let label = crate::deps::task_label;
    let first = first_unjoined
        .map(|(p, s)| format!(" (first: {} -> {})", label(p), label(s)))
        .unwrap_or_default();
    Some(format!(
        "only {joined} of the {edges} dependency edges of {} join two tasks with timing rows{first}: \
         a deps.json of another run, or the timing of a run cut short? Readiness, and every figure \
         built on it, is missing for the rest",
        deps.display()
    ))
}

/// The warning that `count` tasks the timing `records` time are not in the `tasks[]` of
/// `deps` (`first`, by its place in the records): a deps.json of another run or an edited
/// file. Their dependencies are unknown, so every figure built on them is missing (found by a
/// review: one such row flipped sched-overhead's verdict without a word, and
/// [`few_timed_edges`] stays quiet while half the edges still join).
pub fn unlisted_timed_tasks(records: &Path, deps: &Path, count: usize, first: Option<u64>) -> Option<String> {
    let first = first.filter(|_| count > 0)?;
    Some(format!(
        "{count} timed task(s) of {} are not in the tasks[] of {} (first: {}): a deps.json of another \
         run, or an edited file? Their dependencies are unknown, and so is every figure built on them",
        records.display(),
        deps.display(),
        crate::deps::task_label(first)
    ))
}

/// Why a tool must not write its output to `output`; `None` when it may. It may not be one of
/// the `inputs` it reads (it would replace what it is reading), the run manifest beside it, or
/// a file that manifest lists as a diagnostic's artifact: a tool never replaces what the run
/// wrote (its views, such as `merged_swimlane.json`, it may rewrite). Beside a manifest that
/// cannot be read, it may not be a file that exists (which of them are the run's is unknown).
pub fn output_conflict(output: &Path, inputs: &[&Path]) -> Option<String> {
    let shown = output.display();
    if let Ok(out) = std::fs::canonicalize(output) {
        if inputs
            .iter()
            .any(|i| std::fs::canonicalize(i).is_ok_and(|i| i == out))
        {
            return Some(format!(
                "--output {shown} is an input of this command; choose another file"
            ));
        }
    }
    let Governing {
        manifest: manifest_path,
        name,
        ..
    } = find_for(output)?;
    if name == FILE_NAME {
        return Some(format!(
            "--output {shown} is the run manifest; choose another file"
        ));
    }
    let m = match RunManifest::read(&manifest_path) {
        Ok(m) => m,
        // Without its list any file there may be the run's: one that exists is not replaced.
        Err(e) if std::fs::symlink_metadata(output).is_ok() => {
            return Some(format!(
                "--output {shown} may be one of the run's files, and the run manifest that would say cannot \
                 be read ({e}); a tool never replaces the run's files: choose another file"
            ))
        }
        Err(_) => return None,
    };
    let d = m
        .diagnostics
        .iter()
        .find(|d| d.files.iter().any(|f| f.name == name))?;
    Some(format!(
        "--output {shown} is the {} artifact of run {} (per {}); a tool never replaces the \
         run's files: choose another file",
        d.name,
        m.run_id,
        manifest_path.display()
    ))
}

/// Why the run in `folder` left no file of the diagnostic `name` (`dep_gen`, `l2_swimlane`,
/// `args_dump`, `scope_stats`), as its run.json tells it: `"its run.json says dep_gen failed:
/// <reason>"`, or `"its run.json lists no dep_gen: the run did not ask for it"`; a run.json
/// that is there but cannot be read, as such (`"its run.json cannot be read (<error>)"`).
/// `None` without a run.json, or when it says the diagnostic was written (the file was then
/// removed or moved since). For a tool's error about a missing input, which otherwise could
/// only guess.
pub fn why_missing(folder: &Path, name: &str) -> Option<String> {
    let m = match RunManifest::read_if_present(&folder.join(FILE_NAME)) {
        Ok(m) => m?,
        Err(e) => return Some(format!("its {FILE_NAME} cannot be read ({e})")),
    };
    // A `running` manifest lists no diagnostic yet: "did not ask for it" would be wrong (found
    // by a review: said of a run killed, or still going).
    if m.status == RunStatus::Running {
        return Some(format!("its {FILE_NAME} says {}", m.status_line()));
    }
    let Some(d) = m.diagnostics.iter().find(|d| d.name == name) else {
        return Some(format!(
            "its {FILE_NAME} lists no {name}: the run did not ask for it"
        ));
    };
    match (d.outcome, &d.reason) {
        (Outcome::Written, _) => None,
        (outcome, Some(reason)) => Some(format!(
            "its {FILE_NAME} says {name} {}: {reason}",
            outcome.as_str()
        )),
        (outcome, None) => Some(format!("its {FILE_NAME} says {name} {}", outcome.as_str())),
    }
}

/// Why the run in `folder` left no file of the diagnostic `name`: [`why_missing`], or, when its
/// `run.json` says the diagnostic was written, that the file was moved or removed since. `None`
/// without a `run.json`.
pub fn why_absent(folder: &Path, name: &str) -> Option<String> {
    why_missing(folder, name).or_else(|| {
        std::fs::symlink_metadata(folder.join(FILE_NAME))
            .is_ok()
            .then(|| format!("its {FILE_NAME} says {name} was written: the file was moved or removed since"))
    })
}

/// What a tool reading `artifact` should warn of: why it is not the complete output of a
/// finished run ([`check_complete`]), or else that the run's result check failed (the file is
/// complete, but comes from a run whose results were wrong); `None` when the manifest vouches
/// for it, or when there is no manifest.
pub fn check(artifact: &Path) -> Option<String> {
    judge(artifact, true)
}

/// Why `artifact` should not be trusted as the complete output of a finished run, judged by the
/// manifest beside it; `None` when the manifest vouches for it, or when there is no manifest
/// (a file from the original runtime, or written by hand). A failed result check is not
/// counted: the graph and the records are whole (re-running the graph is sound).
pub fn check_complete(artifact: &Path) -> Option<String> {
    judge(artifact, false)
}

/// [`check_complete`]'s verdict, then, `with_result`, [`check`]'s note of a failed result
/// check: one read of the manifest for both.
fn judge(artifact: &Path, with_result: bool) -> Option<String> {
    let Governing {
        manifest: manifest_path,
        name,
        ..
    } = find_for(artifact)?;
    let shown = artifact.display();
    let m = match RunManifest::read(&manifest_path) {
        Ok(m) => m,
        Err(e) => {
            return Some(format!(
                "{shown}: the run manifest cannot be read ({e}); whether this file is current is unknown"
            ))
        }
    };
    let found = m.find(&name);
    if m.status == RunStatus::Running {
        // A `running` manifest lists nothing yet: the file may be the dead (or live) run's own,
        // which is the reason to give, not "left over".
        return Some(format!(
            "{shown} comes from run {} that did not finish: {}{}",
            m.run_id,
            m.status_line(),
            if found.is_some() {
                ""
            } else {
                " (run.json does not list it yet)"
            }
        ));
    }
    let Some((entry, diag)) = found else {
        return Some(format!(
            "{shown} is not a file of run {} (per {}): it is left over from an earlier run or was put there by hand",
            m.run_id,
            manifest_path.display()
        ));
    };
    if m.status != RunStatus::Completed {
        return Some(format!(
            "{shown} comes from run {} that did not complete: {}",
            m.run_id,
            m.status_line()
        ));
    }
    let actual = std::fs::metadata(artifact).map(|md| md.len()).ok();
    if actual != Some(entry.bytes) {
        return Some(format!(
            "{shown} has {} bytes but run {} wrote {}: it changed after the run",
            actual.map_or_else(|| "unknown".into(), |b| b.to_string()),
            m.run_id,
            entry.bytes
        ));
    }
    if let Some(why) = &m.incomplete_input {
        return Some(format!(
            "{shown} comes from run {}, a re-run of a graph that may be incomplete (--allow-incomplete): {why}",
            m.run_id
        ));
    }
    if let Some(d) = diag.filter(|d| d.outcome == Outcome::Partial) {
        return Some(format!(
            "{shown} is incomplete: {}",
            d.reason.as_deref().unwrap_or("records were lost")
        ));
    }
    if let Some(failed) = m.failed_check.as_ref().filter(|_| with_result) {
        return Some(format!(
            "{shown} comes from run {} whose result check failed: {failed}",
            m.run_id
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(status: RunStatus) -> RunManifest {
        RunManifest {
            schema: SCHEMA,
            run_id: "r1".into(),
            runtime: "tmr".into(),
            subject: "vector_example".into(),
            params: Default::default(),
            started: "2026-11-30T00:00:00.000Z".into(),
            ended: None,
            status,
            fatal: None,
            diagnostics: vec![DiagnosticEntry {
                name: "dep_gen".into(),
                outcome: Outcome::Written,
                reason: None,
                files: vec![FileEntry {
                    name: "deps.json".into(),
                    bytes: 3,
                }],
            }],
            views: vec![],
            failed_check: None,
            incomplete_input: None,
        }
    }

    #[test]
    fn check_vouches_only_for_the_listed_file_of_a_completed_run() {
        let dir = tempfile::tempdir().unwrap();
        let deps = dir.path().join("deps.json");
        std::fs::write(&deps, "abc").unwrap();
        assert_eq!(check(&deps), None, "no manifest: nothing to say");
        manifest(RunStatus::Completed).write(dir.path()).unwrap();
        assert_eq!(check(&deps), None);
        std::fs::write(&deps, "abcd").unwrap();
        let w = check(&deps).unwrap();
        assert!(w.contains("has 4 bytes but run r1 wrote 3"), "{w}");
        let other = dir.path().join("scope_stats/scope_stats.jsonl");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        std::fs::write(&other, "{}").unwrap();
        let w = check(&other).unwrap();
        assert!(w.contains("is not a file of run r1"), "{w}");
        let mut m = manifest(RunStatus::Fatal);
        m.fatal = Some(FatalInfo {
            code: 2,
            name: "HEAP_RING_DEADLOCK".into(),
            message: "no room".into(),
        });
        m.write(dir.path()).unwrap();
        std::fs::write(&deps, "abc").unwrap();
        let w = check(&deps).unwrap();
        assert!(
            w.contains("did not complete: fatal (2 HEAP_RING_DEADLOCK; run.json has the message)"),
            "{w}"
        );
    }

    /// Found by a review: a run whose golden failed left a run.json saying `completed`, and
    /// no tool said its artifacts come from a run with wrong results.
    #[test]
    fn a_failed_result_check_is_said_by_check_but_not_by_check_complete() {
        let dir = tempfile::tempdir().unwrap();
        let deps = dir.path().join("deps.json");
        std::fs::write(&deps, "abc").unwrap();
        let mut m = manifest(RunStatus::Completed);
        m.failed_check = Some("FAIL: out[3] = 48 (expected 47)".into());
        m.write(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(
            text.contains(r#""failed_check": "FAIL: out[3] = 48 (expected 47)""#),
            "{text}"
        );
        assert_eq!(RunManifest::read(&dir.path().join(FILE_NAME)).unwrap(), m);
        assert_eq!(
            check(&deps).unwrap(),
            format!(
                "{} comes from run r1 whose result check failed: FAIL: out[3] = 48 (expected 47)",
                deps.display()
            )
        );
        assert_eq!(check_complete(&deps), None, "the file is whole and the run's own");
        std::fs::write(&deps, "abcd").unwrap();
        assert!(check(&deps).unwrap().contains("has 4 bytes but run r1 wrote 3"));
    }

    #[test]
    fn a_file_has_the_run_id_of_the_manifest_only_when_it_lists_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let deps = dir.path().join("deps.json");
        std::fs::write(&deps, "abc").unwrap();
        assert_eq!(run_id_of(&deps), None, "no manifest");
        manifest(RunStatus::Completed).write(dir.path()).unwrap();
        assert_eq!(run_id_of(&deps).as_deref(), Some("r1"));
        let mut running = manifest(RunStatus::Running);
        running.run_id = "r2".into();
        running.diagnostics.clear(); // a new run's claim: it lists nothing yet
        running.write(dir.path()).unwrap();
        assert_eq!(run_id_of(&deps), None, "not r2's file");
    }

    #[test]
    fn a_dead_runs_files_say_it_did_not_finish_not_left_over() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = manifest(RunStatus::Running);
        m.diagnostics.clear(); // a `running` manifest lists nothing yet
        m.write(dir.path()).unwrap();
        let deps = dir.path().join("deps.json");
        std::fs::write(&deps, "abc").unwrap();
        assert_eq!(
            check(&deps).unwrap(),
            format!(
                "{} comes from run r1 that did not finish: running: still going, or its process died \
                 before it finished (run.json does not list it yet)",
                deps.display()
            )
        );
    }

    #[test]
    fn a_tool_may_not_write_over_its_input_the_manifest_or_an_artifact() {
        let dir = tempfile::tempdir().unwrap();
        manifest(RunStatus::Completed).write(dir.path()).unwrap();
        let (deps, view, input) = (
            dir.path().join("deps.json"),
            dir.path().join("deps_viewer.txt"),
            dir.path().join("records.json"),
        );
        std::fs::write(&deps, "abc").unwrap();
        std::fs::write(&input, "xyz").unwrap();
        let w = output_conflict(&deps, &[]).unwrap();
        assert!(
            w.contains("deps.json is the dep_gen artifact of run r1") && w.ends_with("choose another file"),
            "{w}"
        );
        let w = output_conflict(&dir.path().join(FILE_NAME), &[]).unwrap();
        assert!(w.ends_with("is the run manifest; choose another file"), "{w}");
        let w = output_conflict(&input, &[&input]).unwrap();
        assert!(
            w.ends_with("is an input of this command; choose another file"),
            "{w}"
        );
        assert_eq!(output_conflict(&view, &[&input]), None, "a view may be rewritten");
        assert_eq!(output_conflict(&dir.path().join("new.json"), &[&input]), None);
    }

    /// Found by a review: a run.json of a later schema was read as this one's, and a type error
    /// named no field.
    #[test]
    fn read_refuses_another_schema_and_names_the_field_of_a_type_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let shown = path.display();
        let mut m = manifest(RunStatus::Completed);
        m.schema = 999;
        m.write(dir.path()).unwrap();
        assert_eq!(
            RunManifest::read(&path).unwrap_err().to_string(),
            format!("{shown}: invalid run.json: schema 999 is not one this build reads (it reads 1)")
        );
        let bad_bytes = r#"{"schema": 1, "run_id": "r1", "runtime": "tmr", "subject": "s",
            "started": "t", "status": "completed", "diagnostics": [
              {"name": "dep_gen", "outcome": "written", "files": [{"name": "deps.json", "bytes": "3"}]}]}"#;
        std::fs::write(&path, bad_bytes).unwrap();
        assert_eq!(
            RunManifest::read(&path).unwrap_err().to_string(),
            format!(
                "{shown}:3:100: invalid run.json: diagnostics[0].files[0].bytes: invalid type: string \"3\", \
                 expected u64"
            )
        );
        std::fs::write(&path, r#"{"schema": "1"}"#).unwrap();
        assert_eq!(
            RunManifest::read(&path).unwrap_err().to_string(),
            format!("{shown}:1:14: invalid run.json: schema: invalid type: string \"1\", expected u64")
        );
    }

    /// Found by a review: a run.json that is a folder, or of a later schema, was taken for no
    /// run.json at all: no warning, and the run's files passed for a manifest-less folder's.
    #[test]
    fn a_manifest_that_is_there_but_unreadable_is_reported_not_taken_for_none() {
        let dir = tempfile::tempdir().unwrap();
        let (deps, path) = (dir.path().join("deps.json"), dir.path().join(FILE_NAME));
        std::fs::write(&deps, "abc").unwrap();
        assert_eq!(RunManifest::read_if_present(&path).unwrap(), None);
        assert_eq!(why_missing(dir.path(), "dep_gen"), None);
        std::fs::create_dir(&path).unwrap();
        let cannot = format!(
            "{}: cannot read run.json: Is a directory (os error 21)",
            path.display()
        );
        assert_eq!(
            RunManifest::read_if_present(&path).unwrap_err().to_string(),
            cannot
        );
        assert_eq!(
            check(&deps).unwrap(),
            format!(
                "{}: the run manifest cannot be read ({cannot}); whether this file is current is unknown",
                deps.display()
            )
        );
        assert_eq!(
            why_missing(dir.path(), "dep_gen").unwrap(),
            format!("its run.json cannot be read ({cannot})")
        );
        assert_eq!(
            output_conflict(&deps, &[]).unwrap(),
            format!(
                "--output {} may be one of the run's files, and the run manifest that would say cannot be read \
                 ({cannot}); a tool never replaces the run's files: choose another file",
                deps.display()
            )
        );
        assert_eq!(output_conflict(&dir.path().join("new.txt"), &[]), None);
        std::fs::remove_dir(&path).unwrap();
        let mut m = manifest(RunStatus::Completed);
        m.schema = 999;
        m.write(dir.path()).unwrap();
        assert_eq!(
            why_missing(dir.path(), "dep_gen").unwrap(),
            format!(
                "its run.json cannot be read ({}: invalid run.json: schema 999 is not one \
                 this build reads (it reads 1))",
                path.display()
            )
        );
    }

    /// Found by a review: a run killed (or still going) has a `running` manifest that lists no
    /// diagnostic yet, and the tools said of its missing files that "the run did not ask for
    /// it".
    #[test]
    fn a_running_manifest_says_the_run_may_have_died_not_that_it_did_not_ask() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = manifest(RunStatus::Running);
        m.diagnostics.clear();
        m.fatal = None;
        m.write(dir.path()).unwrap();
        assert_eq!(
            why_missing(dir.path(), "dep_gen").unwrap(),
            "its run.json says running: still going, or its process died before it finished"
        );
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(RunStatus::Interrupted);
        m.write(dir.path()).unwrap();
        assert_eq!(RunManifest::read(&dir.path().join(FILE_NAME)).unwrap(), m);
        let text = std::fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(text.contains("\"status\": \"interrupted\""), "{text}");
    }
}
