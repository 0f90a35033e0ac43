//! `simpler plan`: how big each ring must be.
//!
//! From a run's recorded scope stats ([`analysis`]): per ring and resource, the observed peak
//! (the "never waits" size) and the structural minimum (what open scopes hold at once; below
//! it the run must stop on a fatal), each with the scope site that sets it. Verified by
//! re-running the graph ([`search`]): each resource of each used ring bisected independently,
//! then the combination confirmed, `N` runs per candidate. Output ([`report`]): a table and
//! ready-to-paste `runtime_env` blocks (JSON and `--runtime-env` flags), and `plan.json` for
//! the scope-stats HTML report. [`check`] predicts, without running, whether a proposed
//! configuration deadlocks and where.
//!
//! Sizing rings step by step: `docs/sizing-rings.md`.

pub mod analysis;
pub mod check;
mod cli;
mod error;
pub mod report;
pub mod search;
pub mod target;
pub mod worst_case;

pub use cli::{check_text, parse_check, plan, record, run, write_plan_json, Args, Plan};
pub use error::{Error, ErrorKind};
