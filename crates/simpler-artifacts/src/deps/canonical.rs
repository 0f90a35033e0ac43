//! Shortcuts for the chunked reader, for elements in the exact layout our writer produces
//! ([`super::encode`]): the fields a sink keeps are read from fixed byte patterns by an
//! [`Object`] cursor, and the rest of the object is handed to serde_json as one skipped value,
//! which is about twice as fast per byte as serde_json's walk over a struct's keys (each key
//! is read as a string, checked as UTF-8 and matched). deps.json's edges are 60 % of the file
//! and a tool such as the swimlane converter keeps two of their dozen fields.
//!
//! A shortcut answers only when its answer is sure to be serde_json's, and `None` otherwise:
//! the element is then parsed by serde_json as before, which also gives any error. Each
//! method's comment says why what it accepts is read by serde_json to the same value; an
//! element type uses them in its [`DepsElement::parse_canonical`](super::DepsElement).

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::de::value::{Error as ValueError, StrDeserializer};
use serde::de::{DeserializeOwned, IgnoredAny};

use super::{EdgeEnds, TaskHead};

/// The decimal digits at the start of `bytes` as a `u64`, and how many there are: 1 to 19
/// digits, so never past `u64::MAX` (20 digits may be; those are left to serde_json).
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

/// The keys an element type reads, which the skipped rest of an object must not repeat (a
/// struct's walk rejects a repeated field). Build it once, in a `static`.
pub struct KeptKeys(Vec<Finder<'static>>);

impl KeptKeys {
    /// The finders of `"key"` for each of `keys`.
    pub fn new(keys: &[&str]) -> KeptKeys {
        KeptKeys(
            keys.iter()
                .map(|k| Finder::new(format!("\"{k}\"").as_bytes()).into_owned())
                .collect(),
        )
    }

    /// Returns true if and only if `bytes` contains one of the keys between quotes.
    fn any_in(&self, bytes: &[u8]) -> bool {
        self.0.iter().any(|key| key.find(bytes).is_some())
    }
}

/// A cursor over an object in our writer's layout: no whitespace, keys in a known order.
/// Each method reads the next piece if it is there exactly as expected (and moves past it),
/// or answers `None` / `false` (and leaves the cursor where it was, unless it said `None`:
/// then the element is left to serde_json).
pub struct Object<'a> {
    bytes: &'a mut [u8],
    at: usize,
    /// No key read yet (the next one follows `{`, not `,`).
    first: bool,
}

impl<'a> Object<'a> {
    /// Starts at the object's `{`, the first byte of `bytes`.
    pub fn open(bytes: &'a mut [u8]) -> Option<Object<'a>> {
        (bytes.first() == Some(&b'{')).then_some(Object {
            bytes,
            at: 1,
            first: true,
        })
    }

    /// Reads `"key":` (after a `,` unless it is the first key) if it comes next. A key written
    /// so has no escape: serde_json reads it as `key`.
    pub fn key(&mut self, key: &str) -> bool {
        let rest = &self.bytes[self.at..];
        let rest = match self.first {
            true => Some(rest),
            false => rest.strip_prefix(b","),
        };
        let found = rest
            .and_then(|r| r.strip_prefix(b"\""))
            .and_then(|r| r.strip_prefix(key.as_bytes()))
            .is_some_and(|r| r.starts_with(b"\":"));
        if found {
            self.at += usize::from(!self.first) + key.len() + 3;
            self.first = false;
        }
        found
    }

    /// A string of 1 to 19 decimal digits (`"123"`), as [`u64_string`](super::u64_string)
    /// reads it: `u64::from_str` gives the same number, leading zeros included, and 19 digits
    /// never pass `u64::MAX`.
    pub fn digit_string(&mut self) -> Option<u64> {
        let rest = self.bytes[self.at..].strip_prefix(b"\"")?;
        let (value, len) = digits(rest)?;
        (rest.get(len) == Some(&b'"')).then(|| {
            self.at += len + 2;
            value
        })
    }

    /// A JSON integer without sign of 1 to 19 digits and no leading zero (`0` or `[1-9][0-9]*`):
    /// serde_json reads it as that `u64` (a caller that wants a `u32` checks the range, as
    /// serde does). What follows is checked by the next read, which accepts only `,`, `}` or
    /// `]`: a fraction or an exponent after the digits is left to serde_json.
    pub fn uint(&mut self) -> Option<u64> {
        let (value, len) = digits(&self.bytes[self.at..])?;
        let leading_zero = len > 1 && self.bytes[self.at] == b'0';
        (!leading_zero).then(|| {
            self.at += len;
            value
        })
    }

    /// A JSON integer of 1 to 9 digits with an optional `-` (not `-0`), as [`Object::uint`]
    /// reads the digits: it fits an `i32`, and serde_json reads it as that number.
    pub fn int(&mut self) -> Option<i32> {
        let start = self.at;
        let negative = self.bytes.get(self.at) == Some(&b'-');
        self.at += usize::from(negative);
        let digits_at = self.at;
        let magnitude = self.uint();
        let short = self.at - digits_at <= 9;
        match magnitude {
            Some(m) if short && !(negative && m == 0) => {
                let m = m as i32; // at most 9 digits
                Some(if negative { -m } else { m })
            }
            _ => {
                self.at = start;
                None
            }
        }
    }

    /// A list of [`Object::int`]s (`[-1,12,-1]`, `[]`).
    pub fn int_list(&mut self) -> Option<Vec<i32>> {
        let start = self.at;
        let list = self.int_list_inner();
        if list.is_none() {
            self.at = start;
        }
        list
    }

    fn int_list_inner(&mut self) -> Option<Vec<i32>> {
        if self.bytes.get(self.at) != Some(&b'[') {
            return None;
        }
        self.at += 1;
        let mut list = Vec::with_capacity(3);
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Some(list);
        }
        loop {
            list.push(self.int()?);
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Some(list);
                }
                _ => return None,
            }
        }
    }

    /// `true` or `false`.
    pub fn bool(&mut self) -> Option<bool> {
        let rest = &self.bytes[self.at..];
        let (value, len) = match () {
            _ if rest.starts_with(b"true") => (true, 4),
            _ if rest.starts_with(b"false") => (false, 5),
            _ => return None,
        };
        self.at += len;
        Some(value)
    }

    /// A string of printable ASCII without `"` or `\\` (`"tensormap"`) read as `T` reads a
    /// string, through serde's own string deserializer: an enum's variant, say. serde_json
    /// hands such a string (it has no escape to undo) to the same `T` the same way.
    pub fn string_as<T: DeserializeOwned>(&mut self) -> Option<T> {
        let rest = self.bytes[self.at..].strip_prefix(b"\"")?;
        let len = rest.iter().position(|&b| b == b'"')?;
        let text = &rest[..len];
        if !text.iter().all(|&b| (0x20..0x7f).contains(&b) && b != b'\\') {
            return None;
        }
        let text = std::str::from_utf8(text).ok()?; // ASCII, checked above
        let value = T::deserialize(StrDeserializer::<ValueError>::new(text)).ok()?;
        self.at += len + 2;
        Some(value)
    }

    /// Any one JSON value, passed over by serde_json as it passes over a struct's unknown
    /// field (the same `IgnoredAny`). What follows it is checked by the next read.
    pub fn skip_value(&mut self) -> Option<()> {
        let mut values =
            serde_json::Deserializer::from_slice(&self.bytes[self.at..]).into_iter::<IgnoredAny>();
        values.next()?.ok()?;
        self.at += values.byte_offset();
        Some(())
    }

    /// The rest of the object after the keys read, to and with its closing `}`: the element's
    /// length, or `None` when the rest is not one valid JSON object body or might repeat one
    /// of the `kept` keys (or no key was read). The bytes are as they were after this.
    ///
    /// With a `,` next, `{` is put there for a moment and serde_json skips `{…}` as one
    /// value: that validates every byte of it exactly as serde_json validates a struct's
    /// unknown fields (which it skips the same way, after reading each key as a string). What
    /// a struct's walk adds is two errors: a key that is not UTF-8 (it checks keys, not skipped
    /// values), and a repeated field, a key that spells one of `kept`. The rest is refused
    /// when it has a byte outside ASCII; a kept key written without escapes contains the bytes
    /// `"key"`, and the rest is refused when it contains those bytes or any backslash (an
    /// escape could spell them otherwise). So a rest accepted here is one serde_json accepts
    /// too, with the same values for the keys read and the same end.
    pub fn close(self, kept: &KeptKeys) -> Option<usize> {
        let Object { bytes, at, first } = self;
        match (first, bytes.get(at)) {
            (true, _) | (_, None) => return None,
            (false, Some(b'}')) => return Some(at + 1),
            (false, Some(b',')) => {}
            (false, Some(_)) => return None,
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
        (parsed && plain && !kept.any_in(rest)).then_some(at + len)
    }
}

/// An edge's endpoints from `{"pred":"<digits>","succ":"<digits>"` and a valid rest of the
/// object, with the element's length; `None` for anything else. `bytes` is as it was when
/// this returns. serde_json reads such an element as [`EdgeEnds`] to the same two numbers
/// ([`Object`]'s methods say why).
pub(super) fn edge_ends(bytes: &mut [u8]) -> Option<(EdgeEnds, usize)> {
    static KEPT: LazyLock<KeptKeys> = LazyLock::new(|| KeptKeys::new(&["pred", "succ"]));
    let mut object = Object::open(bytes)?;
    object.key("pred").then_some(())?;
    let pred = object.digit_string()?;
    object.key("succ").then_some(())?;
    let succ = object.digit_string()?;
    let len = object.close(&KEPT)?;
    Some((EdgeEnds { pred, succ }, len))
}
/// A task's head from `{"task_id":"<digits>"`, then as our writer puts them and each only
/// when present: `"scope"` (any value, passed over), `"early_dispatch"` (a bool),
/// `"kernel_ids"` (small integers) and `"block_num"` (an integer that fits a `u32`), and a
/// valid rest of the object (the arguments), with the element's length; `None` for anything
/// else. `bytes` is as it was when this returns. serde_json reads such an element as
/// [`TaskHead`] to the same values ([`Object`]'s methods say why; `scope` is not a field of
/// [`TaskHead`], so serde_json passes it over too, and may meet it again).
pub fn task_head(bytes: &mut [u8]) -> Option<(TaskHead, usize)> {
    static KEPT: LazyLock<KeptKeys> =
        LazyLock::new(|| KeptKeys::new(&["task_id", "early_dispatch", "kernel_ids", "block_num"]));
    let mut object = Object::open(bytes)?;
    object.key("task_id").then_some(())?;
    let task_id = object.digit_string()?;
    if object.key("scope") {
        object.skip_value()?;
    }
    let early_dispatch = match object.key("early_dispatch") {
        true => Some(object.bool()?),
        false => None,
    };
    let kernel_ids = match object.key("kernel_ids") {
        true => Some(object.int_list()?),
        false => None,
    };
    let block_num = match object.key("block_num") {
        true => Some(u32::try_from(object.uint()?).ok()?),
        false => None,
    };
    let len = object.close(&KEPT)?;
    let head = TaskHead {
        task_id,
        early_dispatch,
        kernel_ids,
        block_num,
    };
    Some((head, len))
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

    /// `text` without its last `cut * 3` bytes (fewer, to end on a character boundary): a
    /// file cut off mid-element.
    fn cut_off(mut text: String, cut: usize) -> String {
        let mut keep = text.len().saturating_sub(cut * 3);
        while !text.is_char_boundary(keep) {
            keep -= 1;
        }
        text.truncate(keep);
        text
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
            cut_off(text, cut)
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

        /// Whatever the task shortcut reads, serde_json reads the same, to the same byte.
        #[test]
        fn the_task_shortcut_gives_serde_jsons_answer(text in task_text()) {
            let mut bytes = text.clone().into_bytes();
            let got = task_head(&mut bytes);
            prop_assert_eq!(&bytes, text.as_bytes());
            if let Some(got) = got {
                prop_assert_eq!(Some(got), serde_task(text.as_bytes()), "{}", text);
            }
        }

        /// Our writer's tasks take the shortcut unless a string needs an escape or is not
        /// ASCII, or a number is past what the shortcut reads.
        #[test]
        fn our_writers_tasks_take_the_shortcut(
            task_id: u64,
            kernel_ids in prop::option::of(prop::collection::vec(-1i32..2_000_000_000, 0..4)),
            block_num in prop::option::of(0u32..=u32::MAX),
            early in prop::option::of(any::<bool>()),
            dtype in "[a-zé\"\\\\]{0,6}",
        ) {
            use crate::deps::{ArgType, Scope, Task, TaskArg};
            let task = Task {
                task_id,
                scope: Some(Scope::Auto),
                early_dispatch: early,
                kernel_ids: kernel_ids.clone(),
                block_num,
                args: vec![TaskArg {
                    idx: 0,
                    arg_type: ArgType::Input,
                    tensor_id: Some(7),
                    dtype: Some(dtype.clone()),
                    shape: Some(vec![16384]),
                    start_offset: Some(0),
                    strides: Some(vec![1]),
                }],
            };
            let mut text = serde_json::to_vec(&task).unwrap();
            text.extend_from_slice(b",{}");
            let expected = serde_task(&text);
            prop_assert!(expected.is_some());
            let small = kernel_ids.iter().flatten().all(|k| *k < 1_000_000_000);
            let takes = task_id < 10_000_000_000_000_000_000
                && small
                && dtype.is_ascii()
                && !dtype.contains(['"', '\\']);
            let mut bytes = text.clone();
            prop_assert_eq!(task_head(&mut bytes), if takes { expected } else { None });
            prop_assert_eq!(bytes, text);
        }
    }

    /// What serde_json makes of the task at the start of `text`: the value and its length.
    fn serde_task(text: &[u8]) -> Option<(TaskHead, usize)> {
        let mut values = serde_json::Deserializer::from_slice(text).into_iter::<TaskHead>();
        let value = values.next()?.ok()?;
        Some((value, values.byte_offset()))
    }

    #[test]
    fn our_writers_tasks_are_read() {
        let text = concat!(
            r#"{"task_id":"4294967297","scope":"auto","early_dispatch":true,"kernel_ids":[-1,0,-1],"#,
            r#""block_num":4,"args":[{"idx":0,"type":"INPUT","tensor_id":"999952","shape":[16384]}]},{}"#
        );
        let mut bytes = text.as_bytes().to_vec();
        let head = TaskHead {
            task_id: 4_294_967_297,
            early_dispatch: Some(true),
            kernel_ids: Some(vec![-1, 0, -1]),
            block_num: Some(4),
        };
        let got = task_head(&mut bytes);
        assert_eq!(got, Some((head, text.len() - 3)));
        assert_eq!(got, serde_task(text.as_bytes()));
        let bare = br#"{"task_id":"7","args":[]}"#;
        let bare_head = TaskHead {
            task_id: 7,
            early_dispatch: None,
            kernel_ids: None,
            block_num: None,
        };
        assert_eq!(task_head(&mut bare.to_vec()), Some((bare_head, bare.len())));
        // `scope` is passed over whatever its value, as serde_json passes it over.
        for scope in [r#""a\"b""#, "5", "null", r#"{"x":[1,"\u00e9"]}"#] {
            let text = format!(r#"{{"task_id":"7","scope":{scope},"block_num":2}}"#);
            let got = task_head(&mut text.clone().into_bytes());
            assert!(got.is_some(), "{text}");
            assert_eq!(got, serde_task(text.as_bytes()), "{text}");
        }
    }

    /// Each of these is left to serde_json, which reads some and rejects others.
    #[test]
    fn any_other_task_is_left_to_serde_json() {
        for text in [
            r#"{"task_id":7,"args":[]}"#,
            "{\"task_id\":\"7\",\"scope\":\"a\u{1}\",\"args\":[]}",
            r#"{"task_id":"7","scope":tru,"args":[]}"#,
            r#"{"task_id":"7","early_dispatch":1,"args":[]}"#,
            r#"{"task_id":"7","kernel_ids":[-0],"args":[]}"#,
            r#"{"task_id":"7","kernel_ids":[01],"args":[]}"#,
            r#"{"task_id":"7","kernel_ids":[1234567890],"args":[]}"#,
            r#"{"task_id":"7","kernel_ids":[1.5],"args":[]}"#,
            r#"{"task_id":"7","kernel_ids":[1,],"args":[]}"#,
            r#"{"task_id":"7","kernel_ids":null,"args":[]}"#,
            r#"{"task_id":"7","block_num":4294967296,"args":[]}"#,
            r#"{"task_id":"7","block_num":1e3,"args":[]}"#,
            r#"{"task_id":"7","block_num":-1,"args":[]}"#,
            r#"{"task_id":"7","args":[],"block_num":1}"#,
            r#"{"task_id":"7","args":[],"task_id":"8"}"#,
            r#"{"task_id":"7","kernel_ids":[1],"block_num":1,"kernel_ids":[2]}"#,
            r#"{"task_id":"7","block_num":1 }"#,
        ] {
            assert_eq!(task_head(&mut text.as_bytes().to_vec()), None, "{text}");
        }
    }

    /// A task's text with its pieces drawn from what a writer, an editor or an attacker could
    /// put there, our writer's the likelier.
    fn task_text() -> impl Strategy<Value = String> {
        fn field(key: &'static str, values: BoxedStrategy<&'static str>) -> BoxedStrategy<String> {
            prop_oneof![
                1 => Just(String::new()),
                3 => values.prop_map(move |v| format!(",\"{key}\":{v}")),
            ]
            .boxed()
        }
        let task_id = prop_oneof![
            6 => "[0-9]{1,19}".prop_map(|n| format!("\"{n}\"")),
            1 => Just("\"18446744073709551616\"".to_string()),
            1 => Just("7".to_string()),
            1 => Just("\"\"".to_string()),
        ];
        let scope = field(
            "scope",
            prop_oneof![
                8 => Just("\"auto\""),
                1 => Just("\"a\\\"b\""),
                1 => Just("\"é\""),
                1 => Just("5"),
                1 => Just("\"\u{1}\""),
                1 => Just("\"a\\\",\"kernel_ids\":[1],\"x\":\"b\""),
            ]
            .boxed(),
        );
        let early = field(
            "early_dispatch",
            prop_oneof![3 => Just("true"), 3 => Just("false"), 1 => Just("1"), 1 => Just("tru")].boxed(),
        );
        let int = prop_oneof![
            6 => Just("-1"), 6 => Just("0"), 6 => Just("12"), 6 => Just("999999999"),
            1 => Just("-0"), 1 => Just("01"), 1 => Just("2147483648"), 1 => Just("1.5"),
            1 => Just("\"3\""), 1 => Just("-"),
        ];
        let kernels = prop_oneof![
            1 => Just(String::new()),
            1 => Just(",\"kernel_ids\":null".to_string()),
            6 => prop::collection::vec(int, 0..4)
                .prop_map(|v| format!(",\"kernel_ids\":[{}]", v.join(","))),
        ];
        let block = field(
            "block_num",
            prop_oneof![
                6 => Just("1"), 3 => Just("4294967295"), 1 => Just("4294967296"), 1 => Just("01"),
                1 => Just("-1"), 1 => Just("1e3"), 1 => Just("null"),
            ]
            .boxed(),
        );
        let rest_key = prop_oneof![
            6 => Just("args"), 1 => Just("task_id"), 1 => Just("kernel_ids"), 1 => Just("block_num"),
            1 => Just("scope"), 1 => Just("bl\\u006fck_num"), 1 => Just("é"),
        ];
        let rest_value = prop_oneof![
            6 => Just("[{\"idx\":0,\"type\":\"INPUT\",\"shape\":[16384]}]"),
            3 => Just("[]"),
            1 => Just("\"4\""),
            1 => Just("[1,]"),
            1 => Just("\"\u{1}\""),
        ];
        let rest = prop::collection::vec((rest_key, rest_value), 0..3);
        let cut = prop_oneof![4 => Just(0usize), 1 => 1usize..12];
        (task_id, scope, early, kernels, block, rest, cut).prop_map(
            |(task_id, scope, early, kernels, block, rest, cut)| {
                let mut text = format!("{{\"task_id\":{task_id}{scope}{early}{kernels}{block}");
                for (k, v) in rest {
                    text.push_str(&format!(",\"{k}\":{v}"));
                }
                text.push_str("},{\"task_id\":\"9\"");
                cut_off(text, cut)
            },
        )
    }
}
