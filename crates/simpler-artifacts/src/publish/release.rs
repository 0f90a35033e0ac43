//! An earlier output removed before its replacement is written, its space freed on a thread
//! of its own.
//!
//! A publication replaces an earlier file by its final rename, and that rename frees the
//! earlier file's space before it returns. On a file system mounted with `discard` and no
//! journal (the development VM's ext4), freeing means one synchronous discard per extent:
//! 0.4 s for a 2.6 GB trace, after the new trace is complete. A tool whose output takes
//! gigabytes (the swimlane converter) removes the earlier one with [`Release::begin`] before
//! it reads its inputs instead, so the freeing overlaps the reading and the new file has the
//! earlier one's room.
//!
//! The name goes at once: the file is first opened with `O_PATH` (which reads nothing and needs
//! no permission on the file), then unlinked, so the unlink only drops the name; the space is
//! freed when that descriptor closes, on the thread [`Release::begin`] starts.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::thread::JoinHandle;

/// An earlier file that was removed, its space being freed. Dropping it, or [`Release::wait`],
/// waits until the space is free.
#[derive(Debug)]
pub struct Release {
    closing: Option<JoinHandle<()>>,
}

impl Release {
    /// Removes the file at `dest` unless it is a folder or one of `keep` (a tool's inputs: an
    /// output given as an input's path is replaced by the final rename, after the input was
    /// read), and starts freeing its space. `None` when nothing was removed: no file there, a
    /// folder, one of `keep`, or a file that cannot be opened or unlinked (the publication's
    /// rename then replaces it, or reports why it cannot).
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
        let held: File = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
            .open(dest)
            .ok()?;
        std::fs::remove_file(dest).ok()?;
        // A thread that cannot start drops `held` here: the close, and its wait, stay on this one.
        let closing = std::thread::Builder::new()
            .name("simpler-release".into())
            .spawn(move || drop(held))
            .ok();
        Some(Release { closing })
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

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

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
}
