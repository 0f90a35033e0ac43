//! The run manifest's warnings about the converted files (a run that did not complete, a
//! file the run did not write, timing and dependencies from two runs) and the absence of a
//! deps.json ([`no_arrows`]), written into the trace itself as a process of their own
//! ([`WARNINGS_PID`], `simpler: WARNING`) sorted above the original's processes: one track per
//! warning, holding one slice across the whole run, its text the slice's name and its
//! `warning` argument. A trace opened later in Perfetto, far from the stderr of the command
//! that wrote it, still says it may not show what its run did. A trace of a run with nothing
//! to warn about has no such process (its bytes are the original's layout).

use std::io::{self, Write};
use std::path::Path;

use crate::layout::WARNINGS_PID;
use crate::model::Run;
use crate::trace::{Arg, Slice, TraceWriter, Track};

/// The warning of a trace converted without a deps.json: it has no dependency arrows because
/// none were known, not because the run's tasks had no dependencies.
pub fn no_arrows(records: &Path) -> String {
    format!(
        "no dependency arrows: no deps.json was found next to {}",
        records.display()
    )
}

/// Writes one slice per warning, from the run clock's 0 to the last task row's or submit's
/// end (at least 1 µs, so a run without either still shows a bar); returns how many.
pub fn write_warnings<W: Write>(
    out: &mut TraceWriter<W>,
    run: &Run,
    warnings: &[String],
) -> io::Result<usize> {
    if warnings.is_empty() {
        return Ok(0);
    }
    out.process(WARNINGS_PID, "simpler: WARNING", 0)?;
    let rows = run.rows.iter().map(|r| r.end_ns);
    let submits = run.orch.iter().flatten().map(|o| o.submit_end_ns);
    let end = rows.chain(submits).max().unwrap_or(0).max(1_000);
    for (tid, warning) in (0..).zip(warnings) {
        let track = Track {
            pid: WARNINGS_PID,
            tid,
        };
        out.thread(track, "this trace may not show what its run did")?;
        out.slice(&Slice {
            name: warning,
            cat: "warning",
            track,
            ts_ns: 0,
            dur_ns: end,
            id: None,
            args: &[("warning", Arg::Str(warning))],
        })?;
    }
    Ok(warnings.len())
}
