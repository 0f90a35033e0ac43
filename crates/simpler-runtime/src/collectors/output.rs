//! A run's output folder and its manifest (`run.json`): the folder is claimed for the run
//! (locked, an earlier run's artifacts removed), the manifest is written with status `running`
//! before anything else and again, last, when the run's diagnostics are closed. The claim
//! travels with the [`RunOutput`] in the run's report, so a caller that renders views from the
//! artifacts (the CLI) keeps the folder until it is done and records the views in the manifest.
//!
//! A disk that fills during the run must not leave the manifest saying `running`, which reads
//! as "the process died": the claim sets disk space aside for the manifest
//! ([`ManifestReserve`]), and a manifest write the publish path cannot make is made in that
//! space instead.

use crate::sync::unmodeled::{AtomicU64, Mutex};
use crate::sync::Ordering;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use simpler_artifacts::manifest::{DiagnosticEntry, FatalInfo, FileEntry, RunManifest, RunStatus, SCHEMA};
use simpler_artifacts::output_folder::{ClaimError, OutputFolder, Whereabouts};
use simpler_artifacts::time::{iso_utc, utc_stamp};

use super::scope_stats::ARTIFACT as SCOPE_STATS_ARTIFACT;
use crate::config::CallConfig;
use crate::fatal::{Fatal, FatalCode};

/// A claimed output folder and the manifest of the run that owns it.
#[derive(Clone, Debug)]
pub struct RunOutput {
    folder: Arc<OutputFolder>,
    /// What the run found at its close when the folder was no longer where it was claimed.
    moved: Option<String>,
    /// Shared with a background publication of the run's scope stats ([`PendingManifest`]).
    state: Arc<Mutex<ManifestState>>,
}

/// A run's manifest as the run and a background publication of its scope stats both write it.
#[derive(Debug)]
struct ManifestState {
    /// The folder the manifest is written in (moved with it, [`RunOutput::follow_move`]).
    folder: PathBuf,
    manifest: RunManifest,
    /// The scope-stats entry a background publication recorded: it stands over the run's own
    /// (`withheld`, queued), whichever of the two writes comes first.
    published: Option<DiagnosticEntry>,
    /// Why the last write failed, if it did.
    error: Option<String>,
    /// The space set aside for a write the publish path cannot make (none once used, or when
    /// the disk had no room for it at the claim).
    reserve: Option<ManifestReserve>,
    /// Why the manifest is not written any more: its folder was removed while the run went on
    /// (nothing is made at its old name, which may be another folder's now).
    removed: Option<String>,
}

impl ManifestState {
    /// Writes the manifest with the published entry over the run's own; when the publish path
    /// fails (a full disk), writes it in the reserved space instead.
    fn write(&mut self) -> Option<&str> {
        if let Some(why) = &self.removed {
            self.error = Some(format!("not written: {why}"));
            return self.error.as_deref();
        }
        let folder = &self.folder.clone();
        if let Some(p) = &self.published {
            match self.manifest.diagnostics.iter_mut().find(|d| d.name == p.name) {
                Some(d) => *d = p.clone(),
                None => self.manifest.diagnostics.push(p.clone()),
            }
        }
        self.error = match self.manifest.write(folder) {
            Ok(_) => None,
            Err(e) => match self.reserve.take() {
                None => Some(e.to_string()),
                Some(reserve) => match reserve.publish(folder, &self.manifest.to_text()) {
                    Ok(()) => {
                        // For a later write (a view recorded after the run), if there is room.
                        self.reserve = ManifestReserve::set_aside(folder);
                        None
                    }
                    Err(r) => Some(format!("{e}; and in the space set aside for it: {r}")),
                },
            },
        };
        self.error.as_deref()
    }
}

/// Disk space set aside in the output folder, at the claim, for the manifest's writes that
/// the publish path cannot make: a hidden file of [`ManifestReserve::BYTES`] (a publish
/// temporary's name, so a claim removes one a killed run left), removed when the run's
/// output is dropped.
///
/// A write into it overwrites the blocks the file already holds, then renames it over
/// `run.json`, so it needs no free space where a file system overwrites in place (ext4, xfs,
/// tmpfs; not a copy-on-write one) and stays atomic: readers see the `running` manifest or
/// the final one, never a part.
#[derive(Debug)]
struct ManifestReserve {
    path: PathBuf,
}

impl ManifestReserve {
    /// The space set aside: several times a manifest of a run with every diagnostic on.
    const BYTES: usize = 16 * 1024;
    /// The hidden file's name.
    const NAME: &'static str = ".run.json.reserve.tmp";

    /// Sets the space aside in `folder`; `None` when the disk has no room for it (the run goes
    /// on without: a manifest write the publish path cannot make then fails as before).
    fn set_aside(folder: &Path) -> Option<ManifestReserve> {
        let path = folder.join(Self::NAME);
        let reserve = ManifestReserve { path };
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&reserve.path)
            .and_then(|mut f| {
                // Written, not sized with `set_len`: a sparse file holds no blocks.
                f.write_all(&[b' '; Self::BYTES])?;
                f.sync_all()
            });
        // On an error, dropping `reserve` removes what was written of it.
        written.ok().map(|()| reserve)
    }

    /// Writes `text` into the reserved blocks and renames the file over `folder`'s manifest.
    fn publish(self, folder: &Path, text: &str) -> io::Result<()> {
        if text.len() > Self::BYTES {
            return Err(io::Error::other(format!(
                "the manifest ({} bytes) is larger than the {} bytes set aside for it",
                text.len(),
                Self::BYTES
            )));
        }
        let mut f = OpenOptions::new().write(true).open(&self.path)?;
        f.write_all(text.as_bytes())?;
        f.set_len(text.len() as u64)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&self.path, folder.join(simpler_artifacts::manifest::FILE_NAME))?;
        if let Ok(d) = std::fs::File::open(folder) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for ManifestReserve {
    fn drop(&mut self) {
        // Gone already when a write used it.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A background publication's hold on its run's output (`collect_across_runs`): the folder
/// stays claimed until the publication lands (a later run into it is refused as busy instead
/// of removing a file still to come), and the publication records its outcome in the run's
/// `run.json`, which otherwise says `withheld` for ever.
#[derive(Clone, Debug)]
pub(crate) struct PendingManifest {
    /// The claim, kept until the publication lands.
    _claim: Arc<OutputFolder>,
    state: Arc<Mutex<ManifestState>>,
}

impl PendingManifest {
    /// Records `entry` (the published scope stats) in the run's manifest and writes it; the
    /// write's error, if any.
    pub fn record(&self, entry: DiagnosticEntry) -> Result<(), String> {
        let mut st = self.state.lock();
        st.published = Some(entry);
        match st.write() {
            None => Ok(()),
            Some(e) => Err(e.to_string()),
        }
    }

    /// The run's folder, where it is now (moved with it, [`RunOutput::follow_move`]).
    pub fn path(&self) -> PathBuf {
        self.state.lock().folder.clone()
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
            failed_check: None,
            incomplete_input: None,
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
            moved: None,
            state: Arc::new(Mutex::new(ManifestState {
                folder: folder.to_path_buf(),
                manifest,
                published: None,
                error: None,
                reserve: ManifestReserve::set_aside(folder),
                removed: None,
            })),
        })
    }

    /// The hold a background publication of this run's scope stats keeps ([`PendingManifest`]).
    pub(crate) fn pending(&self) -> PendingManifest {
        PendingManifest {
            _claim: self.folder.clone(),
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
        st.write();
    }

    /// At the run's close: when the folder is no longer where it was claimed (renamed or
    /// moved while the run went on), follows it, so that what the run writes from here on
    /// (the files made at close, the manifest, the views) lands beside what it wrote before,
    /// instead of in a new folder at the old path. Returns where the folder is when it is not
    /// in place (what happened is then [`RunOutput::moved`], for the report and the reasons of
    /// what could not be written). A folder that was removed is not made again: nothing more
    /// is written.
    pub(crate) fn follow_move(&mut self) -> Option<Whereabouts> {
        let from = self.path().display().to_string();
        let whereabouts = self.folder.whereabouts();
        let note = match &whereabouts {
            Whereabouts::InPlace => return None,
            Whereabouts::Moved(to) => {
                let to = to.clone();
                let note = format!(
                    "the output folder {from} was moved to {} while the run went on; the run wrote the rest there",
                    to.display()
                );
                let mut st = self.state.lock();
                if let Some(r) = st.reserve.as_mut() {
                    r.path = to.join(ManifestReserve::NAME);
                }
                st.folder = to;
                note
            }
            Whereabouts::Gone => {
                let note = format!(
                    "the output folder {from} was removed while the run went on; nothing more was written"
                );
                let mut st = self.state.lock();
                if let Some(mut r) = st.reserve.take() {
                    // Its file went with the folder; the old name may be another's now.
                    r.path = PathBuf::new();
                }
                st.removed = Some(note.clone());
                note
            }
        };
        self.moved = Some(note);
        Some(whereabouts)
    }

    /// What the run found at its close when its folder had been moved (followed: then
    /// [`RunOutput::path`] is where it was found) or removed while the run went on.
    pub fn moved(&self) -> Option<&str> {
        self.moved.as_deref()
    }

    /// A run refused after the claim (before anything ran): its `running` manifest is removed
    /// and the folder released.
    pub(crate) fn abandon(self) {
        let _ = std::fs::remove_file(self.path().join(simpler_artifacts::manifest::FILE_NAME));
    }

    /// The folder (where the run found it at its close, when it had been moved).
    pub fn path(&self) -> PathBuf {
        self.state.lock().folder.clone()
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

    /// Records that the run's result check failed (`detail`: what it found, as printed), for
    /// every later reader of the artifacts; call [`RunOutput::write_manifest`] afterwards.
    pub fn record_failed_check(&mut self, detail: String) {
        self.state.lock().manifest.failed_check = Some(detail);
    }

    /// Records that the run re-ran a graph that may be incomplete (`why`: what its own run's
    /// manifest said), for every later reader of the artifacts; call
    /// [`RunOutput::write_manifest`] afterwards.
    pub fn record_incomplete_input(&mut self, why: String) {
        self.state.lock().manifest.incomplete_input = Some(why);
    }

    /// Records a view derived from the artifacts (a report, a text view, a trace) that was just
    /// published at `path` with `bytes`; call [`RunOutput::write_manifest`] afterwards.
    pub fn add_view(&mut self, path: &Path, bytes: u64) {
        let name = simpler_artifacts::manifest::relative_name(&self.path(), path);
        let views = &mut self.state.lock().manifest.views;
        views.retain(|v| v.name != name);
        views.push(FileEntry { name, bytes });
    }

    /// Writes the manifest (last, after every file it lists); a failure is kept for
    /// [`RunOutput::manifest_error`] and returned.
    pub fn write_manifest(&mut self) -> Option<String> {
        self.state.lock().write().map(str::to_string)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simpler_artifacts::manifest::FILE_NAME;
    use simpler_artifacts::testing::mount_tmpfs;
    use std::process::Command;

    /// Fills the file system of `folder` with a file `folder/filler` until it refuses a byte.
    fn fill(folder: &Path) {
        let mut f = std::fs::File::create(folder.join("filler")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
        while f.write_all(&[0]).is_ok() {}
        assert_eq!(
            std::fs::write(folder.join("probe"), b"x").unwrap_err().kind(),
            io::ErrorKind::StorageFull
        );
        std::fs::remove_file(folder.join("probe")).unwrap();
    }

    /// Found by a review: a disk that filled during the run left `run.json` saying `running`
    /// (the final write failed), which every reader takes for a process that died; the
    /// console had said the truth, the folder did not.
    #[test]
    fn a_disk_full_at_the_runs_end_still_gets_its_final_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let Some(mnt) = mount_tmpfs(dir.path(), "tmpfs", "256k") else {
            return;
        };
        let folder = mnt.join("run");
        let unmount = || {
            let _ = Command::new("umount").arg(&mnt).status();
        };
        let result = std::panic::catch_unwind(|| {
            let mut out = RunOutput::claim(&folder, &CallConfig::default(), "a test".into(), false).unwrap();
            fill(&folder);
            out.finish(None, Vec::new());
            assert_eq!(out.manifest_error(), None);
            let m = RunManifest::read(&folder.join(FILE_NAME)).unwrap();
            assert_eq!(m.status, RunStatus::Completed);
            // The write freed the reserve's unused blocks and the `running` manifest's, so
            // the space is set aside again, and a later write (a view) lands too.
            assert!(folder.join(ManifestReserve::NAME).exists());
            out.add_view(&folder.join("view.txt"), 1);
            assert_eq!(out.write_manifest(), None);
            let m = RunManifest::read(&folder.join(FILE_NAME)).unwrap();
            assert_eq!((m.status, m.views.len()), (RunStatus::Completed, 1));
            drop(out);
            let mut left: Vec<_> = std::fs::read_dir(&folder)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            left.sort();
            assert_eq!(left, [".simpler.lock", "filler", "run.json"]);
        });
        unmount();
        if let Err(p) = result {
            std::panic::resume_unwind(p);
        }
    }

    /// With room on the disk the reserve is never used, and it is gone once the run's output
    /// is dropped.
    #[test]
    fn the_reserve_is_removed_with_the_runs_output() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("run");
        let mut out = RunOutput::claim(&folder, &CallConfig::default(), "a test".into(), false).unwrap();
        assert_eq!(
            std::fs::metadata(folder.join(ManifestReserve::NAME))
                .unwrap()
                .len(),
            ManifestReserve::BYTES as u64
        );
        out.finish(None, Vec::new());
        let pending = out.pending();
        drop(out);
        assert!(
            folder.join(ManifestReserve::NAME).exists(),
            "a background publication may still write"
        );
        drop(pending);
        assert!(!folder.join(ManifestReserve::NAME).exists());
        assert_eq!(
            RunManifest::read(&folder.join(FILE_NAME)).unwrap().status,
            RunStatus::Completed
        );
    }
}
