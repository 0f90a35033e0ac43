//! An `hbg` run's graph-build steps (`simpler_build_phases`: `orchestration`, `finalise`,
//! `launch`) as slices of their own process ([`BUILD_PID`], `simpler hbg build`), apart from the
//! original's processes. The `orchestration` slice carries the time of dependency inference
//! within it, when the run timed it.

use std::io::{self, Write};

use crate::layout::BUILD_PID;
use crate::model::Run;
use crate::trace::{Arg, Slice, TraceWriter, Track};

const TRACK: Track = Track {
    pid: BUILD_PID,
    tid: 0,
};

/// Writes the build steps; returns how many.
pub fn write_build<W: Write>(out: &mut TraceWriter<W>, run: &Run) -> io::Result<usize> {
    if run.build.is_empty() {
        return Ok(0);
    }
    out.process(BUILD_PID, "simpler hbg build", BUILD_PID)?;
    out.thread(TRACK, "graph build")?;
    for b in &run.build {
        let inference = b.inference_ns.map(Arg::Us);
        let args: &[(&str, Arg<'_>)] = match &inference {
            Some(i) => &[("phase", Arg::Str(&b.phase)), ("inference_us", *i)],
            None => &[("phase", Arg::Str(&b.phase))],
        };
        out.slice(&Slice {
            name: &b.phase,
            cat: "hbg_build",
            track: TRACK,
            ts_ns: b.start_ns,
            dur_ns: b.end_ns.saturating_sub(b.start_ns),
            id: None,
            args,
        })?;
    }
    Ok(run.build.len())
}
