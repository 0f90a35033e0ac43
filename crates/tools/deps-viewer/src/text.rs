//! The text view (`deps_viewer.txt`): grep-first, diff-friendly, no Graphviz.
//!
//! Format (`../shared/reference/dep-gen.md` §4.4, kept byte-compatible so existing greps work):
//!
//! ```text
//! SUMMARY
//!   source_deps_json: <path>
//!   tasks: <shown tasks>
//!   unique_task_edges: <shown (pred, succ) pairs>
//!   annotated_edges: <edges[] rows of those pairs>
//!   tensors: <tensors[] entries>|unknown
//!   perf_sidecar: yes|no
//!   func_name_map: yes|no
//!   note: <what the file does not say>      (only for files that leave something out)
//!   warning: <the run manifest's warning>   (only for a file of a failed run, a stale file, ...)
//!
//! TASK INDEX
//! TASK <t> kind=<submit|dummy|alloc> <func>[ SPMD block num = N] fanin=<n> fanout=<n>
//! ...
//!
//! === TASK <t> kind=<kind> <func>[ SPMD block num = N] ===
//! FANIN <n>
//!   <- <t>
//! FANOUT <n>
//!   -> <t>
//! ```
//!
//! Tasks are listed by ascending raw id; `<t>` is `(ring, local)` when any task is on a ring
//! ≥ 1, else the local id. `<func>` is `func_id=[aic,aiv0,aiv1]` (inactive slots `-1`) for
//! submitted tasks and `func_id=none` for dummy and alloc tasks. Peers are sorted by raw id.
//! Names from a name map never appear here; they only turn `func_name_map` to yes.
//!
//! A file from the original's writers may leave things out (`simpler_artifacts::deps::gaps`):
//! then SUMMARY ends with one `note:` line per gap, a task without `kernel_ids` reads
//! `kind=unknown func_id=unknown`, one whose `kernel_ids` is not three slots
//! `func_id=unknown`, and without `tensors[]` the count reads `tensors: unknown`. Files this
//! runtime writes leave nothing out, so their view is the original's, byte for byte, but for
//! `perf_sidecar` and `func_name_map`, which follow the original's documented meaning (a
//! records file read, a name resolved) where its code says `yes` more often (`../shared/reference/dep-gen.md` §4.4).

use std::io::{self, Write};

use crate::graph::{Graph, Kind};
use crate::view::View;

/// The SUMMARY flags that do not come from the graph itself.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Shown as `source_deps_json`.
    pub source: String,
    /// A perf sidecar was loaded.
    pub perf_sidecar: bool,
    /// At least one task's kernel resolved to a name.
    pub func_name_map: bool,
    /// The run manifest's warning about the deps.json (a run that did not complete, a file
    /// the run did not write; `simpler_artifacts::manifest::check`), shown as a `warning:`
    /// line so the view says it too, not only the command's stderr.
    pub warning: Option<String>,
}

/// Counts reported after writing a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Shown tasks.
    pub tasks: u64,
    /// Shown unique `(pred, succ)` pairs.
    pub unique_edges: u64,
    /// `edges[]` rows of the shown pairs.
    pub annotated_edges: u64,
}

/// Writes the text view of `view` to `out`.
pub fn write_text<W: Write>(mut out: W, view: &View<'_>, summary: &Summary) -> io::Result<Counts> {
    let graph = view.graph();
    let adj = view.adjacency();
    let (unique_edges, annotated_edges) = view.edge_counts();
    let counts = Counts {
        tasks: view.node_count() as u64,
        unique_edges,
        annotated_edges,
    };
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    writeln!(out, "SUMMARY")?;
    writeln!(out, "  source_deps_json: {}", summary.source)?;
    writeln!(out, "  tasks: {}", counts.tasks)?;
    writeln!(out, "  unique_task_edges: {}", counts.unique_edges)?;
    writeln!(out, "  annotated_edges: {}", counts.annotated_edges)?;
    match graph.tensor_count() {
        Some(n) => writeln!(out, "  tensors: {n}")?,
        None => writeln!(out, "  tensors: unknown")?,
    }
    writeln!(out, "  perf_sidecar: {}", yes_no(summary.perf_sidecar))?;
    writeln!(out, "  func_name_map: {}", yes_no(summary.func_name_map))?;
    for note in graph.gaps().notes() {
        writeln!(out, "  note: {note}")?;
    }
    if let Some(w) = &summary.warning {
        writeln!(out, "  warning: {w}")?;
    }
    writeln!(out)?;
    writeln!(out, "TASK INDEX")?;

    // The per-task lines are put together in a block of memory and written a block at a time.
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK_BYTES + (64 << 10));
    for n in view.nodes() {
        buf.extend_from_slice(b"TASK ");
        put_task_label(&mut buf, graph, n);
        buf.extend_from_slice(b" fanin=");
        put_u64(&mut buf, adj.fanin(n).len() as u64);
        buf.extend_from_slice(b" fanout=");
        put_u64(&mut buf, adj.fanout(n).len() as u64);
        buf.push(b'\n');
        flush_block(&mut out, &mut buf)?;
    }
    let ringed = graph.any_ring();
    for n in view.nodes() {
        buf.extend_from_slice(b"\n=== TASK ");
        put_task_label(&mut buf, graph, n);
        buf.extend_from_slice(b" ===\n");
        let fanin = adj.fanin(n);
        buf.extend_from_slice(b"FANIN ");
        put_u64(&mut buf, fanin.len() as u64);
        buf.push(b'\n');
        for &p in fanin {
            buf.extend_from_slice(b"  <- ");
            put_id(&mut buf, graph.id(p as usize), ringed);
            buf.push(b'\n');
        }
        let fanout = adj.fanout(n);
        buf.extend_from_slice(b"FANOUT ");
        put_u64(&mut buf, fanout.len() as u64);
        buf.push(b'\n');
        for &s in fanout {
            buf.extend_from_slice(b"  -> ");
            put_id(&mut buf, graph.id(s as usize), ringed);
            buf.push(b'\n');
        }
        flush_block(&mut out, &mut buf)?;
    }
    out.write_all(&buf)?;
    out.flush()?;
    Ok(counts)
}

/// Bytes of per-task lines gathered before they are written.
const BLOCK_BYTES: usize = 1 << 20;

/// Writes `buf` to `out` and empties it once it holds [`BLOCK_BYTES`] or more.
fn flush_block<W: Write>(out: &mut W, buf: &mut Vec<u8>) -> io::Result<()> {
    if buf.len() >= BLOCK_BYTES {
        out.write_all(buf)?;
        buf.clear();
    }
    Ok(())
}

/// Appends `v` in decimal.
fn put_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// Appends a raw task id as [`crate::graph::display_id`] shows it: `(ring, local)` when
/// `ringed`, else the local id.
fn put_id(buf: &mut Vec<u8>, id: u64, ringed: bool) {
    let (ring, local) = simpler_artifacts::deps::split_task_id(id);
    if ringed {
        buf.push(b'(');
        put_u64(buf, u64::from(ring));
        buf.extend_from_slice(b", ");
        put_u64(buf, u64::from(local));
        buf.push(b')');
    } else {
        put_u64(buf, u64::from(local));
    }
}

/// `func_id=[aic,aiv0,aiv1]` for a submitted task with known slots, `func_id=unknown` when
/// they are not known, `func_id=none` for dummy and alloc tasks.
pub fn func_label(graph: &Graph, n: usize) -> String {
    match (graph.kind(n), graph.task(n).and_then(|t| t.slots())) {
        (Kind::Submit, Some([a, b, c])) => format!("func_id=[{a},{b},{c}]"),
        (Kind::Submit | Kind::Unknown, _) => "func_id=unknown".into(),
        (Kind::Dummy | Kind::Alloc, _) => "func_id=none".into(),
    }
}

/// Appends `<t> kind=<kind> <func>[ SPMD block num = N]`.
fn put_task_label(buf: &mut Vec<u8>, graph: &Graph, n: usize) {
    let kind = graph.kind(n);
    put_id(buf, graph.id(n), graph.any_ring());
    buf.extend_from_slice(b" kind=");
    buf.extend_from_slice(kind.as_str().as_bytes());
    buf.push(b' ');
    match (kind, graph.task(n).and_then(|t| t.slots())) {
        (Kind::Submit, Some(slots)) => {
            buf.extend_from_slice(b"func_id=[");
            for (i, k) in slots.into_iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                if k < 0 {
                    buf.push(b'-');
                }
                put_u64(buf, u64::from(k.unsigned_abs()));
            }
            buf.push(b']');
        }
        _ => buf.extend_from_slice(func_label(graph, n).as_bytes()),
    }
    if let Some(blocks) = graph.task(n).and_then(|t| t.spmd_blocks()) {
        buf.extend_from_slice(b" SPMD block num = ");
        put_u64(buf, u64::from(blocks));
    }
}
