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

use std::io::Read;

use serde::de::{DeserializeOwned, IgnoredAny};

use super::{DepsElement, DepsGaps, DepsSink, Gap};

/// Bytes read per refill (at least; a window that must grow doubles).
const CHUNK_BYTES: usize = 8 << 20;

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

    /// Parses one section's array, handing each element to `push`.
    fn section<S, T: DepsElement>(
        &mut self,
        sink: &mut S,
        gaps: &mut DepsGaps,
        push: fn(&mut S, T),
    ) -> Result<(), Stop> {
        self.expect(b'[')?;
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let element: T = self.parse()?;
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

/// Reads a whole deps.json from `reader` into `sink`, as the streaming reader does for a valid
/// file; [`Stop`] for anything else (the sink then holds part of the file).
pub(super) fn read<R: Read, S: DepsSink>(reader: R, sink: &mut S) -> Result<DepsGaps, Stop> {
    read_in_chunks(reader, sink, CHUNK_BYTES)
}

/// [`read`] with refills of `chunk` bytes.
fn read_in_chunks<R: Read, S: DepsSink>(reader: R, sink: &mut S, chunk: usize) -> Result<DepsGaps, Stop> {
    const SECTIONS: [&str; 3] = ["tasks", "tensors", "edges"];
    const ABSENT: [Gap; 3] = [Gap::NoTasksSection, Gap::NoTensorsSection, Gap::NoEdgesSection];
    let mut w = Window {
        reader,
        buf: Vec::new(),
        pos: 0,
        base: 0,
        eof: false,
        chunk,
    };
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
                    0 => w.section(sink, &mut gaps, S::task)?,
                    1 => w.section(sink, &mut gaps, S::tensor)?,
                    _ => w.section(sink, &mut gaps, S::edge)?,
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
            got.gaps = read_in_chunks(text.as_bytes(), &mut got, chunk)
                .unwrap_or_else(|s| panic!("chunk {chunk}: {s:?} {:?}", &text[s.at as usize..]));
            assert_eq!(got, expected, "chunk {chunk}");
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
                let got = read_in_chunks(text.as_bytes(), &mut DepsFile::default(), chunk);
                assert!(got.is_err(), "{text} read in chunks of {chunk}");
            }
        }
    }
}
