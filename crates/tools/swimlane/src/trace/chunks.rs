//! Events formatted on several threads and written in order: [`TraceWriter::chunked`].
//!
//! A section of the trace (the Worker View's slices, one view's dependency flows) is a list
//! of items formatted one after the other. Here the list is cut into chunks of consecutive
//! items; the calling thread formats chunks 0, T, 2T, … and each of T − 1 helper threads the
//! chunks of its own residue, each chunk into a buffer of its own. The calling thread appends
//! the buffers strictly in chunk order, so the trace is the same bytes whatever the number of
//! threads or the chunk size: an event never depends on the thread that formatted it, only on
//! its item and on where its chunk starts (its first flow id, which the caller computes).
//!
//! A helper runs at most two chunks ahead of the appending (a bounded channel), so memory is a
//! few chunks whatever the section's size. Buffers the writing thread is done with come back
//! to the helpers for reuse. An error ends the section: the helpers stop at their next send.

use std::io::{self, Write};
use std::ops::Range;
use std::sync::mpsc;

use super::TraceWriter;

/// How [`TraceWriter::chunked`] spreads a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parallelism {
    /// Threads that format chunks, the calling one included (1: all on the calling thread).
    pub threads: usize,
    /// The most items a chunk holds, whatever a section asks for (tests make chunks tiny to
    /// cross many chunk boundaries).
    pub max_chunk_items: usize,
}

impl Parallelism {
    /// Everything on the calling thread.
    pub const SERIAL: Parallelism = Parallelism {
        threads: 1,
        max_chunk_items: usize::MAX,
    };

    /// The items of each chunk (but the last) when a section asks for `per_chunk`: what a
    /// caller cuts its items by to count the flows before each chunk.
    pub fn chunk_len(&self, per_chunk: usize) -> usize {
        per_chunk.min(self.max_chunk_items).max(1)
    }
}

/// The most threads [`Parallelism::default`] takes: two already format the flows faster than
/// the disk this was measured on writes them (1.2–1.6 GB/s), and each thread holds a few
/// chunks in memory.
pub const MAX_DEFAULT_THREADS: usize = 4;

impl Default for Parallelism {
    /// One thread per core the process may use, at most [`MAX_DEFAULT_THREADS`]; chunks as
    /// large as each section asks.
    fn default() -> Self {
        Parallelism {
            threads: std::thread::available_parallelism()
                .map_or(1, usize::from)
                .min(MAX_DEFAULT_THREADS),
            max_chunk_items: usize::MAX,
        }
    }
}

/// One chunk of a section: its number and its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// 0, 1, ... in the order the chunks are written.
    pub index: usize,
    /// The items it formats.
    pub range: Range<usize>,
}

/// A buffer for a chunk when none comes back from the writing thread: a block's size, so a
/// typical chunk never reallocates.
fn new_chunk_buffer() -> Vec<u8> {
    Vec::with_capacity(super::BLOCK_BYTES)
}

/// What formatting a chunk gives back: its bytes, the next flow id after it, and the
/// section's own result.
type Formatted<T> = (Vec<u8>, u64, T);

impl<W: Write> TraceWriter<W> {
    /// Formats `items` items in chunks of at most `per_chunk` on the threads set by
    /// [`TraceWriter::set_parallelism`] and appends them in order; returns each chunk's result,
    /// in order.
    ///
    /// `format` gets the chunk and a writer of its own, which starts after the events
    /// already written (so every event it writes is preceded by a separator) and whose flow
    /// ids start at this writer's next id: a chunk that draws flows first calls
    /// [`TraceWriter::skip_flow_ids`] with the number of flows the chunks before it draw.
    /// This writer's next flow id afterwards is the largest any chunk reached.
    pub fn chunked<T, F>(&mut self, items: usize, per_chunk: usize, format: F) -> io::Result<Vec<T>>
    where
        T: Send,
        F: Fn(Chunk, &mut TraceWriter<io::Sink>) -> io::Result<T> + Sync,
    {
        let per_chunk = self.chunk_len(per_chunk);
        let chunks = items.div_ceil(per_chunk);
        let threads = self.parallelism.threads.clamp(1, chunks.max(1));
        let first_flow = self.flows;
        let run = |index: usize, buf: Vec<u8>| -> io::Result<Formatted<T>> {
            let range = index * per_chunk..((index + 1) * per_chunk).min(items);
            let mut w = TraceWriter::chunk(buf, first_flow);
            let value = format(Chunk { index, range }, &mut w)?;
            Ok((w.buf, w.flows, value))
        };
        let mut values = Vec::with_capacity(chunks);
        if threads == 1 {
            for index in 0..chunks {
                let spare = self.spare_buffer();
                let (bytes, flows, value) = run(index, spare)?;
                self.append_chunk(bytes, flows)?;
                values.push(value);
            }
            return Ok(values);
        }
        std::thread::scope(|scope| {
            let run = &run;
            let helpers: Vec<_> = (1..threads)
                .map(|helper| {
                    let (done, formatted) = mpsc::sync_channel::<io::Result<Formatted<T>>>(2);
                    let (give, spares) = mpsc::channel::<Vec<u8>>();
                    scope.spawn(move || {
                        for index in (helper..chunks).step_by(threads) {
                            let spare = spares.try_recv().unwrap_or_else(|_| new_chunk_buffer());
                            let result = run(index, spare);
                            let failed = result.is_err();
                            if done.send(result).is_err() || failed {
                                break;
                            }
                        }
                    });
                    (formatted, give)
                })
                .collect();
            for index in 0..chunks {
                let (bytes, flows, value) = match index % threads {
                    0 => run(index, self.spare_buffer())?,
                    helper => {
                        let (formatted, give) = &helpers[helper - 1];
                        let result = formatted
                            .recv()
                            .map_err(|_| io::Error::other("a trace formatting thread stopped"))?;
                        if let Some(spare) = self.take_free_block() {
                            let _ = give.send(spare);
                        }
                        result?
                    }
                };
                self.append_chunk(bytes, flows)?;
                values.push(value);
            }
            Ok(values)
        })
    }

    /// [`Parallelism::chunk_len`] of this writer's parallelism.
    pub fn chunk_len(&self, per_chunk: usize) -> usize {
        self.parallelism.chunk_len(per_chunk)
    }

    /// How [`TraceWriter::chunked`] spreads sections (see [`TraceWriter::set_parallelism`]).
    pub fn parallelism(&self) -> Parallelism {
        self.parallelism
    }

    /// Moves this chunk's flow ids past `n` flows drawn by the chunks before it.
    pub fn skip_flow_ids(&mut self, n: u64) {
        self.flows += n;
    }

    /// A buffer for a chunk formatted on this thread: one the writing thread is done with,
    /// else a new one.
    fn spare_buffer(&mut self) -> Vec<u8> {
        self.take_free_block().unwrap_or_else(new_chunk_buffer)
    }

    /// Appends a formatted chunk whose flows end before id `flows`.
    fn append_chunk(&mut self, bytes: Vec<u8>, flows: u64) -> io::Result<()> {
        self.flows = self.flows.max(flows);
        if bytes.is_empty() {
            return Ok(());
        }
        if self.first {
            // Nothing written yet: the chunk's first event takes no comma.
            self.first = false;
            self.buf.extend_from_slice(&bytes[1..]);
            return Ok(());
        }
        if self.pipe.is_some() && !self.buf.is_empty() {
            self.emit_block()?;
        }
        match &mut self.pipe {
            // Handed over as it is: no copy of the chunk's bytes.
            Some(pipe) => pipe.send_owned(bytes),
            None => {
                self.buf.extend_from_slice(&bytes);
                if self.buf.len() >= self.block {
                    self.emit_block()?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{FlowEnd, Track};

    /// Item `i` draws `i % 3` flows.
    fn flows_of(i: usize) -> u64 {
        (i % 3) as u64
    }

    /// A trace of `items` items drawn in chunks as `parallelism` says, after `before` flows
    /// drawn the ordinary way; an error at item `fail_at`.
    fn trace(
        parallelism: Parallelism,
        items: usize,
        before: u64,
        fail_at: Option<usize>,
    ) -> io::Result<String> {
        let mut w = TraceWriter::new(Vec::new())?;
        w.set_parallelism(parallelism);
        let end = FlowEnd {
            track: Track { pid: 4, tid: 1 },
            ts_ns: 7,
            bind: None,
        };
        for _ in 0..before {
            w.flow("before", end, end, None)?;
        }
        let per_chunk = w.chunk_len(5);
        let starts: Vec<u64> = (0..items.div_ceil(per_chunk))
            .map(|k| (0..k * per_chunk).map(flows_of).sum())
            .collect();
        let drawn = w.chunked(items, 5, |chunk, w| {
            w.skip_flow_ids(starts[chunk.index]);
            for i in chunk.range.clone() {
                if Some(i) == fail_at {
                    return Err(io::Error::other(format!("item {i}")));
                }
                for _ in 0..flows_of(i) {
                    w.flow("item", end, end, Some((i as u32, 0)))?;
                }
            }
            Ok(chunk.range.len())
        })?;
        assert_eq!(drawn.iter().sum::<usize>(), items);
        assert_eq!(w.flow_count(), before + (0..items).map(flows_of).sum::<u64>());
        w.flow("after", end, end, None)?;
        Ok(String::from_utf8(w.finish()?).unwrap())
    }

    /// Any number of threads and any chunk size give the bytes of one thread and one chunk,
    /// with or without events before the section (the first event takes no comma).
    #[test]
    fn chunks_are_written_in_order_whatever_the_threads() {
        for before in [0, 2] {
            let serial = trace(Parallelism::SERIAL, 23, before, None).unwrap();
            let events: serde_json::Value = serde_json::from_str(&serial).unwrap();
            let ids: Vec<u64> = events["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_u64().unwrap())
                .collect();
            let flows = before + (0..23).map(flows_of).sum::<u64>() + 1;
            let expected: Vec<u64> = (0..flows).flat_map(|id| [id, id]).collect();
            assert_eq!(ids, expected, "flow ids run 0, 1, … in order");
            for threads in 1..=3 {
                for max_chunk_items in [1, 2, 4, 100] {
                    let parallelism = Parallelism {
                        threads,
                        max_chunk_items,
                    };
                    assert_eq!(
                        trace(parallelism, 23, before, None).unwrap(),
                        serial,
                        "{parallelism:?}"
                    );
                }
            }
        }
    }

    /// A chunk's error ends the section with that error, on whichever thread it happened.
    #[test]
    fn a_chunks_error_is_returned() {
        for fail_at in [0, 1, 9, 22] {
            let parallelism = Parallelism {
                threads: 3,
                max_chunk_items: 2,
            };
            let err = trace(parallelism, 23, 0, Some(fail_at)).unwrap_err();
            assert_eq!(err.to_string(), format!("item {fail_at}"));
        }
    }
}
