//! A run's output folder and its manifest (`run.json`): the folder is claimed for the run
//! (locked, an earlier run's artifacts removed), the manifest is written with status `running`
//! before anything else and again, last, when the run's diagnostics are closed. The claim
//! travels with the [`RunOutput`] in the run's report, so a caller that renders views from the
//! artifacts (the CLI) keeps the folder until it is done and records the views in the manifest.

use crate::sync::unmodeled::{AtomicU64, Mutex};
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
    /// Shared with a background publication of the run's scope stats ([`PendingManifest`]).
    state: Arc<Mutex<ManifestState>>,
}

/// A run's manifest as the run and a background publication of its scope stats both write it.
#[derive(Debug)]
struct ManifestState {
    manifest: RunManifest,
    /// The scope-stats entry a background publication recorded: it stands over the run's own
    /// (`withheld`, queued), whichever of the two writes comes first.
    published: Option<DiagnosticEntry>,
    /// Why the last write failed, if it did.
    error: Option<String>,
}

impl ManifestState {
    /// Writes the manifest with the published entry over the run's own.
    fn write(&mut self, folder: &Path) -> Option<&str> {
        if let Some(p) = &self.published {
            match self.manifest.diagnostics.iter_mut().find(|d| d.name == p.name) {
                Some(d) => *d = p.clone(),
                None => self.manifest.diagnostics.push(p.clone()),
            }
        }
        self.error = self.manifest.write(folder).err().map(|e| e.to_string());
        self.error.as_deref()
    }
}

/// A background publication's hold on its run's output (`collect_across_runs`): the folder
/// stays claimed until the publication lands (a later run into it is refused as busy instead
/// of removing a file still to come), and the publication records its outcome in the run's
/// `run.json`, which otherwise says `withheld` for ever.
#[derive(Clone, Debug)]
pub(crate) struct PendingManifest {
    folder: Arc<OutputFolder>,
    state: Arc<Mutex<ManifestState>>,
}

impl PendingManifest {
    /// Records `entry` (the published scope stats) in the run's manifest and writes it; the
    /// write's error, if any.
    pub fn record(&self, entry: DiagnosticEntry) -> Result<(), String> {
        let mut st = self.state.lock();
        st.published = Some(entry);
        match st.write(self.folder.path()) {
            None => Ok(()),
            Some(e) => Err(e.to_string()),
        }
    }

    /// The run's folder.
    pub fn path(&self) -> &Path {
        self.folder.path()
    }
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
            params: cfg.params.clone(),
            started: iso_utc(SystemTime::now()),
            ended: None,
            status: RunStatus::Running,
            fatal: None,
            diagnostics: Vec::new(),
            views: Vec::new(),
        };
        manifest.write(folder).map_err(|e| ClaimError::Io {
            folder: folder.to_path_buf(),
            // Found by a review: the refusal did not say the earlier run's files were gone.
            what: match claimed.removed() {
                [] => "cannot write the run manifest".into(),
                removed => format!(
                    "cannot write the run manifest, after removing the earlier run's {}",
                    removed.join(", ")
                ),
            },
            source: e.source,
        })?;
        Ok(RunOutput {
            folder: Arc::new(claimed),
            state: Arc::new(Mutex::new(ManifestState {
                manifest,
                published: None,
                error: None,
            })),
        })
    }

    /// The hold a background publication of this run's scope stats keeps ([`PendingManifest`]).
    pub(crate) fn pending(&self) -> PendingManifest {
        PendingManifest {
            folder: self.folder.clone(),
            state: self.state.clone(),
        }
    }

    /// Records how the run ended and what each diagnostic left, and writes the manifest.
    pub(crate) fn finish(&mut self, fatal: Option<&Fatal>, entries: Vec<DiagnosticEntry>) {
        let mut st = self.state.lock();
        let m = &mut st.manifest;
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
        st.write(self.folder.path());
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

    /// The manifest as last written (or attempted), a background publication's outcome
    /// included once it landed.
    pub fn manifest(&self) -> RunManifest {
        self.state.lock().manifest.clone()
    }

    /// What the claim removed of an earlier run in this folder (relative names).
    pub fn removed_earlier(&self) -> &[String] {
        self.folder.removed()
    }

    /// Why the last manifest write failed, if it did (the artifacts then cannot be vouched for).
    pub fn manifest_error(&self) -> Option<String> {
        self.state.lock().error.clone()
    }

    /// Records a view derived from the artifacts (a report, a text view, a trace) that was just
    /// published at `path` with `bytes`; call [`RunOutput::write_manifest`] afterwards.
    pub fn add_view(&mut self, path: &Path, bytes: u64) {
        let name = simpler_artifacts::manifest::relative_name(self.path(), path);
        let views = &mut self.state.lock().manifest.views;
        views.retain(|v| v.name != name);
        views.push(FileEntry { name, bytes });
    }

    /// Writes the manifest (last, after every file it lists); a failure is kept for
    /// [`RunOutput::manifest_error`] and returned.
    pub fn write_manifest(&mut self) -> Option<String> {
        self.state.lock().write(self.folder.path()).map(str::to_string)
    }
}
