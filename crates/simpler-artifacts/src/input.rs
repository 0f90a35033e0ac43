//! Opening and reading an input file with bounds: what is not a regular file is refused before
//! it is read (the `open` of a named pipe blocks until a writer comes, for ever if none does),
//! and a read that holds the whole file, or a whole line, in memory stops at a cap.
//!
//! Found by a review: a FIFO in place of a workload file, a deps.json, a `scope_stats.jsonl` or
//! a name map hung the command (and `run` ignored SIGTERM while blocked in `open`), and
//! `/dev/zero` or a sparse 3 GB file took memory as large as the file, or aborted.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, Read};
use std::path::Path;

/// The error of [`check_regular`] and [`open_regular`] for a path that is not a regular file
/// (after symbolic links): `is a named pipe (FIFO), expected a regular file`. It travels in an
/// [`io::Error`] of kind [`io::ErrorKind::InvalidInput`]; [`not_regular`] finds it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotRegularFile {
    what: &'static str,
}

impl fmt::Display for NotRegularFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "is {}, expected a regular file", self.what)
    }
}

impl std::error::Error for NotRegularFile {}

/// The [`NotRegularFile`] in `e`, if `e` is the refusal of a path that is not a regular file.
pub fn not_regular(e: &io::Error) -> Option<&NotRegularFile> {
    e.get_ref()?.downcast_ref::<NotRegularFile>()
}

fn refusal(kind: std::fs::FileType) -> Option<io::Error> {
    if kind.is_file() {
        return None;
    }
    let what = {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_fifo() {
                "a named pipe (FIFO)"
            } else if kind.is_socket() {
                "a socket"
            } else if kind.is_block_device() || kind.is_char_device() {
                "a device"
            } else if kind.is_dir() {
                "a folder"
            } else {
                "not a file"
            }
        }
        #[cfg(not(unix))]
        {
            if kind.is_dir() {
                "a folder"
            } else {
                "not a file"
            }
        }
    };
    Some(io::Error::new(
        io::ErrorKind::InvalidInput,
        NotRegularFile { what },
    ))
}

/// Refuses `path` unless it is a regular file (after symbolic links), without opening it.
pub fn check_regular(path: &Path) -> io::Result<()> {
    match refusal(std::fs::metadata(path)?.file_type()) {
        None => Ok(()),
        Some(e) => Err(e),
    }
}

/// Opens `path` for reading if it is a regular file (after symbolic links); anything else is
/// refused with [`NotRegularFile`] and never waited on. The file type is checked before the
/// open and again on the open file, which on Unix is opened non-blocking, so a pipe put in its
/// place between the two does not block either. The flag stays: on a regular file it changes
/// nothing (reads of a regular file never wait for a writer).
pub fn open_regular(path: &Path) -> io::Result<File> {
    check_regular(path)?;
    #[cfg(unix)]
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?
    };
    #[cfg(not(unix))]
    let file = File::open(path)?;
    if let Some(e) = refusal(file.metadata()?.file_type()) {
        return Err(e);
    }
    Ok(file)
}

/// `bytes` for a message: `64 MiB`, `3.0 GiB`, `1023 bytes`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let whole = bytes.is_multiple_of(1 << (10 * (unit as u32 + 1)));
    if whole {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Reads the regular file at `path` (see [`open_regular`]) into a string, refusing one of more
/// than `max_bytes` after reading at most one byte past them. `what` names the kind of file in
/// that refusal (an [`io::Error`] of kind [`io::ErrorKind::InvalidData`]):
/// `a file of 3.0 GiB (3221225472 bytes): a workload file is at most 64 MiB`. Content that is
/// not UTF-8 is the error of [`utf8`], which says where.
pub fn read_to_string_at_most(path: &Path, max_bytes: u64, what: &str) -> io::Result<String> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    // `None`: grown while read, to a size not known.
    let too_large = |len: Option<u64>| {
        let size = match len {
            Some(len) => format!("{} ({len} bytes)", human_bytes(len)),
            None => format!("more than {}", human_bytes(max_bytes)),
        };
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a file of {size}: {what} is at most {}", human_bytes(max_bytes)),
        )
    };
    if len > max_bytes {
        return Err(too_large(Some(len)));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(None));
    }
    utf8(bytes)
}

/// Where bytes stop being UTF-8: the 1-based line and column (in bytes) and the byte offset
/// of the first byte that is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utf8Stop {
    /// Line, from 1.
    pub line: usize,
    /// Column in bytes, from 1.
    pub column: usize,
    /// Byte offset from the start, from 0.
    pub offset: usize,
}

impl Utf8Stop {
    /// Where `e`'s bytes stop being UTF-8.
    pub fn of(e: &std::string::FromUtf8Error) -> Utf8Stop {
        let offset = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..offset];
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        Utf8Stop {
            line: before.iter().filter(|&&b| b == b'\n').count() + 1,
            column: offset - line_start + 1,
            offset,
        }
    }
}

/// `bytes` as a string, or an [`io::ErrorKind::InvalidData`] error that says where they stop
/// being UTF-8 (`not valid UTF-8 at line 21, column 12 (byte offset 785)`): `std`'s own
/// error named no place in the file.
pub fn utf8(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let at = Utf8Stop::of(&e);
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not valid UTF-8 at line {}, column {} (byte offset {})",
                at.line, at.column, at.offset
            ),
        )
    })
}

/// What [`read_line_at_most`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A line, in the buffer with its `\n` (none on a final line without one).
    Read,
    /// The end of the input: the buffer is empty.
    End,
    /// The line is longer than the cap: the buffer holds its first bytes, the rest is unread.
    TooLong,
}

/// Reads one line into `buf` (cleared first), up to and including its `\n`, reading at most
/// `max_bytes + 1` bytes: a line of more than `max_bytes` bytes before its `\n` is
/// [`Line::TooLong`], after a read of bounded memory (`read_line` of `/dev/zero` or a sparse
/// file grew its buffer until the allocation failed).
pub fn read_line_at_most<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max_bytes: usize,
) -> io::Result<Line> {
    buf.clear();
    let n = Read::take(&mut *reader, max_bytes as u64 + 1).read_until(b'\n', buf)?;
    Ok(if n == 0 {
        Line::End
    } else if buf.last() != Some(&b'\n') && n > max_bytes {
        Line::TooLong
    } else {
        Line::Read
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_a_person_would_write_them() {
        assert_eq!(human_bytes(1023), "1023 bytes");
        assert_eq!(human_bytes(1 << 20), "1 MiB");
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes(3 << 30), "3 GiB");
        assert_eq!(human_bytes((3 << 30) + (1 << 29)), "3.5 GiB");
    }

    #[test]
    fn a_line_is_cut_at_the_cap_and_said_so() {
        let mut buf = Vec::new();
        let mut r = io::Cursor::new(b"abcd\nabcde\nabcdef\nab".to_vec());
        assert_eq!(read_line_at_most(&mut r, &mut buf, 4).unwrap(), Line::Read);
        assert_eq!(buf, b"abcd\n");
        assert_eq!(read_line_at_most(&mut r, &mut buf, 4).unwrap(), Line::TooLong);
        assert_eq!(buf, b"abcde");
        let mut r = io::Cursor::new(b"ab".to_vec());
        assert_eq!(read_line_at_most(&mut r, &mut buf, 4).unwrap(), Line::Read);
        assert_eq!(read_line_at_most(&mut r, &mut buf, 4).unwrap(), Line::End);
        assert!(buf.is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_refused_before_it_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.json");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = open_regular(&fifo).unwrap_err();
        assert_eq!(e.to_string(), "is a named pipe (FIFO), expected a regular file");
        assert!(not_regular(&e).is_some());
        let e = read_to_string_at_most(dir.path(), 10, "a test file").unwrap_err();
        assert_eq!(e.to_string(), "is a folder, expected a regular file");
    }

    #[test]
    fn a_file_past_the_cap_is_refused_naming_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.json");
        File::create(&p).unwrap().set_len(3 << 30).unwrap();
        let e = read_to_string_at_most(&p, 64 << 20, "a workload file").unwrap_err();
        assert_eq!(
            e.to_string(),
            "a file of 3 GiB (3221225472 bytes): a workload file is at most 64 MiB"
        );
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_to_string_at_most(&p, 10, "x").unwrap(), "0123456789");
        assert!(read_to_string_at_most(&p, 9, "x").is_err());
    }
}
