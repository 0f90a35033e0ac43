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
//!
//! A direct write returns only when the device has the bytes, so the writes run on a thread
//! of the file's own, one window at a time, while the caller fills the other window: on the
//! machine this was measured on the copies into the windows (3–4 GB/s) had otherwise left
//! the disk idle for a quarter of a 2.6 GB trace's writing.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Alignment of the staging buffer's address, of each write's length and of each file
/// offset: 4096 covers the logical block sizes of the devices and file systems in use.
pub const ALIGN: usize = 4096;

/// Bytes staged before a write: large enough that one synchronous direct write per block
/// keeps a virtual disk streaming.
pub const STAGE_BYTES: usize = 4 << 20;

/// A newly created file written with `O_DIRECT` where the file system allows it; see the
/// module documentation. Call [`DirectFile::finish`]: without it the last partial block is
/// not written.
///
/// Full windows are written by a thread of the file's own while the next window fills, so
/// the device never waits for the copy into the window nor the copy for the device. An
/// error of that thread is returned by a later call (a `write` that needs a window back, or
/// [`DirectFile::finish`]); after an error the file is not to be used further.
pub struct DirectFile {
    /// The window being filled.
    window: Window,
    /// Bytes gathered in it.
    filled: usize,
    /// The other window, when it is not being written.
    spare: Option<Window>,
    /// Windows to the writing thread; `None` once the last one is sent.
    jobs: Option<SyncSender<Job>>,
    /// Windows back from the writing thread, written.
    written: Receiver<Window>,
    /// Windows sent and not back yet.
    in_flight: usize,
    /// The writing thread; it returns the file once the last window is written.
    thread: Option<JoinHandle<io::Result<File>>>,
    /// Whether the writes still go past the page cache (the writing thread clears it when
    /// it falls back).
    direct: Arc<AtomicBool>,
}

/// An [`ALIGN`]-aligned window of staging memory.
struct Window {
    /// Backing memory (never reallocated).
    memory: Vec<u8>,
    /// Where the aligned window starts in `memory`.
    start: usize,
}

impl Window {
    fn new(len: usize) -> Window {
        let memory = vec![0u8; len + ALIGN];
        let start = memory.as_ptr().align_offset(ALIGN);
        Window { memory, start }
    }

    fn len(&self) -> usize {
        self.memory.len() - ALIGN
    }

    fn bytes(&self) -> &[u8] {
        &self.memory[self.start..self.start + self.len()]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.len();
        &mut self.memory[self.start..self.start + len]
    }
}

/// What the writing thread is asked to write.
enum Job {
    /// A full window.
    Full(Window),
    /// The last bytes of the file: the first `n` of the window.
    Last(Window, usize),
}

/// The file as the writing thread holds it.
struct Device {
    file: File,
    path: PathBuf,
    direct: Arc<AtomicBool>,
    /// Bytes written to the file so far.
    position: u64,
}

impl Device {
    fn is_direct(&self) -> bool {
        self.direct.load(Ordering::Relaxed)
    }

    /// Writes `bytes` (a multiple of [`ALIGN`] long, from an aligned address, unless the
    /// file is no longer direct) at the file's current position.
    fn write_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut done = 0;
        while done < bytes.len() {
            match self.file.write(&bytes[done..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    done += n;
                    self.position += n as u64;
                    // A short direct write may leave the next one unaligned.
                    if self.is_direct() && !done.is_multiple_of(ALIGN) {
                        self.fall_back()?;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if self.is_direct() && e.kind() == io::ErrorKind::InvalidInput => self.fall_back()?,
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
        self.direct.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Writes the first `n` bytes of `window` as the file's end: the last block padded
    /// with zeros, then cut back off.
    fn write_last(&mut self, mut window: Window, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        if !self.is_direct() {
            return self.write_bytes(&window.bytes()[..n]);
        }
        let padded = n.div_ceil(ALIGN) * ALIGN;
        window.bytes_mut()[n..padded].fill(0);
        let end = self.position + n as u64;
        self.write_bytes(&window.bytes()[..padded])?;
        self.file.set_len(end)
    }

    /// The writing thread: writes each job's window and hands full ones back, until the
    /// last; returns the file.
    fn run(mut self, jobs: Receiver<Job>, written: SyncSender<Window>) -> io::Result<File> {
        for job in jobs {
            match job {
                Job::Full(window) => {
                    self.write_bytes(window.bytes())?;
                    // The file's owner may be gone (dropped after an error of its own).
                    let _ = written.send(window);
                }
                Job::Last(window, n) => {
                    self.write_last(window, n)?;
                    return Ok(self.file);
                }
            }
        }
        Err(io::Error::other("the file was dropped before its last bytes"))
    }
}

impl DirectFile {
    /// Creates `path`, which must not exist (`create_new`), for writing with `O_DIRECT`, or
    /// without it where the file system refuses it at the open.
    pub fn create_new(path: &Path) -> io::Result<DirectFile> {
        Self::with_stage(path, STAGE_BYTES)
    }

    /// [`DirectFile::create_new`] with staging windows of `stage` bytes (a multiple of
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
        let direct = Arc::new(AtomicBool::new(direct));
        let device = Device {
            file,
            path: path.to_path_buf(),
            direct: Arc::clone(&direct),
            position: 0,
        };
        let (jobs, incoming) = mpsc::sync_channel(1);
        let (back, written) = mpsc::sync_channel(2);
        let thread = std::thread::Builder::new()
            .name("direct-write".into())
            .spawn(move || device.run(incoming, back))?;
        Ok(DirectFile {
            window: Window::new(stage),
            filled: 0,
            spare: Some(Window::new(stage)),
            jobs: Some(jobs),
            written,
            in_flight: 0,
            thread: Some(thread),
            direct,
        })
    }

    /// Whether the bytes go past the page cache (false once the file system refused it),
    /// as the writes sent so far left it: [`DirectFile::wait_for_writes`] first to know it
    /// for every byte written.
    pub fn is_direct(&self) -> bool {
        self.direct.load(Ordering::Relaxed)
    }

    /// Waits until every full window sent is written.
    pub fn wait_for_writes(&mut self) -> io::Result<()> {
        while self.in_flight > 0 {
            let window = self.returned()?;
            self.spare = Some(window);
        }
        Ok(())
    }

    /// The next window back from the writing thread, or its error.
    fn returned(&mut self) -> io::Result<Window> {
        match self.written.recv() {
            Ok(window) => {
                self.in_flight -= 1;
                Ok(window)
            }
            Err(_) => Err(self.stopped()),
        }
    }

    /// The writing thread's error, once it has stopped.
    fn stopped(&mut self) -> io::Error {
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            _ => io::Error::other("the file's writing thread stopped"),
        }
    }

    /// Sends `job` to the writing thread.
    fn send(&mut self, job: Job) -> io::Result<()> {
        let sent = self.jobs.as_ref().is_some_and(|jobs| jobs.send(job).is_ok());
        if sent {
            Ok(())
        } else {
            Err(self.stopped())
        }
    }

    /// Writes what is staged (the last block padded, then cut back off), waits for every
    /// write, and returns the file, for the caller to sync.
    pub fn finish(mut self) -> io::Result<File> {
        let window = std::mem::replace(
            &mut self.window,
            Window {
                memory: Vec::new(),
                start: 0,
            },
        );
        let last = self.filled;
        self.send(Job::Last(window, last))?;
        self.jobs = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
            None => Err(io::Error::other("the file's writing thread stopped")),
        }
    }
}

impl Drop for DirectFile {
    /// Lets the writing thread end (the file unfinished) and waits for it, so no write
    /// outlives the file's owner.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Write for DirectFile {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let room = self.window.len() - self.filled;
        let n = room.min(bytes.len());
        let at = self.filled;
        self.window.bytes_mut()[at..at + n].copy_from_slice(&bytes[..n]);
        self.filled += n;
        if self.filled == self.window.len() {
            let next = match self.spare.take() {
                Some(window) => window,
                None => self.returned()?,
            };
            let full = std::mem::replace(&mut self.window, next);
            self.filled = 0;
            self.in_flight += 1;
            self.send(Job::Full(full))?;
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
        f.wait_for_writes().unwrap();
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
        f.window.start += 1;
        f.write_all(&pattern(2 * ALIGN)[ALIGN..]).unwrap();
        f.wait_for_writes().unwrap();
        if open_direct(&dir.path().join("probe")).is_ok() {
            assert!(!f.is_direct(), "the misaligned write fell back");
        }
        f.write_all(&pattern(2 * ALIGN + 9)[2 * ALIGN..]).unwrap();
        f.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), pattern(2 * ALIGN + 9));
    }

    /// The writing thread's error comes back from a later call, and from every call after.
    #[test]
    fn an_error_of_the_writing_thread_is_returned_later() {
        let dir = on_disk();
        if open_direct(&dir.path().join("probe")).is_err() {
            return; // No direct writes here, so no refusal to make the fallback fail.
        }
        let path = dir.path().join("out");
        let mut f = DirectFile::with_stage(&path, ALIGN).unwrap();
        f.write_all(&pattern(ALIGN)).unwrap();
        f.wait_for_writes().unwrap();
        // The next window is refused for its alignment, and the fallback cannot reopen.
        std::fs::remove_file(&path).unwrap();
        f.window.start += 1;
        f.write_all(&pattern(ALIGN)).unwrap();
        let err = f.wait_for_writes().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");
        let again = f.write_all(&pattern(2 * ALIGN)).unwrap_err();
        assert_eq!(again.to_string(), "the file's writing thread stopped");
        assert!(f.finish().is_err());
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
