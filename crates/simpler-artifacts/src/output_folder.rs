//! An output folder belongs to one run at a time.
//!
//! [`OutputFolder::claim`] takes an exclusive advisory lock on `<folder>/.simpler.lock` (the OS
//! releases it when the process dies, however it dies), so a second run into the same folder
//! fails at once and names the holder. Then it removes what an earlier run left there (a folder
//! holding files a run writes but no `run.json` is refused instead: they are not a run's): the files
//! its manifest lists, every file name a run or a view writes by default (an export of its args
//! dump included), and hidden work files (publish temporaries, spill files) of a killed process.
//! Unrelated files stay. The names go
//! at once; a large file's space is freed on a thread of its own while the run goes on
//! ([`crate::release`]).
//! A file written into a run's folder from outside its run (a tool's view) holds the lock
//! shared while it is written ([`hold_for_write`]): refused while another process's run holds
//! the folder, and a run cannot claim the folder in the middle of it.
//! [`unique_folder`] picks default folder names that never collide, across processes too.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::manifest::{self, RunManifest};
use crate::publish::is_temporary;
use crate::release::Release;

/// The lock file inside a claimed folder.
pub const LOCK_FILE: &str = ".simpler.lock";

/// The lock files this process's claims hold, by identity (device, inode): a write of this
/// process into a folder it claimed is its own run's, whether or not the holder's text made it
/// into the lock file (found by a review: on a full disk it did not, and the run's own manifest
/// write was refused as "in use by a run of another process (holder unknown)").
static HELD: std::sync::Mutex<Vec<(u64, u64)>> = std::sync::Mutex::new(Vec::new());

/// The identity of an open file, where the platform gives one.
fn identity(f: &File) -> Option<(u64, u64)> {
    f.metadata().ok().as_ref().and_then(metadata_identity)
}

/// The identity of a file's metadata, where the platform gives one.
fn metadata_identity(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

/// Whether this process's claim holds the lock file `f`.
fn held_here(f: &File) -> bool {
    identity(f).is_some_and(|id| HELD.lock().unwrap_or_else(|e| e.into_inner()).contains(&id))
}

/// What a run or its derived views write by default (relative to the output folder). The
/// folder's earlier run is recognized by these names and by its manifest.
pub const RUN_FILES: &[&str] = &[
    manifest::FILE_NAME,
    "name_map.json",
    "deps.json",
    "l2_swimlane_records.json",
    "chip_swimlane_records.json",
    "merged_swimlane.json",
    "scope_stats/scope_stats.jsonl",
    "scope_stats/scope_stats.html",
    // `simpler plan`'s table for the run; an earlier run's would describe other samples.
    "scope_stats/plan.json",
    // `simpler critical-path`'s report and traces; an earlier run's would describe other timing.
    "critical_path_report.md",
    "CPM_static.json",
    "CPM_observed.json",
    "args_dump/args_dump.json",
    "args_dump/args.bin",
];

/// A claimed output folder; the claim lasts as long as this value.
#[derive(Debug)]
pub struct OutputFolder {
    path: PathBuf,
    _lock: File,
    /// The folder itself, held open: where it is now ([`OutputFolder::whereabouts`]).
    dir: Option<File>,
    /// The lock file's identity in [`HELD`], while this claim holds it.
    id: Option<(u64, u64)>,
    removed: Vec<String>,
    /// The earlier run's large files, freed on threads of their own while the run goes on.
    _freeing: Vec<Release>,
}

/// Why a folder could not be claimed.
#[derive(Debug)]
pub enum ClaimError {
    /// Another run holds the folder.
    Busy {
        /// The folder.
        folder: PathBuf,
        /// Who holds it, as the holder wrote it into the lock file.
        holder: String,
    },
    /// The folder holds files a run writes, but no `run.json`: they are not an earlier run's
    /// (the original runtime's, or put there by hand), and the claim does not remove them.
    NotARunsFolder {
        /// The folder.
        folder: PathBuf,
        /// Those files (relative names).
        files: Vec<String>,
    },
    /// The folder or its lock file could not be created, or an earlier file not removed.
    Io {
        /// The folder.
        folder: PathBuf,
        /// What failed.
        what: String,
        /// The cause.
        source: io::Error,
    },
}

impl std::fmt::Display for ClaimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClaimError::Busy { folder, holder } => {
                let by = if holder.starts_with("a tool") {
                    format!("({holder})")
                } else {
                    format!("by another run ({holder})")
                };
                write!(
                    f,
                    "output folder {} is in use {by}; wait for it or choose another --output-prefix",
                    folder.display()
                )?;
                if holder.starts_with(&format!("pid {},", std::process::id())) {
                    // A library user holding an earlier run's report in this process.
                    f.write_str(" (the holder is this process: an earlier run's RunReport, which keeps its folder, is still alive; drop it or set its `output` to None)")?;
                }
                Ok(())
            }
            ClaimError::NotARunsFolder { folder, files } => write!(
                f,
                "output folder {} holds {} but no {}: not an earlier run's files (the original \
                 runtime's, or put there by hand), which a run would remove or replace; move them, \
                 or choose another --output-prefix",
                folder.display(),
                files.join(", "),
                manifest::FILE_NAME
            ),
            ClaimError::Io { folder, what, source } => {
                write!(f, "output folder {}: {what}: {source}", folder.display())
            }
        }
    }
}

impl std::error::Error for ClaimError {}

impl OutputFolder {
    /// Claims `folder` (creating it) for the run described by `holder` (pid, run id, ...), then
    /// removes the earlier run's artifacts, except the relative paths in `keep`.
    pub fn claim(folder: &Path, holder: &str, keep: &[&str]) -> Result<OutputFolder, ClaimError> {
        let io_err = |what: String| {
            let folder = folder.to_path_buf();
            move |source| ClaimError::Io { folder, what, source }
        };
        std::fs::create_dir_all(folder).map_err(io_err("cannot create it".into()))?;
        let lock_path = folder.join(LOCK_FILE);
        // The run's own names are never followed out of the folder: a symbolic link in their
        // place is removed, not written through.
        remove_symlink(&lock_path).map_err(io_err(format!("cannot remove the link {LOCK_FILE}")))?;
        // A folder that is refused below keeps no lock file it did not have (found by a
        // review: a refused folder of the user's own files was left a `.simpler.lock`).
        let lock_existed = lock_path.symlink_metadata().is_ok();
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io_err(format!("cannot open {LOCK_FILE}")))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = lock.read_to_string(&mut holder);
                return Err(ClaimError::Busy {
                    folder: folder.to_path_buf(),
                    holder: describe_holder(holder.trim()),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(io_err(format!("cannot lock {LOCK_FILE}"))(e));
            }
        }
        // Who holds the folder, for the error of a run that finds it busy (written again after
        // the removals below if a full disk refused it now).
        let write_holder = |lock: &mut File| {
            lock.set_len(0)?;
            lock.rewind()?;
            writeln!(lock, "{holder}")?;
            lock.flush()
        };
        let holder_written = write_holder(&mut lock).is_ok();
        let id = identity(&lock);
        if let Some(id) = id {
            HELD.lock().unwrap_or_else(|e| e.into_inner()).push(id);
        }
        // From here on an early return drops the claim: its identity goes with it.
        let mut claimed = OutputFolder {
            path: folder.to_path_buf(),
            _lock: lock,
            // A folder can be opened (read-only) to be named later; best effort.
            dir: File::open(folder).ok(),
            id,
            removed: Vec::new(),
            _freeing: Vec::new(),
        };
        // Found by a review: a folder that never had a run lost its deps.json to a claim,
        // "left by an earlier run".
        let earlier = earlier_files(folder);
        if std::fs::symlink_metadata(folder.join(manifest::FILE_NAME)).is_err() {
            let files: Vec<String> = earlier
                .iter()
                .filter(|n| !keep.contains(&n.as_str()))
                .filter(|n| !n.rsplit('/').next().is_some_and(is_temporary))
                .cloned()
                .collect();
            if !files.is_empty() {
                if !lock_existed {
                    let _ = std::fs::remove_file(&lock_path);
                }
                return Err(ClaimError::NotARunsFolder {
                    folder: folder.to_path_buf(),
                    files,
                });
            }
        }
        let (removed, freeing) =
            remove_earlier(folder, earlier, keep).map_err(|(what, e)| io_err(what)(e))?;
        if !holder_written {
            let _ = write_holder(&mut claimed._lock);
        }
        claimed.removed = removed;
        claimed._freeing = freeing;
        Ok(claimed)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the claim removed of an earlier run (relative names).
    pub fn removed(&self) -> &[String] {
        &self.removed
    }

    /// Where the folder is now, as the handle on it that the claim holds open says: still at
    /// [`OutputFolder::path`], moved (renamed, or a parent renamed), or removed. A run asks at
    /// its close, so that what it writes then lands beside what it wrote before (found by a
    /// review: a folder renamed during the run got a second `run.json` at its old path, which
    /// listed files that were in the renamed one). Linux names an open folder by its path now
    /// (`/proc/self/fd`), with ` (deleted)` once it is removed, whatever now has its old name.
    /// Elsewhere (or without the handle) always in place.
    pub fn whereabouts(&self) -> Whereabouts {
        #[cfg(target_os = "linux")]
        if let Some(dir) = &self.dir {
            use std::os::fd::AsRawFd;
            let Ok(now) = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd())) else {
                return Whereabouts::InPlace;
            };
            if now.to_string_lossy().ends_with(" (deleted)") {
                return Whereabouts::Gone;
            }
            let here = std::fs::canonicalize(&self.path).ok();
            return if here.as_deref() == Some(now.as_path()) {
                Whereabouts::InPlace
            } else {
                Whereabouts::Moved(now)
            };
        }
        Whereabouts::InPlace
    }
}

/// Where a claimed folder is now ([`OutputFolder::whereabouts`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Whereabouts {
    /// Where it was claimed.
    InPlace,
    /// Renamed or moved, to this path (absolute).
    Moved(PathBuf),
    /// Removed (whatever now has its old name).
    Gone,
}

impl Drop for OutputFolder {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = held.iter().position(|&h| h == id) {
                held.swap_remove(at);
            }
        }
    }
}

/// A writer's hold on a run's output folder while it publishes a file there (a tool's view,
/// report or export): a shared lock on the folder's `.simpler.lock`, so a run cannot claim the
/// folder (and remove or replace its files) in the middle of the write. Nothing while the
/// folder is not a run's (no lock file), or is held by a run of this process (its own
/// artifacts and views).
#[derive(Debug)]
pub struct WriteHold(#[allow(dead_code)] Option<File>);

/// Holds `folder` for a write ([`WriteHold`]). `Err` names the holder when another process's
/// run holds the folder: writing there would mix a file of other data into that run's output
/// (found by a review: a critical-path report of one run landed in the folder of a run that
/// claimed it meanwhile, and a trace was stamped with that run's id).
pub fn hold_for_write(folder: &Path) -> Result<WriteHold, String> {
    let Ok(mut lock) = crate::input::open_regular(&run_folder_of(folder).join(LOCK_FILE)) else {
        return Ok(WriteHold(None)); // not a run's folder
    };
    match lock.try_lock_shared() {
        Ok(()) => Ok(WriteHold(Some(lock))),
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = lock.read_to_string(&mut holder);
            let holder = holder.trim();
            if held_here(&lock) || holder.starts_with(&format!("pid {},", std::process::id())) {
                Ok(WriteHold(None)) // this process's run: its own files and views
            } else if holder.is_empty() {
                Err("holder unknown".into())
            } else {
                Err(holder.to_string())
            }
        }
        // A file system without locks: as the claims there, unguarded.
        Err(std::fs::TryLockError::Error(_)) => Ok(WriteHold(None)),
    }
}

/// The output folder `folder` is part of: the run's folder that holds it as one of the folders
/// a run writes into (`scope_stats`, `args_dump`, `args_dump/export`), when that folder is a
/// run's (it has a lock file or a manifest); `folder` itself otherwise. A write into
/// `scope_stats/` is held by the run folder's lock (found by a review: only the folder's own
/// lock was looked for, so a view written there was not held).
pub fn run_folder_of(folder: &Path) -> PathBuf {
    // `.` (or `..`) names no folder as spelled: the real one does (a write from inside
    // `args_dump/` into `.` is a write into the run's `args_dump/`).
    let real;
    let folder = match folder.file_name() {
        None => {
            let spelled = if folder.as_os_str().is_empty() {
                Path::new(".")
            } else {
                folder
            };
            match std::fs::canonicalize(spelled) {
                Ok(r) => {
                    real = r;
                    &real
                }
                Err(_) => folder,
            }
        }
        Some(_) => folder,
    };
    for sub in [EXPORT_FOLDER].iter().chain(SUBFOLDERS.iter()) {
        if !folder.ends_with(sub) {
            continue;
        }
        let depth = Path::new(sub).components().count();
        let Some(base) = folder.ancestors().nth(depth) else {
            continue;
        };
        let base = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        let is_run = [LOCK_FILE, manifest::FILE_NAME]
            .iter()
            .any(|f| std::fs::symlink_metadata(base.join(f)).is_ok());
        if is_run {
            return base.to_path_buf();
        }
    }
    folder.to_path_buf()
}

/// Who holds a folder, from its lock file's text (`pid N, run ...`, as the last claim wrote
/// it). When that process has ended, the lock is a tool's, writing into the folder
/// ([`hold_for_write`]), which writes no text of its own.
fn describe_holder(text: &str) -> String {
    let pid = text
        .strip_prefix("pid ")
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse::<u32>().ok());
    match pid {
        _ if text.is_empty() => "holder unknown".into(),
        Some(pid) if !Path::new(&format!("/proc/{pid}")).exists() => {
            format!("a tool writing into it; the last run to hold it, {text}, has ended")
        }
        _ => text.into(),
    }
}

/// The names of an earlier run's removed files, and their releases (the large ones still
/// freeing their space: [`Release`]).
type Removed = (Vec<String>, Vec<Release>);

/// Removes an earlier run's files (`earlier`, [`earlier_files`]) from `folder`, but those in
/// `keep` (see the module docs).
fn remove_earlier(
    folder: &Path,
    earlier: Vec<String>,
    keep: &[&str],
) -> Result<Removed, (String, io::Error)> {
    let mut removed = Vec::new();
    let mut freeing = Vec::new();
    // The run's own folders are never followed out of this one: a link in their place is
    // removed (the collectors then create real folders), not written or deleted through.
    for sub in SUBFOLDERS.iter().chain([&EXPORT_FOLDER]) {
        if remove_symlink(&folder.join(sub)).map_err(|e| (format!("cannot remove the link {sub}"), e))? {
            removed.push(format!("{sub} (a symbolic link)"));
        }
    }
    for name in earlier {
        if keep.contains(&name.as_str()) {
            continue;
        }
        match Release::remove(&folder.join(&name)) {
            Ok(Some(release)) => {
                removed.push(name);
                freeing.push(release);
            }
            Ok(None) => {}
            Err(e) => return Err((format!("cannot remove {name} of an earlier run"), e)),
        }
    }
    // An export folder left empty goes too (one holding anything else stays).
    let _ = std::fs::remove_dir(folder.join(EXPORT_FOLDER));
    Ok((removed, freeing))
}

/// The files of `folder` that a claim removes as an earlier run's (relative names, sorted):
/// the files its manifest lists, the names a run or a view writes by default ([`RUN_FILES`],
/// `deps_viewer*` views, `simpler dump-viewer --export`'s files in `args_dump/export/` and,
/// by their exact names, in `args_dump/`) and
/// hidden work files, each a plain file inside the folder (never through a link).
fn earlier_files(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = RUN_FILES.iter().map(|s| s.to_string()).collect();
    if let Ok(m) = RunManifest::read(&folder.join(manifest::FILE_NAME)) {
        names.extend(m.files().map(|f| f.name.clone()));
    }
    let scanned = std::iter::once(folder.to_path_buf())
        .chain(SUBFOLDERS.iter().map(|s| folder.join(s)))
        .chain([folder.join(EXPORT_FOLDER)]);
    for sub in scanned {
        let Ok(entries) = std::fs::read_dir(&sub) else {
            continue;
        };
        let in_export = sub.ends_with(EXPORT_FOLDER);
        let in_dump = sub.ends_with("args_dump");
        for e in entries.filter_map(Result::ok) {
            let n = e.file_name().to_string_lossy().into_owned();
            let is_view = n.starts_with("deps_viewer") && (n.ends_with(".txt") || n.ends_with(".html"));
            // What an export of an earlier run's dump wrote: that run's data, not this one's.
            // An export into the dump's own folder too (found by a review: its files stayed
            // beside the next run's dump, named like that dump's entries), by their exact names.
            let exported =
                (in_export && n.starts_with("task_")) || (in_dump && crate::args_dump::is_export_name(&n));
            if is_temporary(&n) || is_view || exported {
                names.push(manifest::relative_name(folder, &sub.join(&n)));
            }
        }
    }
    names.sort();
    names.dedup();
    names.retain(|name| {
        // A manifest can name anything; only plain relative paths inside the folder are ours.
        let inside = !name.is_empty()
            && Path::new(name)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        inside && removable(folder, name)
    });
    names
}

/// The relative name under which a claim of `folder` would remove `file` as an earlier run's,
/// if it would: for a run to refuse an output folder that holds its own input (a `deps.json`
/// to re-run, copied into the folder it is re-run into).
pub fn would_remove(folder: &Path, file: &Path) -> Option<String> {
    let (Ok(folder), Ok(file)) = (folder.canonicalize(), file.canonicalize()) else {
        return None; // a folder not made yet holds nothing; a missing input is refused later
    };
    let name = manifest::relative_name(&folder, &file);
    let inside = file.starts_with(&folder);
    (inside && earlier_files(&folder).contains(&name)).then_some(name)
}

/// `simpler dump-viewer --export`'s default folder, inside the output folder.
const EXPORT_FOLDER: &str = "args_dump/export";

/// The folders a run writes into inside its output folder.
const SUBFOLDERS: [&str; 2] = ["scope_stats", "args_dump"];

/// Whether `name` (a plain relative path) may be removed from `folder`: no folder on its way
/// is a symbolic link (a manifest naming a file under a link to another folder would
/// delete outside the output folder) and it is not a folder itself (which would refuse every
/// later run with "Is a directory"). A link in the name's own place is removed, as the link.
fn removable(folder: &Path, name: &str) -> bool {
    let mut at = folder.to_path_buf();
    let mut parts = Path::new(name).components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&at) else {
            return false; // nothing there to remove
        };
        let last = parts.peek().is_none();
        if !last && !meta.is_dir() || last && meta.is_dir() {
            return false;
        }
    }
    true
}

/// Removes `path` if it is a symbolic link; returns whether it was one.
fn remove_symlink(path: &Path) -> io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(path).map(|()| true),
        _ => Ok(false),
    }
}

/// Longest base name [`bounded_name`] keeps: a folder name is at most 255 bytes on Linux, and a
/// stamp and a `_N` suffix go after the base.
pub const MAX_BASE_NAME: usize = 200;

/// `name` if it is at most [`MAX_BASE_NAME`] bytes, else its first bytes and a hash of the
/// whole (16 hex digits), [`MAX_BASE_NAME`] bytes in all: two long names that share their
/// beginning still get two names (found by a review: a pytest id over ~230 characters made a
/// folder name the file system refused, "File name too long").
pub fn bounded_name(name: &str) -> std::borrow::Cow<'_, str> {
    if name.len() <= MAX_BASE_NAME {
        return name.into();
    }
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut keep = MAX_BASE_NAME - 17;
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    format!("{}_{hash:016x}", &name[..keep]).into()
}

/// Creates and returns a new folder `<parent>/<base>`, or `<base>_2`, `<base>_3`, ... when the
/// name is taken (creation is atomic, so two processes never get the same folder).
pub fn unique_folder(parent: &Path, base: &str) -> io::Result<PathBuf> {
    std::fs::create_dir_all(parent)?;
    for n in 1u32.. {
        let name = if n == 1 {
            base.to_string()
        } else {
            format!("{base}_{n}")
        };
        let path = parent.join(name);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("u32 names run out only after 4 billion folders")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifest an earlier run leaves (a claim alone does not write one; a run does).
    fn a_run_was_here(folder: &Path) {
        std::fs::write(
            folder.join(manifest::FILE_NAME),
            crate::testing::run_json("completed", "[]"),
        )
        .unwrap();
    }

    /// A claimed folder says where it is: in place, renamed (its new path), or removed; a
    /// folder of the same name made in its place is not it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_claimed_folder_says_where_it_went() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("out"), dir.path().join("moved"));
        let claimed = OutputFolder::claim(&old, "pid 1, run a", &[]).unwrap();
        assert_eq!(claimed.whereabouts(), Whereabouts::InPlace);
        std::fs::rename(&old, &new).unwrap();
        let new = new.canonicalize().unwrap(); // the kernel's name for it
        assert_eq!(claimed.whereabouts(), Whereabouts::Moved(new.clone()));
        // Another folder at the old name, even with a lock file there, is not the claimed one.
        std::fs::create_dir(&old).unwrap();
        std::fs::write(old.join(LOCK_FILE), "").unwrap();
        assert_eq!(claimed.whereabouts(), Whereabouts::Moved(new.clone()));
        // Its lock file removed, the folder is where it is.
        std::fs::remove_file(new.join(LOCK_FILE)).unwrap();
        assert_eq!(claimed.whereabouts(), Whereabouts::Moved(new.clone()));
        std::fs::remove_dir_all(&new).unwrap();
        assert_eq!(claimed.whereabouts(), Whereabouts::Gone);
        // Made again at its old name (as a new folder could take the same inode number): still
        // gone, and back in place when it is renamed back.
        let back = OutputFolder::claim(&new, "pid 1, run b", &[]).unwrap();
        std::fs::remove_dir_all(&old).unwrap();
        std::fs::rename(&new, &old).unwrap();
        assert_eq!(
            back.whereabouts(),
            Whereabouts::Moved(old.canonicalize().unwrap())
        );
        assert_eq!(claimed.whereabouts(), Whereabouts::Gone);
    }

    #[test]
    fn a_second_claim_is_refused_and_names_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutputFolder::claim(dir.path(), "pid 1, run a", &[]).unwrap();
        let err = OutputFolder::claim(dir.path(), "pid 2, run b", &[]).unwrap_err();
        assert!(
            err.to_string().contains("in use by another run (pid 1, run a)"),
            "{err}"
        );
        drop(first);
        OutputFolder::claim(dir.path(), "pid 2, run b", &[]).unwrap();
    }

    /// Found by a review: `simpler dump-viewer --export`'s files of an earlier run's dump
    /// stayed in `args_dump/export/` beside the new run's dump, with nothing to say whose
    /// data they held.
    #[test]
    fn the_claim_removes_an_earlier_export_and_keeps_what_else_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let export = p.join(EXPORT_FOLDER);
        std::fs::create_dir_all(&export).unwrap();
        for f in [
            "task_0x0000000100000003_after_out2.npy",
            "task_0x0000000100000002_before_in0.bin",
        ] {
            std::fs::write(export.join(f), "x").unwrap();
        }
        a_run_was_here(p);
        let claim = OutputFolder::claim(p, "me", &[]).unwrap();
        assert_eq!(
            claim.removed(),
            [
                "args_dump/export/task_0x0000000100000002_before_in0.bin",
                "args_dump/export/task_0x0000000100000003_after_out2.npy",
                "run.json"
            ]
        );
        assert!(!export.exists(), "the emptied export folder went too");
        drop(claim);
        std::fs::create_dir_all(&export).unwrap();
        std::fs::write(export.join("task_1.npy"), "x").unwrap();
        std::fs::write(export.join("notes.txt"), "mine").unwrap();
        a_run_was_here(p);
        let claim = OutputFolder::claim(p, "me", &[]).unwrap();
        assert_eq!(claim.removed(), ["args_dump/export/task_1.npy", "run.json"]);
        assert_eq!(std::fs::read_to_string(export.join("notes.txt")).unwrap(), "mine");
        drop(claim);
        // An export into args_dump/ itself: its files by their exact names, nothing else.
        let dump = p.join("args_dump");
        for f in [
            "task_0x0000000000000000_after_out2.npy",
            "task_1.npy",
            "notes.txt",
        ] {
            std::fs::write(dump.join(f), "x").unwrap();
        }
        a_run_was_here(p);
        let claim = OutputFolder::claim(p, "me", &[]).unwrap();
        assert_eq!(
            claim.removed(),
            ["args_dump/task_0x0000000000000000_after_out2.npy", "run.json"]
        );
        assert!(dump.join("task_1.npy").exists() && dump.join("notes.txt").exists());
    }

    /// Found by a review: a claim removed a `deps.json` from a folder no run had written,
    /// saying an earlier run left it. Files a run writes, without a run.json beside them, are
    /// not a run's: the claim is refused and removes nothing (hidden work files aside, which
    /// only a killed process leaves).
    #[test]
    fn a_folder_with_run_files_but_no_run_json_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("scope_stats")).unwrap();
        for f in [
            "deps.json",
            "scope_stats/scope_stats.jsonl",
            ".deps.json.1.0.tmp",
            "notes.txt",
        ] {
            std::fs::write(p.join(f), "precious").unwrap();
        }
        let err = OutputFolder::claim(p, "me", &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "output folder {} holds deps.json, scope_stats/scope_stats.jsonl but no run.json: not \
                 an earlier run's files (the original runtime's, or put there by hand), which a run \
                 would remove or replace; move them, or choose another --output-prefix",
                p.display()
            )
        );
        assert_eq!(std::fs::read_to_string(p.join("deps.json")).unwrap(), "precious");
        assert!(!p.join(LOCK_FILE).exists(), "a refused folder keeps no lock file");
        // Background mode keeps the recording: with only that, the claim goes ahead.
        std::fs::remove_file(p.join("deps.json")).unwrap();
        let claim = OutputFolder::claim(p, "me", &["scope_stats/scope_stats.jsonl"]).unwrap();
        assert_eq!(claim.removed(), [".deps.json.1.0.tmp"]);
        drop(claim);
        // Once a run wrote its manifest there, its files are an earlier run's.
        std::fs::write(p.join("deps.json"), "x").unwrap();
        a_run_was_here(p);
        let claim = OutputFolder::claim(p, "me", &[]).unwrap();
        assert_eq!(
            claim.removed(),
            ["deps.json", "run.json", "scope_stats/scope_stats.jsonl"]
        );
    }

    /// A run refuses an output folder whose claim would remove its own input
    /// (`would_remove`): a deps.json to re-run copied into the folder it is re-run into.
    #[test]
    fn would_remove_names_an_input_the_claim_would_take_for_an_earlier_runs() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("run");
        std::fs::create_dir_all(&p).unwrap();
        for f in ["deps.json", "graph.json"] {
            std::fs::write(p.join(f), "{}").unwrap();
        }
        assert_eq!(
            would_remove(&p, &p.join("deps.json")).as_deref(),
            Some("deps.json")
        );
        // By another spelling of the same path too.
        let spelled = p.join("..").join("run").join(".").join("deps.json");
        assert_eq!(would_remove(&p, &spelled).as_deref(), Some("deps.json"));
        assert_eq!(would_remove(&p, &p.join("graph.json")), None, "not a run's name");
        assert_eq!(would_remove(&p, &p.join("missing.json")), None);
        std::fs::write(dir.path().join("deps.json"), "{}").unwrap();
        assert_eq!(
            would_remove(&p, &dir.path().join("deps.json")),
            None,
            "outside the folder"
        );
        assert_eq!(would_remove(&dir.path().join("new"), &p.join("deps.json")), None);
    }

    /// Found by a review: on a full disk the claim's holder text was not written, and the
    /// run's own writes into its folder were refused as another process's ("holder
    /// unknown"). A claim of this process is known as such without its text.
    #[test]
    fn this_processs_claim_is_its_own_without_its_holder_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let mine = OutputFolder::claim(p, "pid 0, run a", &[]).unwrap();
        std::fs::File::options()
            .write(true)
            .open(p.join(LOCK_FILE))
            .unwrap()
            .set_len(0)
            .unwrap();
        assert!(hold_for_write(p).is_ok());
        drop(mine);
        // Released: a lock file without text, held by no one, holds nothing.
        assert!(hold_for_write(p).is_ok());
    }

    /// A write into a folder another process's run holds is refused, naming the holder; one
    /// into this process's run's folder, or a folder without a run, is not. While a write
    /// holds the folder, a run cannot claim it.
    #[test]
    fn a_write_is_refused_while_another_processs_run_holds_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        assert!(hold_for_write(p).is_ok(), "no lock file: not a run's folder");
        // Another process's claim: its lock and its text, without this process's claim.
        std::fs::write(p.join(LOCK_FILE), "pid 1, run a: vector_example (default)\n").unwrap();
        let other = File::open(p.join(LOCK_FILE)).unwrap();
        other.try_lock().unwrap();
        assert_eq!(
            hold_for_write(p).unwrap_err(),
            "pid 1, run a: vector_example (default)"
        );
        let err = crate::publish::publish_bytes(&p.join("deps_viewer.txt"), b"x").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot write {}: its folder is in use by a run of another process (pid 1, run a: \
                 vector_example (default)); write it after that run ends, or elsewhere",
                p.join("deps_viewer.txt").display()
            )
        );
        assert!(!p.join("deps_viewer.txt").exists());
        drop(other);
        let own = format!("pid {}, run b: a test", std::process::id());
        let mine = OutputFolder::claim(p, &own, &[]).unwrap();
        crate::publish::publish_bytes(&p.join("deps_viewer.txt"), b"x").unwrap();
        a_run_was_here(p);
        drop(mine);
        let hold = hold_for_write(p).unwrap();
        let err = OutputFolder::claim(p, "pid 2, run c", &[]).unwrap_err();
        assert!(matches!(err, ClaimError::Busy { .. }), "{err}");
        assert!(
            err.to_string()
                .contains(&format!("in use by another run ({own})")),
            "this process is alive: {err}"
        );
        drop(hold);
        std::fs::write(p.join(LOCK_FILE), "pid 4294967295, run z: gone\n").unwrap();
        let hold = hold_for_write(p).unwrap();
        let err = OutputFolder::claim(p, "pid 2, run c", &[]).unwrap_err();
        assert!(
            err.to_string().contains(
                "is in use (a tool writing into it; the last run to hold it, pid 4294967295, \
                 run z: gone, has ended); wait for it"
            ),
            "{err}"
        );
        drop(hold);
        OutputFolder::claim(p, "pid 2, run c", &[]).unwrap();
    }

    #[test]
    fn the_claim_removes_an_earlier_runs_files_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("scope_stats")).unwrap();
        for f in [
            "deps.json",
            "deps_viewer.txt",
            "deps_viewer_reduced.html",
            "scope_stats/scope_stats.jsonl",
            ".deps.json.12.0.tmp",
            ".swimlane.1.tasks.part",
            "scope_stats/.scope_stats.1.body",
            "notes.txt",
            "deps.json.bak",
        ] {
            std::fs::write(p.join(f), "x").unwrap();
        }
        // An earlier trace large enough to be freed on a thread (sparse: the size, no blocks).
        File::create(p.join("merged_swimlane.json"))
            .unwrap()
            .set_len(crate::release::FREED_ON_A_THREAD)
            .unwrap();
        a_run_was_here(p);
        let claim = OutputFolder::claim(p, "me", &["scope_stats/scope_stats.jsonl"]).unwrap();
        let mut removed = claim.removed().to_vec();
        removed.sort();
        assert_eq!(
            removed,
            [
                ".deps.json.12.0.tmp",
                ".swimlane.1.tasks.part",
                "deps.json",
                "deps_viewer.txt",
                "deps_viewer_reduced.html",
                "merged_swimlane.json",
                "run.json",
                "scope_stats/.scope_stats.1.body",
            ]
        );
        assert!(!p.join("merged_swimlane.json").exists(), "its name goes at once");
        assert!(p.join("notes.txt").exists() && p.join("deps.json.bak").exists());
        assert!(p.join("scope_stats/scope_stats.jsonl").exists(), "kept");
    }

    /// Found by a review: the run's `args_dump` folder as a link, or a manifest naming a file
    /// under a linked folder, made a claim delete (and the run then write) outside the output
    /// folder; a manifest naming a folder refused every later run.
    #[test]
    #[cfg(unix)]
    fn the_claim_never_deletes_through_a_link_nor_stops_at_a_folder() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let (p, outside) = (dir.path().join("run"), dir.path().join("outside"));
        for d in [p.join("notes"), outside.join("dump"), outside.join("other")] {
            std::fs::create_dir_all(d).unwrap();
        }
        for f in ["dump/args.bin", "dump/args_dump.json", "other/secret.txt"] {
            std::fs::write(outside.join(f), "sentinel").unwrap();
        }
        symlink(outside.join("dump"), p.join("args_dump")).unwrap();
        symlink(outside.join("other"), p.join("evil")).unwrap();
        let manifest = r#"{"schema": 1, "run_id": "r", "runtime": "tmr", "subject": "s",
            "started": "2026-01-01T00:00:00Z", "status": "completed", "diagnostics": [],
            "views": [{"name": "evil/secret.txt", "bytes": 8}, {"name": "notes", "bytes": 0}]}"#;
        std::fs::write(p.join("run.json"), manifest).unwrap();
        let claim = OutputFolder::claim(&p, "me", &[]).unwrap();
        assert_eq!(claim.removed(), ["args_dump (a symbolic link)", "run.json"]);
        for f in ["dump/args.bin", "dump/args_dump.json", "other/secret.txt"] {
            assert_eq!(
                std::fs::read_to_string(outside.join(f)).unwrap(),
                "sentinel",
                "{f}"
            );
        }
        assert!(!p.join("args_dump").exists() && p.join("notes").is_dir() && p.join("evil").exists());
    }

    #[test]
    fn a_long_base_name_is_cut_with_a_hash_of_the_whole() {
        assert_eq!(bounded_name("short"), "short");
        let exact = "x".repeat(MAX_BASE_NAME);
        assert_eq!(bounded_name(&exact), exact);
        let [a, b] = ["a", "b"].map(|end| format!("{}{end}", "é".repeat(150)));
        let (ca, cb) = (bounded_name(&a), bounded_name(&b));
        assert!(ca.len() <= MAX_BASE_NAME && cb.len() <= MAX_BASE_NAME, "{ca}");
        assert_ne!(ca, cb);
        assert!(
            ca.starts_with(&"é".repeat(91)) && !ca.starts_with(&"é".repeat(92)),
            "{ca}"
        );
        assert_eq!(ca.rsplit('_').next().unwrap().len(), 16);
        let dir = tempfile::tempdir().unwrap();
        let made = unique_folder(dir.path(), &format!("{}_20261207_221500", bounded_name(&a))).unwrap();
        assert!(made.is_dir());
    }

    #[test]
    fn unique_folders_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let a = unique_folder(dir.path(), "x").unwrap();
        let b = unique_folder(dir.path(), "x").unwrap();
        assert_eq!(
            (a.file_name().unwrap(), b.file_name().unwrap()),
            ("x".as_ref(), "x_2".as_ref())
        );
    }
}
