//! Shared helpers: testdata paths.

use std::path::PathBuf;

/// `tests/testdata/<sub>` of this crate.
pub fn testdata(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata")
        .join(sub)
}
