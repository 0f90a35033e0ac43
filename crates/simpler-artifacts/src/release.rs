//! A file removed now, its space freed on a thread of its own.
//!
//! Removing a file frees its space before the call returns. On a file system mounted with
//! `discard` and no journal (the development VM's ext4), freeing means one synchronous discard
//! per extent: 0.4 s for a 2.6 GB trace, 0.8 s for an earlier 1M-task run's trace and
//! deps.json. Two callers remove such files and have other work to do meanwhile:
//! - the swimlane converter removes an earlier trace at its output as it begins
//!   ([`Release::begin`]), so that the freeing overlaps the reading of its inputs (instead of
//!   following the new trace's final rename) and the new trace has the earlier one's room;
//! - a run that claims an output folder removes an earlier run's files
//!   ([`crate::output_folder`]), and the freeing overlaps the run.
//!
//! The name goes at once: a large file is first opened with `O_PATH` (which reads nothing and
//! needs no permission on the file), then unlinked, so the unlink only drops the name; its
//! space is freed when that descriptor closes, on the thread [`Release::remove`] starts.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::thread::JoinHandle;

/// Files smaller than this are freed at once, on the caller's thread: a thread would cost
/// more than their freeing.
pub const FREED_ON_A_THREAD: u64 = 64 << 20;

/// A file that was removed, its space being freed. Dropping it, or [`Release::wait`], waits
/// until the space is free.
#[derive(Debug)]
pub struct Release {
    closing: Option<JoinHandle<()>>,
}

impl Release {
    /// Removes the file or symbolic link at `path` and frees its space, on a thread of its own
    /// for a file of [`FREED_ON_A_THREAD`] bytes or more. `Ok(None)` when nothing is there;
    /// the error of the removal when it fails (a folder, a read-only folder).
    pub fn remove(path: &Path) -> io::Result<Option<Release>> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        // Held across the unlink, so that the unlink only drops the name. A file that cannot
        // be held is freed by the unlink, as any removal does.
        let held: Option<File> = (meta.is_file() && meta.len() >= FREED_ON_A_THREAD)
            .then(|| {
                OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
                    .open(path)
                    .ok()
            })
            .flatten();
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        }
        // A thread that cannot start drops `held` here: the close, and its wait, stay on this one.
        let closing = held.and_then(|held| {
            std::thread::Builder::new()
                .name("simpler-release".into())
                .spawn(move || drop(held))
                .ok()
        });
        Ok(Some(Release { closing }))
    }

    /// [`Release::remove`] of an earlier output at `dest`, unless it is a folder or one of
    /// `keep` (a tool's inputs: an output given as an input's path is replaced by the final
    /// rename, after the input was read). `None` when nothing was removed: nothing there, a
    /// folder, one of `keep`, or a file that cannot be removed (the publication's rename then
    /// replaces it, or reports why it cannot).
    pub fn begin<'a>(dest: &Path, keep: impl IntoIterator<Item = &'a Path>) -> Option<Release> {
        let meta = std::fs::symlink_metadata(dest).ok()?;
        if meta.is_dir() {
            return None;
        }
        let same =
            |p: &Path| std::fs::metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()));
        if keep.into_iter().any(same) {
            return None;
        }
        Release::remove(dest).ok().flatten()
    }

    /// Waits until the earlier file's space is free.
    pub fn wait(self) {
        drop(self);
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        if let Some(closing) = self.closing.take() {
            // The thread only closes a descriptor: it has nothing to report.
            let _ = closing.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::names_in;

    #[test]
    fn an_earlier_file_is_gone_when_begin_returns() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("trace.json");
        std::fs::write(&dest, vec![7u8; 1 << 20]).unwrap();
        let release = Release::begin(&dest, []).expect("a file was there");
        assert_eq!(names_in(dir.path()), Vec::<String>::new());
        release.wait();
        assert!(Release::begin(&dest, []).is_none(), "nothing left to remove");
    }

    #[test]
    fn a_folder_an_input_or_nothing_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("out");
        std::fs::create_dir(&folder).unwrap();
        assert!(Release::begin(&folder, []).is_none());
        assert!(folder.is_dir());

        let input = dir.path().join("records.json");
        std::fs::write(&input, "[]").unwrap();
        // The same file by another path is still the input.
        let same = dir.path().join("out").join("..").join("records.json");
        let other = dir.path().join("deps.json");
        std::fs::write(&other, "{}").unwrap();
        assert!(Release::begin(&same, [other.as_path(), input.as_path()]).is_none());
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "[]");

        assert!(Release::begin(&dir.path().join("absent.json"), []).is_none());
    }

    /// A link to a file is removed as a link: the file it names stays.
    #[test]
    fn a_symbolic_link_is_removed_not_what_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("kept.json");
        std::fs::write(&target, "kept").unwrap();
        let link = dir.path().join("trace.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        Release::begin(&link, []).expect("the link was there").wait();
        assert_eq!(names_in(dir.path()), ["kept.json"]);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
    }

    /// A large file's name goes at once and its space on a thread; a small one is freed by
    /// the call; a folder is an error, and nothing there is not.
    #[test]
    fn a_large_file_is_freed_on_a_thread_a_small_one_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let large = dir.path().join("deps.json");
        // Sparse: the size without the blocks.
        File::create(&large).unwrap().set_len(FREED_ON_A_THREAD).unwrap();
        let small = dir.path().join("run.json");
        std::fs::write(&small, "{}").unwrap();
        let freeing = Release::remove(&large).unwrap().expect("a file was there");
        assert!(freeing.closing.is_some(), "freed on a thread");
        let at_once = Release::remove(&small).unwrap().expect("a file was there");
        assert!(at_once.closing.is_none(), "freed by the call");
        assert_eq!(names_in(dir.path()), Vec::<String>::new());
        freeing.wait();
        assert!(Release::remove(&small).unwrap().is_none());
        let folder = dir.path().join("args_dump");
        std::fs::create_dir(&folder).unwrap();
        assert!(Release::remove(&folder).is_err());
        assert!(folder.is_dir());
    }
}
