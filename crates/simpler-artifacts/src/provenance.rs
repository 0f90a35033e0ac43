//! What a tool's output was made from, so that a view written into a run's folder cannot be
//! taken for a view of that run when it is not.
//!
//! A tool notes its inputs before it reads them ([`Provenance::of`]): each file's identity
//! (device, inode, size, modification time) and the run its manifest says wrote it
//! ([`crate::manifest::run_id_of`]). Then:
//! - [`Provenance::foreign_destination`] is the warning that the output goes into the folder of
//!   another run than its inputs' (`deps-viewer A/deps.json -o <B>/view.html`): the user asked
//!   for it, so it is written, but said;
//! - [`Provenance::hold`] holds the output's folder for the write
//!   ([`crate::output_folder::hold_for_write`]) and refuses it when an input in that folder is
//!   no longer the file that was read. A run that claimed the folder and finished while the tool
//!   read (its claim removes the earlier run's files, its own replace them) would otherwise get
//!   a view of the earlier run among its files (found by a review). Under the hold no run can
//!   claim the folder until the write ends.
//!
//! Inputs in other folders are not checked at write time: a view written elsewhere is of the
//! files as they were read, and says which they were.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::manifest::{self, RunManifest};
use crate::output_folder::{run_folder_of, WriteHold};
use crate::publish::{hold_folder, PublishError};

/// A file's identity as the file system gives it: what a replacement (a rename over it, a
/// removal) or a rewrite changes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let md = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let (dev, ino) = {
            use std::os::unix::fs::MetadataExt;
            (md.dev(), md.ino())
        };
        #[cfg(not(unix))]
        let (dev, ino) = (0, 0);
        Some(Stamp {
            dev,
            ino,
            len: md.len(),
            modified: md.modified().ok(),
        })
    }
}

/// One input as it was noted.
#[derive(Debug)]
struct Input {
    path: PathBuf,
    stamp: Option<Stamp>,
    run: Option<String>,
    folder: Option<PathBuf>,
}

/// The inputs a tool's output is made from, as they were before the tool read them (see the
/// module docs).
#[derive(Debug, Default)]
pub struct Provenance {
    inputs: Vec<Input>,
}

/// The folder `file` is in (`.` for a bare name).
fn folder_of(file: &Path) -> &Path {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The output folder `folder` is part of ([`run_folder_of`]), canonical, so two spellings
/// compare equal; `None` when the folder does not exist.
fn run_folder(folder: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(run_folder_of(folder)).ok()
}

impl Provenance {
    /// Notes `inputs` as they are now; call it before reading them. An input that does not
    /// exist is noted as such (its reader reports it).
    pub fn of(inputs: &[&Path]) -> Provenance {
        Provenance {
            inputs: inputs
                .iter()
                .map(|p| Input {
                    path: p.to_path_buf(),
                    stamp: Stamp::of(p),
                    run: manifest::run_id_of(p),
                    folder: run_folder(folder_of(p)),
                })
                .collect(),
        }
    }

    /// Notes one more input (a file the tool comes to read later, such as a trace it copies
    /// from), as it is now.
    pub fn add(&mut self, input: &Path) {
        self.inputs.extend(Provenance::of(&[input]).inputs);
    }

    /// The warning that `output` goes into the folder of a run ([`run_folder_of`] its folder)
    /// whose files its inputs from other folders are not: `<B>/view.html goes into the folder
    /// of run R (per B/run.json), but is made from A/deps.json (run S), not from that run's
    /// files`. `None` when the output's folder is no run's (no readable manifest), or every
    /// input from elsewhere is that run's.
    pub fn foreign_destination(&self, output: &Path) -> Option<String> {
        self.foreign(folder_of(output), output)
    }

    /// [`Provenance::foreign_destination`] for a tool that writes many files into `folder`
    /// (an export).
    pub fn foreign_folder(&self, folder: &Path) -> Option<String> {
        self.foreign(folder, folder)
    }

    fn foreign(&self, folder: &Path, shown: &Path) -> Option<String> {
        let out_folder = run_folder(folder);
        let manifest_path = out_folder.as_ref()?.join(manifest::FILE_NAME);
        let run = RunManifest::read(&manifest_path).ok()?.run_id;
        let mut foreign = self
            .inputs
            .iter()
            // An input that did not exist made nothing of the output (its reader said so).
            .filter(|i| i.stamp.is_some())
            .filter(|i| i.folder.is_none() || i.folder != out_folder)
            .filter(|i| i.run.as_deref() != Some(run.as_str()))
            .peekable();
        foreign.peek()?;
        let mut made_from = String::new();
        for (n, i) in foreign.enumerate() {
            let sep = if n == 0 { "" } else { ", " };
            let of = match &i.run {
                Some(r) => format!("run {r}"),
                None => "listed by no run's manifest".to_string(),
            };
            let _ = write!(made_from, "{sep}{} ({of})", i.path.display());
        }
        Some(format!(
            "{} goes into the folder of run {run} (per {}), but is made from {made_from}, not \
             from that run's files",
            shown.display(),
            manifest_path.display()
        ))
    }

    /// Why the inputs in the output folder that `folder` is part of can no longer vouch for
    /// what is written there: the first that was removed, replaced or rewritten since it was
    /// noted. `None` when each is the file that was read.
    pub fn changed_in(&self, folder: &Path) -> Option<String> {
        let out_folder = run_folder(folder)?;
        let i = self.inputs.iter().find(|i| {
            i.folder.as_ref() == Some(&out_folder) && i.stamp.is_some() && Stamp::of(&i.path) != i.stamp
        })?;
        let now = match Stamp::of(&i.path) {
            None => "removed",
            Some(s) if Some(s.ino) != i.stamp.as_ref().map(|t| t.ino) => "replaced",
            Some(_) => "rewritten",
        };
        let by_run = match (manifest::run_id_of(&i.path), &i.run) {
            (Some(now), Some(then)) if &now != then => {
                format!(" (it was run {then}'s; it is now run {now}'s)")
            }
            (Some(now), None) => format!(" (it is now run {now}'s)"),
            _ => String::new(),
        };
        Some(format!(
            "{} was {now} while it was read{by_run}: another run claimed its folder, or something \
             else wrote it; the output would not be a view of what the folder holds, so nothing \
             was written; run the command again",
            i.path.display()
        ))
    }

    /// Holds `output`'s folder for its write ([`crate::output_folder::hold_for_write`]), after
    /// which no run can claim the folder until the hold is dropped, and refuses the write when
    /// an input there changed while it was read ([`Provenance::changed_in`]). Keep the hold
    /// until the output is published.
    pub fn hold(&self, output: &Path) -> Result<WriteHold, PublishError> {
        self.hold_in(folder_of(output), output)
    }

    /// [`Provenance::hold`] for a tool that writes many files into `folder` (an export): one
    /// hold for all of them, and for the removal of an earlier export's.
    pub fn hold_folder(&self, folder: &Path) -> Result<WriteHold, PublishError> {
        self.hold_in(folder, folder)
    }

    fn hold_in(&self, folder: &Path, shown: &Path) -> Result<WriteHold, PublishError> {
        let fail = |source| PublishError {
            path: shown.to_path_buf(),
            source,
        };
        let hold = hold_folder(folder).map_err(fail)?;
        match self.changed_in(folder) {
            Some(why) => Err(fail(std::io::Error::other(why))),
            None => Ok(hold),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{DiagnosticEntry, FileEntry, Outcome, RunStatus, SCHEMA};

    /// Writes a completed run's manifest into `dir` listing `files` (each `{}` unless it
    /// exists) as its dep_gen's.
    fn run_folder_with(dir: &Path, run: &str, files: &[&str]) {
        std::fs::create_dir_all(dir).unwrap();
        let files = files
            .iter()
            .map(|f| {
                let path = dir.join(f);
                if !path.exists() {
                    std::fs::write(&path, b"{}").unwrap();
                }
                FileEntry {
                    name: f.to_string(),
                    bytes: std::fs::metadata(&path).unwrap().len(),
                }
            })
            .collect();
        RunManifest {
            schema: SCHEMA,
            run_id: run.into(),
            runtime: "tmr".into(),
            subject: "vector_example".into(),
            params: Default::default(),
            started: "2026-12-07T00:00:00.000Z".into(),
            ended: None,
            status: RunStatus::Completed,
            fatal: None,
            diagnostics: vec![DiagnosticEntry {
                name: "dep_gen".into(),
                outcome: Outcome::Written,
                reason: None,
                files,
            }],
            views: vec![],
            failed_check: None,
            incomplete_input: None,
        }
        .write(dir)
        .unwrap();
    }

    #[test]
    fn a_view_of_one_run_into_another_runs_folder_is_warned_of() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        run_folder_with(&a, "run-a", &["deps.json"]);
        run_folder_with(&b, "run-b", &["deps.json"]);
        let p = Provenance::of(&[&a.join("deps.json")]);
        let out = b.join("view.html");
        assert_eq!(
            p.foreign_destination(&out).unwrap(),
            format!(
                "{} goes into the folder of run run-b (per {}), but is made from {} (run run-a), \
                 not from that run's files",
                out.display(),
                b.join("run.json").display(),
                a.join("deps.json").display()
            )
        );
        // Into its own run's folder, or a folder of no run: nothing to say.
        assert_eq!(p.foreign_destination(&a.join("view.html")), None);
        assert_eq!(p.foreign_destination(&dir.path().join("view.html")), None);
        // A file of no run's (no manifest lists it) into a run's folder is said too.
        std::fs::write(dir.path().join("mine.json"), b"{}").unwrap();
        let w = Provenance::of(&[&dir.path().join("mine.json")])
            .foreign_destination(&out)
            .unwrap();
        assert!(w.contains("mine.json (listed by no run's manifest)"), "{w}");
        // An input that did not exist (an optional sidecar the tool looked for) made nothing:
        // it is not named, and alone it is no cause to warn.
        let missing = dir.path().join("absent.json");
        let w = Provenance::of(&[&a.join("deps.json"), &missing])
            .foreign_destination(&out)
            .unwrap();
        assert!(!w.contains("absent.json"), "{w}");
        assert_eq!(Provenance::of(&[&missing]).foreign_destination(&out), None);
    }

    #[test]
    fn an_input_replaced_while_read_refuses_the_write_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        run_folder_with(dir.path(), "run-a", &["deps.json"]);
        let deps = dir.path().join("deps.json");
        let p = Provenance::of(&[&deps]);
        let out = dir.path().join("deps_viewer.html");
        assert!(p.hold(&out).is_ok(), "unchanged: the write goes ahead");
        // Another run claims the folder and writes its own deps.json (a new file renamed in).
        std::fs::write(dir.path().join("new"), b"{\"x\": 1}").unwrap();
        std::fs::rename(dir.path().join("new"), &deps).unwrap();
        run_folder_with(dir.path(), "run-b", &["deps.json"]);
        let e = p.hold(&out).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "cannot write {}: {} was replaced while it was read (it was run run-a's; it is now \
                 run run-b's): another run claimed its folder, or something else wrote it; the \
                 output would not be a view of what the folder holds, so nothing was written; run \
                 the command again",
                out.display(),
                deps.display()
            )
        );
        // A view written elsewhere is of the files as they were read: not refused. (A folder
        // inside the run's is the run's: `scope_stats/` is.)
        let elsewhere = tempfile::tempdir().unwrap();
        assert!(p.hold(&elsewhere.path().join("v.html")).is_ok());
        assert!(p.hold(&dir.path().join("scope_stats").join("v.html")).is_err());
        // Removed.
        std::fs::remove_file(&deps).unwrap();
        let e = p.hold(&out).unwrap_err().to_string();
        assert!(e.contains("deps.json was removed while it was read"), "{e}");
    }
}
