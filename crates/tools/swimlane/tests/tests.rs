//! Integration tests of `simpler swimlane`, one binary (see `suite/`).

#[path = "suite/util.rs"]
mod util;

#[path = "suite/interop.rs"]
mod interop;

#[path = "suite/reference.rs"]
mod reference;

#[path = "suite/levels.rs"]
mod levels;

#[path = "suite/errors.rs"]
mod errors;

#[path = "suite/replacing.rs"]
mod replacing;
