//! The one way any file of a run or a tool is written: into a unique temporary name in the
//! destination folder, flushed and fsynced, then renamed into place. On any error (a full disk,
//! a read-only folder, an interrupt) the temporary is removed and the error returned, so no file
//! ever appears under its final name before it is complete.
//!
//! Temporaries are named `.<final name>.<pid>.<n>.tmp` ([`is_temporary`] recognizes them and
//! the other hidden work files of a run); tools never read them, and a run that claims an
//! output folder removes those an earlier, killed process left behind.
//!
//! Test-only fault injection, for the end-to-end tests of this contract: the environment
//! variable `SIMPLER_FAULT_WRITE=<file name>:fail=<bytes>` makes the publication of every file
//! with that final name fail with "No space left on device" after that many bytes;
//! `<file name>:stall=<bytes>` makes it print `simpler: stalled writing <name>` on stderr after
//! that many bytes and wait for the process's next interrupt. Several rules are separated by
//! commas.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use crate::direct_file::DirectFile;
use crate::interrupt;
use crate::output_folder::{hold_for_write, WriteHold};

/// The buffered writer a publication hands to its `write` closure.
pub type Sink = BufWriter<GuardedFile>;

/// How a publication behaves; [`publish`] uses the default (replace, interruptible).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Whether an existing file may be replaced.
    pub mode: Mode,
    /// Whether the write stops (and the file is not published) once the process is interrupted
    /// ([`crate::interrupt`]). Tools' outputs are; a run's closing artifacts are not, because
    /// writing what the host holds is exactly what an interrupted run must still do.
    pub interruptible: bool,
    /// Whether the bytes are written past the page cache ([`crate::direct_file`]), for
    /// outputs of gigabytes that are written once and not read back by the writer.
    pub direct: bool,
    /// Whether a symbolic link at the destination is written through (the user named it, as
    /// with `-o link`) or replaced (the tool chose the name: [`Options::chosen_name`]).
    pub follow_link: bool,
    /// Whether a missing destination folder is created. A run's files during the run are
    /// not: its folder exists from the claim on, and one that is missing was moved or removed
    /// while the run went on ([`Options::in_existing_folder`]).
    pub create_folder: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Replace,
            interruptible: true,
            direct: false,
            follow_link: true,
            create_folder: true,
        }
    }
}

impl Options {
    /// A run's files in its folder: written even after an interrupt, replacing when
    /// `overwrite`, and only into a folder that exists ([`Options::in_existing_folder`]).
    pub fn closing(overwrite: bool) -> Options {
        Options {
            mode: if overwrite { Mode::Replace } else { Mode::NoClobber },
            interruptible: false,
            direct: false,
            follow_link: false,
            create_folder: false,
        }
    }

    /// These options with the bytes written past the page cache (see [`Options::direct`]).
    pub fn direct(self) -> Options {
        Options { direct: true, ..self }
    }

    /// These options for a name the tool chose (a view beside its input, a report in a run's
    /// folder), not one the user gave: a symbolic link found there is replaced by the file,
    /// not written through, since no one named its target (found by a review: a link planted
    /// at `deps_viewer.txt` made `deps-viewer` overwrite the file it led to, outside the
    /// folder).
    pub fn chosen_name(self) -> Options {
        Options {
            follow_link: false,
            ..self
        }
    }

    /// These options for a file a run writes into its folder while it goes on: a missing
    /// folder is an error, not made again (found by a review: a run folder renamed as the run
    /// started was made again at its old name by the run's next file, and the run's files
    /// were split between the two).
    pub fn in_existing_folder(self) -> Options {
        Options {
            create_folder: false,
            ..self
        }
    }
}

/// Whether a publication may replace a file already at the destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Rename over whatever is there (the ordinary case).
    Replace,
    /// Hard-link into place: fails, leaving the existing file untouched, when the name is taken.
    NoClobber,
}

/// A file that was published.
#[derive(Debug)]
pub struct Published<T> {
    /// Its final path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// What the `write` closure returned.
    pub value: T,
}

/// A publication that failed: nothing appeared under the final name.
#[derive(Debug)]
pub struct PublishError {
    /// The final path that was not written.
    pub path: PathBuf,
    /// The cause.
    pub source: io::Error,
}

impl PublishError {
    /// True when the write stopped because the process was interrupted.
    pub fn interrupted(&self) -> bool {
        interrupt::is_interrupt(&self.source)
    }
    /// True when the destination already existed in [`Mode::NoClobber`].
    pub fn already_exists(&self) -> bool {
        self.source.get_ref().is_some_and(|e| e.is::<DestinationExists>())
    }
}

impl std::fmt::Display for PublishError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.already_exists() {
            write!(
                f,
                "{} already exists; it was left untouched and nothing was written",
                self.path.display()
            )
        } else {
            write!(f, "cannot write {}: {}", self.path.display(), self.source)
        }
    }
}

// The message already includes the cause; no `source()`, so error chains do not repeat it.
impl std::error::Error for PublishError {}

/// The payload of a [`Mode::NoClobber`] publication's error when the name is taken.
#[derive(Debug)]
struct DestinationExists;

impl std::fmt::Display for DestinationExists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the destination exists")
    }
}

impl std::error::Error for DestinationExists {}

/// Publishes `dest` with the default [`Options`]; see [`publish_with`].
pub fn publish<T>(
    dest: &Path,
    write: impl FnOnce(&mut Sink) -> io::Result<T>,
) -> Result<Published<T>, PublishError> {
    publish_with(dest, Options::default(), write)
}

/// Writes `dest` through a temporary: creates the folder if needed (unless
/// [`Options::create_folder`] is off), runs `write` on a buffered
/// writer, flushes and fsyncs, then moves the file into place as `options` say.
pub fn publish_with<T>(
    dest: &Path,
    options: Options,
    write: impl FnOnce(&mut Sink) -> io::Result<T>,
) -> Result<Published<T>, PublishError> {
    let mut publication = Publication::begin(dest, options)?;
    let value = match write(publication.sink()) {
        Ok(value) => value,
        Err(e) => return Err(publication.fail(e)),
    };
    let published = publication.commit()?;
    Ok(Published {
        path: published.path,
        bytes: published.bytes,
        value,
    })
}

/// A file being published over any length of time (a graph streamed while a run goes on):
/// written through [`Publication::sink`] into its temporary, then moved into place by
/// [`Publication::commit`] as [`publish_with`] does. Dropped without a commit, it removes its
/// temporary, so nothing appears under the final name.
pub struct Publication {
    dest: PathBuf,
    dir: PathBuf,
    tmp: PathBuf,
    mode: Mode,
    /// `None` once committed or failed.
    sink: Option<Sink>,
    /// The destination folder held until the publication ends (declared last: dropped after
    /// the temporary is renamed or removed).
    _hold: WriteHold,
}

/// Where a publication of `dest` goes: `dest` itself when it is a regular file or nothing yet;
/// the file a link at `dest` leads to (the rename then replaces that file and the link stays a
/// link: renaming over the link replaced the link itself, and `-o /dev/stdout` made the
/// system's `/dev/stdout` a regular file). A device, a pipe, a folder or a link to one, and a
/// link to nothing, are refused: a rename cannot write into them, and must not replace them.
fn writable_destination(dest: &Path, follow_link: bool) -> io::Result<PathBuf> {
    let not_a_file = || {
        io::Error::other(
            "not a regular file (a device, a pipe, a folder, or a link to one); name a file: \
             the output is written to a temporary and renamed into place",
        )
    };
    match std::fs::symlink_metadata(dest) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(dest.to_path_buf()),
        Err(e) => Err(e),
        Ok(md) if md.file_type().is_symlink() && !follow_link => Ok(dest.to_path_buf()),
        Ok(md) if md.file_type().is_symlink() => match std::fs::canonicalize(dest) {
            Ok(target) if target.is_file() => Ok(target),
            Ok(_) => Err(not_a_file()),
            Err(_) => Err(io::Error::other(
                "a link to nothing; name a file or the link's target",
            )),
        },
        Ok(md) if md.is_file() => Ok(dest.to_path_buf()),
        Ok(_) => Err(not_a_file()),
    }
}

impl Publication {
    /// Starts publishing `dest`: creates its folder if needed (and allowed) and its temporary, under a
    /// unique name ([`is_temporary`]).
    pub fn begin(dest: &Path, options: Options) -> Result<Publication, PublishError> {
        Self::begin_as(dest, options, None)
    }

    /// [`Publication::begin`] with a temporary named by the caller (`temporary`, a file name
    /// in `dest`'s folder that [`is_temporary`] recognizes), for a caller that may lose the
    /// publication without dropping it and removes the temporary by its name instead. Fails
    /// when a file of that name exists.
    pub fn begin_named(dest: &Path, options: Options, temporary: &str) -> Result<Publication, PublishError> {
        Self::begin_as(dest, options, Some(temporary))
    }

    fn begin_as(dest: &Path, options: Options, temporary: Option<&str>) -> Result<Publication, PublishError> {
        let fail = |source| PublishError {
            path: dest.to_path_buf(),
            source,
        };
        let name = dest
            .file_name()
            .ok_or_else(|| fail(io::Error::other("the destination has no file name")))?
            .to_string_lossy()
            .into_owned();
        if let Some(t) = temporary.filter(|t| !is_temporary(t)) {
            return Err(fail(io::Error::other(format!("{t} is not a temporary's name"))));
        }
        let dest = &writable_destination(dest, options.follow_link).map_err(fail)?;
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if options.create_folder {
            std::fs::create_dir_all(&dir).map_err(fail)?;
        }
        let hold = hold_folder(&dir).map_err(fail)?;
        let tmp = dir.join(temporary.map_or_else(|| temporary_name(&name), str::to_string));
        let file = if options.direct {
            Target::Direct(DirectFile::create_new(&tmp).map_err(fail)?)
        } else {
            Target::Cached(
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&tmp)
                    .map_err(fail)?,
            )
        };
        let guarded = GuardedFile::new(file, &name, options.interruptible);
        Ok(Publication {
            dest: dest.to_path_buf(),
            dir,
            tmp,
            mode: options.mode,
            sink: Some(BufWriter::with_capacity(256 << 10, guarded)),
            _hold: hold,
        })
    }

    /// The buffered writer into the temporary.
    pub fn sink(&mut self) -> &mut Sink {
        self.sink
            .as_mut()
            .expect("a publication is written only before its commit")
    }

    /// Follows a move of the folder it writes in (a run's folder renamed while the run went
    /// on): `now_at` maps each of its paths to where that file is now. The temporary is
    /// written through its open file either way; its commit renames it by path.
    pub fn relocate(&mut self, now_at: impl Fn(&Path) -> PathBuf) {
        self.dest = now_at(&self.dest);
        self.dir = now_at(&self.dir);
        self.tmp = now_at(&self.tmp);
    }

    /// Gives up: removes the temporary and returns `source` as this publication's error.
    pub fn fail(mut self, source: io::Error) -> PublishError {
        self.remove();
        PublishError {
            path: self.dest.clone(),
            source,
        }
    }

    /// Flushes and fsyncs the temporary, then moves it into place (see [`Mode`]); on an error
    /// the temporary is removed and nothing appears under the final name.
    pub fn commit(mut self) -> Result<Published<()>, PublishError> {
        let sink = self.sink.take().expect("committed once");
        match self.finish(sink) {
            Ok(bytes) => Ok(Published {
                path: self.dest.clone(),
                bytes,
                value: (),
            }),
            Err(e) => Err(self.fail(e)),
        }
    }

    fn finish(&self, sink: Sink) -> io::Result<u64> {
        let guarded = sink.into_inner().map_err(|e| e.into_error())?;
        let bytes = guarded.written;
        let file = match guarded.file {
            Target::Cached(file) => file,
            Target::Direct(file) => file.finish()?,
        };
        file.sync_all()?;
        drop(file);
        match self.mode {
            Mode::Replace => std::fs::rename(&self.tmp, &self.dest)?,
            Mode::NoClobber => {
                std::fs::hard_link(&self.tmp, &self.dest).map_err(|e| match e.kind() {
                    io::ErrorKind::AlreadyExists => io::Error::new(e.kind(), DestinationExists),
                    _ => e,
                })?;
                std::fs::remove_file(&self.tmp)?;
            }
        }
        // The rename is durable once the folder is synced; a failure here cannot un-publish.
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(bytes)
    }

    fn remove(&mut self) {
        if let Some(sink) = self.sink.take() {
            // The buffered bytes are not written: the temporary goes anyway.
            let (guarded, _) = sink.into_parts();
            drop(guarded);
        }
        let _ = std::fs::remove_file(&self.tmp);
    }
}

impl Drop for Publication {
    fn drop(&mut self) {
        if self.sink.is_some() {
            self.remove();
        }
    }
}

/// Holds `dir` for a write ([`hold_for_write`]); the refusal names the run that holds it.
pub(crate) fn hold_folder(dir: &Path) -> io::Result<WriteHold> {
    hold_for_write(dir).map_err(|holder| {
        io::Error::other(format!(
            "its folder is in use by a run of another process ({holder}); write it after that run \
             ends, or elsewhere"
        ))
    })
}

/// Publishes a file already rendered in memory (an HTML report, a manifest, a name map). Not
/// interruptible: the content exists, and the write is short.
pub fn publish_bytes(dest: &Path, bytes: &[u8]) -> Result<Published<()>, PublishError> {
    publish_bytes_with(dest, Options::default(), bytes)
}

/// [`publish_bytes`] with `options` (their `interruptible` aside).
pub fn publish_bytes_with(
    dest: &Path,
    options: Options,
    bytes: &[u8],
) -> Result<Published<()>, PublishError> {
    let options = Options {
        interruptible: false,
        ..options
    };
    publish_with(dest, options, |w| w.write_all(bytes))
}

static SEQ: AtomicU64 = AtomicU64::new(0);

fn temporary_name(final_name: &str) -> String {
    format!(
        ".{final_name}.{}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

/// True for the hidden work files a run or a publication leaves while it works: publish
/// temporaries (`.<name>.<pid>.<n>.tmp`) and collector spill files (`.<name>.part`,
/// `.<name>.body`). Tools never read them.
pub fn is_temporary(file_name: &str) -> bool {
    file_name.starts_with('.')
        && (file_name.ends_with(".tmp") || file_name.ends_with(".part") || file_name.ends_with(".body"))
}

/// Where a publication's bytes go.
enum Target {
    /// Through the page cache.
    Cached(File),
    /// Past it ([`Options::direct`]).
    Direct(DirectFile),
}

/// The file a publication writes: counts bytes, stops on an interrupt, and applies the
/// test-only fault rules of the module docs.
pub struct GuardedFile {
    file: Target,
    written: u64,
    interruptible: bool,
    fault: Option<&'static FaultRule>,
}

impl GuardedFile {
    /// A run's work file that feeds the artifact `final_name` (a body or part file streamed
    /// while the run goes on, copied or renamed into the artifact at its close): written
    /// through the page cache, not stopped by an interrupt, and subject to the test-only fault
    /// rules for `final_name`, so a test can fail the stream as a full disk would.
    pub fn work_file(file: File, final_name: &str) -> GuardedFile {
        GuardedFile::new(Target::Cached(file), final_name, false)
    }

    fn new(file: Target, final_name: &str, interruptible: bool) -> GuardedFile {
        GuardedFile {
            file,
            written: 0,
            interruptible,
            fault: fault_rules().iter().find(|r| r.file == final_name),
        }
    }
}

impl Write for GuardedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.interruptible && interrupt::requested() {
            return Err(interrupt::error());
        }
        let mut buf = buf;
        if let Some(rule) = self.fault {
            let room = rule.after.saturating_sub(self.written);
            if room == 0 {
                return match rule.action {
                    FaultAction::Fail => Err(io::Error::new(
                        io::ErrorKind::StorageFull,
                        format!(
                            "No space left on device (injected by SIMPLER_FAULT_WRITE after {} bytes)",
                            rule.after
                        ),
                    )),
                    FaultAction::Stall => {
                        // Waits for the next interrupt (a run's closing write stalls after the
                        // first one, so a test can send the second).
                        let seen = interrupt::count();
                        crate::errln!("simpler: stalled writing {}", rule.file);
                        while interrupt::count() == seen {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Err(interrupt::error())
                    }
                };
            }
            if (buf.len() as u64) > room {
                buf = &buf[..room as usize];
            }
        }
        let n = match &mut self.file {
            Target::Cached(file) => file.write(buf)?,
            Target::Direct(file) => file.write(buf)?,
        };
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Target::Cached(file) => file.flush(),
            Target::Direct(file) => file.flush(),
        }
    }
}

#[derive(Debug)]
struct FaultRule {
    file: String,
    after: u64,
    action: FaultAction,
}

#[derive(Debug, Clone, Copy)]
enum FaultAction {
    Fail,
    Stall,
}

fn fault_rules() -> &'static [FaultRule] {
    static RULES: OnceLock<Vec<FaultRule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let Ok(spec) = std::env::var("SIMPLER_FAULT_WRITE") else {
            return Vec::new();
        };
        spec.split(',')
            .filter_map(|rule| {
                let (file, action) = rule.trim().rsplit_once(':')?;
                let (kind, n) = action.split_once('=')?;
                let action = match kind {
                    "fail" => FaultAction::Fail,
                    "stall" => FaultAction::Stall,
                    _ => return None,
                };
                Some(FaultRule {
                    file: file.to_string(),
                    after: n.parse().ok()?,
                    action,
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::names_in;

    #[test]
    fn a_failed_write_leaves_neither_the_final_name_nor_a_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.json");
        std::fs::write(&dest, "old").unwrap();
        let err = publish(&dest, |w| {
            w.write_all(b"partial")?;
            Err::<(), _>(io::Error::other("boom"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("out.json: boom"), "{err}");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        assert_eq!(names_in(dir.path()), ["out.json"]);
    }

    /// Found by a review: `-o` onto a link replaced the link with a regular file (as root,
    /// `-o /dev/stdout` replaced the system's `/dev/stdout`).
    #[test]
    fn a_link_is_written_through_and_devices_and_folders_are_refused() {
        use std::os::unix::fs::{symlink, FileTypeExt};
        let dir = tempfile::tempdir().unwrap();
        let (target, link) = (dir.path().join("target.txt"), dir.path().join("link.txt"));
        std::fs::write(&target, "old").unwrap();
        symlink(&target, &link).unwrap();
        let published = publish_bytes(&link, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert!(
            std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
            "still a link"
        );
        assert_eq!(published.path, std::fs::canonicalize(&target).unwrap());
        let to_null = dir.path().join("null");
        symlink("/dev/null", &to_null).unwrap();
        let to_nothing = dir.path().join("dangling");
        symlink(dir.path().join("missing"), &to_nothing).unwrap();
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        for (dest, why) in [
            (to_null.as_path(), "not a regular file"),
            (Path::new("/dev/null"), "not a regular file"),
            (folder.as_path(), "not a regular file"),
            (to_nothing.as_path(), "a link to nothing"),
        ] {
            let e = publish_bytes(dest, b"x").unwrap_err().to_string();
            assert!(e.contains(why), "{}: {e}", dest.display());
        }
        assert!(std::fs::symlink_metadata(&to_null)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        assert!(folder.is_dir() && !dir.path().join("missing").exists());
    }

    #[test]
    fn replace_and_no_clobber() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a.txt");
        let p = publish(&dest, |w| w.write_all(b"one")).unwrap();
        assert_eq!(
            (p.bytes, std::fs::read_to_string(&dest).unwrap().as_str()),
            (3, "one")
        );
        publish(&dest, |w| w.write_all(b"two!")).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "two!");
        let options = Options::closing(false);
        let err = publish_with(&dest, options, |w| w.write_all(b"three")).unwrap_err();
        assert!(err.already_exists(), "{err}");
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "two!");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A publication written in several steps appears whole at its commit, and only then; one
    /// dropped unfinished leaves the old file and no temporary.
    #[test]
    fn a_streamed_publication_appears_at_its_commit_only() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("deps.json");
        std::fs::write(&dest, "old").unwrap();
        let mut p = Publication::begin_named(&dest, Options::closing(true), ".deps.7.tasks.part").unwrap();
        p.sink().write_all(b"{\"tasks\":[").unwrap();
        p.sink().write_all(b"]}").unwrap();
        assert_eq!(names_in(dir.path()), [".deps.7.tasks.part", "deps.json"]);
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        let published = p.commit().unwrap();
        assert_eq!(published.bytes, 12);
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "{\"tasks\":[]}");
        assert_eq!(names_in(dir.path()), ["deps.json"]);

        let mut p = Publication::begin(&dest, Options::closing(true)).unwrap();
        p.sink().write_all(b"unfinished").unwrap();
        drop(p);
        assert_eq!(names_in(dir.path()), ["deps.json"]);
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "{\"tasks\":[]}");
    }

    /// A caller-named temporary must be a name the output folder's cleanup recognizes, and
    /// is never opened over an existing file.
    #[test]
    fn a_named_temporary_is_a_temporary_and_new() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("deps.json");
        let err = Publication::begin_named(&dest, Options::default(), "deps.part.json")
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .contains("deps.part.json is not a temporary's name"),
            "{err}"
        );
        std::fs::write(dir.path().join(".deps.1.tasks.part"), "someone else's").unwrap();
        let err = Publication::begin_named(&dest, Options::default(), ".deps.1.tasks.part")
            .err()
            .unwrap();
        assert_eq!(err.source.kind(), io::ErrorKind::AlreadyExists, "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".deps.1.tasks.part")).unwrap(),
            "someone else's"
        );
    }

    /// A publication past the page cache holds the same bytes, appears at its commit only, and
    /// one that fails leaves neither the final name nor its temporary.
    #[test]
    fn a_direct_publication_is_the_same_file() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let dest = dir.path().join("trace.json");
        let bytes: Vec<u8> = (0..(5 << 20) + 4321).map(|i: u32| (i % 251) as u8).collect();
        let options = Options::default().direct();
        let published = publish_with(&dest, options, |w| {
            for piece in bytes.chunks(300_007) {
                w.write_all(piece)?;
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(published.bytes, bytes.len() as u64);
        assert!(std::fs::read(&dest).unwrap() == bytes);
        let err = publish_with(&dest, options, |w| {
            w.write_all(&bytes)?;
            Err::<(), _>(io::Error::other("boom"))
        })
        .unwrap_err();
        assert!(err.to_string().ends_with("trace.json: boom"), "{err}");
        assert_eq!(names_in(dir.path()), ["trace.json"]);
        assert!(std::fs::read(&dest).unwrap() == bytes);
    }

    #[test]
    fn temporaries_are_recognized() {
        assert!(is_temporary(&temporary_name("deps.json")));
        assert!(is_temporary(".deps.3.tasks.part"));
        assert!(is_temporary(".scope_stats.1.body"));
        assert!(!is_temporary("deps.json"));
        assert!(!is_temporary(".gitignore"));
    }
}
