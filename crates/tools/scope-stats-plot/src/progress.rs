//! The stderr progress bar for long inputs (hidden when stderr is not a terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Inputs at least this large get a progress bar: about a second or more of parsing.
const SHOW_FROM_BYTES: u64 = 64 << 20;

/// A byte-based progress bar over the input file, or nothing for small inputs.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for a file of `size` bytes; inert below [`SHOW_FROM_BYTES`].
    pub(crate) fn for_file(size: u64) -> Self {
        if size < SHOW_FROM_BYTES {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(size), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "reading {bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
        ) {
            bar.set_style(style);
        }
        Progress { bar: Some(bar) }
    }

    /// Sets the number of bytes read so far.
    pub(crate) fn set(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(bytes);
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
