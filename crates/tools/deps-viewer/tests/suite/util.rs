//! Shared helpers: testdata paths and a block diff for mismatched text.

use std::path::PathBuf;

/// `tests/testdata/<sub>` of this crate.
pub fn testdata(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/testdata")
        .join(sub)
}

/// Describes the first differing line between `expected` and `actual`, then both texts.
pub fn describe_mismatch(expected: &str, actual: &str) -> String {
    let first = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    format!(
        "first difference at line {}\n--- expected\n{expected}\n--- actual\n{actual}\n---",
        first + 1
    )
}
