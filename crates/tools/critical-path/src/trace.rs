//! `CPM_static.json` and `CPM_observed.json`: copies of the run's Perfetto trace
//! (`merged_swimlane*.json`) in which every Worker View task bar that is not on the path is
//! renamed `·(<task>)`, so the path stands out (`../shared/reference/timing-analysis.md` §2).
//!
//! Worker View events are the `X` events of pid [`WORKER_VIEW_PID`] with an `args.taskId`
//! (a number or a decimal string). Everything else (other processes, markers without a
//! `taskId`, flows, metadata, the top-level keys and their order) is copied unchanged: each
//! event is copied byte for byte unless renamed, and a renamed event keeps its keys in order.
//! The output puts one event per line (the JSON value is the original's; only the whitespace
//! differs from its indent-2 layout). The input is streamed, never held as a JSON tree: one
//! pass checks that every path task has a bar, then one pass per output file writes it.

use std::fmt;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};

use rustc_hash::FxHashSet;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use simpler_artifacts::provenance::Provenance;

/// The Worker View process of the original converter's trace.
pub const WORKER_VIEW_PID: u64 = 4;

/// File name of the static path's trace.
pub const STATIC_TRACE: &str = "CPM_static.json";

/// File name of the observed path's trace.
pub const OBSERVED_TRACE: &str = "CPM_observed.json";

/// Most missing task ids an error lists.
const MISSING_SHOWN: usize = 5;

pub use simpler_artifacts::deps::task_label as task_display;

/// Why the CPM traces of a run were not written: the merged trace is invalid ([`Invalid`],
/// [`Missing`], [`OtherRun`]), could not be read ([`Read`]), or an output could not be
/// written ([`Publish`]).
///
/// [`Invalid`]: TraceError::Invalid
/// [`Missing`]: TraceError::Missing
/// [`OtherRun`]: TraceError::OtherRun
/// [`Read`]: TraceError::Read
/// [`Publish`]: TraceError::Publish
#[derive(Debug)]
pub enum TraceError {
    /// The merged trace is not a trace: it does not parse, or its shape is not a trace's (the
    /// message names the file).
    Invalid(String),
    /// The merged trace could not be read (gone, or an I/O error): the file may be a good trace.
    Read {
        /// The merged trace.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Some path tasks have no Worker View bar.
    Missing {
        /// How many.
        count: usize,
        /// The first few, as decimal ids in ascending order.
        sample: Vec<u64>,
    },
    /// The trace shows another run's records (its `metadata.simpler_run_id`).
    OtherRun {
        /// The run the trace names.
        trace_run: String,
        /// The run of the analysed records.
        records_run: String,
    },
    /// An output could not be written.
    Publish(simpler_artifacts::publish::PublishError),
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Invalid(why) => f.write_str(why),
            TraceError::Read { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            TraceError::Missing { count, sample } => {
                let ids: Vec<String> = sample.iter().map(u64::to_string).collect();
                write!(
                    f,
                    "merged Worker View is missing {count} critical task(s): {}",
                    ids.join(", ")
                )
            }
            TraceError::OtherRun {
                trace_run,
                records_run,
            } => write!(
                f,
                "it shows run {trace_run}, the records analysed are run {records_run}'s \
                 (convert them again with `simpler swimlane`)"
            ),
            TraceError::Publish(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TraceError {}

impl TraceError {
    /// Whether the merged trace itself is at fault (not a trace, a path task without a bar,
    /// another run's), not a file that could not be read or written.
    pub fn is_invalid_trace(&self) -> bool {
        matches!(
            self,
            TraceError::Invalid(_) | TraceError::Missing { .. } | TraceError::OtherRun { .. }
        )
    }
}

/// [`write_cpm_traces`]' failure: why, and the outputs it had already published (the static
/// trace, when the observed one then failed), which show this analysis's path but lack their
/// companion.
#[derive(Debug)]
pub struct TraceFailure {
    /// Why the traces were not written.
    pub error: TraceError,
    /// The outputs published before the failure.
    pub written: Vec<PathBuf>,
}

impl fmt::Display for TraceFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for TraceFailure {}

/// Why a pass over the merged trace stopped: the trace ([`TraceError::Invalid`] or
/// [`TraceError::Read`]), or the output being written (only [`Emit`] writes).
enum Stop {
    Trace(TraceError),
    Write(io::Error),
}

/// Writes `CPM_static.json` and `CPM_observed.json` into `dir` from the trace `merged`, or
/// neither when a path task has no Worker View bar, the trace does not parse, or it names in
/// its `metadata` another run than `records_run`, the run of the analysed records. When the
/// trace cannot be read or an output cannot be written, the failure also lists what was
/// already published ([`TraceFailure::written`]), for the caller to remove or keep.
pub fn write_cpm_traces(
    merged: &Path,
    records_run: Option<&str>,
    dir: &Path,
    static_path: &[u64],
    observed_path: &[u64],
    made_from: &Provenance,
) -> Result<[PathBuf; 2], TraceFailure> {
    let failure = |error: TraceError| TraceFailure {
        error,
        written: Vec::new(),
    };
    let static_ids: FxHashSet<u64> = static_path.iter().copied().collect();
    let observed_ids: FxHashSet<u64> = observed_path.iter().copied().collect();
    let mut visible = FxHashSet::default();
    let mut scan = Scan {
        on_event: |event: &RawValue| {
            if let Some(id) = worker_task(event) {
                if static_ids.contains(&id) || observed_ids.contains(&id) {
                    visible.insert(id);
                }
            }
        },
        run_id: None,
    };
    read_top(merged, &mut scan).map_err(|stop| {
        failure(match stop {
            Stop::Trace(e) => e,
            // The checking pass writes nothing; were a write to stop it, it would be the
            // trace's reading that failed.
            Stop::Write(source) => TraceError::Read {
                path: merged.to_path_buf(),
                source,
            },
        })
    })?;
    if let (Some(trace_run), Some(records_run)) = (scan.run_id, records_run) {
        if trace_run != records_run {
            return Err(failure(TraceError::OtherRun {
                trace_run,
                records_run: records_run.to_owned(),
            }));
        }
    }
    let mut missing: Vec<u64> = static_ids
        .union(&observed_ids)
        .filter(|id| !visible.contains(id))
        .copied()
        .collect();
    if !missing.is_empty() {
        missing.sort_unstable();
        let count = missing.len();
        missing.truncate(MISSING_SHOWN);
        return Err(failure(TraceError::Missing {
            count,
            sample: missing,
        }));
    }
    let mut written = Vec::with_capacity(2);
    for (name, ids) in [(STATIC_TRACE, &static_ids), (OBSERVED_TRACE, &observed_ids)] {
        let dest = dir.join(name);
        // The trace's own failure, kept apart from the output's (which `publish` reports).
        let mut trace_failure = None;
        // Held until the publication ends: no run claims the folder meanwhile.
        let published = made_from.hold(&dest).and_then(|_hold| {
            let options = simpler_artifacts::publish::Options::default().chosen_name();
            simpler_artifacts::publish::publish_with(&dest, options, |out| {
                let mut writer = TraceOut::new(out);
                match stream_into(merged, &mut writer, ids) {
                    Ok(()) => Ok(()),
                    Err(Stop::Write(e)) => Err(e),
                    Err(Stop::Trace(e)) => {
                        trace_failure = Some(e);
                        Err(io::Error::other("the merged trace could not be copied"))
                    }
                }
            })
        });
        let error = match (trace_failure, published) {
            (Some(e), _) => e,
            (None, Err(e)) => TraceError::Publish(e),
            (None, Ok(_)) => {
                written.push(dest);
                continue;
            }
        };
        return Err(TraceFailure { error, written });
    }
    Ok([written[0].clone(), written[1].clone()])
}

/// The task id of a Worker View `X` event with `args.taskId`, else `None`.
fn worker_task(event: &RawValue) -> Option<u64> {
    #[derive(Deserialize)]
    struct Probe {
        ph: Option<String>,
        pid: Option<serde_json::Value>,
        args: Option<ProbeArgs>,
    }
    #[derive(Deserialize)]
    struct ProbeArgs {
        #[serde(rename = "taskId")]
        task_id: Option<serde_json::Value>,
    }
    let probe: Probe = serde_json::from_str(event.get()).ok()?;
    if probe.ph.as_deref() != Some("X") || probe.pid?.as_u64()? != WORKER_VIEW_PID {
        return None;
    }
    match probe.args?.task_id? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The trace, written as `{ "<key>": <value>, ..., "traceEvents": [ <event>, ... ] }`.
struct TraceOut<'w, W: Write> {
    out: &'w mut W,
    keys: usize,
    events: usize,
}

impl<'w, W: Write> TraceOut<'w, W> {
    fn new(out: &'w mut W) -> Self {
        Self {
            out,
            keys: 0,
            events: 0,
        }
    }
}

/// Streams `merged` and writes it, renaming the Worker View bars not in `keep`.
fn stream_into<W: Write>(merged: &Path, w: &mut TraceOut<'_, W>, keep: &FxHashSet<u64>) -> Result<(), Stop> {
    let top_is_array = {
        let mut emit = Emit { w: &mut *w, keep };
        read_top(merged, &mut emit)?
    };
    if top_is_array {
        w.out.write_all(b"\n]\n").map_err(Stop::Write)?;
    } else {
        w.out.write_all(b"\n}\n").map_err(Stop::Write)?;
    }
    Ok(())
}

/// Writes what the reader hands over.
struct Emit<'a, 'w, W: Write> {
    w: &'a mut TraceOut<'w, W>,
    keep: &'a FxHashSet<u64>,
}

/// Receives the pieces of a trace in file order.
trait TopSink {
    /// A top-level key other than `traceEvents`, with its value.
    fn key(&mut self, key: &str, value: &RawValue) -> io::Result<()>;
    /// `traceEvents` opens (or the top level is an array).
    fn open_events(&mut self, top_is_array: bool) -> io::Result<()>;
    /// One event.
    fn event(&mut self, event: &RawValue) -> Result<(), Stop>;
    /// `traceEvents` closes.
    fn close_events(&mut self, top_is_array: bool) -> io::Result<()>;
}

impl<W: Write> TopSink for Emit<'_, '_, W> {
    fn key(&mut self, key: &str, value: &RawValue) -> io::Result<()> {
        let sep = if self.w.keys == 0 { "{\n" } else { ",\n" };
        self.w.keys += 1;
        write!(self.w.out, "{sep}  {}: {}", quote(key), value.get())
    }

    fn open_events(&mut self, top_is_array: bool) -> io::Result<()> {
        if top_is_array {
            self.w.out.write_all(b"[")
        } else {
            let sep = if self.w.keys == 0 { "{\n" } else { ",\n" };
            self.w.keys += 1;
            write!(self.w.out, "{sep}  \"traceEvents\": [")
        }
    }

    fn event(&mut self, event: &RawValue) -> Result<(), Stop> {
        let sep: &[u8] = if self.w.events == 0 { b"\n    " } else { b",\n    " };
        self.w.events += 1;
        self.w.out.write_all(sep).map_err(Stop::Write)?;
        match worker_task(event) {
            Some(id) if !self.keep.contains(&id) => {
                let renamed = rename(event, &format!("\u{b7}({})", task_display(id))).map_err(Stop::Trace)?;
                self.w.out.write_all(renamed.as_bytes()).map_err(Stop::Write)
            }
            _ => self.w.out.write_all(event.get().as_bytes()).map_err(Stop::Write),
        }
    }

    fn close_events(&mut self, top_is_array: bool) -> io::Result<()> {
        if top_is_array {
            Ok(())
        } else {
            self.w.out.write_all(b"\n  ]")
        }
    }
}

/// Writes nothing; calls its function per event and keeps the run id the trace names in its
/// top-level `metadata` (the checking pass).
struct Scan<F> {
    on_event: F,
    run_id: Option<String>,
}

impl<F: FnMut(&RawValue)> TopSink for Scan<F> {
    fn key(&mut self, key: &str, value: &RawValue) -> io::Result<()> {
        if key == "metadata" {
            #[derive(Deserialize)]
            struct Metadata {
                simpler_run_id: Option<String>,
            }
            self.run_id = serde_json::from_str::<Metadata>(value.get())
                .ok()
                .and_then(|m| m.simpler_run_id);
        }
        Ok(())
    }
    fn open_events(&mut self, _: bool) -> io::Result<()> {
        Ok(())
    }
    fn event(&mut self, event: &RawValue) -> Result<(), Stop> {
        (self.on_event)(event);
        Ok(())
    }
    fn close_events(&mut self, _: bool) -> io::Result<()> {
        Ok(())
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// `event` with its `name` set to `name` (appended if it had none), keys in their order.
fn rename(event: &RawValue, name: &str) -> Result<String, TraceError> {
    struct Ordered(Vec<(String, Box<RawValue>)>);
    impl<'de> Deserialize<'de> for Ordered {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Ordered;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a trace event object")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                    let mut entries = Vec::new();
                    while let Some(entry) = map.next_entry::<String, Box<RawValue>>()? {
                        entries.push(entry);
                    }
                    Ok(Ordered(entries))
                }
            }
            d.deserialize_map(V)
        }
    }
    let Ordered(mut entries) = serde_json::from_str(event.get())
        .map_err(|e| TraceError::Invalid(format!("a Worker View event: {e}")))?;
    let value = RawValue::from_string(quote(name)).expect("a quoted string is JSON");
    match entries.iter_mut().find(|(k, _)| k == "name") {
        Some(entry) => entry.1 = value,
        None => entries.push(("name".to_owned(), value)),
    }
    let mut out = String::from("{");
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&quote(k));
        out.push(':');
        out.push_str(v.get());
    }
    out.push('}');
    Ok(out)
}

/// Reads the trace at `path` into `sink`; returns true if its top level is an array of events.
/// A file that cannot be opened or read is [`TraceError::Read`]; one that is not a trace,
/// [`TraceError::Invalid`].
fn read_top<S: TopSink>(path: &Path, sink: &mut S) -> Result<bool, Stop> {
    let unreadable = |source: io::Error| {
        Stop::Trace(TraceError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    let file = simpler_artifacts::input::open_regular(path).map_err(unreadable)?;
    let mut de = serde_json::Deserializer::from_reader(BufReader::with_capacity(1 << 20, file));
    let mut failure = None;
    let result = Top {
        sink,
        failure: &mut failure,
    }
    .deserialize(&mut de)
    .and_then(|is_array| de.end().map(|()| is_array));
    match (result, failure) {
        (_, Some(e)) => Err(e),
        (Ok(is_array), None) => Ok(is_array),
        (Err(e), None) if e.is_io() => Err(unreadable(e.into())),
        (Err(e), None) => Err(Stop::Trace(TraceError::Invalid(format!(
            "{}: {e}",
            path.display()
        )))),
    }
}

/// The top level: an object holding `traceEvents`, or a bare array of events.
struct Top<'a, S> {
    sink: &'a mut S,
    failure: &'a mut Option<Stop>,
}

/// Records a sink failure and turns it into a deserializer error that stops the parse.
fn fail<E: de::Error>(slot: &mut Option<Stop>, e: Stop) -> E {
    *slot = Some(e);
    E::custom("the pass over the trace stopped")
}

impl<'de, S: TopSink> DeserializeSeed<'de> for Top<'_, S> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: TopSink> Visitor<'de> for Top<'_, S> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace: an object with a traceEvents list, or a list of events")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut has_events = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "traceEvents" {
                has_events = true;
                self.sink
                    .open_events(false)
                    .map_err(|e| fail(self.failure, Stop::Write(e)))?;
                map.next_value_seed(Events {
                    sink: &mut *self.sink,
                    failure: &mut *self.failure,
                })?;
                self.sink
                    .close_events(false)
                    .map_err(|e| fail(self.failure, Stop::Write(e)))?;
            } else {
                let value: Box<RawValue> = map.next_value()?;
                self.sink
                    .key(&key, &value)
                    .map_err(|e| fail(self.failure, Stop::Write(e)))?;
            }
        }
        if !has_events {
            return Err(de::Error::custom(
                "merged swimlane JSON must contain a traceEvents list",
            ));
        }
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        self.sink
            .open_events(true)
            .map_err(|e| fail(self.failure, Stop::Write(e)))?;
        Events {
            sink: &mut *self.sink,
            failure: &mut *self.failure,
        }
        .visit_seq(seq)?;
        self.sink
            .close_events(true)
            .map_err(|e| fail(self.failure, Stop::Write(e)))?;
        Ok(true)
    }
}

/// The `traceEvents` list; each element must be an object.
struct Events<'a, S> {
    sink: &'a mut S,
    failure: &'a mut Option<Stop>,
}

impl<'de, S: TopSink> DeserializeSeed<'de> for Events<'_, S> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, S: TopSink> Visitor<'de> for Events<'_, S> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a traceEvents list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        while let Some(event) = seq.next_element::<Box<RawValue>>()? {
            if !event.get().trim_start().starts_with('{') {
                return Err(de::Error::custom(format!(
                    "merged swimlane JSON must contain a traceEvents list of objects (traceEvents[{index}] is not one)"
                )));
            }
            self.sink.event(&event).map_err(|e| fail(self.failure, e))?;
            index += 1;
        }
        Ok(())
    }
}
