//! Graphviz DOT for the HTML view.
//!
//! Node ids are `T<ring>_<local>` (also the SVG element ids the page script looks up). Node
//! style encodes the kind (legend in [`crate::html`]): AIC blue rounded box, AIV orange
//! ellipse, mix green diamond, alloc grey dashed note, dummy grey box; SPMD tasks get a red
//! border (the page adds the `xN` badge).
//!
//! Plain mode draws one arrow per shown `(pred, succ)` pair. With `--show-tensor-info` each
//! task is a table (input rows, a header, output rows) and each `edges[]` row is its own arrow
//! from the producer's output port to the consumer's argument port. In both modes explicit
//! edges are dashed grey and tensor-map edges whose overlap is `other` are labelled "other".
//! Edges that the edge mode hides stay in the layout (so the picture does not jump between
//! modes) but are drawn faint with class `hidden-edge`.

use std::fmt::Write as _;

use simpler_artifacts::deps::{split_task_id, ArgType, EdgeSource, Overlap};

use crate::cli::Direction;
use crate::detail::{Details, Slot};
use crate::graph::{CoreType, Graph, Kind};
use crate::names::NameMap;
use crate::view::View;

/// Colour of hidden edges: barely visible on the white page.
const HIDDEN_EDGE_COLOR: &str = "#eef2f7";
/// Colour and style of explicit (declared) edges.
const EXPLICIT_EDGE_COLOR: &str = "#B0B0B0";
/// Border colour of SPMD tasks (and their `xN` badge).
pub const SPMD_COLOR: &str = "#C62828";

/// What to draw.
#[derive(Debug, Clone, Copy)]
pub struct DotOptions {
    /// Graphviz `rankdir`.
    pub direction: Direction,
    /// Draw tensor tables and per-row port edges.
    pub show_tensor_info: bool,
}

/// The DOT node id (and SVG element id) of a raw task id.
pub fn node_key(id: u64) -> String {
    let (ring, local) = split_task_id(id);
    format!("T{ring}_{local}")
}

/// A short name for node `n`: `alloc`, `dummy`, the kernel names from `names` joined by " + ",
/// `f<kernel id>` for kernels the map does not name, or `unknown` when the file does not give
/// the kernel slots.
pub fn name_hint(graph: &Graph, n: usize, names: Option<&NameMap>) -> String {
    match (graph.kind(n), graph.task(n).and_then(|t| t.slots())) {
        (Kind::Alloc, _) => "alloc".into(),
        (Kind::Dummy, _) => "dummy".into(),
        (Kind::Unknown, _) | (Kind::Submit, None) => "unknown".into(),
        (Kind::Submit, Some(slots)) => {
            let mut parts: Vec<String> = Vec::new();
            for &k in slots.iter().filter(|&&k| k >= 0) {
                let part = names
                    .and_then(|m| m.get(k))
                    .map_or_else(|| format!("f{k}"), str::to_string);
                if !parts.contains(&part) {
                    parts.push(part);
                }
            }
            parts.join(" + ")
        }
    }
}

/// The original's early-dispatch markers: `🔥` for an alloc task or a task submitted with
/// early dispatch (a "fire source"); `⭐` for a task whose every predecessor in `adj` is a fire
/// source and at least one is not an alloc task; else nothing.
pub fn fire_marker(graph: &Graph, adj: &crate::graph::Adjacency, n: usize) -> &'static str {
    let fire = |m: usize| graph.kind(m) == Kind::Alloc || graph.task(m).is_some_and(|t| t.early_dispatch);
    if fire(n) {
        return "🔥";
    }
    let preds = adj.fanin(n);
    if !preds.is_empty()
        && preds.iter().all(|&p| fire(p as usize))
        && preds.iter().any(|&p| graph.kind(p as usize) != Kind::Alloc)
    {
        return "⭐";
    }
    ""
}

struct NodeStyle {
    shape: &'static str,
    style: &'static str,
    fill: &'static str,
}

fn node_style(graph: &Graph, n: usize) -> NodeStyle {
    let (shape, style, fill) = match graph.kind(n) {
        Kind::Alloc => ("note", "filled,dashed", "#EAEAEA"),
        Kind::Dummy | Kind::Unknown => ("box", "rounded,filled", "#E0E0E0"),
        Kind::Submit => match graph.task(n).and_then(|t| t.core_type()) {
            Some(CoreType::Aic) => ("box", "rounded,filled", "#66A3FF"),
            Some(CoreType::Aiv) => ("ellipse", "filled", "#FFB366"),
            Some(CoreType::Mix) => ("diamond", "filled", "#66CC99"),
            None => ("box", "rounded,filled", "#E0E0E0"),
        },
    };
    NodeStyle { shape, style, fill }
}

/// The most characters of a node's name hint (its kernel names) a label shows. Graphviz
/// refuses a quoted string past 16 KiB with an opaque syntax error; no picture needs a name
/// this long.
pub const MAX_LABEL_NAME_CHARS: usize = 256;

/// `text` (a name from the name map or the file) as label text: cut to
/// [`MAX_LABEL_NAME_CHARS`] characters (then `…`), and with control characters, NUL included,
/// written as escapes (`\u{0}`, `\n`; `simpler_artifacts::name_map::printable`), which
/// Graphviz would refuse or act on.
pub fn label_text(text: &str) -> String {
    let cut = match text.char_indices().nth(MAX_LABEL_NAME_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    };
    simpler_artifacts::name_map::printable(&cut).into_owned()
}

/// The shown tasks whose name hint [`label_text`] cuts: each one's label (`graph.display`)
/// and the hint's length in characters.
pub fn cut_labels(view: &View<'_>, names: Option<&NameMap>) -> Vec<(String, usize)> {
    let graph = view.graph();
    view.nodes()
        .filter_map(|n| {
            let chars = name_hint(graph, n, names).chars().count();
            (chars > MAX_LABEL_NAME_CHARS).then(|| (graph.display(n), chars))
        })
        .collect()
}

/// `text` in a Graphviz HTML-like label: HTML-escaped, and each backslash doubled (Graphviz
/// reads `\\` in such a label as one backslash, and `\N` as the node's name).
fn html_label(text: &str) -> String {
    simpler_artifacts::html::escape(text).replace('\\', "\\\\")
}

/// Escapes a DOT double-quoted string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn spmd_blocks(graph: &Graph, n: usize) -> Option<u32> {
    graph.task(n).and_then(|t| t.spmd_blocks())
}

/// Emits the DOT of `view`. `shown_pairs` is the edge mode's per-pair mask; `details` is
/// required for `show_tensor_info` (plain mode ignores it).
pub fn emit(
    view: &View<'_>,
    shown_pairs: &[bool],
    names: Option<&NameMap>,
    details: Option<&Details>,
    options: DotOptions,
) -> String {
    let graph = view.graph();
    let adj = crate::graph::Adjacency::new(graph, |i| view.pair_shown(i) && shown_pairs[i]);
    let mut dot = String::new();
    let _ = writeln!(dot, "digraph deps {{");
    let _ = writeln!(
        dot,
        "  rankdir={}; concentrate=false; bgcolor=\"transparent\";",
        options.direction.rankdir()
    );
    let _ = writeln!(dot, "  node [fontname=\"Helvetica\", fontsize=10];");
    let _ = writeln!(dot, "  edge [color=\"#888888\", arrowsize=0.7];");

    let rich = options.show_tensor_info.then_some(details).flatten();
    for n in view.nodes() {
        let id = graph.id(n);
        let key = node_key(id);
        let style = node_style(graph, n);
        let marker = fire_marker(graph, &adj, n);
        let mut label = format!(
            "{} · {}",
            graph.display(n),
            label_text(&name_hint(graph, n, names))
        );
        if !marker.is_empty() {
            label = format!("{marker} {label}");
        }
        let _ = write!(label, " ↓{} ↑{}", adj.fanin(n).len(), adj.fanout(n).len());
        let spmd = spmd_blocks(graph, n);
        match rich.and_then(|d| d.slots.get(&id).map(|s| (d, s))) {
            Some((d, slots)) => {
                let table = table_label(&label, slots, d, style.fill, spmd.is_some());
                let _ = writeln!(dot, "  {key} [id={}, shape=plain, label=<{table}>];", quote(&key));
            }
            None => {
                let _ = write!(
                    dot,
                    "  {key} [id={}, label={}, shape={}, style={}, fillcolor={}",
                    quote(&key),
                    quote(&label),
                    style.shape,
                    quote(style.style),
                    quote(style.fill)
                );
                if spmd.is_some() {
                    let _ = write!(dot, ", color=\"{SPMD_COLOR}\", penwidth=1.5");
                }
                let _ = writeln!(dot, "];");
            }
        }
    }

    match rich {
        Some(d) => emit_row_edges(&mut dot, view, shown_pairs, d, options.direction),
        None => emit_pair_edges(&mut dot, view, shown_pairs),
    }
    let _ = writeln!(dot, "}}");
    dot
}

/// Plain mode: one arrow per pair. Explicit-only pairs are dashed; pairs with an `other`
/// tensor-map overlap are labelled.
fn emit_pair_edges(dot: &mut String, view: &View<'_>, shown_pairs: &[bool]) {
    let graph = view.graph();
    for (i, p) in graph.pairs().iter().enumerate() {
        if !view.pair_shown(i) {
            continue;
        }
        let (pred, succ) = (graph.id(p.pred as usize), graph.id(p.succ as usize));
        let mut attrs = vec![format!("id=\"E{i}\"")];
        if !shown_pairs[i] {
            attrs.push(format!("class=\"hidden-edge\", color=\"{HIDDEN_EDGE_COLOR}\""));
        } else {
            let explicit_only = p.has_source(EdgeSource::Explicit)
                && !p.has_source(EdgeSource::Creator)
                && !p.has_source(EdgeSource::Tensormap);
            if explicit_only {
                attrs.push(format!("style=dashed, color=\"{EXPLICIT_EDGE_COLOR}\""));
            }
            let overlap = p.overlap_label();
            if !overlap.is_empty() {
                attrs.push(overlap_label(&overlap));
            }
        }
        let _ = writeln!(
            dot,
            "  {} -> {} [{}];",
            node_key(pred),
            node_key(succ),
            attrs.join(", ")
        );
    }
}

/// The edge label of an overlap other than `covered`.
fn overlap_label(text: &str) -> String {
    format!("label=\"{text}\", fontsize=8, fontcolor=\"#C04040\"")
}

/// Rich mode: one arrow per `edges[]` row, between argument ports.
fn emit_row_edges(
    dot: &mut String,
    view: &View<'_>,
    shown_pairs: &[bool],
    d: &Details,
    direction: Direction,
) {
    let graph = view.graph();
    // Rows stack vertically, so ports face sideways in LR/RL layouts; in TB/BT layouts
    // Graphviz picks the side.
    let (in_side, out_side) = match direction {
        Direction::Lr => (":w", ":e"),
        Direction::Rl => (":e", ":w"),
        Direction::Tb | Direction::Bt => ("", ""),
    };
    let pair_index = |pred: u64, succ: u64| -> Option<usize> {
        let (p, s) = (graph.index_of(pred)? as u32, graph.index_of(succ)? as u32);
        graph
            .pairs()
            .binary_search_by_key(&(p, s), |q| (q.pred, q.succ))
            .ok()
    };
    for (r, row) in d.rows.iter().enumerate() {
        let Some(i) = pair_index(row.pred, row.succ) else {
            continue;
        };
        if !view.pair_shown(i) {
            continue;
        }
        let mut tail = node_key(row.pred);
        if let (Some(id), Some(slots)) = (row.tensor_id, d.slots.get(&row.pred)) {
            if let Some(s) = slots
                .iter()
                .find(|s| s.arg.arg_type.is_write() && s.tensor_id == Some(id))
            {
                let _ = write!(tail, ":out_{}{out_side}", s.arg.idx);
            }
        }
        let mut head = node_key(row.succ);
        if let Some(arg) = row.arg.filter(|&a| a >= 0) {
            let has_port = d
                .slots
                .get(&row.succ)
                .is_some_and(|slots| slots.iter().any(|s| s.arg.idx == arg && s.arg.arg_type.is_read()));
            if has_port {
                let _ = write!(head, ":in_{arg}{in_side}");
            }
        }
        let mut attrs = vec![format!("id=\"R{r}\"")];
        if !shown_pairs[i] {
            attrs.push(format!("class=\"hidden-edge\", color=\"{HIDDEN_EDGE_COLOR}\""));
        } else {
            if row.source == EdgeSource::Explicit {
                attrs.push(format!("style=dashed, color=\"{EXPLICIT_EDGE_COLOR}\""));
            }
            if let Some(o) = row.overlap.filter(|&o| o != Overlap::Covered) {
                attrs.push(overlap_label(o.as_str()));
            }
        }
        let _ = writeln!(dot, "  {tail} -> {head} [{}];", attrs.join(", "));
    }
}

/// The HTML-like table label of a task: input rows, header, output rows.
fn table_label(header: &str, slots: &[Slot], d: &Details, fill: &str, spmd: bool) -> String {
    let mut t = String::new();
    if spmd {
        let _ = write!(
            t,
            "<TABLE BORDER=\"1\" COLOR=\"{SPMD_COLOR}\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">"
        );
    } else {
        t.push_str("<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"3\">");
    }
    for s in slots.iter().filter(|s| s.arg.arg_type.is_read()) {
        let _ = write!(
            t,
            "<TR><TD PORT=\"in_{}\" BGCOLOR=\"#EAF2FF\" ALIGN=\"LEFT\" BALIGN=\"LEFT\">{}</TD></TR>",
            s.arg.idx,
            slot_text(s, d)
        );
    }
    let _ = write!(
        t,
        "<TR><TD BGCOLOR=\"{fill}\"><B>{}</B></TD></TR>",
        html_label(header)
    );
    for s in slots.iter().filter(|s| s.arg.arg_type.is_write()) {
        let _ = write!(
            t,
            "<TR><TD PORT=\"out_{}\" BGCOLOR=\"#FFF2E5\" ALIGN=\"LEFT\" BALIGN=\"LEFT\">{}</TD></TR>",
            s.arg.idx,
            slot_text(s, d)
        );
    }
    t.push_str("</TABLE>");
    t
}

/// `arg<i> <TYPE>[ ?] <tensor>:<dtype>` then storage, shape, strides and start offset.
fn slot_text(s: &Slot, d: &Details) -> String {
    let a = &s.arg;
    let Some(id) = s.tensor_id else {
        return format!("arg{} {} (alloc)", a.idx, a.arg_type.as_str());
    };
    let mark = if s.inferred { " ?" } else { "" };
    let tensor = d.tensors.get(&id).map(|(_, t)| t);
    let dtype = label_text(
        &a.dtype
            .as_deref()
            .or(tensor.map(|t| t.dtype.as_str()))
            .unwrap_or("?")
            .to_lowercase(),
    );
    let mut text = format!(
        "arg{} {}{mark} {}:{}",
        a.idx,
        a.arg_type.as_str(),
        d.tensor_name(id),
        dtype
    );
    let list = |v: &Option<Vec<u32>>| match v {
        Some(v) => format!(
            "[{}]",
            v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        None => "?".into(),
    };
    if let Some(t) = tensor {
        let _ = write!(text, "<BR/>storage: {} elems", t.buffer_numel);
    }
    if let Some(g) = &s.geometry {
        // Inferred with the id (the header's `?`): the whole fresh output buffer.
        let _ = write!(text, "<BR/>shape: {}", list(&Some(g.shape.clone())));
        let _ = write!(text, "<BR/>strides: {}", list(&Some(g.strides.clone())));
        let _ = write!(text, "<BR/>start_offset: {} (elem)", g.start_offset);
    } else if a.arg_type != ArgType::Output || a.shape.is_some() {
        let _ = write!(text, "<BR/>shape: {}", list(&a.shape));
        let _ = write!(text, "<BR/>strides: {}", list(&a.strides));
        if let Some(off) = a.start_offset {
            let _ = write!(text, "<BR/>start_offset: {off} (elem)");
        }
    }
    html_text_keep_br(&text)
}

/// Escapes `text` for an HTML-like label while keeping the `<BR/>` line breaks it contains.
fn html_text_keep_br(text: &str) -> String {
    text.split("<BR/>")
        .map(html_label)
        .collect::<Vec<_>>()
        .join("<BR/>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::TaskInfo;
    use simpler_artifacts::deps::{Edge, TaskArg, Tensor};

    fn task(kernel_ids: [i32; 3], block_num: u32) -> TaskInfo {
        TaskInfo::new(kernel_ids, block_num)
    }

    fn plain(view: &View<'_>, shown: &[bool]) -> String {
        emit(
            view,
            shown,
            None,
            None,
            DotOptions {
                direction: Direction::Lr,
                show_tensor_info: false,
            },
        )
    }

    #[test]
    fn plain_nodes_are_styled_by_kind() {
        let g = Graph::from_parts(
            [
                (1, task([3, -1, -1], 1)),
                (2, task([-1, 4, -1], 8)),
                (3, task([1, 2, -1], 1)),
                (4, task([-1, -1, -1], 1)),
            ],
            [
                (0, 1, EdgeSource::Creator),
                (1, 2, EdgeSource::Tensormap),
                (2, 3, EdgeSource::Explicit),
                (3, 4, EdgeSource::Explicit),
                (3, 4, EdgeSource::Tensormap),
            ],
            0,
        );
        let dot = plain(&View::full(&g), &[true; 4]);
        let expected = "\
digraph deps {
  rankdir=LR; concentrate=false; bgcolor=\"transparent\";
  node [fontname=\"Helvetica\", fontsize=10];
  edge [color=\"#888888\", arrowsize=0.7];
  T0_0 [id=\"T0_0\", label=\"🔥 0 · alloc ↓0 ↑1\", shape=note, style=\"filled,dashed\", fillcolor=\"#EAEAEA\"];
  T0_1 [id=\"T0_1\", label=\"1 · f3 ↓1 ↑1\", shape=box, style=\"rounded,filled\", fillcolor=\"#66A3FF\"];
  T0_2 [id=\"T0_2\", label=\"2 · f4 ↓1 ↑1\", shape=ellipse, style=\"filled\", fillcolor=\"#FFB366\", color=\"#C62828\", penwidth=1.5];
  T0_3 [id=\"T0_3\", label=\"3 · f1 + f2 ↓1 ↑1\", shape=diamond, style=\"filled\", fillcolor=\"#66CC99\"];
  T0_4 [id=\"T0_4\", label=\"4 · dummy ↓1 ↑0\", shape=box, style=\"rounded,filled\", fillcolor=\"#E0E0E0\"];
  T0_0 -> T0_1 [id=\"E0\"];
  T0_1 -> T0_2 [id=\"E1\"];
  T0_2 -> T0_3 [id=\"E2\", style=dashed, color=\"#B0B0B0\"];
  T0_3 -> T0_4 [id=\"E3\"];
}
";
        assert_eq!(dot, expected);
    }

    /// 🔥: an alloc task or an early-dispatch submit; ⭐: every predecessor is a 🔥 and one is
    /// not an alloc task (fed by an alloc alone earns nothing, as in the original).
    #[test]
    fn early_dispatch_markers() {
        let early = TaskInfo {
            early_dispatch: true,
            ..task([-1, 0, -1], 1)
        };
        let g = Graph::from_parts(
            [
                (1, early),
                (2, task([-1, 0, -1], 1)),
                (3, task([-1, 0, -1], 1)),
                (4, task([-1, 0, -1], 1)),
            ],
            [
                (0, 2, EdgeSource::Creator), // alloc only: no star
                (0, 3, EdgeSource::Creator), // alloc and an early submit: star
                (1, 3, EdgeSource::Tensormap),
                (1, 4, EdgeSource::Tensormap), // an early submit and a plain one: no star
                (2, 4, EdgeSource::Tensormap),
            ],
            0,
        );
        let view = View::full(&g);
        let adj = crate::graph::Adjacency::new(&g, |_| true);
        let marks: Vec<&str> = view.nodes().map(|n| fire_marker(&g, &adj, n)).collect();
        assert_eq!(marks, ["🔥", "🔥", "", "⭐", ""]);
        let dot = plain(&view, &[true; 5]);
        assert!(dot.contains("label=\"⭐ 3 · f0 ↓2 ↑0\""), "{dot}");
        assert!(dot.contains("label=\"🔥 1 · f0 ↓0 ↑2\""), "{dot}");
    }

    #[test]
    fn names_replace_kernel_ids_and_hidden_pairs_are_faint() {
        let g = Graph::from_parts(
            [(1, task([0, 1, 1], 1)), (2, task([-1, 9, -1], 1))],
            [(1, 2, EdgeSource::Tensormap)],
            0,
        );
        let names = NameMap::from_pairs([(0, "mm".to_string()), (1, "add".to_string())]);
        assert_eq!(name_hint(&g, 0, Some(&names)), "mm + add");
        assert_eq!(name_hint(&g, 1, Some(&names)), "f9");
        let dot = plain(&View::full(&g), &[false]);
        assert!(dot.contains("  T0_1 -> T0_2 [id=\"E0\", class=\"hidden-edge\", color=\"#eef2f7\"];\n"));
    }

    /// Found by a review: a kernel name with a NUL or longer than 16 KiB made Graphviz fail
    /// with an opaque syntax error, and in a tensor table a name's `\\` showed as `\`.
    #[test]
    fn hostile_names_reach_graphviz_escaped_and_cut() {
        let g = Graph::from_parts([(1, task([0, -1, -1], 1)), (2, task([1, -1, -1], 1))], [], 0);
        let names = NameMap::from_pairs([(0, "a\0b\\\\c\u{1b}\nd".to_string()), (1, "k".repeat(20_000))]);
        let dot = emit(
            &View::full(&g),
            &[],
            Some(&names),
            None,
            DotOptions {
                direction: Direction::Lr,
                show_tensor_info: false,
            },
        );
        // Each escape's backslash, and each of the name's, doubled for DOT (which shows one).
        assert!(
            dot.contains(r#"label="1 · a\\0b\\\\c\\u{1b}\\nd ↓0 ↑0""#),
            "{dot}"
        );
        assert!(!dot.contains('\0') && !dot.contains('\u{1b}'));
        assert!(
            dot.contains(&format!(
                "label=\"2 · {}… ↓0 ↑0\"",
                "k".repeat(MAX_LABEL_NAME_CHARS)
            )),
            "{}",
            &dot[..400]
        );
        assert_eq!(
            cut_labels(&View::full(&g), Some(&names)),
            [("2".to_string(), 20_000)]
        );
        // A table label (--show-tensor-info): HTML-escaped, backslashes doubled.
        let table = table_label(r"a\\b <c>", &[], &Details::default(), "#fff", false);
        assert!(table.contains(r"<B>a\\\\b &lt;c&gt;</B>"), "{table}");
    }

    #[test]
    fn tensor_view_routes_rows_to_ports() {
        let g = Graph::from_parts(
            [(1, task([-1, 0, -1], 1)), (2, task([-1, 1, -1], 1))],
            [(1, 2, EdgeSource::Creator), (1, 2, EdgeSource::Tensormap)],
            1,
        );
        let arg = |idx, arg_type, tensor_id: Option<u64>| TaskArg {
            idx,
            arg_type,
            tensor_id,
            dtype: tensor_id.map(|_| "FLOAT16".to_string()),
            shape: tensor_id.map(|_| vec![4, 8]),
            start_offset: tensor_id.map(|_| 8),
            strides: tensor_id.map(|_| vec![8, 1]),
        };
        let mut d = Details::default();
        d.slots.insert(
            1,
            vec![Slot {
                arg: arg(0, ArgType::Output, None),
                tensor_id: Some(77),
                inferred: true,
                geometry: Some(crate::detail::Geometry {
                    shape: vec![8, 8],
                    strides: vec![8, 1],
                    start_offset: 0,
                }),
            }],
        );
        d.slots.insert(
            2,
            vec![Slot {
                arg: arg(0, ArgType::Inout, Some(77)),
                tensor_id: Some(77),
                inferred: false,
                geometry: None,
            }],
        );
        d.tensors.insert(
            77,
            (
                0,
                Tensor {
                    tensor_id: 77,
                    buffer_addr: 4096,
                    version: Some(0),
                    dtype: "FLOAT16".into(),
                    buffer_numel: 64,
                },
            ),
        );
        let row = |source, overlap| Edge {
            arg: Some(0),
            source,
            overlap,
            tensor_id: Some(77),
            ..Edge::explicit(1, 2)
        };
        d.rows = vec![
            row(EdgeSource::Creator, None),
            row(EdgeSource::Tensormap, Some(Overlap::Other)),
        ];
        let dot = emit(
            &View::full(&g),
            &[true],
            None,
            Some(&d),
            DotOptions {
                direction: Direction::Lr,
                show_tensor_info: true,
            },
        );
        assert!(
            dot.contains("  T0_1:out_0:e -> T0_2:in_0:w [id=\"R0\"];\n"),
            "{dot}"
        );
        assert!(dot.contains(
            "  T0_1:out_0:e -> T0_2:in_0:w [id=\"R1\", label=\"other\", fontsize=8, fontcolor=\"#C04040\"];\n"
        ));
        assert!(dot.contains(
            "<TR><TD PORT=\"in_0\" BGCOLOR=\"#EAF2FF\" ALIGN=\"LEFT\" BALIGN=\"LEFT\">arg0 INOUT T0:float16<BR/>storage: 64 elems<BR/>shape: [4, 8]<BR/>strides: [8, 1]<BR/>start_offset: 8 (elem)</TD></TR>"
        ));
        assert!(dot.contains(
            "<TR><TD PORT=\"out_0\" BGCOLOR=\"#FFF2E5\" ALIGN=\"LEFT\" BALIGN=\"LEFT\">arg0 OUTPUT ? T0:float16<BR/>storage: 64 elems<BR/>shape: [8, 8]<BR/>strides: [8, 1]<BR/>start_offset: 0 (elem)</TD></TR>"
        ));
    }
}
