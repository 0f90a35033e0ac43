//! [`opaque_error!`](crate::opaque_error): the error type every library crate of the workspace
//! exposes, written once.

/// Defines an opaque error struct around a boxed kind enum (which implements
/// `std::error::Error`, e.g. through `thiserror`), with:
/// `kind()` and `into_kind()`; `From<K>` for anything that converts into the kind (so `?`
/// works on every source the kind wraps); `source()` = the kind's; and a `Display` that shows
/// the kind's message, plus every cause `: `-separated under `{:#}`, as `anyhow` does.
///
/// ```
/// #[derive(Debug, thiserror::Error)]
/// pub enum ErrorKind {
///     #[error("reading {path}")]
///     Read { path: String, #[source] source: std::io::Error },
/// }
/// simpler_artifacts::opaque_error! {
///     /// Why the thing failed.
///     pub struct Error(ErrorKind);
/// }
/// let e: Error = ErrorKind::Read { path: "x".into(), source: std::io::Error::other("gone") }.into();
/// assert_eq!(format!("{e} | {e:#}"), "reading x | reading x: gone");
/// ```
#[macro_export]
macro_rules! opaque_error {
    ($(#[$meta:meta])* $vis:vis struct $name:ident($kind:ty);) => {
        $(#[$meta])*
        #[derive(Debug)]
        $vis struct $name {
            kind: ::std::boxed::Box<$kind>,
        }

        impl $name {
            /// What went wrong, with the values the message names.
            pub fn kind(&self) -> &$kind {
                &self.kind
            }
            /// The kind, by value.
            pub fn into_kind(self) -> $kind {
                *self.kind
            }
        }

        impl<K: ::std::convert::Into<$kind>> ::std::convert::From<K> for $name {
            fn from(kind: K) -> Self {
                $name {
                    kind: ::std::boxed::Box::new(kind.into()),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                // `{}`, not the caller's flags: a transparent kind must not print its own chain.
                ::std::write!(f, "{}", self.kind)?;
                if f.alternate() {
                    let mut cause = ::std::error::Error::source(&*self.kind);
                    while let ::std::option::Option::Some(e) = cause {
                        ::std::write!(f, ": {e}")?;
                        cause = e.source();
                    }
                }
                ::std::result::Result::Ok(())
            }
        }

        impl ::std::error::Error for $name {
            fn source(&self) -> ::std::option::Option<&(dyn ::std::error::Error + 'static)> {
                ::std::error::Error::source(&*self.kind)
            }
        }
    };
}
