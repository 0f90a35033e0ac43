//! A streaming writer of Chrome trace-event JSON (the format Perfetto opens).
//!
//! Output: `{"traceEvents":[` one event per line `]}`, the original converter's top level.
//! Timestamps and durations are microseconds written from integer nanoseconds as exact
//! decimals (`12.345`), so a flow's `ts` and its slice's `ts` are the same text when they are
//! the same instant. Nothing is kept in memory: each event is written as it is produced.

use std::fmt::{self, Write as _};
use std::io::{self, Write};

mod chunks;

pub use chunks::{Chunk, Parallelism, MAX_DEFAULT_THREADS};

/// The key, in the trace's top-level `metadata`, of the id of the run whose records it shows.
pub const RUN_ID_KEY: &str = "simpler_run_id";

/// Integer nanoseconds shown as microseconds with three decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Micros(pub u64);

/// Appends `ns` as microseconds with three decimals, without the formatting machinery (the
/// trace writes tens of millions of them).
fn put_micros(buf: &mut Vec<u8>, ns: u64) {
    put_int(buf, ns / 1000);
    let frac = (ns % 1000) as usize;
    buf.extend_from_slice(&[
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ]);
}

/// Appends an integer with `itoa`.
fn put_int<I: itoa::Integer>(buf: &mut Vec<u8>, v: I) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends `s` as a JSON string, escaped as serde_json escapes it; a string with nothing to
/// escape (the common case) is copied as is.
fn put_str(buf: &mut Vec<u8>, s: &str) {
    if !needs_escape(s) {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        serde_json::to_writer(&mut *buf, s).expect("writing to a Vec cannot fail");
    }
}

/// Appends a literal of this crate's (a category, an `args` key) as a JSON string, without
/// the scan for escapes: the program's own literals have nothing to escape, which debug
/// builds check.
fn put_literal(buf: &mut Vec<u8>, s: &'static str) {
    debug_assert!(!needs_escape(s), "{s:?} is not a plain literal");
    buf.push(b'"');
    buf.extend_from_slice(s.as_bytes());
    buf.push(b'"');
}

/// Whether `s` holds a byte JSON escapes (a control character, `"` or `\`). Every byte is
/// looked at, with no early exit, so the loop runs on vector registers: a trace's names,
/// hints and keys are scanned several bytes an instruction (the byte-at-a-time `all` was a
/// quarter of the slices' formatting, `docs/performance.md`, item 93).
fn needs_escape(s: &str) -> bool {
    s.bytes()
        .fold(false, |found, b| found | (b < 0x20) | (b == b'"') | (b == b'\\'))
}

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// A value in an event's `args`.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// A JSON string (escaped on output).
    Str(&'a str),
    /// An integer.
    Int(i64),
    /// An unsigned integer (a raw task id).
    Uint(u64),
    /// Nanoseconds written as microseconds.
    Us(u64),
    /// Three integers, e.g. a ready-queue depth `[aic, aiv, mix]`.
    Triple([i64; 3]),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// Where an event goes: process and thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Track {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
}

/// One complete (`ph:"X"`) slice.
#[derive(Debug, Clone, Copy)]
pub struct Slice<'a> {
    /// Slice name, shown on the bar.
    pub name: &'a str,
    /// Category (written as it is: a literal with nothing to escape).
    pub cat: &'static str,
    /// Its track.
    pub track: Track,
    /// Start, ns.
    pub ts_ns: u64,
    /// Duration, ns.
    pub dur_ns: u64,
    /// The slice's event `id`, which flows name in `bind_id`.
    pub id: Option<u64>,
    /// `args` members, in order; the keys are literals with nothing to escape.
    pub args: &'a [(&'static str, Arg<'a>)],
}

/// One end of a flow arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowEnd {
    /// The track the arrow attaches to.
    pub track: Track,
    /// The instant, ns.
    pub ts_ns: u64,
    /// The event `id` of the slice it binds to, if known.
    pub bind: Option<u64>,
}

/// One flow arrow: a `ph:"s"` event at `from` and a `ph:"f"` event (`bp:"e"`) at `to`.
#[derive(Debug, Clone, Copy)]
pub struct Flow<'a> {
    /// Flow id, unique in the trace.
    pub id: u64,
    /// Name (`dependency`, `hb_violation`, `complete`, ...).
    pub name: &'a str,
    /// Where it starts.
    pub from: FlowEnd,
    /// Where it ends.
    pub to: FlowEnd,
    /// `(input_task_count, output_task_count)` of a dependency flow.
    pub task_counts: Option<(u32, u32)>,
}

/// Bytes gathered before they are handed to the underlying writer in one `write_all`.
pub const BLOCK_BYTES: usize = 1 << 20;

/// Streams trace events to `W`. Events are put together in a block of memory that goes to
/// `W` whenever it holds [`BLOCK_BYTES`] (or the size given to [`TraceWriter::with_block`])
/// or more.
pub struct TraceWriter<W: Write> {
    out: W,
    /// Where full blocks go instead of `out`, handed over without a copy.
    pipe: Option<Pipe>,
    buf: Vec<u8>,
    block: usize,
    first: bool,
    flows: u64,
    /// How [`TraceWriter::chunked`] spreads a section over threads.
    parallelism: Parallelism,
    /// Scratch for names built per event.
    pub scratch: String,
}

impl TraceWriter<io::Sink> {
    /// A writer for one chunk of [`TraceWriter::chunked`]: events go to `buf` (cleared),
    /// each after a separator, and its flow ids start at `flows`.
    fn chunk(mut buf: Vec<u8>, flows: u64) -> Self {
        buf.clear();
        Self {
            out: io::sink(),
            pipe: None,
            buf,
            block: usize::MAX,
            first: false,
            flows,
            parallelism: Parallelism::SERIAL,
            scratch: String::new(),
        }
    }

    /// Starts the trace object on `pipe`: each full block of [`BLOCK_BYTES`] is handed to
    /// the writing thread as it is, without a copy.
    pub fn piped(pipe: Pipe) -> io::Result<Self> {
        let mut w = Self::with_block(io::sink(), BLOCK_BYTES)?;
        w.pipe = Some(pipe);
        Ok(w)
    }
}

impl<W: Write> TraceWriter<W> {
    /// Starts the trace object.
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_block(out, BLOCK_BYTES)
    }

    /// Starts the trace object; events go to `out` whenever `block` bytes or more are
    /// gathered.
    pub fn with_block(out: W, block: usize) -> io::Result<Self> {
        let mut buf = Vec::with_capacity(block + (64 << 10));
        buf.extend_from_slice(b"{\"traceEvents\":[");
        Ok(Self {
            out,
            pipe: None,
            buf,
            block,
            first: true,
            flows: 0,
            parallelism: Parallelism::default(),
            scratch: String::new(),
        })
    }

    /// Sets how [`TraceWriter::chunked`] spreads sections over threads (the default: one
    /// thread per core). The trace's bytes do not depend on it.
    pub fn set_parallelism(&mut self, parallelism: Parallelism) {
        self.parallelism = parallelism;
    }

    /// A block the writing thread is done with, when one is back.
    fn take_free_block(&mut self) -> Option<Vec<u8>> {
        self.pipe.as_mut()?.free.try_recv().ok()
    }

    /// Writes a `process_name` and a `process_sort_index` metadata event.
    pub fn process(&mut self, pid: u32, name: &str, sort_index: u32) -> io::Result<()> {
        self.begin_event()?;
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"name\":\"process_name\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":");
        put_int(b, pid);
        b.extend_from_slice(b",\"args\":{\"name\":");
        put_str(b, name);
        b.extend_from_slice(b"}}");
        self.begin_event()?;
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"name\":\"process_sort_index\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":");
        put_int(b, pid);
        b.extend_from_slice(b",\"args\":{\"sort_index\":");
        put_int(b, sort_index);
        b.extend_from_slice(b"}}");
        Ok(())
    }

    /// Writes a `thread_name` metadata event.
    pub fn thread(&mut self, track: Track, name: &str) -> io::Result<()> {
        self.begin_event()?;
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"name\":\"thread_name\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":");
        put_int(b, track.pid);
        b.extend_from_slice(b",\"tid\":");
        put_int(b, track.tid);
        b.extend_from_slice(b",\"args\":{\"name\":");
        put_str(b, name);
        b.extend_from_slice(b"}}");
        Ok(())
    }

    /// Writes a `thread_sort_index` metadata event.
    pub fn thread_sort(&mut self, track: Track, sort_index: u32) -> io::Result<()> {
        self.begin_event()?;
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"name\":\"thread_sort_index\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":");
        put_int(b, track.pid);
        b.extend_from_slice(b",\"tid\":");
        put_int(b, track.tid);
        b.extend_from_slice(b",\"args\":{\"sort_index\":");
        put_int(b, sort_index);
        b.extend_from_slice(b"}}");
        Ok(())
    }

    /// Writes one complete slice.
    pub fn slice(&mut self, s: &Slice<'_>) -> io::Result<()> {
        self.begin_event()?;
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"name\":");
        put_str(b, s.name);
        b.extend_from_slice(b",\"cat\":");
        put_literal(b, s.cat);
        if let Some(id) = s.id {
            b.extend_from_slice(b",\"id\":");
            put_int(b, id);
        }
        b.extend_from_slice(b",\"ph\":\"X\",\"pid\":");
        put_int(b, s.track.pid);
        b.extend_from_slice(b",\"tid\":");
        put_int(b, s.track.tid);
        b.extend_from_slice(b",\"ts\":");
        put_micros(b, s.ts_ns);
        b.extend_from_slice(b",\"dur\":");
        put_micros(b, s.dur_ns);
        b.extend_from_slice(b",\"args\":");
        put_args(b, s.args);
        b.push(b'}');
        Ok(())
    }

    /// Writes a counter sample (`ph:"C"`); `track.tid` is written unless it is 0.
    pub fn counter(
        &mut self,
        name: &str,
        cat: &'static str,
        track: Track,
        ts_ns: u64,
        args: &[(&'static str, Arg<'_>)],
    ) -> io::Result<()> {
        self.begin_event()?;
        let b = &mut self.buf;
        b.extend_from_slice(b"{\"name\":");
        put_str(b, name);
        b.extend_from_slice(b",\"cat\":");
        put_literal(b, cat);
        b.extend_from_slice(b",\"ph\":\"C\",\"pid\":");
        put_int(b, track.pid);
        if track.tid != 0 {
            b.extend_from_slice(b",\"tid\":");
            put_int(b, track.tid);
        }
        b.extend_from_slice(b",\"ts\":");
        put_micros(b, ts_ns);
        b.extend_from_slice(b",\"args\":");
        put_args(b, args);
        b.push(b'}');
        Ok(())
    }

    /// Writes a flow arrow with the next flow id (0, 1, ...); returns the id.
    pub fn flow(
        &mut self,
        name: &str,
        from: FlowEnd,
        to: FlowEnd,
        task_counts: Option<(u32, u32)>,
    ) -> io::Result<u64> {
        let id = self.flows;
        self.flows += 1;
        self.flow_event(&Flow {
            id,
            name,
            from,
            to,
            task_counts,
        })?;
        Ok(id)
    }

    /// Flows written so far.
    pub fn flow_count(&self) -> u64 {
        self.flows
    }

    fn flow_event(&mut self, f: &Flow<'_>) -> io::Result<()> {
        for (ph, end) in [(&b"s"[..], f.from), (&b"f"[..], f.to)] {
            self.begin_event()?;
            let b = &mut self.buf;
            b.extend_from_slice(b"{\"name\":");
            put_str(b, f.name);
            b.extend_from_slice(b",\"cat\":\"flow\",\"ph\":\"");
            b.extend_from_slice(ph);
            b.extend_from_slice(b"\",\"id\":");
            put_int(b, f.id);
            b.extend_from_slice(b",\"pid\":");
            put_int(b, end.track.pid);
            b.extend_from_slice(b",\"tid\":");
            put_int(b, end.track.tid);
            b.extend_from_slice(b",\"ts\":");
            put_micros(b, end.ts_ns);
            if ph == b"f" {
                b.extend_from_slice(b",\"bp\":\"e\"");
            }
            if let Some(bind) = end.bind {
                b.extend_from_slice(b",\"bind_id\":");
                put_int(b, bind);
            }
            if let Some((input, output)) = f.task_counts {
                b.extend_from_slice(b",\"input_task_count\":");
                put_int(b, input);
                b.extend_from_slice(b",\"output_task_count\":");
                put_int(b, output);
            }
            b.push(b'}');
        }
        Ok(())
    }

    /// Closes the trace, flushes and returns the writer.
    pub fn finish(self) -> io::Result<W> {
        self.finish_with_run(None)
    }

    /// Closes the trace, after the events a top-level `"metadata":{"simpler_run_id":"<id>"}`
    /// when `run_id` is given (the run whose records the trace shows: `simpler critical-path`
    /// checks it before copying the trace), flushes and returns the writer.
    pub fn finish_with_run(mut self, run_id: Option<&str>) -> io::Result<W> {
        self.buf.extend_from_slice(b"\n]");
        if let Some(id) = run_id {
            self.buf.extend_from_slice(b",\n\"metadata\":{\"");
            self.buf.extend_from_slice(RUN_ID_KEY.as_bytes());
            self.buf.extend_from_slice(b"\":");
            put_str(&mut self.buf, id);
            self.buf.push(b'}');
        }
        self.buf.extend_from_slice(b"}\n");
        self.emit_block()?;
        self.out.flush()?;
        Ok(self.out)
    }

    /// Hands the gathered block to the pipe or the writer.
    fn emit_block(&mut self) -> io::Result<()> {
        match &mut self.pipe {
            Some(pipe) => pipe.send_block(&mut self.buf),
            None => {
                self.out.write_all(&self.buf)?;
                self.buf.clear();
                Ok(())
            }
        }
    }

    /// Starts an event: its separator, after handing a full block to the writer.
    fn begin_event(&mut self) -> io::Result<()> {
        if self.buf.len() >= self.block {
            self.emit_block()?;
        }
        let sep: &[u8] = if self.first { b"\n" } else { b",\n" };
        self.first = false;
        self.buf.extend_from_slice(sep);
        Ok(())
    }
}

/// Appends an `args` object.
fn put_args(b: &mut Vec<u8>, args: &[(&'static str, Arg<'_>)]) {
    b.push(b'{');
    for (i, (key, value)) in args.iter().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        put_literal(b, key);
        b.push(b':');
        match *value {
            Arg::Str(v) => put_str(b, v),
            Arg::Int(v) => put_int(b, v),
            Arg::Uint(v) => put_int(b, v),
            Arg::Us(v) => put_micros(b, v),
            Arg::Triple([x, y, z]) => {
                b.push(b'[');
                put_int(b, x);
                b.push(b',');
                put_int(b, y);
                b.push(b',');
                put_int(b, z);
                b.push(b']');
            }
            Arg::Bool(v) => b.extend_from_slice(if v { b"true" } else { b"false" }),
            Arg::Null => b.extend_from_slice(b"null"),
        }
    }
    b.push(b'}');
}

/// Blocks that may wait for the writing thread before the producer waits for it.
const PIPE_BLOCKS: usize = 8;

/// The writer [`pipelined`] hands its producer: as a `Write`, gathers bytes into blocks of
/// [`BLOCK_BYTES`] and sends each full block to the writing thread (flush it before dropping
/// it); [`TraceWriter::piped`] sends its own blocks.
pub struct Pipe {
    blocks: std::sync::mpsc::SyncSender<Vec<u8>>,
    /// Blocks written, back for reuse.
    free: std::sync::mpsc::Receiver<Vec<u8>>,
    current: Vec<u8>,
}

impl Pipe {
    /// Sends `block` to the writing thread, leaving an empty (recycled) one in its place.
    fn send_block(&mut self, block: &mut Vec<u8>) -> io::Result<()> {
        let next = self
            .free
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(2 * BLOCK_BYTES));
        let full = std::mem::replace(block, next);
        self.send_owned(full)
    }

    /// Sends `block` to the writing thread as it is.
    fn send_owned(&mut self, block: Vec<u8>) -> io::Result<()> {
        self.blocks
            .send(block)
            .map_err(|_| io::Error::other("the trace's writing thread stopped"))
    }

    /// Sends the gathered block ([`Pipe::send_block`] on `current`).
    fn send(&mut self) -> io::Result<()> {
        let mut current = std::mem::take(&mut self.current);
        let sent = self.send_block(&mut current);
        self.current = current;
        sent
    }
}

impl Write for Pipe {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.current.extend_from_slice(bytes);
        if self.current.len() >= BLOCK_BYTES {
            self.send()?;
        }
        Ok(bytes.len())
    }

    /// Sends what is gathered; the writing thread flushes `sink` when the pipe closes.
    fn flush(&mut self) -> io::Result<()> {
        if !self.current.is_empty() {
            self.send()?;
        }
        Ok(())
    }
}

/// Runs `produce` with a [`Pipe`] whose bytes are written to `sink`, in order, on another
/// thread, so that producing the trace and the write calls overlap ([`TraceWriter::piped`]
/// hands its blocks over without a copy). The pipe closes when `produce` drops it. The
/// writing thread's error (a full disk, an interrupt) is returned before the producer's,
/// which then is only the closed pipe.
pub fn pipelined<S: Write + Send, T>(
    sink: &mut S,
    produce: impl FnOnce(Pipe) -> io::Result<T>,
) -> io::Result<T> {
    std::thread::scope(|scope| {
        let (blocks, incoming) = std::sync::mpsc::sync_channel::<Vec<u8>>(PIPE_BLOCKS);
        let (recycle, free) = std::sync::mpsc::channel::<Vec<u8>>();
        let writer = scope.spawn(move || -> io::Result<()> {
            for mut block in incoming {
                sink.write_all(&block)?;
                block.clear();
                let _ = recycle.send(block);
            }
            sink.flush()
        });
        let pipe = Pipe {
            blocks,
            free,
            current: Vec::new(),
        };
        let produced = produce(pipe);
        let written = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        written.and(produced)
    })
}

/// Formats `args` into `buf` (cleared first) and returns it: names built per event without a
/// new allocation each time.
pub fn format_into<'b>(buf: &'b mut String, args: fmt::Arguments<'_>) -> &'b str {
    buf.clear();
    buf.write_fmt(args).expect("writing to a String cannot fail");
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let escapable = ['"', '\\', '\n', '\u{0}', '\u{1f}'];
        let mut cases = vec![
            String::new(),
            "event-hint".into(),
            "Task:r1t2, FuncId:3".into(),
            "é ü 漢 \u{7f}".into(),
        ];
        for c in escapable {
            // At the start, in the middle, at the end, and past the first 16 and 32 bytes.
            for at in [0, 3, 9, 17, 40] {
                let mut s: String = "abcdefghij".repeat(5).chars().take(at).collect();
                s.push(c);
                s.push_str("tail");
                cases.push(s);
            }
        }
        for s in cases {
            let mut out = Vec::new();
            put_str(&mut out, &s);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&s).unwrap(),
                "{s:?}"
            );
            assert_eq!(
                needs_escape(&s),
                s.chars().any(|c| escapable.contains(&c)) || s.contains(|c: char| c < ' '),
                "{s:?}"
            );
        }
    }

    #[test]
    fn micros_are_exact_decimals() {
        let mut out = Vec::new();
        for ns in [0, 5, 1_234_567, 1000] {
            put_micros(&mut out, ns);
            out.push(b' ');
        }
        assert_eq!(String::from_utf8(out).unwrap(), "0.000 0.005 1234.567 1.000 ");
        assert_eq!(Micros(0).to_string(), "0.000");
        assert_eq!(Micros(1_234_567).to_string(), "1234.567");
        assert_eq!(Micros(5).to_string(), "0.005");
    }

    #[test]
    fn events_are_one_per_line_and_parse() {
        let track = Track { pid: 4, tid: 10_030 };
        let mut w = TraceWriter::new(Vec::new()).unwrap();
        w.process(4, "Worker View", 4).unwrap();
        w.slice(&Slice {
            name: "k\"q(t0)",
            cat: "event",
            track,
            ts_ns: 1500,
            dur_ns: 20,
            id: Some(0),
            args: &[
                ("taskId", Arg::Uint(4_294_967_296)),
                ("d", Arg::Us(1000)),
                ("q", Arg::Triple([1, 0, 2])),
            ],
        })
        .unwrap();
        let end = FlowEnd {
            track,
            ts_ns: 1500,
            bind: Some(0),
        };
        assert_eq!(w.flow("dependency", end, end, Some((1, 4))).unwrap(), 0);
        w.counter(
            "busy_cores",
            "simpler",
            Track { pid: 10, tid: 0 },
            7,
            &[("AIC", Arg::Int(1))],
        )
        .unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            concat!(
                "{\"traceEvents\":[\n",
                r#"{"name":"process_name","cat":"__metadata","ph":"M","pid":4,"args":{"name":"Worker View"}},"#,
                "\n",
                r#"{"name":"process_sort_index","cat":"__metadata","ph":"M","pid":4,"args":{"sort_index":4}},"#,
                "\n",
                r#"{"name":"k\"q(t0)","cat":"event","id":0,"ph":"X","pid":4,"tid":10030,"ts":1.500,"dur":0.020,"args":{"taskId":4294967296,"d":1.000,"q":[1,0,2]}},"#,
                "\n",
                r#"{"name":"dependency","cat":"flow","ph":"s","id":0,"pid":4,"tid":10030,"ts":1.500,"bind_id":0,"input_task_count":1,"output_task_count":4},"#,
                "\n",
                r#"{"name":"dependency","cat":"flow","ph":"f","id":0,"pid":4,"tid":10030,"ts":1.500,"bp":"e","bind_id":0,"input_task_count":1,"output_task_count":4},"#,
                "\n",
                r#"{"name":"busy_cores","cat":"simpler","ph":"C","pid":10,"ts":0.007,"args":{"AIC":1}}"#,
                "\n]}\n"
            )
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["traceEvents"].as_array().unwrap().len(), 6);
    }
}
