//! Printing what a command did without dying when nobody reads it: `simpler run ... | head -1`
//! closes stdout after one line, and `println!` then panics ("failed printing to stdout:
//! Broken pipe"), so the run's views were never written and `run.json` no longer described
//! the folder. [`outln!`](crate::outln) writes a line to stdout and drops a write error: the
//! command still finishes its files, which are what it is for. [`errln!`](crate::errln) does
//! the same for stderr: `simpler run ... 2>&1 | head -3` closed both, and the first warning
//! after the third line panicked (exit 101) before the views were written (found by a review).

/// `println!` that ignores a failed write (a closed pipe, a full disk behind a redirect):
/// the summary line is lost, the command goes on.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout().lock(), $($arg)*);
    }};
}

/// `print!` that ignores a failed write; see [`outln!`](crate::outln).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(::std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that ignores a failed write; see [`outln!`](crate::outln). A warning or an
/// error nobody can read any more is lost; the command's files and exit status are not.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        // Called by path: a `use` of `Write` here is unused where the caller has one.
        let _ = ::std::io::Write::write_fmt(
            &mut ::std::io::stderr().lock(),
            ::std::format_args!("{}\n", ::std::format_args!($($arg)*)),
        );
    }};
}

/// A writer that drops a failed write, as [`outln!`](crate::outln) does: for a command whose
/// output goes through a `Write` (a listing, a comparison), so that a reader that went away
/// loses the rest of the text, not the command's exit status (`dump-viewer ... --expect 2 |
/// head -1` still exits 1 when the values differ).
pub struct Lossy<W>(pub W);

impl<W: std::io::Write> std::io::Write for Lossy<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}
