//! Integration tests of `simpler deps-viewer`, one binary (see `suite/`).

#[path = "suite/util.rs"]
mod util;

#[path = "suite/golden.rs"]
mod golden;

#[path = "suite/errors.rs"]
mod errors;

#[path = "suite/html.rs"]
mod html;

#[path = "suite/browser.rs"]
mod browser;

#[path = "suite/interop.rs"]
mod interop;
