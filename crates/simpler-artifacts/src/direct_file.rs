//! A file written past the page cache (`O_DIRECT`), for the multi-gigabyte outputs a tool
//! streams once and does not read back (a swimlane trace of a million tasks).
//!
//! Why: written through the page cache, every byte of such a file is copied by the kernel
//! into freshly allocated and zeroed pages on the writing thread (`copy_folio_from_iter_atomic`),
//! which on the machines this was measured on cost more CPU time than producing the bytes
//! (3–8 s of system time for a 2.6 GB trace). With `O_DIRECT` the device reads the bytes from
//! the process's own buffer: the write costs wall time on the writing thread, not CPU.
//!
//! How: bytes are gathered in a staging buffer aligned to [`ALIGN`] and written in whole
//! aligned blocks at aligned offsets, as `O_DIRECT` requires. The last partial block is
//! written padded with zeros, and the file is then cut back to its length. Where the file
//! system refuses `O_DIRECT` (tmpfs refuses the open; some refuse the write with `EINVAL`) the
//! file is reopened without it and written through the page cache from where it stands, so the
//! bytes are the same either way; [`DirectFile::is_direct`] tells which path was taken.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Alignment of the staging buffer's address, of each write's length and of each file
/// offset: 4096 covers the logical block sizes of the devices and file systems in use.
pub const ALIGN: usize = 4096;

/// Bytes staged before a write: large enough that one synchronous direct write per block
/// keeps a virtual disk streaming.
pub const STAGE_BYTES: usize = 4 << 20;

/// A newly created file written with `O_DIRECT` where the file system allows it; see the
/// module documentation. Call [`DirectFile::finish`]: without it the last partial block is
/// not written.
pub struct DirectFile {
    file: File,
    path: PathBuf,
    direct: bool,
    /// Backing memory of the staging window (never reallocated).
    stage: Vec<u8>,
    /// Where the [`ALIGN`]-aligned window starts in `stage`.
    start: usize,
    /// Bytes gathered in the window.
    filled: usize,
    /// Bytes written to the file so far.
    position: u64,
}

impl DirectFile {
    /// Creates `path`, which must not exist (`create_new`), for writing with `O_DIRECT`, or
    /// without it where the file system refuses it at the open.
    pub fn create_new(path: &Path) -> io::Result<DirectFile> {
        Self::with_stage(path, STAGE_BYTES)
    }

    /// [`DirectFile::create_new`] with a staging window of `stage` bytes (a multiple of
    /// [`ALIGN`]), for tests that cross many windows with small inputs.
    pub fn with_stage(path: &Path, stage: usize) -> io::Result<DirectFile> {
        assert!(
            stage > 0 && stage.is_multiple_of(ALIGN),
            "the staging window is whole blocks"
        );
        let (file, direct) = match open_direct(path) {
            Ok(file) => (file, true),
            // The file exists (created just now) only if the open succeeded, so a refusal
            // of the flag leaves nothing behind to clash with the plain open.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                (OpenOptions::new().write(true).create_new(true).open(path)?, false)
            }
            Err(e) => return Err(e),
        };
        let buffer = vec![0u8; stage + ALIGN];
        let start = buffer.as_ptr().align_offset(ALIGN);
        Ok(DirectFile {
            file,
            path: path.to_path_buf(),
            direct,
            stage: buffer,
            start,
            filled: 0,
            position: 0,
        })
    }

    /// Whether the bytes go past the page cache (false once the file system refused it).
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    fn window_len(&self) -> usize {
        self.stage.len() - ALIGN
    }

    /// Writes the first `len` bytes of the window (a multiple of [`ALIGN`] unless the file
    /// is no longer direct) at the file's current position.
    fn write_window(&mut self, len: usize) -> io::Result<()> {
        let mut done = 0;
        while done < len {
            let bytes = &self.stage[self.start + done..self.start + len];
            match self.file.write(bytes) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    done += n;
                    self.position += n as u64;
                    // A short direct write may leave the next one unaligned.
                    if self.direct && !done.is_multiple_of(ALIGN) {
                        self.fall_back()?;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if self.direct && e.kind() == io::ErrorKind::InvalidInput => self.fall_back()?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reopens the file without `O_DIRECT`, positioned where the writes stand.
    fn fall_back(&mut self) -> io::Result<()> {
        let mut file = OpenOptions::new().write(true).open(&self.path)?;
        file.seek(SeekFrom::Start(self.position))?;
        self.file = file;
        self.direct = false;
        Ok(())
    }

    /// Writes what is staged (the last block padded, then cut back off) and returns the
    /// file, for the caller to sync.
    pub fn finish(mut self) -> io::Result<File> {
        let tail = self.filled;
        if tail > 0 {
            if self.direct {
                let padded = tail.div_ceil(ALIGN) * ALIGN;
                self.stage[self.start + tail..self.start + padded].fill(0);
                let end = self.position + tail as u64;
                self.write_window(padded)?;
                self.file.set_len(end)?;
            } else {
                self.write_window(tail)?;
            }
        }
        Ok(self.file)
    }
}

impl Write for DirectFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let room = self.window_len() - self.filled;
        let n = room.min(bytes.len());
        let at = self.start + self.filled;
        self.stage[at..at + n].copy_from_slice(&bytes[..n]);
        self.filled += n;
        if self.filled == self.window_len() {
            self.write_window(self.filled)?;
            self.filled = 0;
        }
        Ok(n)
    }

    /// Writes nothing: only whole blocks can be written before [`DirectFile::finish`].
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_: &Path) -> io::Result<File> {
    Err(io::ErrorKind::InvalidInput.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder on the crate's own file system (a disk in development and CI), where
    /// `/tmp` may be a tmpfs that refuses `O_DIRECT`.
    fn on_disk() -> tempfile::TempDir {
        tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap()
    }

    /// Bytes of a recognisable pattern that never repeats at a block's period.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4099) as u8).collect()
    }

    /// Every length around the block and window boundaries comes back byte for byte, written
    /// in uneven pieces, and the file is exactly as long as what was written.
    #[test]
    fn the_file_holds_exactly_the_bytes_written() {
        let dir = on_disk();
        let window = 4 * ALIGN;
        for (i, len) in [
            0,
            1,
            ALIGN - 1,
            ALIGN,
            ALIGN + 1,
            window - 1,
            window,
            window + 1,
            3 * window + 517,
        ]
        .into_iter()
        .enumerate()
        {
            let path = dir.path().join(format!("out{i}"));
            let mut f = DirectFile::with_stage(&path, window).unwrap();
            let bytes = pattern(len);
            for piece in bytes.chunks(1000 + i * 313) {
                f.write_all(piece).unwrap();
            }
            f.finish().unwrap().sync_all().unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "length {len}");
        }
    }

    /// On a file system that takes `O_DIRECT` (the build folder's, on ext4 and xfs) the file
    /// is written past the page cache; where it is refused the writes fall back, same bytes.
    #[test]
    fn direct_where_the_file_system_takes_it() {
        let dir = on_disk();
        let probe = dir.path().join("probe");
        let takes_it = open_direct(&probe).is_ok();
        let path = dir.path().join("out");
        let mut f = DirectFile::with_stage(&path, ALIGN).unwrap();
        assert_eq!(f.is_direct(), takes_it);
        f.write_all(&pattern(3 * ALIGN + 5)).unwrap();
        assert_eq!(f.is_direct(), takes_it, "whole blocks are written direct");
        f.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), pattern(3 * ALIGN + 5));
    }

    /// A write the device refuses for its alignment continues through the page cache from
    /// where the file stands.
    #[test]
    fn a_refused_direct_write_falls_back_without_losing_bytes() {
        let dir = on_disk();
        let path = dir.path().join("out");
        let mut f = DirectFile::with_stage(&path, ALIGN).unwrap();
        f.write_all(&pattern(ALIGN)).unwrap();
        // As if the device needed larger blocks: the next window is misaligned on purpose.
        f.start += 1;
        f.write_all(&pattern(2 * ALIGN)[ALIGN..]).unwrap();
        if open_direct(&dir.path().join("probe")).is_ok() {
            assert!(!f.is_direct(), "the misaligned write fell back");
        }
        f.write_all(&pattern(2 * ALIGN + 9)[2 * ALIGN..]).unwrap();
        f.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), pattern(2 * ALIGN + 9));
    }

    #[test]
    fn an_existing_file_is_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("taken");
        std::fs::write(&path, "someone else's").unwrap();
        let err = DirectFile::create_new(&path).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone else's");
    }
}
