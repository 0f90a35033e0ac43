//! A streaming writer of Chrome trace-event JSON (the format Perfetto opens).
//!
//! Output: `{"traceEvents":[` one event per line `]}`, the original converter's top level.
//! Timestamps and durations are microseconds written from integer nanoseconds as exact
//! decimals (`12.345`), so a flow's `ts` and its slice's `ts` are the same text when they are
//! the same instant. Nothing is kept in memory: each event is written as it is produced.

use std::fmt::{self, Write as _};
use std::io::{self, Write};

/// Integer nanoseconds shown as microseconds with three decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Micros(pub u64);

/// Writes `ns` as microseconds with three decimals, without the formatting machinery (the
/// trace writes tens of millions of them).
fn write_micros<W: Write>(out: &mut W, ns: u64) -> io::Result<()> {
    let mut int = itoa::Buffer::new();
    out.write_all(int.format(ns / 1000).as_bytes())?;
    let frac = (ns % 1000) as usize;
    let digits = [
        b'.',
        b'0' + (frac / 100) as u8,
        b'0' + (frac / 10 % 10) as u8,
        b'0' + (frac % 10) as u8,
    ];
    out.write_all(&digits)
}

/// Writes an integer with `itoa`.
fn write_int<W: Write, I: itoa::Integer>(out: &mut W, v: I) -> io::Result<()> {
    out.write_all(itoa::Buffer::new().format(v).as_bytes())
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
    /// Category.
    pub cat: &'a str,
    /// Its track.
    pub track: Track,
    /// Start, ns.
    pub ts_ns: u64,
    /// Duration, ns.
    pub dur_ns: u64,
    /// The slice's event `id`, which flows name in `bind_id`.
    pub id: Option<u64>,
    /// `args` members, in order.
    pub args: &'a [(&'a str, Arg<'a>)],
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

/// Streams trace events to `W`.
pub struct TraceWriter<W: Write> {
    out: W,
    first: bool,
    flows: u64,
    /// Scratch for names built per event.
    pub scratch: String,
}

impl<W: Write> TraceWriter<W> {
    /// Starts the trace object.
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(b"{\"traceEvents\":[")?;
        Ok(Self {
            out,
            first: true,
            flows: 0,
            scratch: String::new(),
        })
    }

    /// Writes a `process_name` and a `process_sort_index` metadata event.
    pub fn process(&mut self, pid: u32, name: &str, sort_index: u32) -> io::Result<()> {
        self.begin_event()?;
        self.out
            .write_all(b"{\"name\":\"process_name\",\"cat\":\"__metadata\",\"ph\":\"M\",")?;
        write!(self.out, "\"pid\":{pid},\"args\":{{\"name\":")?;
        self.string(name)?;
        self.out.write_all(b"}}")?;
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"process_sort_index\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":{pid},\"args\":{{\"sort_index\":{sort_index}}}}}"
        )
    }

    /// Writes a `thread_name` metadata event.
    pub fn thread(&mut self, track: Track, name: &str) -> io::Result<()> {
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"thread_name\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":",
            track.pid, track.tid
        )?;
        self.string(name)?;
        self.out.write_all(b"}}")
    }

    /// Writes a `thread_sort_index` metadata event.
    pub fn thread_sort(&mut self, track: Track, sort_index: u32) -> io::Result<()> {
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"thread_sort_index\",\"cat\":\"__metadata\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{sort_index}}}}}",
            track.pid, track.tid
        )
    }

    /// Writes one complete slice.
    pub fn slice(&mut self, s: &Slice<'_>) -> io::Result<()> {
        self.begin_event()?;
        self.out.write_all(b"{\"name\":")?;
        self.string(s.name)?;
        self.out.write_all(b",\"cat\":")?;
        self.string(s.cat)?;
        if let Some(id) = s.id {
            self.out.write_all(b",\"id\":")?;
            write_int(&mut self.out, id)?;
        }
        self.out.write_all(b",\"ph\":\"X\",\"pid\":")?;
        write_int(&mut self.out, s.track.pid)?;
        self.out.write_all(b",\"tid\":")?;
        write_int(&mut self.out, s.track.tid)?;
        self.out.write_all(b",\"ts\":")?;
        write_micros(&mut self.out, s.ts_ns)?;
        self.out.write_all(b",\"dur\":")?;
        write_micros(&mut self.out, s.dur_ns)?;
        self.out.write_all(b",\"args\":")?;
        self.args(s.args)?;
        self.out.write_all(b"}")
    }

    /// Writes a counter sample (`ph:"C"`); `track.tid` is written unless it is 0.
    pub fn counter(
        &mut self,
        name: &str,
        cat: &str,
        track: Track,
        ts_ns: u64,
        args: &[(&str, Arg<'_>)],
    ) -> io::Result<()> {
        self.begin_event()?;
        self.out.write_all(b"{\"name\":")?;
        self.string(name)?;
        self.out.write_all(b",\"cat\":")?;
        self.string(cat)?;
        write!(self.out, ",\"ph\":\"C\",\"pid\":{}", track.pid)?;
        if track.tid != 0 {
            write!(self.out, ",\"tid\":{}", track.tid)?;
        }
        write!(self.out, ",\"ts\":{},\"args\":", Micros(ts_ns))?;
        self.args(args)?;
        self.out.write_all(b"}")
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
            self.out.write_all(b"{\"name\":")?;
            self.string(f.name)?;
            self.out.write_all(b",\"cat\":\"flow\",\"ph\":\"")?;
            self.out.write_all(ph)?;
            self.out.write_all(b"\",\"id\":")?;
            write_int(&mut self.out, f.id)?;
            self.out.write_all(b",\"pid\":")?;
            write_int(&mut self.out, end.track.pid)?;
            self.out.write_all(b",\"tid\":")?;
            write_int(&mut self.out, end.track.tid)?;
            self.out.write_all(b",\"ts\":")?;
            write_micros(&mut self.out, end.ts_ns)?;
            if ph == b"f" {
                self.out.write_all(b",\"bp\":\"e\"")?;
            }
            if let Some(bind) = end.bind {
                self.out.write_all(b",\"bind_id\":")?;
                write_int(&mut self.out, bind)?;
            }
            if let Some((input, output)) = f.task_counts {
                self.out.write_all(b",\"input_task_count\":")?;
                write_int(&mut self.out, input)?;
                self.out.write_all(b",\"output_task_count\":")?;
                write_int(&mut self.out, output)?;
            }
            self.out.write_all(b"}")?;
        }
        Ok(())
    }

    /// Closes the trace, flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn args(&mut self, args: &[(&str, Arg<'_>)]) -> io::Result<()> {
        self.out.write_all(b"{")?;
        for (i, (key, value)) in args.iter().enumerate() {
            if i > 0 {
                self.out.write_all(b",")?;
            }
            self.string(key)?;
            self.out.write_all(b":")?;
            match value {
                Arg::Str(v) => self.string(v)?,
                Arg::Int(v) => write_int(&mut self.out, *v)?,
                Arg::Uint(v) => write_int(&mut self.out, *v)?,
                Arg::Us(v) => write_micros(&mut self.out, *v)?,
                Arg::Triple([a, b, c]) => write!(self.out, "[{a},{b},{c}]")?,
                Arg::Bool(v) => write!(self.out, "{v}")?,
                Arg::Null => self.out.write_all(b"null")?,
            }
        }
        self.out.write_all(b"}")
    }

    fn begin_event(&mut self) -> io::Result<()> {
        let sep: &[u8] = if self.first { b"\n" } else { b",\n" };
        self.first = false;
        self.out.write_all(sep)
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, s).map_err(io::Error::from)
    }
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
    fn micros_are_exact_decimals() {
        let mut out = Vec::new();
        for ns in [0, 5, 1_234_567, 1000] {
            write_micros(&mut out, ns).unwrap();
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
