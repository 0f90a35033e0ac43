//! Scope stats: a begin and an end sample of the scope's ring at every scope boundary.
//!
//! - [`probe`] (device side): the orchestrator's producer; fixed-size records, no allocation
//!   per record, one branch when disabled.
//! - [`collector`] (host side): a thread that drains full buffers during the run and streams
//!   sample lines to a body file on disk.
//! - [`export`]: the close paths (proven, unproven, background, hbg) and the metadata line.
//! - [`background`]: the worker's background writer, admission and `flush_diagnostics`.
//!
//! Memory bound: [`BUFFERS`] × [`RECORDS_PER_BUFFER`] records in flight plus one 64 KiB write
//! buffer, whatever the run length.

pub(crate) mod background;
pub(crate) mod collector;
pub(crate) mod export;
pub(crate) mod probe;

pub use export::ScopeStatsOutcome;

/// Records per buffer.
pub const RECORDS_PER_BUFFER: usize = 512;
/// Buffers in the pool of one run.
pub const BUFFERS: usize = 8;
/// Relative path of the artifact under the output prefix.
pub const ARTIFACT: &str = "scope_stats/scope_stats.jsonl";
