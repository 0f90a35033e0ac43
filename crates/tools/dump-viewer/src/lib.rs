//! `simpler dump-viewer`: finds, shows, exports and compares the task arguments an args dump
//! captured (`args_dump/args_dump.json` + `args.bin`, ours or the original's; see
//! `docs/args-dump.md`).
//!
//! - Listing: `idx task_id stage role arg dtype shape bytes`, filtered by `--task`, `--stage`,
//!   `--role`, `--arg` (they combine); `--index N` picks entry N of the unfiltered list.
//! - Values ([`values`]): head and tail of a large tensor, or one element (`--element`).
//! - Export ([`export`]): matched entries as `.npy` (NumPy loads them) or raw bytes, replacing
//!   the folder's earlier export as a whole; one that fails part-way removes what it wrote.
//! - Compare ([`compare`]): BEFORE vs AFTER of an inout (`--diff`), the same entries of another
//!   run's dump (`--diff-with`), or every element against a value (`--expect`); each reports
//!   how many elements differ and the first one.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub use simpler_artifacts::args_dump::Number;
use simpler_artifacts::args_dump::{self, ArgEntry, ArgsDump};
use simpler_artifacts::manifest;
use simpler_artifacts::provenance::Provenance;

/// The crate's error type.
pub mod error;

pub use error::{Error, ErrorKind};

/// `simpler dump-viewer`: list, show, export (.npy, raw) and diff captured task arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// The dump folder (holding args_dump.json) or a run folder holding args_dump/
    /// [default: the args_dump/ of the newest run under ./outputs/ (the folder of the newest
    /// run.json); an error if it has none].
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Only this task (hex id, e.g. 0x0000000100000002).
    #[arg(short = 't', long)]
    pub task: Option<String>,
    /// Only this stage: before or after.
    #[arg(short = 's', long)]
    pub stage: Option<String>,
    /// Only this role: input, output or inout.
    #[arg(short = 'r', long)]
    pub role: Option<String>,
    /// Only this argument index.
    #[arg(short = 'a', long)]
    pub arg: Option<u32>,
    /// Entry N of the unfiltered list (replaces the filters).
    #[arg(short = 'i', long)]
    pub index: Option<usize>,
    /// Export the matched entries (see --format, --out).
    #[arg(short = 'e', long)]
    pub export: bool,
    /// Export format: npy (NumPy, the default) or raw (the payload bytes as captured).
    #[arg(long, default_value = "npy")]
    pub format: String,
    /// Export folder [default: DIR/export].
    #[arg(long, value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// Print the values of every matched entry (head and tail of large tensors).
    #[arg(long)]
    pub values: bool,
    /// Print one element of every matched entry: a flat index or one index per dimension
    /// (`3,5`).
    #[arg(long, value_name = "INDEX")]
    pub element: Option<String>,
    /// Compare BEFORE with AFTER of every matched inout argument.
    #[arg(long)]
    pub diff: bool,
    /// Compare the matched entries with the same entries (task, stage, arg, role) of another
    /// dump.
    #[arg(long, value_name = "OTHER_DIR")]
    pub diff_with: Option<PathBuf>,
    /// Compare every element of the matched tensors, and the value of the matched scalars, with
    /// this value (an integer is compared exactly with integer dtypes).
    #[arg(long, value_name = "VALUE", allow_negative_numbers = true, value_parser = expected_value)]
    pub expect: Option<Number>,
    /// Absolute tolerance of the comparisons (a number ≥ 0).
    #[arg(long, default_value_t = 0.0, value_parser = tolerance)]
    pub atol: f64,
}

/// `--expect`'s value: a number ([`Number`]'s text). One written finite that f64 cannot hold
/// (`1e400`) is refused: it was compared as `inf` without a word (found by a review). `inf`,
/// `infinity` and `nan` spelled out are taken as written.
fn expected_value(s: &str) -> Result<Number, String> {
    let v: Number = s.parse()?;
    if let Number::Float(f) = v {
        not_past_f64(s, f)?;
    }
    Ok(v)
}

/// The refusal of `s`, which parsed as `f`, when it is written as a finite number that an f64
/// cannot hold (`1e400` parses as `inf`); `inf` (or `infinity`) spelled out passes.
fn not_past_f64(s: &str, f: f64) -> Result<(), String> {
    let t = s.trim().trim_start_matches(['+', '-']).to_ascii_lowercase();
    if f.is_infinite() && t != "inf" && t != "infinity" {
        return Err(format!(
            "{s:?} is beyond the largest finite value an f64 holds ({:e}); write inf (or -inf) for an infinite one",
            f64::MAX
        ));
    }
    Ok(())
}

/// `--atol`'s value: a finite or infinite number ≥ 0 (NaN compared every difference as equal);
/// a finite one past f64 (`1e400`) is refused as [`expected_value`] refuses it (it became `inf`
/// without a word, found by a review).
fn tolerance(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v >= 0.0 => not_past_f64(s, v).map(|()| v),
        Ok(_) => Err("a tolerance is a number ≥ 0".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Finds the dump folder: `dir` itself, `dir/args_dump`, or the newest run's `args_dump` under
/// `./outputs/` ([`locate_under`]).
pub fn locate(dir: Option<&Path>) -> Result<PathBuf, Error> {
    if let Some(d) = dir {
        // The dump's own file names its folder (`args_dump/args_dump.json`).
        if d.file_name().is_some_and(|n| n == args_dump::JSON_FILE) && d.is_file() {
            return Ok(d.parent().unwrap_or(Path::new(".")).to_path_buf());
        }
        if d.join(args_dump::JSON_FILE).is_file() {
            return Ok(d.to_path_buf());
        }
        let sub = d.join(args_dump::DIR);
        if sub.join(args_dump::JSON_FILE).is_file() {
            return Ok(sub);
        }
        // What the run's manifest says became of its dump (found by a review: a dump that
        // failed was met with "run with --dump-args").
        let why = simpler_artifacts::manifest::why_missing(d, "args_dump");
        return Err(ErrorKind::NoDump(d.to_path_buf(), why).into());
    }
    locate_under(Path::new("outputs"))
}

/// The dump folder of the newest run under `root` (the folder of the newest run.json;
/// `simpler_artifacts::find::newest_run_artifact`): [`ErrorKind::NotInNewestRun`] when that
/// run has none, which says why and names the newest other dump, never read in its place.
/// Without any run.json under `root`, the newest `args_dump/args_dump.json` anywhere under it.
pub fn locate_under(root: &Path) -> Result<PathBuf, Error> {
    let rel = format!("{}/{}", args_dump::DIR, args_dump::JSON_FILE);
    let json = simpler_artifacts::find::newest_run_artifact(root, &[&rel], "args_dump")?
        .ok_or_else(|| ErrorKind::NoneUnder(root.to_path_buf()))?;
    Ok(json.parent().unwrap_or(root).to_path_buf())
}

/// Reads a dump folder.
pub fn open(dir: &Path) -> Result<ArgsDump, Error> {
    args_dump::read_dir(dir).map_err(|e| ErrorKind::Read(e).into())
}

/// Reads a dump folder and warns on standard error, after `side` (`""` for the dump the command
/// is about, `"the other dump: "` for `--diff-with`'s), of the top-level counts that disagree
/// with its entries and of what its run's manifest says against it (not its run's, or from a run
/// that did not complete: `simpler_artifacts::manifest::check`).
fn open_checked(dir: &Path, side: &str) -> Result<ArgsDump, Error> {
    let dump = open(dir)?;
    for w in dump.count_mismatches() {
        simpler_artifacts::errln!("warning: {side}{w}");
    }
    if let Some(w) = manifest::check(&dump.dir.join(args_dump::JSON_FILE)) {
        simpler_artifacts::errln!("warning: {side}{w}");
    }
    Ok(dump)
}

/// What the run manifest beside `dump` says of the run that wrote it, when it lists the dump (or
/// is still `running`): how that run stopped when it did not complete
/// (`its run <id> stopped on fatal 2 HEAP_RING_DEADLOCK`), and the `partial` reason it gives
/// the dump.
fn run_says(dump: &ArgsDump) -> (Option<String>, Option<String>) {
    let json = dump.dir.join(args_dump::JSON_FILE);
    let Some(governing) = manifest::find_for(&json) else {
        return (None, None);
    };
    let Ok(m) = manifest::RunManifest::read(&governing.manifest) else {
        return (None, None);
    };
    let found = m.find(&governing.name);
    if found.is_none() && m.status != manifest::RunStatus::Running {
        // Not this run's file (left over): what the run says is not about it.
        return (None, None);
    }
    let id = &m.run_id;
    let stop = match (m.status, &m.fatal) {
        (manifest::RunStatus::Completed, _) => None,
        (manifest::RunStatus::Running, _) => Some(format!(
            "its run {id} did not finish (it is still running, or its process died)"
        )),
        (s, Some(f)) => Some(format!(
            "its run {id} stopped on {} {} {}",
            s.as_str(),
            f.code,
            f.name
        )),
        (manifest::RunStatus::Timeout, None) => Some(format!("its run {id} timed out")),
        (manifest::RunStatus::Interrupted, None) => Some(format!("its run {id} was interrupted")),
        (s, None) => Some(format!("its run {id} stopped: {}", s.as_str())),
    };
    let partial = found
        .and_then(|(_, d)| d)
        .filter(|d| d.outcome == manifest::Outcome::Partial)
        .and_then(|d| d.reason.clone());
    (stop, partial)
}

/// Why `dump` stopped short (`"before every selected task was captured"`,
/// `"before any task was dumped"`) by its `complete: false` and its run's manifest.
fn stopped_short(dump: &ArgsDump, before: &str) -> String {
    match run_says(dump) {
        (Some(stop), _) => format!("{stop} {before} (args_dump.json says complete: false)"),
        (None, Some(reason)) => format!("args_dump.json says complete: false; run.json says: {reason}"),
        (None, None) => {
            format!("args_dump.json says complete: false: the run that wrote it stopped {before}")
        }
    }
}

/// Why `dump` does not hold every argument its run selected: the records and bytes it counts as
/// lost, or its `complete: false` with how its run stopped (by the run's manifest); `None` when
/// it says it is complete (or, as the original's files, says nothing).
pub fn incompleteness(dump: &ArgsDump) -> Option<String> {
    let m = &dump.manifest;
    if m.dropped_records > 0 || m.truncated_args > 0 || m.dropped_overwrite > 0 {
        return Some(format!(
            "{} records dropped ({} bytes), {} payloads truncated ({} bytes), {} overwritten",
            m.dropped_records, m.dropped_bytes, m.truncated_args, m.truncated_bytes, m.dropped_overwrite
        ));
    }
    (m.complete == Some(false)).then(|| stopped_short(dump, "before every selected task was captured"))
}

/// Why `dump` holds no entry at all: every record dropped, its run stopped before any task was
/// dumped, or no task selected an argument (level 1).
fn why_empty(dump: &ArgsDump) -> String {
    let m = &dump.manifest;
    if m.dropped_records > 0 {
        format!(
            "all {} of its records were dropped ({} payload bytes; args_dump.json counts them)",
            m.dropped_records, m.dropped_bytes
        )
    } else if m.complete == Some(false) {
        stopped_short(dump, "before any task was dumped")
    } else if m.dump_args_level == 1 {
        "at level 1 only the arguments a task selects are dumped, and no task of the run selected any".into()
    } else {
        "the run that wrote it captured no argument (it ran no task with a kernel)".into()
    }
}

/// The entries `args` selects (indices into the manifest's list).
pub fn select(dump: &ArgsDump, args: &Args) -> Result<Vec<usize>, Error> {
    let all = &dump.manifest.args;
    if all.is_empty() {
        return Err(ErrorKind::Empty {
            file: dump.dir.join(args_dump::JSON_FILE),
            why: why_empty(dump),
        }
        .into());
    }
    if let Some(i) = args.index {
        if i >= all.len() {
            return Err(ErrorKind::IndexOutOfRange {
                index: i,
                len: all.len(),
            }
            .into());
        }
        return Ok(vec![i]);
    }
    let task = match &args.task {
        Some(t) => {
            let id = args_dump::parse_task_id(t).ok_or_else(|| ErrorKind::BadValue {
                flag: "--task",
                value: t.clone(),
                expected: "a hex task id such as 0x0000000100000002",
            })?;
            if !all.iter().any(|e| e.task_number() == Some(id)) {
                let mut valid: Vec<String> = all.iter().map(|e| e.task_id.clone()).collect();
                valid.dedup();
                valid.truncate(5);
                return Err(ErrorKind::UnknownTask {
                    task: t.clone(),
                    valid,
                }
                .into());
            }
            Some(id)
        }
        None => None,
    };
    let stage = match args.stage.as_deref() {
        None => None,
        Some("before" | "before_dispatch") => Some("before_dispatch"),
        Some("after" | "after_completion") => Some("after_completion"),
        Some(v) => {
            return Err(ErrorKind::BadValue {
                flag: "--stage",
                value: v.into(),
                expected: "before or after",
            }
            .into())
        }
    };
    if let Some(r) = args.role.as_deref() {
        if !["input", "output", "inout"].contains(&r) {
            return Err(ErrorKind::BadValue {
                flag: "--role",
                value: r.into(),
                expected: "input, output or inout",
            }
            .into());
        }
    }
    let hits: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(_, e)| task.is_none_or(|t| e.task_number() == Some(t)))
        .filter(|(_, e)| stage.is_none_or(|s| e.stage == s))
        .filter(|(_, e)| args.role.as_deref().is_none_or(|r| e.role == r))
        .filter(|(_, e)| args.arg.is_none_or(|a| e.arg_index == a))
        .map(|(i, _)| i)
        .collect();
    if hits.is_empty() {
        return Err(ErrorKind::NoMatch.into());
    }
    Ok(hits)
}

fn shape_text(e: &ArgEntry) -> String {
    format!(
        "[{}]",
        e.shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
    )
}

fn short_stage(e: &ArgEntry) -> &str {
    match e.stage.as_str() {
        "before_dispatch" => "before",
        "after_completion" => "after",
        s => s,
    }
}

/// How a comparison names entry `e` under `label` (its stage, or `inout` for a before/after
/// pair): `after task 0x… output arg 2`.
fn entry_head(label: &str, e: &ArgEntry) -> String {
    format!("{label} task {} {} arg {}", e.task_id, e.role, e.arg_index)
}

/// Writes the listing of `hits` (with the `Filtered:` line when they are not every entry).
pub fn list(dump: &ArgsDump, hits: &[usize], out: &mut impl Write) -> io::Result<()> {
    let all = &dump.manifest.args;
    if hits.len() != all.len() {
        writeln!(out, "Filtered: {}/{} args", hits.len(), all.len())?;
    }
    writeln!(
        out,
        "{:>5}  {:<18}  {:<6}  {:<6}  {:>3}  {:<8}  {:<16}  {:>10}",
        "idx", "task_id", "stage", "role", "arg", "dtype", "shape", "bytes"
    )?;
    writeln!(out, "{}", "-".repeat(100))?;
    for &i in hits {
        let e = &all[i];
        writeln!(
            out,
            "{:>5}  {:<18}  {:<6}  {:<6}  {:>3}  {:<8}  {:<16}  {:>10}",
            i,
            e.task_id,
            short_stage(e),
            e.role,
            e.arg_index,
            e.dtype,
            shape_text(e),
            e.bin_size
        )?;
    }
    let m = &dump.manifest;
    if m.dropped_records > 0 || m.truncated_args > 0 || m.dropped_overwrite > 0 {
        writeln!(
            out,
            "WARNING: the dump is incomplete: {} records dropped ({} bytes), {} payloads truncated ({} bytes), {} overwritten",
            m.dropped_records, m.dropped_bytes, m.truncated_args, m.truncated_bytes, m.dropped_overwrite
        )?;
    } else if m.complete == Some(false) {
        writeln!(
            out,
            "WARNING: the dump is incomplete: args_dump.json says complete: false (the run that wrote it \
             stopped before every selected task was captured)"
        )?;
    }
    Ok(())
}

/// The elements of an entry's payload as f64 (`None` for an unknown dtype).
pub fn decode(dump: &ArgsDump, e: &ArgEntry) -> Result<Option<Vec<f64>>, Error> {
    if !args_dump::decodes(&e.dtype) {
        return Ok(None);
    }
    let bytes = dump.payload(e).map_err(ErrorKind::Read)?;
    let Some(size) = args_dump::dtype_size(&e.dtype) else {
        return Ok(None);
    };
    Ok(Some(
        (0..bytes.len() / size)
            .map(|k| args_dump::element(&e.dtype, &bytes, k).unwrap_or(f64::NAN))
            .collect(),
    ))
}

/// The row-major multi-index of flat element `k` of `shape`.
pub fn unravel(shape: &[u64], mut k: u64) -> Vec<u64> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1);
        idx[d] = k % n;
        k /= n;
    }
    idx
}

fn parse_element(spec: &str, shape: &[u64]) -> Result<u64, Error> {
    let bad = || ErrorKind::BadValue {
        flag: "--element",
        value: spec.into(),
        expected: "a flat index or one index per dimension (e.g. 3,5)",
    };
    let parts: Vec<u64> = spec
        .split(',')
        .map(|p| p.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad())?;
    if parts.len() == 1 {
        return Ok(parts[0]);
    }
    if parts.len() != shape.len() || parts.iter().zip(shape).any(|(i, n)| i >= n) {
        return Err(bad().into());
    }
    parts
        .iter()
        .zip(shape)
        .try_fold(0u64, |acc, (i, n)| acc.checked_mul(*n)?.checked_add(*i))
        .ok_or_else(|| bad().into())
}

fn fmt_value(dtype: &str, v: f64) -> String {
    match dtype {
        "FLOAT32" => format!("{}", v as f32),
        "FLOAT16" | "BFLOAT16" => format!("{v:.4}"),
        _ => format!("{v}"),
    }
}

/// Elements shown at each end of a large tensor.
pub const HEAD_TAIL: usize = 8;

/// Writes the values of entry `i`: its header, then every element (≤ 2·`HEAD_TAIL` (8)),
/// the head and tail, or the one element `element` names.
pub fn values(dump: &ArgsDump, i: usize, element: Option<&str>, out: &mut impl Write) -> Result<(), Error> {
    let e = &dump.manifest.args[i];
    let w = |r: io::Result<()>| r.map_err(|e| Error::from(ErrorKind::Output(e)));
    w(writeln!(
        out,
        "[{i}] task {} {} {} arg {} {} shape {}{}",
        e.task_id,
        short_stage(e),
        e.role,
        e.arg_index,
        e.dtype,
        shape_text(e),
        if e.truncated {
            " (TRUNCATED: only the first bytes were kept)"
        } else {
            ""
        }
    ))?;
    if e.overwritten {
        return w(writeln!(out, "  DATA OVERWRITTEN (host too slow)"));
    }
    if e.is_scalar() {
        let v = e
            .value
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_else(|| "null".into());
        return w(writeln!(out, "  value: {v}"));
    }
    let Some(size) = args_dump::dtype_size(&e.dtype).filter(|_| args_dump::decodes(&e.dtype)) else {
        return bytes(dump, e, element, out);
    };
    // Only the elements shown are read (found by a review: one element of a 2 GB payload
    // took three times the payload in memory).
    let n = dump.payload_len(e) / size as u64;
    let read = |first: u64, count: u64| -> Result<Vec<f64>, Error> {
        let b = dump
            .payload_range(e, first * size as u64, count * size as u64)
            .map_err(ErrorKind::Read)?;
        Ok((0..b.len() / size)
            .map(|k| args_dump::element(&e.dtype, &b, k).unwrap_or(f64::NAN))
            .collect())
    };
    if n == 0 {
        // Read all the same: an entry past the end of the file is said as such.
        read(0, 0)?;
        return w(writeln!(out, "  (no data)"));
    }
    if let Some(spec) = element {
        let k = parse_element(spec, &e.shape)?;
        if k >= n {
            read(0, 0)?;
            return Err(ErrorKind::ElementOutOfRange { element: k, len: n }.into());
        }
        let v = read(k, 1)?[0];
        return w(writeln!(
            out,
            "  element {:?} (flat {k}) = {}",
            unravel(&e.shape, k),
            fmt_value(&e.dtype, v)
        ));
    }
    let show = |vals: Vec<f64>| {
        vals.iter()
            .map(|v| fmt_value(&e.dtype, *v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ends = HEAD_TAIL as u64;
    if n <= 2 * ends {
        w(writeln!(out, "  [{}]", show(read(0, n)?)))
    } else {
        w(writeln!(
            out,
            "  [{}, ... {} more ..., {}]",
            show(read(0, ends)?),
            n - 2 * ends,
            show(read(n - ends, ends)?)
        ))
    }
}

/// The values of an entry whose dtype does not decode (unknown, or the original's FP8/FP4):
/// its payload bytes in hex, as the original's viewer shows them; `element` picks one element's
/// bytes when the dtype's size is known.
fn bytes(dump: &ArgsDump, e: &ArgEntry, element: Option<&str>, out: &mut impl Write) -> Result<(), Error> {
    let w = |r: io::Result<()>| r.map_err(|e| Error::from(ErrorKind::Output(e)));
    // Only the bytes shown are read, as for decoded values.
    let read = |start: u64, len: u64| dump.payload_range(e, start, len).map_err(ErrorKind::Read);
    let total = dump.payload_len(e);
    if total == 0 {
        return w(writeln!(out, "  (no data)"));
    }
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ");
    if let Some(spec) = element {
        let Some(size) = args_dump::dtype_size(&e.dtype) else {
            return Err(ErrorKind::Undecodable {
                dtype: e.dtype.clone(),
                what: "--element",
            }
            .into());
        };
        let k = parse_element(spec, &e.shape)?;
        let len = total / size as u64;
        if k >= len {
            // Read all the same: an entry past the end of the file is said as such.
            read(0, 0)?;
            return Err(ErrorKind::ElementOutOfRange { element: k, len }.into());
        }
        return w(writeln!(
            out,
            "  element {:?} (flat {k}) = bytes {}",
            unravel(&e.shape, k),
            hex(&read(k * size as u64, size as u64)?)
        ));
    }
    let note = format!("(dtype {} is not decoded: bytes in hex)", e.dtype);
    let ends = HEAD_TAIL as u64;
    if total <= 2 * ends {
        w(writeln!(out, "  {note} [{}]", hex(&read(0, total)?)))
    } else {
        w(writeln!(
            out,
            "  {note} [{}, ... {} more bytes ..., {}]",
            hex(&read(0, ends)?),
            total - 2 * ends,
            hex(&read(total - ends, ends)?)
        ))
    }
}

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// NumPy `.npy` (bf16 converted to f32; dtypes NumPy lacks as raw `u1` bytes).
    Npy,
    /// The payload bytes as captured (`.bin`).
    Raw,
}

/// The export file name of an entry: `task_<0x id>_<before|after>_<in|out|inout><arg>.<ext>`,
/// built only from parsed values (a manifest's strings never become part of a path); `None`
/// for an entry whose task id, stage or role is not one the format has.
pub fn export_name(e: &ArgEntry, format: Format) -> Option<String> {
    let task = e.task_number()?;
    let role = match e.role.as_str() {
        "input" => "in",
        "output" => "out",
        "inout" => "inout",
        _ => return None,
    };
    let stage = match e.stage.as_str() {
        "before_dispatch" => "before",
        "after_completion" => "after",
        _ => return None,
    };
    let ext = match format {
        Format::Npy => "npy",
        Format::Raw => "bin",
    };
    Some(format!("task_0x{task:016x}_{stage}_{role}{}.{ext}", e.arg_index))
}

pub use simpler_artifacts::args_dump::is_export_name;

/// What an export did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    /// The files written.
    pub written: Vec<PathBuf>,
    /// Files of an earlier export removed from the folder first.
    pub replaced: usize,
}

/// Exports entries `hits` into `out_dir`; returns the files written. See [`export_replacing`].
pub fn export(
    dump: &ArgsDump,
    hits: &[usize],
    format: Format,
    out_dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    export_replacing(dump, hits, format, out_dir).map(|e| e.written)
}

/// Removes the files of an earlier export from `out_dir` (those [`is_export_name`] names,
/// whatever dump they came from; nothing else): returns how many.
fn remove_earlier_export(out_dir: &Path) -> Result<usize, Error> {
    // A folder that is not there (or not a folder) holds no earlier export; writing into it
    // then says what is wrong with it.
    let Ok(entries) = std::fs::read_dir(out_dir) else {
        return Ok(0);
    };
    let mut earlier: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(is_export_name))
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .map(|e| e.path())
        .collect();
    earlier.sort();
    for (k, path) in earlier.iter().enumerate() {
        std::fs::remove_file(path).map_err(|error| ErrorKind::Replace {
            dir: out_dir.to_path_buf(),
            path: path.clone(),
            removed: k,
            error,
        })?;
    }
    Ok(earlier.len())
}

/// Exports entries `hits` into `out_dir`, replacing an earlier export there as a whole: the
/// files an export names ([`is_export_name`]) are removed before anything is written (they may
/// be another dump's), other files are left. Every entry is checked to have an export name
/// before anything is removed. When a file then fails, the files this export wrote are removed
/// and [`ErrorKind::ExportIncomplete`] says how many were written of how many, that the earlier
/// export's files are gone, and names any file that could not be removed; when nothing had
/// changed in the folder yet, the failure is returned as it is.
pub fn export_replacing(
    dump: &ArgsDump,
    hits: &[usize],
    format: Format,
    out_dir: &Path,
) -> Result<Exported, Error> {
    let mut names = Vec::with_capacity(hits.len());
    for &i in hits {
        let e = &dump.manifest.args[i];
        let Some(name) = export_name(e, format) else {
            return Err(ErrorKind::BadEntry {
                index: i,
                what: format!(
                    "task_id {:?}, stage {:?} or role {:?} is not one an export can name",
                    e.task_id, e.stage, e.role
                ),
            }
            .into());
        };
        names.push((i, name));
    }
    let replaced = remove_earlier_export(out_dir)?;
    let mut written = Vec::with_capacity(names.len());
    for (i, name) in &names {
        let path = out_dir.join(name);
        if let Err(cause) = export_one(dump, *i, format, &path) {
            if written.is_empty() && replaced == 0 {
                return Err(cause);
            }
            let left: Vec<PathBuf> = written
                .iter()
                .filter(|p: &&PathBuf| {
                    std::fs::remove_file(p).is_err() && std::fs::symlink_metadata(p).is_ok()
                })
                .cloned()
                .collect();
            return Err(ErrorKind::ExportIncomplete {
                dir: out_dir.to_path_buf(),
                written: written.len(),
                total: names.len(),
                replaced,
                left,
                cause: Box::new(cause),
            }
            .into());
        }
        written.push(path);
    }
    Ok(Exported { written, replaced })
}

/// Writes entry `i` of `dump` to `path` in `format`.
fn export_one(dump: &ArgsDump, i: usize, format: Format, path: &Path) -> Result<(), Error> {
    let e = &dump.manifest.args[i];
    let mut data = dump.payload(e).map_err(ErrorKind::Read)?;
    if e.is_scalar() {
        let raw = scalar_bits(e);
        let n = args_dump::dtype_size(&e.dtype).unwrap_or(8);
        data = raw.to_le_bytes()[..n].to_vec();
    }
    let publish = simpler_artifacts::publish::publish(path, |sink| match format {
        Format::Raw => sink.write_all(&data),
        Format::Npy => {
            let size = args_dump::dtype_size(&e.dtype).unwrap_or(1);
            let complete = !e.truncated && e.elements().checked_mul(size as u64) == Some(data.len() as u64);
            let mut shape: Vec<u64> = if e.is_scalar() {
                Vec::new()
            } else {
                e.shape.clone()
            };
            let (descr, bytes): (&str, Vec<u8>) = match (args_dump::npy_descr(&e.dtype), e.dtype.as_str()) {
                (Some(d), _) => (d, data.clone()),
                (None, "BFLOAT16") => (
                    "<f4",
                    data.chunks_exact(2)
                        .flat_map(|c| (u32::from(u16::from_le_bytes([c[0], c[1]])) << 16).to_le_bytes())
                        .collect(),
                ),
                (None, _) => ("|u1", data.clone()),
            };
            if !complete || descr == "|u1" && size != 1 {
                shape = vec![(bytes.len() / npy_item(descr)) as u64];
            }
            args_dump::write_npy(sink, descr, &shape, &bytes)
        }
    });
    publish.map_err(ErrorKind::Publish)?;
    Ok(())
}

fn npy_item(descr: &str) -> usize {
    descr[2..].parse().unwrap_or(1)
}

/// The bits a scalar exports as: its decoded value in its dtype's encoding (a FLOAT32 `"$Inf"`
/// is inf, `null` NaN), else the raw value as written (FLOAT16 / BFLOAT16 raw bits), else 0.
fn scalar_bits(e: &ArgEntry) -> u64 {
    match (e.dtype.as_str(), args_dump::scalar_number(e)) {
        ("FLOAT32", Ok(Some(x))) => u64::from((x.as_f64() as f32).to_bits()),
        (_, Ok(Some(Number::Int(i)))) => i as u64,
        _ => match &e.value {
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_i64().map(|x| x as u64))
                .or_else(|| v.as_bool().map(u64::from))
                .unwrap_or(0),
            None => 0,
        },
    }
}

/// How two value lists (or one and an expected value) compare.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Elements compared (the shorter list's length).
    pub compared: u64,
    /// Elements that differ by more than the tolerance.
    pub differing: u64,
    /// The first differing element: flat index, left value, right value.
    pub first: Option<(u64, Number, Number)>,
    /// Largest absolute difference.
    pub max_abs: f64,
    /// The lists have different lengths.
    pub length_mismatch: Option<(u64, u64)>,
}

/// The absolute difference of `x` and `y` when it is more than `atol` (`None`: equal within
/// the tolerance; NaN equals NaN, inf equals inf). Two integers are compared exactly.
fn difference(x: Number, y: Number, atol: f64) -> Option<f64> {
    if let (Number::Int(a), Number::Int(b)) = (x, y) {
        let d = a.abs_diff(b);
        return (d != 0 && d as f64 > atol).then_some(d as f64);
    }
    let (a, b) = (x.as_f64(), y.as_f64());
    let d = (a - b).abs();
    (!(a == b || (a.is_nan() && b.is_nan()) || d <= atol)).then_some(d)
}

/// Compares `la` elements `a(k)` with `lb` elements `b(k)`, the shorter length of them.
fn compare_by(
    la: usize,
    lb: usize,
    a: impl Fn(usize) -> Number,
    b: impl Fn(usize) -> Number,
    atol: f64,
) -> Comparison {
    let mut c = Comparison {
        compared: la.min(lb) as u64,
        differing: 0,
        first: None,
        max_abs: 0.0,
        length_mismatch: (la != lb).then_some((la as u64, lb as u64)),
    };
    for k in 0..la.min(lb) {
        let (x, y) = (a(k), b(k));
        if let Some(d) = difference(x, y, atol) {
            c.differing += 1;
            c.first.get_or_insert((k as u64, x, y));
            if d > c.max_abs || d.is_nan() {
                c.max_abs = d;
            }
        }
    }
    c
}

/// Compares `a` with `b` element by element (NaN equals NaN).
pub fn compare(a: &[f64], b: &[f64], atol: f64) -> Comparison {
    compare_by(
        a.len(),
        b.len(),
        |k| Number::Float(a[k]),
        |k| Number::Float(b[k]),
        atol,
    )
}

fn fmt_number(dtype: &str, x: Number) -> String {
    match x {
        Number::Int(i) => i.to_string(),
        Number::Float(f) => fmt_value(dtype, f),
    }
}

/// What one entry gives a comparison.
enum Data {
    /// Nothing to compare, and why (`no data (bin_size 0)`, `DATA OVERWRITTEN`, ...).
    Missing(&'static str),
    /// A scalar's decoded value.
    Scalar(Number),
    /// A tensor's kept payload.
    Tensor(Kept),
}

/// A tensor's kept payload.
struct Kept {
    dtype: String,
    bytes: Vec<u8>,
    /// Elements kept.
    len: usize,
    /// Elements of the argument.
    numel: u64,
    truncated: bool,
}

impl Kept {
    fn get(&self, k: usize) -> Number {
        args_dump::number(&self.dtype, &self.bytes, k).unwrap_or(Number::Float(f64::NAN))
    }
    /// `kept K of N elements (truncated)` when truncated.
    fn incomplete(&self) -> Option<String> {
        self.truncated
            .then(|| format!("kept {} of {} elements (truncated)", self.len, self.numel))
    }
}

/// The data of entry `i` (`e`) for a comparison: an entry without data says so; a dtype that
/// does not decode is [`ErrorKind::Undecodable`], a scalar value that is not one of its dtype
/// [`ErrorKind::BadEntry`].
fn data_of(dump: &ArgsDump, i: usize, e: &ArgEntry) -> Result<Data, Error> {
    if e.overwritten {
        return Ok(Data::Missing("DATA OVERWRITTEN (host too slow)"));
    }
    if e.is_scalar() {
        if !args_dump::decodes(&e.dtype) {
            return Err(ErrorKind::Undecodable {
                dtype: e.dtype.clone(),
                what: "a comparison",
            }
            .into());
        }
        return match args_dump::scalar_number(e) {
            Ok(Some(x)) => Ok(Data::Scalar(x)),
            Ok(None) => Ok(Data::Missing("no value")),
            Err(what) => Err(ErrorKind::BadEntry { index: i, what }.into()),
        };
    }
    if e.bin_size == 0 {
        return Ok(Data::Missing("no data (bin_size 0)"));
    }
    let size = match args_dump::dtype_size(&e.dtype) {
        Some(size) if args_dump::decodes(&e.dtype) => size,
        _ => {
            return Err(ErrorKind::Undecodable {
                dtype: e.dtype.clone(),
                what: "a comparison",
            }
            .into())
        }
    };
    let bytes = dump.payload(e).map_err(ErrorKind::Read)?;
    Ok(Data::Tensor(Kept {
        dtype: e.dtype.clone(),
        len: bytes.len() / size,
        bytes,
        numel: e.elements(),
        truncated: e.truncated,
    }))
}

/// How a comparison of two entries (or one and a value) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Compared and equal.
    Equal,
    /// Compared and different, incomplete (truncated), or of different kinds.
    Fails,
    /// Not compared: a side has no data.
    NotCompared,
}

/// Compares `a` with `b` and writes one line under `head`: `names` are how the report calls
/// each side, `where_` how it says which side has no data.
fn compare_data(
    head: &str,
    e: &ArgEntry,
    a: &Data,
    b: &Data,
    (names, where_): ((&str, &str), (&str, &str)),
    atol: f64,
    out: &mut impl Write,
) -> io::Result<Outcome> {
    let missing: Vec<String> = [(a, where_.0), (b, where_.1)]
        .iter()
        .filter_map(|(d, w)| match d {
            Data::Missing(why) => Some(format!("{why}{w}")),
            _ => None,
        })
        .collect();
    if !missing.is_empty() {
        writeln!(out, "{head}: {}; not compared", missing.join("; "))?;
        return Ok(Outcome::NotCompared);
    }
    match (a, b) {
        (Data::Scalar(x), Data::Scalar(y)) => {
            match difference(*x, *y, atol) {
                None => writeln!(out, "{head}: equal (scalar {})", fmt_number(&e.dtype, *x))?,
                Some(d) => {
                    writeln!(
                        out,
                        "{head}: DIFFERS: scalar {} {} vs {} {}; |diff| {d}",
                        names.0,
                        fmt_number(&e.dtype, *x),
                        names.1,
                        fmt_number(&e.dtype, *y)
                    )?;
                    return Ok(Outcome::Fails);
                }
            }
            Ok(Outcome::Equal)
        }
        (Data::Tensor(x), Data::Tensor(y)) => {
            let c = compare_by(x.len, y.len, |k| x.get(k), |k| y.get(k), atol);
            let cut: Vec<String> = [(x, names.0), (y, names.1)]
                .iter()
                .filter_map(|(t, n)| {
                    t.incomplete()
                        .map(|s| if n.is_empty() { s } else { format!("{n} {s}") })
                })
                .collect();
            if !cut.is_empty() {
                let kept = match c.first {
                    None => format!("the {} elements compared are equal", c.compared),
                    Some(first) => differs_text(e, &c, first, names),
                };
                writeln!(out, "{head}: INCOMPLETE: {}; {kept}", cut.join(", "))?;
                return Ok(Outcome::Fails);
            }
            describe(head, e, &c, names, out)
        }
        (x, _) => {
            let kind = |d: &Data| {
                if matches!(d, Data::Scalar(_)) {
                    "scalar"
                } else {
                    "tensor"
                }
            };
            writeln!(
                out,
                "{head}: DIFFERENT KINDS: {} {} vs {} {}",
                names.0,
                kind(x),
                names.1,
                kind(b)
            )?;
            Ok(Outcome::Fails)
        }
    }
}

fn differs_text(
    e: &ArgEntry,
    c: &Comparison,
    (k, x, y): (u64, Number, Number),
    names: (&str, &str),
) -> String {
    format!(
        "DIFFERS in {} of {} elements; first at {:?} (flat {k}): {} {} vs {} {}; max |diff| {}",
        c.differing,
        c.compared,
        unravel(&e.shape, k),
        names.0,
        fmt_number(&e.dtype, x),
        names.1,
        fmt_number(&e.dtype, y),
        c.max_abs
    )
}

fn describe(
    head: &str,
    e: &ArgEntry,
    c: &Comparison,
    names: (&str, &str),
    out: &mut impl Write,
) -> io::Result<Outcome> {
    if let Some((la, lb)) = c.length_mismatch {
        writeln!(out, "{head}: DIFFERENT LENGTHS {la} vs {lb} elements")?;
    }
    match c.first {
        None if c.length_mismatch.is_none() => {
            writeln!(out, "{head}: equal ({} elements)", c.compared)?;
            Ok(Outcome::Equal)
        }
        None => Ok(Outcome::Fails),
        Some(first) => {
            writeln!(out, "{head}: {}", differs_text(e, c, first, names))?;
            Ok(Outcome::Fails)
        }
    }
}

/// The entries by (task, stage, arg, role), first one kept: the diffs look each pair up in
/// O(1) instead of scanning millions of entries per match.
fn entry_index(all: &[ArgEntry]) -> std::collections::HashMap<(Option<u64>, &str, u32, &str), usize> {
    let mut index = std::collections::HashMap::with_capacity(all.len());
    for (j, x) in all.iter().enumerate() {
        index
            .entry((x.task_number(), x.stage.as_str(), x.arg_index, x.role.as_str()))
            .or_insert(j);
    }
    index
}

/// Counts of a comparison command: entries compared, entries that did not pass.
#[derive(Default)]
struct Tally {
    compared: u64,
    failed: u64,
}

impl Tally {
    fn add(&mut self, o: Outcome) {
        match o {
            Outcome::Equal => self.compared += 1,
            Outcome::Fails => {
                self.compared += 1;
                self.failed += 1;
            }
            Outcome::NotCompared => {}
        }
    }
}

/// BEFORE vs AFTER of every matched inout; returns (pairs compared, pairs that differ or are
/// incomplete). A pair where a side has no data is reported and not compared; none compared
/// at all is [`ErrorKind::NothingToCompare`].
pub fn diff_inout(
    dump: &ArgsDump,
    hits: &[usize],
    atol: f64,
    out: &mut impl Write,
) -> Result<(u64, u64), Error> {
    let all = &dump.manifest.args;
    let index = entry_index(all);
    let mut t = Tally::default();
    let mut pairs = 0;
    let mut seen = std::collections::BTreeSet::new();
    for &i in hits {
        let e = &all[i];
        if e.role != "inout" || e.is_scalar() || !seen.insert((e.task_id.clone(), e.arg_index)) {
            continue;
        }
        let find = |stage: &str| {
            index
                .get(&(e.task_number(), stage, e.arg_index, "inout"))
                .copied()
        };
        let (Some(b), Some(a)) = (find("before_dispatch"), find("after_completion")) else {
            continue;
        };
        pairs += 1;
        let head = entry_head("inout", e);
        let o = compare_data(
            &head,
            e,
            &data_of(dump, b, &all[b])?,
            &data_of(dump, a, &all[a])?,
            (("before", "after"), (" before", " after")),
            atol,
            out,
        )
        .map_err(ErrorKind::Output)?;
        t.add(o);
    }
    if pairs == 0 {
        return Err(ErrorKind::NothingToCompare(
            "no inout argument with both a before and an after entry among the matched entries".into(),
        )
        .into());
    }
    if t.compared == 0 {
        return Err(ErrorKind::NothingToCompare(format!(
            "nothing compared: none of the {pairs} inout pairs has data at both stages"
        ))
        .into());
    }
    Ok((t.compared, t.failed))
}

/// The matched entries against the same (task, stage, arg, role) of `other`; returns (pairs
/// compared, pairs that differ, are incomplete or are missing in `other`). A pair where a side
/// has no data is reported and not compared; nothing compared and nothing missing is
/// [`ErrorKind::NothingToCompare`]. When `other` is incomplete ([`incompleteness`]), the
/// entries missing there are said to be explained by it, each and in a last line.
pub fn diff_with(
    dump: &ArgsDump,
    other: &ArgsDump,
    hits: &[usize],
    atol: f64,
    out: &mut impl Write,
) -> Result<(u64, u64), Error> {
    diff_with_counted(dump, other, hits, atol, out).map(|c| (c.compared, c.failed))
}

/// What [`diff_with`] counted.
struct DiffWith {
    compared: u64,
    /// Entries that differ, are incomplete or are missing in the other dump.
    failed: u64,
    /// Of those, missing in the other dump.
    missing: u64,
    /// Why the other dump is incomplete, when it is.
    other_incomplete: Option<String>,
}

fn diff_with_counted(
    dump: &ArgsDump,
    other: &ArgsDump,
    hits: &[usize],
    atol: f64,
    out: &mut impl Write,
) -> Result<DiffWith, Error> {
    let mut t = Tally::default();
    let mut missing = 0;
    let other_incomplete = incompleteness(other);
    let index = entry_index(&other.manifest.args);
    for &i in hits {
        let e = &dump.manifest.args[i];
        let twin = index
            .get(&(e.task_number(), e.stage.as_str(), e.arg_index, e.role.as_str()))
            .copied();
        let head = entry_head(short_stage(e), e);
        let Some(j) = twin else {
            let which = if other_incomplete.is_some() {
                ", which is incomplete"
            } else {
                ""
            };
            writeln!(out, "{head}: MISSING in the other dump{which}").map_err(ErrorKind::Output)?;
            t.failed += 1;
            missing += 1;
            continue;
        };
        let o = compare_data(
            &head,
            e,
            &data_of(dump, i, e)?,
            &data_of(other, j, &other.manifest.args[j])?,
            (("this", "other"), (" in this dump", " in the other dump")),
            atol,
            out,
        )
        .map_err(ErrorKind::Output)?;
        t.add(o);
    }
    if let (Some(why), true) = (&other_incomplete, missing > 0) {
        writeln!(
            out,
            "{missing} of the {} matched entries are MISSING in the other dump {}, which is incomplete: {why}; \
             they were not captured there, which says nothing of their data",
            hits.len(),
            other.dir.display()
        )
        .map_err(ErrorKind::Output)?;
    }
    if t.compared == 0 && t.failed == 0 {
        return Err(ErrorKind::NothingToCompare(format!(
            "nothing compared: none of the {} matched entries has data in both dumps",
            hits.len()
        ))
        .into());
    }
    Ok(DiffWith {
        compared: t.compared,
        failed: t.failed,
        missing,
        other_incomplete,
    })
}

/// Every matched entry against `value`: each element of a tensor, a scalar's decoded value;
/// returns (entries compared, entries that differ or are incomplete). An entry without data is
/// reported and not compared; none compared is [`ErrorKind::NothingToCompare`].
pub fn expect(
    dump: &ArgsDump,
    hits: &[usize],
    value: Number,
    atol: f64,
    out: &mut impl Write,
) -> Result<(u64, u64), Error> {
    let mut t = Tally::default();
    for &i in hits {
        let e = &dump.manifest.args[i];
        let head = entry_head(short_stage(e), e);
        let a = data_of(dump, i, e)?;
        let o = match &a {
            Data::Tensor(x) => {
                let c = compare_by(x.len, x.len, |k| x.get(k), |_| value, atol);
                match x.incomplete() {
                    Some(cut) => {
                        let kept = match c.first {
                            None => format!("the {} elements compared are equal", c.compared),
                            Some(first) => differs_text(e, &c, first, ("got", "expected")),
                        };
                        writeln!(out, "{head}: INCOMPLETE: {cut}; {kept}").map_err(ErrorKind::Output)?;
                        Outcome::Fails
                    }
                    None => describe(&head, e, &c, ("got", "expected"), out).map_err(ErrorKind::Output)?,
                }
            }
            _ => compare_data(
                &head,
                e,
                &a,
                &Data::Scalar(value),
                (("got", "expected"), ("", "")),
                atol,
                out,
            )
            .map_err(ErrorKind::Output)?,
        };
        t.add(o);
    }
    if t.compared == 0 {
        return Err(ErrorKind::NothingToCompare(format!(
            "nothing compared: none of the {} matched entries has data",
            hits.len()
        ))
        .into());
    }
    Ok((t.compared, t.failed))
}

/// Runs `simpler dump-viewer`, writing to standard output.
pub fn run(args: Args) -> Result<(), Error> {
    // A closed stdout loses the rest of the text, not the exit status (found by a review:
    // `dump-viewer DIR | head -1` failed with "Broken pipe").
    run_to(&args, &mut simpler_artifacts::stdout::Lossy(io::stdout().lock()))
}

/// Runs `simpler dump-viewer`, writing to `out`. Comparisons that find a difference end with
/// [`ErrorKind::Differs`].
pub fn run_to(args: &Args, out: &mut impl Write) -> Result<(), Error> {
    let dir = locate(args.dir.as_deref())?;
    // Noted before the read: an export beside a dump replaced meanwhile is refused.
    let made_from = Provenance::of(&[&dir.join(args_dump::JSON_FILE), &dir.join(args_dump::BIN_FILE)]);
    // The run's manifest says whether the dump is its run's, and whether that run completed.
    let dump = open_checked(&dir, "")?;
    // The other dump gets the same checks, before anything is compared with it (found by a
    // review: a dump whose run stopped on a fatal was compared without a word, and its missing
    // entries read as a regression).
    let other = match &args.diff_with {
        Some(d) => Some(open_checked(&locate(Some(d))?, "the other dump: ")?),
        None => None,
    };
    let hits = select(&dump, args)?;
    let o = |r: io::Result<()>| r.map_err(|e| Error::from(ErrorKind::Output(e)));
    let comparing = args.diff || args.diff_with.is_some() || args.expect.is_some();
    if !comparing {
        o(list(&dump, &hits, out))?;
    } else if let Some(why) = incompleteness(&dump) {
        // The listing says so when it is shown; a comparison says it here.
        simpler_artifacts::errln!("warning: this dump {} is incomplete: {why}", dump.dir.display());
    }
    if let Some(other) = &other {
        if let Some(why) = incompleteness(other) {
            simpler_artifacts::errln!(
                "warning: the other dump {} is incomplete: {why}; an entry missing there was not captured, \
                 not found different",
                other.dir.display()
            );
        }
    }
    if args.values || args.element.is_some() || (hits.len() == 1 && !comparing) {
        for &i in &hits {
            values(&dump, i, args.element.as_deref(), out)?;
        }
    }
    if args.export || args.index.is_some() {
        let format = match args.format.as_str() {
            "npy" => Format::Npy,
            "raw" | "bin" => Format::Raw,
            f => {
                return Err(ErrorKind::BadValue {
                    flag: "--format",
                    value: f.into(),
                    expected: "npy or raw",
                }
                .into())
            }
        };
        let out_dir = args.out.clone().unwrap_or_else(|| dir.join("export"));
        if let Some(w) = made_from.foreign_folder(&out_dir) {
            simpler_artifacts::errln!("warning: {w}");
        }
        let _hold = made_from.hold_folder(&out_dir).map_err(ErrorKind::Publish)?;
        let done = export_replacing(&dump, &hits, format, &out_dir)?;
        let replaced = match done.replaced {
            0 => String::new(),
            n => format!(" (replacing the {n} file(s) of an earlier export)"),
        };
        o(writeln!(
            out,
            "exported {} file(s) to {}{replaced}",
            done.written.len(),
            out_dir.display()
        ))?;
    }
    let mut differ = 0;
    if args.diff {
        differ += diff_inout(&dump, &hits, args.atol, out)?.1;
    }
    let mut note = None;
    if let Some(other) = &other {
        let c = diff_with_counted(&dump, other, &hits, args.atol, out)?;
        differ += c.failed;
        if c.missing > 0 && c.other_incomplete.is_some() {
            note = Some(format!(
                "{} of them are only missing in the other dump, which is incomplete: see the warning above",
                c.missing
            ));
        }
    }
    if let Some(v) = args.expect {
        differ += expect(&dump, &hits, v, args.atol, out)?.1;
    }
    if differ > 0 {
        return Err(ErrorKind::Differs { count: differ, note }.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a review: `--expect 1e400` was compared as `inf` without a word.
    #[test]
    fn an_expected_value_past_f64_is_refused_and_inf_spelled_out_is_kept() {
        for s in ["1e400", "-1e400", "2e308"] {
            assert_eq!(
                expected_value(s).unwrap_err(),
                format!(
                    "{s:?} is beyond the largest finite value an f64 holds (1.7976931348623157e308); write inf \
                     (or -inf) for an infinite one"
                )
            );
        }
        for (s, want) in [
            ("inf", f64::INFINITY),
            ("-inf", f64::NEG_INFINITY),
            ("Infinity", f64::INFINITY),
            ("1.7976931348623157e308", f64::MAX),
        ] {
            assert_eq!(expected_value(s), Ok(Number::Float(want)), "{s}");
        }
        assert!(matches!(expected_value("nan"), Ok(Number::Float(f)) if f.is_nan()));
        // `--atol` the same way (found by the same review's last look: `--atol 1e400` was inf).
        assert_eq!(
            tolerance("1e400").unwrap_err(),
            "\"1e400\" is beyond the largest finite value an f64 holds (1.7976931348623157e308); write inf \
             (or -inf) for an infinite one"
        );
        assert_eq!(tolerance("inf"), Ok(f64::INFINITY));
        assert_eq!(tolerance("1e-3"), Ok(1e-3));
        assert_eq!(expected_value("-7"), Ok(Number::Int(-7)));
        assert_eq!(expected_value("x").unwrap_err(), "\"x\" is not a number");
    }
}
