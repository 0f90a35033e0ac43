//! Closing a run's scope stats: the metadata line, the verdict, and where the file goes.
//!
//! | close | metadata | file |
//! |---|---|---|
//! | proven, ordinary | seven keys (`dropped`/`total` null when the counts cannot be trusted) | written at the run boundary, replacing an older file |
//! | proven, background | eleven keys with values | rendered by the background writer; never replaces an existing file |
//! | unproven, ordinary, host has samples | eleven keys, all counts and capacities null, `partial_cut_unknown` | written (every sample, when the orchestration returned: it hands its last buffer over at exit) |
//! | unproven, ordinary, no samples | — | none; only a stale `scope_stats/scope_stats.jsonl` is removed |
//! | unproven, background | — | none; the run is quarantined |
//!
//! `hbg` closes like `tmr`: its samples are the graph build's growth (nothing is reclaimed while
//! it builds, so every `*_start` stays where it began).
//!
//! Verdicts (first match wins): a saturated counter or `received + dropped != total` →
//! `partial_cut_unknown` (counts unknown); a fatal, drops or host refusal → `partial_safe`;
//! otherwise `published`. An unproven stop is always `partial_cut_unknown`. Whatever the
//! verdict, when the body file could not be written whole (a full disk, a file-size limit)
//! nothing is published: the body is removed and the diagnostic fails, saying how many
//! samples were lost (a file of the samples that reached the disk would understate peaks).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use simpler_artifacts::manifest::{DiagnosticEntry, Outcome};
use simpler_artifacts::publish::{publish_with, Options};
use simpler_artifacts::scope_stats::{CollectionVerdict, Metadata};

use super::background::BackgroundWriter;
use super::collector::Collected;
use super::probe::ProducerFinal;
use super::ARTIFACT;
use crate::collectors::output::PendingManifest;

/// Capacities the metadata line reports (the run's effective configuration).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Capacities {
    pub task_window: [u64; 4],
    pub heap: [u64; 4],
    pub dep_pool: [u64; 4],
    pub tensormap: u64,
}

/// What became of a run's scope stats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeStatsOutcome {
    /// Where the artifact is (ordinary mode), or will be published (background mode).
    pub path: Option<PathBuf>,
    /// `published`, `partial_safe`, `partial_cut_unknown`, `metadata_only`, `quarantined` or
    /// `not_written`.
    pub verdict: String,
    /// Records the host received.
    pub received: u64,
    /// Records host storage kept.
    pub retained: u64,
    /// Records the producer attempted, when known.
    pub total: Option<u64>,
    /// Records the producer dropped, when known.
    pub dropped: Option<u64>,
    /// True when the file is queued for the background writer (see `Worker::flush_diagnostics`).
    pub background: bool,
    /// True when writing the file failed.
    pub write_failed: bool,
    /// Why nothing (or less) was written, if so.
    pub note: Option<String>,
    /// Size of the written file.
    pub bytes: u64,
}

/// The diagnostic's name in the run manifest.
pub const NAME: &str = "scope_stats";

impl ScopeStatsOutcome {
    /// This outcome as a manifest entry.
    pub fn manifest_entry(&self, folder: &Path) -> DiagnosticEntry {
        let files = match &self.path {
            Some(p) if !self.background => vec![crate::collectors::file_entry(folder, p, self.bytes)],
            _ => vec![],
        };
        let (outcome, reason) = match self.verdict.as_str() {
            _ if self.background => (
                Outcome::Withheld,
                Some(
                    "queued for the background writer; Worker::flush_diagnostics() publishes it".to_string(),
                ),
            ),
            "published" | "metadata_only" => (Outcome::Written, self.note.clone()),
            "partial_safe" | "partial_cut_unknown" => (
                Outcome::Partial,
                Some(match &self.note {
                    Some(n) => format!("{}: {n}", self.verdict),
                    None => self.partial_reason(),
                }),
            ),
            "not_written" if self.write_failed => (Outcome::Failed, self.note.clone()),
            _ => (
                Outcome::Withheld,
                self.note.clone().or_else(|| Some(self.verdict.clone())),
            ),
        };
        DiagnosticEntry {
            name: NAME.into(),
            outcome,
            reason,
            files,
        }
    }

    fn partial_reason(&self) -> String {
        let mut why = Vec::new();
        match (self.dropped, self.total) {
            (Some(d), Some(t)) if d > 0 => why.push(format!("{d} of {t} samples dropped")),
            (None, _) | (_, None) => why.push("sample counts unknown".to_string()),
            _ => {}
        }
        if self.retained < self.received {
            why.push(format!(
                "host storage kept {} of {} samples",
                self.retained, self.received
            ));
        }
        if why.is_empty() {
            why.push("the run stopped on a fatal".into());
        }
        format!("{}: {}", self.verdict, why.join("; "))
    }
}

/// A rendered-to-be artifact.
pub(crate) struct ExportJob {
    pub prefix: PathBuf,
    pub metadata: Metadata,
    pub body: Option<PathBuf>,
    pub run_epoch: u64,
    pub verdict: CollectionVerdict,
    /// A background job's hold on its run's folder and manifest ([`PendingManifest`]).
    pub manifest: Option<PendingManifest>,
    /// Set when the samples could not be stored ([`storage_failure`]): the job publishes
    /// nothing and fails with this.
    pub failure: Option<String>,
}

impl ExportJob {
    /// The run manifest's entry for this job's publication, `result` (its path and size, or
    /// its error): written, partial (the verdict says why) or failed.
    pub fn published_entry(&self, folder: &Path, result: &Result<(PathBuf, u64), String>) -> DiagnosticEntry {
        let (outcome, reason, files) = match result {
            Ok((path, bytes)) => {
                let files = vec![crate::collectors::file_entry(folder, path, *bytes)];
                match self.verdict {
                    CollectionVerdict::Published => (Outcome::Written, None, files),
                    ref v => (Outcome::Partial, Some(v.as_str().to_string()), files),
                }
            }
            Err(e) => (Outcome::Failed, Some(e.clone()), Vec::new()),
        };
        DiagnosticEntry {
            name: NAME.into(),
            outcome,
            reason,
            files,
        }
    }

    /// Writes `metadata + body` through the publish path: replacing an existing file when
    /// `overwrite`, else failing (and leaving that file untouched). Returns the path and size.
    pub fn publish(&self, overwrite: bool) -> Result<(PathBuf, u64), String> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        let dest = self.prefix.join(ARTIFACT);
        // Its subfolder, made here when no sample made it; the run's folder is not made again.
        let options = Options::closing(overwrite);
        let result = dest
            .parent()
            .map_or(Ok(()), crate::collectors::make_subfolder)
            .map_err(|e| simpler_artifacts::publish::PublishError {
                path: dest.clone(),
                source: e,
            })
            .and_then(|()| {
                publish_with(&dest, options, |out| {
                    serde_json::to_writer(&mut *out, &self.metadata)?;
                    out.write_all(b"\n")?;
                    if let Some(body) = &self.body {
                        io::copy(&mut File::open(body)?, out)?;
                    }
                    Ok(())
                })
            });
        if let Some(b) = &self.body {
            let _ = std::fs::remove_file(b);
        }
        result.map(|p| (p.path, p.bytes)).map_err(|e| e.to_string())
    }
}

/// Publishes `job` now (replacing an older file) and records the result in `out`.
fn publish_into(job: &ExportJob, out: &mut ScopeStatsOutcome) {
    match job.publish(true) {
        Ok((_, bytes)) => out.bytes = bytes,
        Err(e) => {
            out.path = None;
            out.verdict = "not_written".into();
            out.write_failed = true;
            out.note = Some(e);
        }
    }
}

fn capacity_fields(m: &mut Metadata, caps: &Capacities) {
    m.task_window_max = Some(caps.task_window.to_vec());
    m.heap_max = Some(caps.heap.to_vec());
    m.dep_pool_max = Some(caps.dep_pool.to_vec());
    m.tensormap_max = Some(caps.tensormap);
}

fn outcome(path: Option<PathBuf>, verdict: &str, c: &Collected) -> ScopeStatsOutcome {
    ScopeStatsOutcome {
        path,
        verdict: verdict.to_string(),
        received: c.received,
        retained: c.retained,
        total: None,
        dropped: None,
        background: false,
        note: c.error.clone(),
        bytes: 0,
        write_failed: false,
    }
}

/// Closes the body file: its path, or `None` when there is none or it could not be written
/// whole (its first storage error, mid-run or at this final flush): then the file is removed
/// and [`storage_failure`] says what was lost.
fn close_body(c: &mut Collected) -> Option<PathBuf> {
    let body = c.body.take()?;
    let path = body.path.clone();
    let closed = body.close();
    if let Err(e) = &closed {
        c.error
            .get_or_insert_with(|| format!("writing {}: {e}", path.display()));
    }
    if c.error.is_some() {
        let _ = std::fs::remove_file(&path);
        return None;
    }
    closed.ok()
}

/// Why nothing is published when host storage failed (a full disk, a file-size limit): the
/// samples that reached the file are not all of those the host kept, so a file of them would
/// understate every peak. `None` when storage did not fail.
fn storage_failure(c: &Collected) -> Option<String> {
    let error = c.error.as_ref()?;
    Some(format!(
        "{error}; {} samples received, none published",
        c.received
    ))
}

/// Closes a run whose producer stop is proven (`fin`) or not (`None`).
pub(crate) fn close_run(
    prefix: &Path,
    caps: &Capacities,
    mut collected: Collected,
    fin: Option<ProducerFinal>,
    run_fatal: bool,
    background: Option<(&BackgroundWriter, Option<PendingManifest>)>,
    run_epoch: u64,
) -> ScopeStatsOutcome {
    let Some(fin) = fin else {
        return close_unproven(prefix, collected, background.map(|b| b.0), run_epoch);
    };
    let (background, manifest) = match background {
        Some((bg, m)) => (Some(bg), m),
        None => (None, None),
    };
    if let Some(held) = &fin.held {
        collected.append(held);
    }
    let (total, dropped) = (u64::from(fin.total), u64::from(fin.dropped));
    let saturated = fin.total == u32::MAX || fin.dropped == u32::MAX;
    let counts_unknown = saturated || collected.received + dropped != total;
    let fatal = fin.fatal || run_fatal;
    let verdict = if counts_unknown {
        CollectionVerdict::PartialCutUnknown
    } else if fatal || dropped > 0 || collected.retained < collected.received {
        CollectionVerdict::PartialSafe
    } else {
        CollectionVerdict::Published
    };
    let known = |v: u64| (!counts_unknown).then_some(v);
    let mut metadata = Metadata {
        fatal: Some(fatal),
        dropped: known(dropped),
        total: known(total),
        ..Default::default()
    };
    capacity_fields(&mut metadata, caps);
    if background.is_some() {
        metadata.collection_verdict = Some(verdict.clone());
        metadata.counts_unknown = Some(counts_unknown);
        metadata.host_received_records = Some(collected.received);
        metadata.host_retained_records = Some(collected.retained);
    }
    let body = close_body(&mut collected);
    let job = ExportJob {
        prefix: prefix.to_path_buf(),
        metadata,
        body,
        run_epoch,
        verdict: verdict.clone(),
        manifest,
        failure: storage_failure(&collected),
    };
    let mut out = outcome(Some(prefix.join(ARTIFACT)), verdict.as_str(), &collected);
    out.total = known(total);
    out.dropped = known(dropped);
    match background {
        Some(bg) => {
            out.background = true;
            bg.submit(job);
        }
        None => publish_into(&job, &mut out),
    }
    out
}

fn close_unproven(
    prefix: &Path,
    mut collected: Collected,
    background: Option<&BackgroundWriter>,
    run_epoch: u64,
) -> ScopeStatsOutcome {
    if let Some(bg) = background {
        collected.discard();
        let detail =
            format!("run {run_epoch} ended without producer-stop proof; nothing was read or written");
        bg.quarantine(run_epoch, &detail);
        let mut out = outcome(None, "quarantined", &collected);
        out.note = Some(detail);
        return out;
    }
    if collected.received == 0 {
        let stale = prefix.join(ARTIFACT);
        let note = match std::fs::remove_file(&stale) {
            Ok(()) => format!(
                "no samples reached the host; removed the stale {}",
                stale.display()
            ),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                "no samples reached the host; nothing written".into()
            }
            Err(e) => {
                let msg = format!(
                    "no samples reached the host, and removing the stale {} failed: {e}",
                    stale.display()
                );
                simpler_artifacts::errln!("scope stats: {msg}");
                msg
            }
        };
        let mut out = outcome(None, "not_written", &collected);
        out.note = Some(note);
        return out;
    }
    let metadata = Metadata {
        collection_verdict: Some(CollectionVerdict::PartialCutUnknown),
        counts_unknown: Some(true),
        host_received_records: Some(collected.received),
        host_retained_records: Some(collected.retained),
        ..Default::default()
    };
    let body = close_body(&mut collected);
    let job = ExportJob {
        prefix: prefix.to_path_buf(),
        metadata,
        body,
        run_epoch,
        verdict: CollectionVerdict::PartialCutUnknown,
        manifest: None,
        failure: storage_failure(&collected),
    };
    let mut out = outcome(Some(prefix.join(ARTIFACT)), "partial_cut_unknown", &collected);
    publish_into(&job, &mut out);
    out
}
