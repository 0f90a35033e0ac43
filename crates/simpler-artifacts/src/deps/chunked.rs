//! The fast path of [`read_deps`](super::read_deps): the file is read in large chunks and each
//! element is parsed from memory (serde_json's slice reader), which is several times faster
//! than its byte-by-byte reader over `io::Read`. Memory stays at one chunk plus what the sink
//! keeps: an element that crosses the end of the window is parsed again once more bytes are in.
//!
//! The top level (`{`, keys, `:`, `,`, `}`, the section brackets) is walked here; every key,
//! element and skipped value is parsed by serde_json, exactly as the streaming reader parses
//! it. Whatever this walk does not accept (malformed JSON, a missing or repeated section, a
//! bad element, a read error) stops it with [`Stop`]: the caller then reads the file again
//! with the streaming reader, whose error (message, line and column) is the one reported.
//!
//! # Two threads on a large section
//!
//! When a section starts with at least [`SPLIT_MIN_BYTES`] of file after it, a helper thread
//! opens the file again, finds the first element boundary (`}`, `,`, `{`) after the middle of
//! that rest, and parses elements of the section's type from there to the closing `]` into a
//! list. The main thread parses from the start; if its own walk arrives at exactly that
//! boundary (so the boundary was not inside a string, and lies in this section), it hands the
//! helper's elements to the sink in order and goes on after the `]`, as if it had parsed them
//! itself. Otherwise (the boundary was elsewhere, or the helper failed) the helper is stopped
//! and its work dropped: the main thread's sequential walk is the reference, the helper only
//! saves time.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::de::{DeserializeOwned, IgnoredAny};

use super::{DepsElement, DepsGaps, DepsSink, Gap};

/// Bytes read per refill (at least; a window that must grow doubles).
const CHUNK_BYTES: usize = 8 << 20;

/// A section is split between two threads when at least this much of the file follows its `[`.
const SPLIT_MIN_BYTES: u64 = 64 << 20;

/// Where a helper thread may read the second half of a section.
#[derive(Debug, Clone, Copy)]
struct Split<'a> {
    /// The file, opened again by the helper.
    path: &'a Path,
    /// Its length.
    len: u64,
    /// The least bytes after a section's `[` for a split.
    min_bytes: u64,
}

/// A running helper: where it started, its stop flag, and the thread.
type Helper<'scope, 'flag, T> = (
    u64,
    &'flag AtomicBool,
    std::thread::ScopedJoinHandle<'scope, Option<Tail<T>>>,
);

/// What a helper parsed: the elements from the boundary at `begin` to the `]` at `end`.
struct Tail<T> {
    begin: u64,
    end: u64,
    elements: Vec<T>,
    gaps: DepsGaps,
}

/// The fast path stopped: something it does not accept at byte `at` of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stop {
    /// Offset in the file where the walk stopped.
    pub at: u64,
}

/// A window on the input: `buf[pos..]` is read and not yet consumed.
struct Window<R> {
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
    /// Bytes read per refill, at least.
    chunk: usize,
}

impl<R: Read> Window<R> {
    fn new(reader: R, base: u64, chunk: usize) -> Self {
        Window {
            reader,
            buf: Vec::new(),
            pos: 0,
            base,
            eof: false,
            chunk,
        }
    }

    /// File offset of the next unconsumed byte.
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn stop(&self) -> Stop {
        Stop {
            at: self.base + self.pos as u64,
        }
    }

    /// Reads more bytes after the window, dropping the consumed ones; false at end of input.
    fn fill(&mut self) -> Result<bool, Stop> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        let want = self.chunk.max(self.buf.len());
        let n = (&mut self.reader)
            .take(want as u64)
            .read_to_end(&mut self.buf)
            .map_err(|_| self.stop())?;
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// The next byte that is not JSON whitespace, not consumed; `None` at end of input.
    fn peek(&mut self) -> Result<Option<u8>, Stop> {
        loop {
            while let Some(&b) = self.buf.get(self.pos) {
                if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    return Ok(Some(b));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Consumes `byte` if it is the next non-whitespace byte, else stops.
    fn expect(&mut self, byte: u8) -> Result<(), Stop> {
        match self.peek()? {
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.stop()),
        }
    }

    /// Parses the next value as a `T`.
    fn parse<T: DeserializeOwned>(&mut self) -> Result<T, Stop> {
        loop {
            let mut values = serde_json::Deserializer::from_slice(&self.buf[self.pos..]).into_iter::<T>();
            match values.next() {
                Some(Ok(value)) => {
                    let end = self.pos + values.byte_offset();
                    // A value that reaches the end of the window (a number, say) may go on
                    // after it: parse it again with more bytes in.
                    let at_window_end = self.buf[end..]
                        .iter()
                        .all(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'));
                    if at_window_end && self.fill()? {
                        continue;
                    }
                    self.pos = end;
                    return Ok(value);
                }
                Some(Err(e)) if e.is_eof() => {
                    if !self.fill()? {
                        return Err(self.stop());
                    }
                }
                None => {
                    if !self.fill()? {
                        return Err(self.stop());
                    }
                }
                // A number cut short by the end of the window is an invalid number, not an
                // end-of-input error: parse it again with more bytes in.
                Some(Err(e)) if near_end(&self.buf[self.pos..], e.line(), e.column()) => {
                    if !self.fill()? {
                        return Err(self.stop());
                    }
                }
                Some(Err(_)) => return Err(self.stop()),
            }
        }
    }

    /// Parses the next element, through its shortcut when it has one and the element is at
    /// the window's position ([`DepsElement::parse_canonical`]), else as [`Window::parse`]
    /// does.
    fn parse_element<T: DepsElement>(&mut self) -> Result<T, Stop> {
        if let Some((value, len)) = T::parse_canonical(&mut self.buf[self.pos..]) {
            self.pos += len;
            return Ok(value);
        }
        self.parse()
    }

    /// Parses one section's array, handing each element to `push`; with `split`, a large
    /// section's second half is parsed by a helper thread (see the module docs).
    fn section<S, T: DepsElement>(
        &mut self,
        sink: &mut S,
        gaps: &mut DepsGaps,
        push: fn(&mut S, T),
        split: Option<Split<'_>>,
    ) -> Result<(), Stop>
    where
        R: Seek,
    {
        self.expect(b'[')?;
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        let start = self.offset();
        let first_key = first_key(&self.buf[self.pos..]).map(<[u8]>::to_vec);
        let begin = split
            .filter(|s| s.len.saturating_sub(start) >= s.min_bytes)
            .and_then(|s| Some((s, split_point::<T>(s.path, start, s.len, first_key.as_deref()?)?)));
        let Some((split, (begin, end_estimate))) = begin else {
            return self.elements(sink, gaps, push, None);
        };
        let cancel = AtomicBool::new(false);
        let chunk = self.chunk;
        std::thread::scope(|scope| {
            let helper = scope.spawn(|| parse_tail::<T>(split.path, begin, end_estimate, chunk, &cancel));
            let result = self.elements(sink, gaps, push, Some((begin, &cancel, helper)));
            // A helper not used (or still running after an error) stops at its next element.
            cancel.store(true, Ordering::Relaxed);
            result
        })
    }

    /// The elements of a section after its `[`, to and with its `]`. `helper`: where the
    /// helper thread started, its stop flag, and the thread.
    fn elements<S, T: DepsElement>(
        &mut self,
        sink: &mut S,
        gaps: &mut DepsGaps,
        push: fn(&mut S, T),
        mut helper: Option<Helper<'_, '_, T>>,
    ) -> Result<(), Stop>
    where
        R: Seek,
    {
        loop {
            let element: T = self.parse_element()?;
            element.note_gaps(gaps);
            push(sink, element);
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.stop()),
            }
            let Some(&(begin, _, _)) = helper.as_ref() else {
                continue;
            };
            if self.peek()?.is_none() {
                return Err(self.stop());
            }
            let next = self.offset();
            if next < begin {
                continue;
            }
            let (_, cancel, handle) = helper.take().expect("checked above");
            if next > begin {
                // The boundary was inside a string: the helper's work is not this section's.
                cancel.store(true, Ordering::Relaxed);
                continue;
            }
            if let Some(tail) = handle.join().ok().flatten() {
                debug_assert_eq!(tail.begin, begin);
                for element in tail.elements {
                    push(sink, element);
                }
                gaps.absorb(tail.gaps);
                self.jump(tail.end)?;
                self.expect(b']')?;
                return Ok(());
            }
            // The helper failed: go on here; its error, if any, is met again.
        }
    }

    /// Moves the window to file offset `offset`.
    fn jump(&mut self, offset: u64) -> Result<(), Stop>
    where
        R: Seek,
    {
        self.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|_| self.stop())?;
        self.buf.clear();
        self.pos = 0;
        self.base = offset;
        self.eof = false;
        Ok(())
    }
}

/// The first key of the object at the start of `bytes`, with its quotes (`"task_id"`), if
/// it is there whole and has no escape.
fn first_key(bytes: &[u8]) -> Option<&[u8]> {
    let ws = |b: &u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    let open = bytes.iter().position(|b| !ws(b))?;
    if bytes[open] != b'{' {
        return None;
    }
    let quote = open + 1 + bytes[open + 1..].iter().position(|b| !ws(b))?;
    if bytes[quote] != b'"' {
        return None;
    }
    let len = bytes[quote + 1..].iter().position(|&b| b == b'"' || b == b'\\')?;
    let end = quote + 1 + len;
    (bytes[end] == b'"').then(|| &bytes[quote..=end])
}

/// Where a helper should start on a section of `T` that begins at file offset `start` and
/// whose first element's first key is `key`: an element boundary near the middle of the
/// section. The section's end is not known yet; it is estimated by bisection on whether an
/// element that starts with the same key and parses as a `T` is found at a boundary (the
/// elements of another section start with another key). A wrong guess costs only time.
/// Returns the helper's start and the estimated end of the section.
fn split_point<T: DepsElement>(path: &Path, start: u64, len: u64, key: &[u8]) -> Option<(u64, u64)> {
    let mut file = crate::input::open_regular(path).ok()?;
    let (mut lo, mut hi) = (start, len);
    for _ in 0..16 {
        let mid = lo + (hi - lo) / 2;
        match parses_at::<T>(&mut file, mid, key) {
            Some(_) => lo = mid,
            None => hi = mid,
        }
    }
    // The helper gets a little less than half: it also moves its elements into a list.
    let begin = parses_at::<T>(&mut file, start + (lo - start) * 11 / 20, key)?;
    Some((begin, lo))
}

/// The first element boundary in the 64 KiB from file offset `from` (the offset of its `{`)
/// where an element that starts with `key` and parses as a `T` starts (an object nested in an
/// element, such as a task's argument, is passed over).
fn parses_at<T: DepsElement>(file: &mut File, from: u64, key: &[u8]) -> Option<u64> {
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::with_capacity(64 << 10);
    file.take(64 << 10).read_to_end(&mut bytes).ok()?;
    let mut at = 0;
    while let Some(next) = boundary_in(&bytes[at..]) {
        at += next;
        if first_key(&bytes[at..]) == Some(key) {
            let mut values = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<T>();
            if let Some(Ok(_)) = values.next() {
                return Some(from + at as u64);
            }
        }
        at += 1;
    }
    None
}

/// The offset in `bytes` of the first element boundary (`}`, optional whitespace, `,`,
/// optional whitespace, `{`: the offset of that `{`).
fn boundary_in(bytes: &[u8]) -> Option<usize> {
    let ws = |b: &u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t');
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'}' {
            let mut j = i + 1;
            while bytes.get(j).is_some_and(ws) {
                j += 1;
            }
            if bytes.get(j) == Some(&b',') {
                j += 1;
                while bytes.get(j).is_some_and(ws) {
                    j += 1;
                }
                if bytes.get(j) == Some(&b'{') {
                    return Some(j);
                }
            }
        }
        i += 1;
    }
    None
}

/// The helper thread: parses elements of type `T` from file offset `begin` to the `]` that
/// closes their array. `None` when that fails or `cancel` is set.
/// `end_estimate`: where the section probably ends, to size the list.
fn parse_tail<T: DepsElement>(
    path: &Path,
    begin: u64,
    end_estimate: u64,
    chunk: usize,
    cancel: &AtomicBool,
) -> Option<Tail<T>> {
    let mut file = crate::input::open_regular(path).ok()?;
    file.seek(SeekFrom::Start(begin)).ok()?;
    let mut w = Window::new(file, begin, chunk);
    let mut tail = Tail {
        begin,
        end: 0,
        elements: Vec::new(),
        gaps: DepsGaps::default(),
    };
    loop {
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        let before = w.offset();
        let element: T = w.parse_element().ok()?;
        if tail.elements.is_empty() {
            // Room for the elements expected, at the size of the first (within reason).
            let size = (w.offset() - before).max(16);
            let expected = end_estimate.saturating_sub(begin) / size;
            tail.elements.reserve(expected.min(1 << 26) as usize);
        }
        element.note_gaps(&mut tail.gaps);
        tail.elements.push(element);
        match w.peek().ok()? {
            Some(b',') => w.pos += 1,
            Some(b']') => {
                tail.end = w.offset();
                return Some(tail);
            }
            _ => return None,
        }
    }
}

/// Returns true if and only if the 1-based `line` and `column` of an error in `text` are among
/// its last few bytes.
fn near_end(text: &[u8], line: usize, column: usize) -> bool {
    let line_start = match line {
        0 | 1 => 0,
        _ => match text.iter().enumerate().filter(|(_, &b)| b == b'\n').nth(line - 2) {
            Some((i, _)) => i + 1,
            None => return true,
        },
    };
    line_start + column + 8 >= text.len()
}

/// Reads the deps.json at `path` into `sink`, as the streaming reader does for a valid file;
/// [`Stop`] for anything else (the sink then holds part of the file).
pub(super) fn read_path<S: DepsSink>(path: &Path, sink: &mut S) -> Result<DepsGaps, Stop> {
    let stop = Stop { at: 0 };
    let file = crate::input::open_regular(path).map_err(|_| stop)?;
    let len = file.metadata().map_err(|_| stop)?.len();
    let split = Split {
        path,
        len,
        min_bytes: SPLIT_MIN_BYTES,
    };
    read_in_chunks(file, sink, CHUNK_BYTES, Some(split))
}

/// [`read_path`] from any reader, with refills of `chunk` bytes; `split` says where a helper
/// thread may read.
fn read_in_chunks<R: Read + Seek, S: DepsSink>(
    reader: R,
    sink: &mut S,
    chunk: usize,
    split: Option<Split<'_>>,
) -> Result<DepsGaps, Stop> {
    const SECTIONS: [&str; 3] = ["tasks", "tensors", "edges"];
    const ABSENT: [Gap; 3] = [Gap::NoTasksSection, Gap::NoTensorsSection, Gap::NoEdgesSection];
    let mut w = Window::new(reader, 0, chunk);
    let mut gaps = DepsGaps::default();
    let mut seen = [false; 3];
    w.expect(b'{')?;
    if w.peek()? == Some(b'}') {
        // No section at all: an error.
        return Err(w.stop());
    }
    loop {
        if w.peek()? != Some(b'"') {
            return Err(w.stop());
        }
        let key: String = w.parse()?;
        w.expect(b':')?;
        match SECTIONS.iter().position(|s| *s == key) {
            None => {
                w.parse::<IgnoredAny>()?;
            }
            Some(section) => {
                if std::mem::replace(&mut seen[section], true) {
                    return Err(w.stop());
                }
                match section {
                    0 => w.section(sink, &mut gaps, S::task, split)?,
                    1 => w.section(sink, &mut gaps, S::tensor, split)?,
                    _ => w.section(sink, &mut gaps, S::edge, split)?,
                }
            }
        }
        match w.peek()? {
            Some(b',') => w.pos += 1,
            Some(b'}') => {
                w.pos += 1;
                break;
            }
            _ => return Err(w.stop()),
        }
    }
    if w.peek()?.is_some() || !seen.contains(&true) {
        return Err(w.stop());
    }
    for (present, gap) in seen.iter().zip(ABSENT) {
        gaps.add_if(!present, gap);
    }
    Ok(gaps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deps::{read_deps_from, DepsFile};

    /// Every split of the file gives what the streaming reader gives.
    #[test]
    fn any_chunk_size_reads_what_the_streaming_reader_reads() {
        let text = concat!(
            " {\"version\": 12345, \"tasks\" : [ {\"task_id\":\"4294967297\",\"kernel_ids\":[-1,12,-1],",
            "\"block_num\":1,\"args\":[]} , {\"task_id\":7,\"args\":[]}],\n",
            "\"x\\u0041\":[1,{\"a\":[true,null,\"\\\"]\"]},-2.5e3],",
            "\"edges\":[{\"pred\":\"7\",\"succ\":\"4294967297\",\"arg\":1,\"source\":\"tensormap\",",
            "\"overlap\":\"covered\",\"tensor_id\":\"123456789\"}],\"tensors\":[] }\n"
        );
        let mut expected = DepsFile::default();
        expected.gaps = read_deps_from(text.as_bytes(), &mut expected).unwrap();
        assert_eq!(expected.tasks.len(), 2);
        for chunk in 1..text.len() + 2 {
            let mut got = DepsFile::default();
            got.gaps = read_in_chunks(std::io::Cursor::new(text.as_bytes()), &mut got, chunk, None)
                .unwrap_or_else(|s| panic!("chunk {chunk}: {s:?} {:?}", &text[s.at as usize..]));
            assert_eq!(got, expected, "chunk {chunk}");
        }
    }

    /// Keeps only the edges' endpoints, which our writer's edges give through their shortcut.
    #[derive(Debug, Default, PartialEq)]
    struct Ends(Vec<crate::deps::EdgeEnds>);

    impl DepsSink for Ends {
        type Task = IgnoredAny;
        type Tensor = IgnoredAny;
        type Edge = crate::deps::EdgeEnds;

        fn task(&mut self, _: IgnoredAny) {}
        fn tensor(&mut self, _: IgnoredAny) {}
        fn edge(&mut self, edge: crate::deps::EdgeEnds) {
            self.0.push(edge);
        }
    }

    /// Edges that take the shortcut and edges that do not, cut by the window's end at every
    /// byte, give the streaming reader's endpoints; a repeated key after the shortcut's
    /// endpoints is still an error.
    #[test]
    fn edge_shortcuts_read_what_the_streaming_reader_reads() {
        let text = concat!(
            "{\"tasks\":[],\"tensors\":[],\"edges\":[",
            "{\"pred\":\"12885151787\",\"succ\":\"0\",\"arg\":2,\"source\":\"tensormap\",",
            "\"consumer_shape\":[16384],\"consumer_start_offset\":\"0\"},",
            "{\"pred\":\"3\",\"succ\":\"4\"},",
            "{\"pred\": \"5\",\"succ\":6,\"x\":{\"pred\":1}},",
            "{\"pred\":\"7\",\"succ\":\"18446744073709551615\",\"arg\":-1}]}"
        );
        let mut expected = Ends::default();
        read_deps_from(text.as_bytes(), &mut expected).unwrap();
        assert_eq!(expected.0.len(), 4);
        for chunk in 1..text.len() + 2 {
            let mut got = Ends::default();
            read_in_chunks(std::io::Cursor::new(text.as_bytes()), &mut got, chunk, None)
                .unwrap_or_else(|s| panic!("chunk {chunk}: {s:?}"));
            assert_eq!(got, expected, "chunk {chunk}");
        }
        let repeated = text.replace("\"arg\":-1", "\"succ\":\"8\"");
        assert!(read_deps_from(repeated.as_bytes(), &mut Ends::default()).is_err());
        for chunk in [7, 1 << 20] {
            let got = read_in_chunks(
                std::io::Cursor::new(repeated.as_bytes()),
                &mut Ends::default(),
                chunk,
                None,
            );
            assert!(got.is_err(), "chunk {chunk}");
        }
    }

    /// What the streaming reader rejects, the chunked one stops at, whatever the split.
    #[test]
    fn invalid_files_stop() {
        for text in [
            "",
            "{}",
            "[]",
            "{\"tasks\":[],}",
            "{\"tasks\":[],\"tasks\":[]}",
            "{\"tasks\":[1]}",
            "{\"tasks\":[]} x",
            "{\"edges\":[{\"pred\":\"0\"}]}",
            "{\"tensors\":[12",
            "{\"tensors\":[12,]}",
            "{\"tensors\":null}",
        ] {
            assert!(
                read_deps_from(text.as_bytes(), &mut DepsFile::default()).is_err(),
                "{text}"
            );
            for chunk in 1..text.len() + 2 {
                let got = read_in_chunks(
                    std::io::Cursor::new(text.as_bytes()),
                    &mut DepsFile::default(),
                    chunk,
                    None,
                );
                assert!(got.is_err(), "{text} read in chunks of {chunk}");
            }
        }
    }

    /// With a helper thread on every section, at every place its boundary can land (in this
    /// section, in a later one, inside a string), the result is the streaming reader's.
    #[test]
    fn split_sections_read_what_the_streaming_reader_reads() {
        use crate::deps::{DepsWriter, Edge, Tensor};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        let mut body = Vec::new();
        let mut w = DepsWriter::new(&mut body).unwrap();
        for i in 0..40u64 {
            w.tensor(&Tensor {
                tensor_id: i,
                buffer_addr: i * 64,
                version: (i % 3 != 0).then_some(0),
                dtype: if i % 4 != 3 {
                    "x},{y}, {\"z".into()
                } else {
                    "FLOAT32".into()
                },
                buffer_numel: 16,
            })
            .unwrap();
        }
        for i in 0..60u64 {
            w.edge(&Edge::explicit(i / 2, i + 1)).unwrap();
        }
        w.finish().unwrap();
        let body = String::from_utf8(body).unwrap();
        for pad in 0..240 {
            let text = format!("{{\"pad\":\"{}\",{}", "p".repeat(pad), &body[1..]);
            std::fs::write(&path, &text).unwrap();
            let mut expected = DepsFile::default();
            expected.gaps = read_deps_from(text.as_bytes(), &mut expected).unwrap();
            for chunk in [7, 1 << 20] {
                let split = Split {
                    path: &path,
                    len: text.len() as u64,
                    min_bytes: 0,
                };
                let mut got = DepsFile::default();
                let file = File::open(&path).unwrap();
                got.gaps = read_in_chunks(file, &mut got, chunk, Some(split)).unwrap();
                assert_eq!(got, expected, "pad {pad}, chunk {chunk}");
            }
        }
    }
}
