//! Printing what a command did without dying when nobody reads it: `simpler run ... | head -1`
//! closes stdout after one line, and `println!` then panics ("failed printing to stdout:
//! Broken pipe"), so the run's views were never written and `run.json` no longer described
//! the folder. [`outln!`](crate::outln) writes a line to stdout and drops a write error: the
//! command still finishes its files, which are what it is for.

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
