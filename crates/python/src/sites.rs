//! Scope and run sites named by Python callers (`"file.py:LINE"`), interned so that each
//! distinct site is one `&'static str` (the scope-stats collector keys sites by pointer).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use simpler_runtime::Site;

/// Every site text seen so far; bounded by the number of distinct `file:line` pairs of the
/// Python code that opens scopes, so leaking each one once is fine.
static SITES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();

/// The interned site for `text`.
pub fn named(text: &str) -> Site {
    let mut set = SITES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let interned = match set.get(text) {
        Some(s) => *s,
        None => {
            let leaked: &'static str = Box::leak(text.to_owned().into_boxed_str());
            set.insert(leaked);
            leaked
        }
    };
    Site::named(interned)
}
