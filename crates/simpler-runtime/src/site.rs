//! Call sites as the diagnostics print them: `"<file>:<line>"`. Shared by the orchestrator
//! (scope sites, error messages) and the collectors (scope-stats samples), so that neither
//! depends on the other for it.

use std::fmt;
use std::panic::Location;

/// `"<file>:<line>"` for a call site (the file's base name, as scope stats reports it).
pub fn site_string(loc: &Location<'_>) -> String {
    let file = loc.file();
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    format!("{base}:{}", loc.line())
}

/// Where a scope or a run was opened: a Rust call site (`#[track_caller]`, the usual case) or a
/// site named by a caller in another language (the Python binding names its caller's
/// `file.py:LINE`). 16 bytes (a bare `&Location` is 8); it is copied into
/// scope frames and scope-stats records and only formatted on the host side.
#[derive(Clone, Copy, Debug)]
pub struct Site(Repr);

#[derive(Clone, Copy, Debug)]
enum Repr {
    Caller(&'static Location<'static>),
    Named(&'static str),
}

impl Site {
    /// The site of a Rust call (`Location::caller()`).
    pub const fn caller(loc: &'static Location<'static>) -> Site {
        Site(Repr::Caller(loc))
    }

    /// A site given as its text, printed as is (e.g. `"test_vector.py:12"`). Keep one `&'static
    /// str` per distinct site (intern it): the scope-stats collector renders each distinct
    /// pointer once.
    pub const fn named(text: &'static str) -> Site {
        Site(Repr::Named(text))
    }

    /// The site named `text`, interned: one `&'static str` per distinct text for the life of
    /// the process (leaked once, however often it is named), as [`Site::named`] asks. For
    /// sites named at run time: a Python caller's `file.py:LINE`, a workload file's scope
    /// statement. Their number is bounded by the code or file that names them.
    pub fn interned(text: &str) -> Site {
        use std::collections::HashSet;
        use std::sync::{Mutex, OnceLock};
        static SITES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let mut set = SITES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let interned = match set.get(text) {
            Some(&s) => s,
            None => {
                let leaked: &'static str = Box::leak(text.to_owned().into_boxed_str());
                set.insert(leaked);
                leaked
            }
        };
        Site::named(interned)
    }

    /// An identity for interning: equal for the same static location or the same static text.
    pub(crate) fn key(self) -> (bool, usize) {
        match self.0 {
            Repr::Caller(loc) => (false, loc as *const Location<'static> as usize),
            Repr::Named(text) => (true, text.as_ptr() as usize),
        }
    }
}

impl From<&'static Location<'static>> for Site {
    fn from(loc: &'static Location<'static>) -> Site {
        Site::caller(loc)
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Caller(loc) => f.write_str(&site_string(loc)),
            Repr::Named(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_site_prints_the_base_name_and_a_named_site_its_text() {
        let here = Site::caller(Location::caller());
        assert!(here.to_string().starts_with("site.rs:"), "{here}");
        assert_eq!(Site::named("test_vector.py:12").to_string(), "test_vector.py:12");
    }

    #[test]
    fn a_site_is_two_words() {
        assert_eq!(std::mem::size_of::<Site>(), 16);
    }

    #[test]
    fn keys_tell_sites_apart_by_pointer_and_kind() {
        static TEXT: &str = "a.py:1";
        assert_eq!(Site::named(TEXT).key(), Site::named(TEXT).key());
        assert_ne!(Site::named(TEXT).key(), Site::named("a.py:2").key());
        let loc = Location::caller();
        assert_eq!(Site::caller(loc).key(), Site::from(loc).key());
    }

    #[test]
    fn an_interned_text_is_one_site() {
        let a = Site::interned(&format!("w:body[{}].scope", 0));
        assert_eq!(a.key(), Site::interned("w:body[0].scope").key());
        assert_ne!(a.key(), Site::interned("w:body[1].scope").key());
        assert_eq!(a.to_string(), "w:body[0].scope");
    }
}
