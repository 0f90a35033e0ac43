//! Integration tests of `simpler swimlane`, one binary (see `suite/`).

#[path = "suite/util.rs"]
mod util;

#[path = "suite/check.rs"]
mod check;

#[path = "suite/vector_example.rs"]
mod vector_example;

#[path = "suite/hb_violation.rs"]
mod hb_violation;

#[path = "suite/spmd_mix.rs"]
mod spmd_mix;

#[path = "suite/anchors.rs"]
mod anchors;

#[path = "suite/errors.rs"]
mod errors;
