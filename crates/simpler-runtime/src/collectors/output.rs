//! A run's output folder and its manifest (`run.json`): the folder is claimed for the run
//! (locked, an earlier run's artifacts removed), the manifest is written with status `running`
//! before anything else and again, last, when the run's diagnostics are closed. The claim
//! travels with the [`RunOutput`] in the run's report, so a caller that renders views from the
//! artifacts (the CLI) keeps the folder until it is done and records the views in the manifest.

use crate::sync::unmodeled::AtomicU64;
use crate::sync::Ordering;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use simpler_artifacts::manifest::{DiagnosticEntry, FatalInfo, FileEntry, RunManifest, RunStatus, SCHEMA};
use simpler_artifacts::output_folder::{ClaimError, OutputFolder};
use simpler_artifacts::time::{iso_utc, utc_stamp};

use super::scope_stats::ARTIFACT as SCOPE_STATS_ARTIFACT;
use crate::config::CallConfig;
use crate::fatal::{Fatal, FatalCode};

/// A claimed output folder and the manifest of the run that owns it.
#[derive(Clone, Debug)]
pub struct RunOutput {
    folder: Arc<OutputFolder>,
    manifest: RunManifest,
    manifest_error: Option<String>,
}

static RUN_SEQ: AtomicU64 = AtomicU64::new(0);

/// A run id unique across processes: UTC start second, process id, per-process counter.
fn new_run_id() -> String {
    format!(
        "{}-p{}-{}",
        utc_stamp(),
        std::process::id(),
        RUN_SEQ.fetch_add(1, Ordering::Relaxed) + 1
    )
}

impl RunOutput {
    /// Claims `folder` for a run of `cfg` (in background mode an existing scope-stats file is
    /// kept: that mode never overwrites one) and writes the `running` manifest.
    pub(crate) fn claim(
        folder: &Path,
        cfg: &CallConfig,
        subject: String,
        background: bool,
    ) -> Result<RunOutput, ClaimError> {
        let run_id = new_run_id();
        let holder = format!("pid {}, run {run_id}: {subject}", std::process::id());
        let keep: &[&str] = if background { &[SCOPE_STATS_ARTIFACT] } else { &[] };
        let claimed = OutputFolder::claim(folder, &holder, keep)?;
        let manifest = RunManifest {
            schema: SCHEMA,
            run_id,
            runtime: cfg.runtime.name().to_string(),
            subject,
            started: iso_utc(SystemTime::now()),
            ended: None,
            status: RunStatus::Running,
            fatal: None,
            diagnostics: Vec::new(),
            views: Vec::new(),
        };
        manifest.write(folder).map_err(|e| ClaimError::Io {
            folder: folder.to_path_buf(),
            what: "cannot write the run manifest".into(),
            source: e.source,
        })?;
        Ok(RunOutput {
            folder: Arc::new(claimed),
            manifest,
            manifest_error: None,
        })
    }

    /// Records how the run ended and what each diagnostic left, and writes the manifest.
    pub(crate) fn finish(&mut self, fatal: Option<&Fatal>, entries: Vec<DiagnosticEntry>) {
        let m = &mut self.manifest;
        m.ended = Some(iso_utc(SystemTime::now()));
        m.status = match fatal.map(|f| f.code) {
            None => RunStatus::Completed,
            Some(FatalCode::SchedulerTimeout) => RunStatus::Timeout,
            Some(FatalCode::Interrupted) => RunStatus::Interrupted,
            Some(_) => RunStatus::Fatal,
        };
        m.fatal = fatal.map(|f| FatalInfo {
            code: f.code.code(),
            name: f.code.name().to_string(),
            message: f.message.clone(),
        });
        m.diagnostics = entries;
        self.write_manifest();
    }

    /// A run refused after the claim (before anything ran): its `running` manifest is removed
    /// and the folder released.
    pub(crate) fn abandon(self) {
        let _ = std::fs::remove_file(self.path().join(simpler_artifacts::manifest::FILE_NAME));
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        self.folder.path()
    }

    /// The manifest as last written (or attempted).
    pub fn manifest(&self) -> &RunManifest {
        &self.manifest
    }

    /// What the claim removed of an earlier run in this folder (relative names).
    pub fn removed_earlier(&self) -> &[String] {
        self.folder.removed()
    }

    /// Why the last manifest write failed, if it did (the artifacts then cannot be vouched for).
    pub fn manifest_error(&self) -> Option<&str> {
        self.manifest_error.as_deref()
    }

    /// Records a view derived from the artifacts (a report, a text view, a trace) that was just
    /// published at `path` with `bytes`; call [`RunOutput::write_manifest`] afterwards.
    pub fn add_view(&mut self, path: &Path, bytes: u64) {
        let name = simpler_artifacts::manifest::relative_name(self.path(), path);
        self.manifest.views.retain(|v| v.name != name);
        self.manifest.views.push(FileEntry { name, bytes });
    }

    /// Writes the manifest (last, after every file it lists); a failure is kept for
    /// [`RunOutput::manifest_error`] and returned.
    pub fn write_manifest(&mut self) -> Option<&str> {
        self.manifest_error = self
            .manifest
            .write(self.folder.path())
            .err()
            .map(|e| e.to_string());
        self.manifest_error.as_deref()
    }
}
