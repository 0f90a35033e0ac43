//! The chunked reader's shortcut for elements in the exact layout our writer produces
//! ([`super::encode`]): the fields a sink keeps are read from fixed byte patterns, and the rest
//! of the object is handed to serde_json as one skipped value, which is about twice as fast
//! per byte as serde_json's walk over a struct's keys (each key is read as a string, checked as
//! UTF-8 and matched). deps.json's edges are 60 % of the file and a tool such as the swimlane
//! converter keeps two of their dozen fields.
//!
//! A shortcut answers only when its answer is sure to be serde_json's, and `None` otherwise:
//! the element is then parsed by serde_json as before, which also gives any error. Each
//! function's comment says why its `Some` is serde_json's answer.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::de::IgnoredAny;

use super::EdgeEnds;

/// The decimal digits at the start of `bytes` as a `u64`, and how many there are: 1 to 19
/// digits, so never past `u64::MAX` (20 digits may be; those are left to serde_json).
/// `u64::from_str` reads such a string to the same number (leading zeros included).
fn digits(bytes: &[u8]) -> Option<(u64, usize)> {
    let len = bytes.iter().take(20).position(|b| !b.is_ascii_digit())?;
    if !(1..=19).contains(&len) {
        return None;
    }
    let value = bytes[..len]
        .iter()
        .fold(0u64, |v, &d| v * 10 + u64::from(d - b'0'));
    Some((value, len))
}

/// The length of a JSON string of decimal digits at the start of `bytes` (`"123"`) and its
/// value; see [`digits`].
fn digit_string(bytes: &[u8]) -> Option<(u64, usize)> {
    let rest = bytes.strip_prefix(b"\"")?;
    let (value, len) = digits(rest)?;
    (rest.get(len) == Some(&b'"')).then_some((value, len + 2))
}

/// The rest of an object whose kept fields were read up to `bytes[at]`, which is `}` or `,`:
/// returns the length of the whole element (to and with its closing `}`), or `None` when the
/// rest is not one valid JSON object body or might repeat one of the `kept` keys.
///
/// With a `,` at `at`, `{` is put there for a moment and serde_json skips `{…}` as one
/// value: that validates every byte of it exactly as serde_json validates a struct's unknown
/// fields (which it skips the same way, after reading each key as a string). What a struct's
/// walk adds is two errors: a key that is not UTF-8 (it checks keys, not skipped values), and
/// a repeated field, a key that spells one of `kept`. The rest is refused when it has a byte
/// outside ASCII, and a kept key written without escapes contains the bytes `"key"`, so the
/// rest is refused when it contains those bytes or any backslash (an escape could spell them
/// otherwise). So a rest accepted here is one serde_json accepts too, with the same values for
/// the kept fields and the same end.
fn rest_of_object(bytes: &mut [u8], at: usize, kept: &[&Finder<'_>]) -> Option<usize> {
    match bytes.get(at) {
        Some(b'}') => return Some(at + 1),
        Some(b',') => {}
        _ => return None,
    }
    bytes[at] = b'{';
    let mut values = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<IgnoredAny>();
    let parsed = matches!(values.next(), Some(Ok(_)));
    let len = values.byte_offset();
    bytes[at] = b',';
    let rest = &bytes[at..at + len];
    // No early exit: the loop runs on vector registers.
    let plain = !rest
        .iter()
        .fold(false, |any, &b| any | (b >= 0x80) | (b == b'\\'));
    let safe = parsed && plain && kept.iter().all(|key| key.find(rest).is_none());
    safe.then_some(at + len)
}

static PRED_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"pred\""));
static SUCC_KEY: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\"succ\""));

/// An edge's endpoints from `{"pred":"<digits>","succ":"<digits>"` and a valid rest of the
/// object, with the element's length; `None` for anything else. `bytes` is as it was when
/// this returns.
///
/// serde_json reads such an element as [`EdgeEnds`] to the same two numbers: both keys are
/// plain, both values are digit strings that [`u64_string`](super::u64_string) reads as
/// [`digits`] does, and [`rest_of_object`] holds the rest to what serde_json accepts.
pub(super) fn edge_ends(bytes: &mut [u8]) -> Option<(EdgeEnds, usize)> {
    let mut at = b"{\"pred\":".len();
    if !bytes.starts_with(b"{\"pred\":") {
        return None;
    }
    let (pred, len) = digit_string(&bytes[at..])?;
    at += len;
    if !bytes[at..].starts_with(b",\"succ\":") {
        return None;
    }
    at += b",\"succ\":".len();
    let (succ, len) = digit_string(&bytes[at..])?;
    at += len;
    let end = rest_of_object(bytes, at, &[&PRED_KEY, &SUCC_KEY])?;
    Some((EdgeEnds { pred, succ }, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde_json makes of the element at the start of `text`: the value and its length.
    fn serde_edge(text: &[u8]) -> Option<(EdgeEnds, usize)> {
        let mut values = serde_json::Deserializer::from_slice(text).into_iter::<EdgeEnds>();
        let value = values.next()?.ok()?;
        Some((value, values.byte_offset()))
    }

    fn shortcut(text: &str) -> Option<(EdgeEnds, usize)> {
        shortcut_bytes(text.as_bytes())
    }

    fn shortcut_bytes(text: &[u8]) -> Option<(EdgeEnds, usize)> {
        let mut bytes = text.to_vec();
        let got = edge_ends(&mut bytes);
        assert_eq!(bytes, text, "the bytes are put back");
        got
    }

    #[test]
    fn our_writers_edges_are_read() {
        let text = concat!(
            r#"{"pred":"12885151787","succ":"0","arg":2,"source":"tensormap","overlap":"covered","#,
            r#""tensor_id":"999899","consumer_shape":[16384],"producer_strides":[1]},{"pred":"1""#
        );
        let end = text.find(",{").unwrap();
        let ends = EdgeEnds {
            pred: 12_885_151_787,
            succ: 0,
        };
        assert_eq!(shortcut(text), Some((ends, end)));
        assert_eq!(serde_edge(text.as_bytes()), Some((ends, end)));
        assert_eq!(
            shortcut(r#"{"pred":"0","succ":"18446744073"}"#),
            Some((
                EdgeEnds {
                    pred: 0,
                    succ: 18_446_744_073
                },
                33
            ))
        );
    }

    /// Each of these is left to serde_json: some it reads (other spacing, 20 digits, an
    /// escape), some it rejects (a repeated key, bad JSON after the endpoints, a cut).
    #[test]
    fn anything_else_is_left_to_serde_json() {
        for text in [
            r#"{ "pred":"1","succ":"2"}"#,
            r#"{"pred": "1","succ":"2"}"#,
            r#"{"pred":1,"succ":"2"}"#,
            r#"{"pred":"","succ":"2"}"#,
            r#"{"pred":"18446744073709551615","succ":"2"}"#,
            r#"{"pred":"1","succ":"2" }"#,
            r#"{"pred":"1","succ":"2","pred":"3"}"#,
            r#"{"pred":"1","succ":"2","x":{"succ":"3"}}"#,
            r#"{"pred":"1","succ":"2","s\u0075cc":"3"}"#,
            r#"{"pred":"1","succ":"2","x":"\n"}"#,
            r#"{"pred":"1","succ":"2","x":}"#,
            r#"{"pred":"1","succ":"2","x":1,}"#,
            r#"{"pred":"1","succ":"2","x":[1}"#,
            r#"{"pred":"1","succ":"2","x":1"#,
            r#"{"pred":"1","succ":"2""#,
            r#"{"pred":"1","succ":"2"#,
            r#"{"succ":"2","pred":"1"}"#,
            r#"{"pred":"1","succ":"2","é":"3"}"#,
        ] {
            assert_eq!(shortcut(text), None, "{text}");
        }
        // A key that is not UTF-8: serde_json checks keys, not skipped values.
        let bad_key = b"{\"pred\":\"1\",\"succ\":\"2\",\"\xff\":1}";
        assert!(serde_edge(bad_key).is_none());
        assert_eq!(shortcut_bytes(bad_key), None);
    }

    /// An edge's text with its pieces drawn from what a writer, an editor or an attacker
    /// could put there; our writer's pieces are the likelier, so that a good part of the texts
    /// take the shortcut.
    fn edge_text() -> impl Strategy<Value = String> {
        let number = prop_oneof![
            6 => "[0-9]{1,19}",
            1 => "[0-9]{20,21}",
            1 => Just(String::new()),
            1 => Just("-1".to_string()),
            1 => Just("1.5".to_string()),
        ];
        let value = prop_oneof![
            6 => number.clone().prop_map(|n| format!("\"{n}\"")),
            1 => number,
            1 => Just("null".to_string()),
        ];
        let key = prop_oneof![
            4 => Just("arg"),
            4 => Just("source"),
            1 => Just("pred"),
            1 => Just("succ"),
            1 => Just("s\\u0075cc"),
            1 => Just("x\\n"),
            1 => Just("é"),
        ];
        let rest_value = prop_oneof![
            3 => Just("0"),
            3 => Just("\"creator\""),
            3 => Just("[16384,1]"),
            1 => Just("{\"succ\":\"1\"}"),
            1 => Just("\"a\\\"b\""),
            1 => Just("[1,]"),
            1 => Just("tru"),
            1 => Just("\"\u{1}\""),
            1 => Just("\"é\""),
        ];
        let rest = prop::collection::vec((key, rest_value), 0..4);
        let space = prop_oneof![4 => Just(""), 1 => Just(" ")];
        let close = prop_oneof![4 => Just(true), 1 => Just(false)];
        let cut = prop_oneof![4 => Just(0usize), 1 => 1usize..12];
        (value.clone(), value, rest, space, close, cut).prop_map(|(pred, succ, rest, space, close, cut)| {
            let mut text = format!("{{\"pred\":{pred},{space}\"succ\":{succ}");
            for (k, v) in rest {
                text.push_str(&format!(",\"{k}\":{v}"));
            }
            if close {
                text.push('}');
            }
            text.push_str(",{\"pred\":\"9\"");
            let mut keep = text.len().saturating_sub(cut * 3);
            while !text.is_char_boundary(keep) {
                keep -= 1;
            }
            text.truncate(keep);
            text
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Whatever the shortcut reads, serde_json reads the same, to the same byte; the
        /// shortcut reads our writer's elements.
        #[test]
        fn the_shortcut_gives_serde_jsons_answer(text in edge_text()) {
            if let Some(got) = shortcut(&text) {
                prop_assert_eq!(Some(got), serde_edge(text.as_bytes()), "{}", text);
            }
        }

        #[test]
        fn our_writers_edges_take_the_shortcut(pred: u64, succ: u64, arg in -1i32..4, dtype in "[a-zé\"\\\\]{0,6}") {
            use crate::deps::{DepFlag, Edge, EdgeSource, Overlap};
            let edge = Edge {
                source: EdgeSource::Tensormap,
                arg: Some(arg),
                flags: Some(vec![DepFlag::Wait, DepFlag::Retain]),
                overlap: Some(Overlap::Covered),
                tensor_id: Some(pred ^ succ),
                consumer_dtype: Some(dtype.clone()),
                consumer_shape: Some(vec![16384, 2]),
                consumer_start_offset: Some(succ),
                consumer_strides: Some(vec![2, 1]),
                producer_shape: Some(vec![7]),
                producer_start_offset: Some(0),
                producer_strides: Some(vec![1]),
                ..Edge::explicit(pred, succ)
            };
            let mut text = serde_json::to_vec(&edge).unwrap();
            text.extend_from_slice(b",{}");
            let expected = serde_edge(&text);
            prop_assert!(expected.is_some());
            let short = |v: u64| v < 10_000_000_000_000_000_000;
            let plain = dtype.is_ascii() && !dtype.contains(['"', '\\']);
            let mut bytes = text.clone();
            let takes = short(pred) && short(succ) && plain;
            prop_assert_eq!(edge_ends(&mut bytes), if takes { expected } else { None });
            prop_assert_eq!(bytes, text);
        }
    }
}
