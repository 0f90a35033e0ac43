//! Structured random mutations of a valid file, for the readers' robustness tests (shared by
//! `simpler-artifacts` and `workloads`, included with `#[path]`).

use proptest::prelude::*;

/// `default` cases, or `PROPTEST_CASES` when set (the longer run).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One edit of a file's bytes.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Cut the file at this position (modulo its length).
    Truncate(usize),
    /// Put this byte at this position.
    Replace(usize, u8),
    /// Repeat the span of this length at this position.
    Duplicate(usize, usize),
    /// Remove the span of this length at this position.
    Delete(usize, usize),
}

/// Bytes that change what JSON means: structure, numbers, literals, escapes, invalid UTF-8.
const SIGNIFICANT: &[u8] = b"{}[]\",:-0123456789eE.tfnul \n\\\xff\x00";

/// Any one mutation.
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), prop::sample::select(SIGNIFICANT)).prop_map(|(i, b)| Mutation::Replace(i, b)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

/// `bytes` with `edits` applied in order.
pub fn apply(mut bytes: Vec<u8>, edits: &[Mutation]) -> Vec<u8> {
    for m in edits {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Truncate(i) => bytes.truncate(i % len),
            Mutation::Replace(i, b) => {
                if !bytes.is_empty() {
                    bytes[i % len] = b;
                }
            }
            Mutation::Duplicate(i, n) => {
                let start = i % len;
                let end = (start + n).min(bytes.len());
                let span = bytes[start.min(bytes.len())..end].to_vec();
                bytes.splice(end..end, span);
            }
            Mutation::Delete(i, n) => {
                let start = (i % len).min(bytes.len());
                let end = (start + n).min(bytes.len());
                bytes.drain(start..end);
            }
        }
    }
    bytes
}
