//! A streaming writer of Chrome trace-event JSON (the format Perfetto opens).
//!
//! Output: `{"displayTimeUnit":"ns","traceEvents":[` one event per line `]}`. Timestamps and
//! durations are microseconds written from integer nanoseconds as exact decimals (`12.345`),
//! so a flow's `ts` and its slice's `ts` are the same text when they are the same instant.
//! Nothing is kept in memory: each event is written as it is produced.

use std::fmt;
use std::io::{self, Write};

use crate::tracks::TrackId;

/// Integer nanoseconds shown as microseconds with three decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Micros(pub u64);

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

/// A value in a slice's `args`.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// A JSON string (escaped on output).
    Str(&'a str),
    /// A decimal string of a 64-bit id (JavaScript-safe).
    Id(u64),
    /// An integer.
    Int(i64),
    /// Nanoseconds written as microseconds.
    Us(u64),
    /// A task id written as its short label, `t<local>` (ring 0) or `r<ring>t<local>`.
    Task(u64),
}

/// The short label of a task id: `t<local>` on ring 0, else `r<ring>t<local>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLabel(pub u64);

impl fmt::Display for TaskLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match simpler_artifacts::deps::split_task_id(self.0) {
            (0, local) => write!(f, "t{local}"),
            (ring, local) => write!(f, "r{ring}t{local}"),
        }
    }
}

/// One complete (`ph:"X"`) slice.
#[derive(Debug, Clone, Copy)]
pub struct Slice<'a> {
    /// Slice name, shown on the bar.
    pub name: &'a str,
    /// Category.
    pub cat: &'a str,
    /// Its track.
    pub track: TrackId,
    /// Start, ns.
    pub ts_ns: u64,
    /// Duration, ns.
    pub dur_ns: u64,
    /// `args` members, in order.
    pub args: &'a [(&'a str, Arg<'a>)],
}

/// One end of a flow arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowEnd {
    /// The track of the slice the arrow attaches to.
    pub track: TrackId,
    /// The instant, ns (the start of that slice).
    pub ts_ns: u64,
}

/// Streams trace events to `W`.
pub struct TraceWriter<W: Write> {
    out: W,
    first: bool,
}

impl<W: Write> TraceWriter<W> {
    /// Starts the trace object.
    pub fn new(mut out: W) -> io::Result<Self> {
        out.write_all(b"{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
        Ok(Self { out, first: true })
    }

    /// Writes a `process_name` and a `process_sort_index` metadata event.
    pub fn process_name(&mut self, pid: u32, name: &str, sort_index: u64) -> io::Result<()> {
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"args\":{{\"name\":"
        )?;
        self.string(name)?;
        self.out.write_all(b"}}")?;
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"args\":{{\"sort_index\":{sort_index}}}}}"
        )
    }

    /// Writes a `thread_name` and a `thread_sort_index` metadata event.
    pub fn thread_name(&mut self, pid: u32, tid: u32, name: &str, sort_index: u64) -> io::Result<()> {
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":"
        )?;
        self.string(name)?;
        self.out.write_all(b"}}")?;
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{sort_index}}}}}"
        )
    }

    /// Writes one complete slice.
    pub fn slice(&mut self, s: &Slice<'_>) -> io::Result<()> {
        self.begin_event()?;
        self.out.write_all(b"{\"name\":")?;
        self.string(s.name)?;
        self.out.write_all(b",\"cat\":")?;
        self.string(s.cat)?;
        write!(
            self.out,
            ",\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{},\"args\":{{",
            s.track.pid,
            s.track.tid,
            Micros(s.ts_ns),
            Micros(s.dur_ns)
        )?;
        for (i, (key, value)) in s.args.iter().enumerate() {
            if i > 0 {
                self.out.write_all(b",")?;
            }
            self.string(key)?;
            self.out.write_all(b":")?;
            match value {
                Arg::Str(v) => self.string(v)?,
                Arg::Id(v) => write!(self.out, "\"{v}\"")?,
                Arg::Int(v) => write!(self.out, "{v}")?,
                Arg::Us(v) => write!(self.out, "{}", Micros(*v))?,
                Arg::Task(v) => write!(self.out, "\"{}\"", TaskLabel(*v))?,
            }
        }
        self.out.write_all(b"}}")
    }

    /// Writes a flow arrow: a `ph:"s"` event at `from` and a `ph:"f"` event (`bp:"e"`, bound
    /// to the enclosing slice) at `to`, both with `name`, category `flow` and numeric `id`.
    pub fn flow(&mut self, id: u64, name: &str, from: FlowEnd, to: FlowEnd) -> io::Result<()> {
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"{name}\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":{id},\"pid\":{},\"tid\":{},\"ts\":{}}}",
            from.track.pid,
            from.track.tid,
            Micros(from.ts_ns)
        )?;
        self.begin_event()?;
        write!(
            self.out,
            "{{\"name\":\"{name}\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{id},\"pid\":{},\"tid\":{},\"ts\":{}}}",
            to.track.pid,
            to.track.tid,
            Micros(to.ts_ns)
        )
    }

    /// Closes the trace, flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(b"\n]}\n")?;
        self.out.flush()?;
        Ok(self.out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_labels_show_ring_only_when_nonzero() {
        assert_eq!(TaskLabel(3).to_string(), "t3");
        assert_eq!(TaskLabel(4_294_967_298).to_string(), "r1t2");
    }

    #[test]
    fn micros_are_exact_decimals() {
        assert_eq!(Micros(0).to_string(), "0.000");
        assert_eq!(Micros(1_234_567).to_string(), "1234.567");
        assert_eq!(Micros(5).to_string(), "0.005");
    }

    #[test]
    fn events_are_one_per_line_and_parse() {
        let track = TrackId { pid: 3, tid: 7 };
        let mut w = TraceWriter::new(Vec::new()).unwrap();
        w.slice(&Slice {
            name: "k\"q",
            cat: "task",
            track,
            ts_ns: 1500,
            dur_ns: 20,
            args: &[
                ("task_id", Arg::Id(4_294_967_296)),
                ("fanin", Arg::Int(2)),
                ("d", Arg::Us(1000)),
            ],
        })
        .unwrap();
        let end = FlowEnd { track, ts_ns: 1500 };
        w.flow(1, "dependency", end, end).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            concat!(
                "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n",
                r#"{"name":"k\"q","cat":"task","ph":"X","pid":3,"tid":7,"ts":1.500,"dur":0.020,"args":{"task_id":"4294967296","fanin":2,"d":1.000}},"#,
                "\n",
                r#"{"name":"dependency","cat":"flow","ph":"s","id":1,"pid":3,"tid":7,"ts":1.500},"#,
                "\n",
                r#"{"name":"dependency","cat":"flow","ph":"f","bp":"e","id":1,"pid":3,"tid":7,"ts":1.500}"#,
                "\n]}\n"
            )
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["traceEvents"].as_array().unwrap().len(), 3);
    }
}
