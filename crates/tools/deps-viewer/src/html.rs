//! The HTML view: a self-contained page around the Graphviz SVG.
//!
//! The page embeds the SVG, a legend, a detail panel and a small vanilla-JS script
//! (`assets/viewer.js`): drag or scroll to pan, Ctrl+scroll or pinch to zoom about the cursor,
//! `f` fits, `r` resets to 1:1, clicking a task shows its fanin and fanout. Two JSON objects
//! feed the script: `depStats` (per node: label, kind, func, name hint, fanin and fanout node
//! ids) and `spmdBlocks` (node id → block count, drawn as a red `xN` badge).
//!
//! # Size limits
//!
//! Past [`DOT_WARN_NODES`] nodes with `--engine dot` a warning suggests `--engine sfdp`; past
//! [`DOT_MAX_NODES`] `dot` is refused (its memory grows with the square of the graph: measured
//! on a 2-core, 24 GiB VM with chain_barrier graphs, 0.4 GB at 500 tasks, 1.6 GB at 1,000,
//! 6.3 GB and 26 s at 2,000). Past [`BROWSER_MAX_NODES`] nodes or [`BROWSER_MAX_EDGES`] edges
//! the page would not be drawable, so the view is refused with a message offering
//! `--focus TASK --depth K` (or the text view). Every Graphviz program also runs under a memory
//! limit (`graphviz::memory_limit`), so a layout that would exhaust the host fails instead.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::cli::{Direction, EdgeMode, Engine};
use crate::dot::{self, DotOptions};
use crate::names::NameMap;
use crate::view::View;
use crate::{detail, graphviz, Error, ErrorKind};

/// Above this many nodes `dot` gets slow and memory-hungry; `sfdp` is suggested.
pub const DOT_WARN_NODES: usize = 1_000;
/// Above this many nodes `dot` is refused: its layout would need well over 10 GB.
pub const DOT_MAX_NODES: usize = 3_000;
/// Above this many nodes a browser's SVG renderer cannot cope (`../shared/spec/dep-gen.md` §5:
/// about 50k nodes with sfdp).
pub const BROWSER_MAX_NODES: usize = 50_000;
/// Above this many drawn edges the same holds for edges.
pub const BROWSER_MAX_EDGES: usize = 150_000;

const PAGE: &str = include_str!("../assets/page.html");
const CSS: &str = include_str!("../assets/viewer.css");
const JS: &str = include_str!("../assets/viewer.js");

/// HTML-specific options.
#[derive(Debug, Clone, Copy)]
pub struct HtmlOptions {
    /// Graphviz layout program.
    pub engine: Engine,
    /// Layout direction.
    pub direction: Direction,
    /// Draw tensor tables and per-row port edges.
    pub show_tensor_info: bool,
    /// The edge mode (shown in the page header).
    pub edge_mode: EdgeMode,
    /// The view is a `--focus` neighbourhood (shown in the page header).
    pub focused: bool,
    /// How the page is published: [`simpler_artifacts::publish::Options::chosen_name`] when
    /// no `-o` named the output.
    pub publish: simpler_artifacts::publish::Options,
}

/// What a written page contains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HtmlStats {
    /// Drawn tasks.
    pub nodes: usize,
    /// Drawn edges (pairs, or rows with `--show-tensor-info`), hidden ones included.
    pub edges: usize,
}

#[derive(Serialize)]
struct NodeStats {
    label: String,
    kind: &'static str,
    func: String,
    name_hint: String,
    blocks: u32,
    fanin: Vec<String>,
    fanout: Vec<String>,
    /// `🔥`, `⭐` or empty (`dot::fire_marker`).
    marker: &'static str,
    /// Predecessors per name hint, `[hint, count]`, most first, then by name.
    pred_by_hint: Vec<(String, usize)>,
    /// Successors per name hint, likewise.
    succ_by_hint: Vec<(String, usize)>,
}

/// `list`'s nodes counted per name hint, most first, then by name (the original's order).
fn by_hint(graph: &crate::graph::Graph, list: &[u32], names: Option<&NameMap>) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for &p in list {
        *counts
            .entry(dot::name_hint(graph, p as usize, names))
            .or_default() += 1;
    }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// Lays out `view` and writes the page to `output`. `shown_pairs` is the edge mode's mask over
/// all pairs; hidden pairs are still laid out, faintly.
pub fn write_html_view(
    input: &Path,
    output: &Path,
    view: &View<'_>,
    shown_pairs: &[bool],
    names: Option<&NameMap>,
    options: &HtmlOptions,
    made_from: &simpler_artifacts::provenance::Provenance,
) -> Result<HtmlStats, Error> {
    let nodes = view.node_count();
    let (pairs, rows) = view.edge_counts();
    let edges = if options.show_tensor_info { rows } else { pairs } as usize;
    if let Some(warning) = check_size(nodes, edges, options)? {
        simpler_artifacts::errln!("{warning}");
    }

    let cut = dot::cut_labels(view, names);
    if let Some((first, chars)) = cut.first() {
        simpler_artifacts::errln!(
            "warning: {} task label(s) cut to their first {} characters of kernel names (first: task {first}, {chars} characters): Graphviz refuses longer strings",
            cut.len(),
            dot::MAX_LABEL_NAME_CHARS
        );
    }
    let details = if options.show_tensor_info {
        Some(detail::load(input, view)?)
    } else {
        None
    };
    let dot_text = dot::emit(
        view,
        shown_pairs,
        names,
        details.as_ref(),
        DotOptions {
            direction: options.direction,
            show_tensor_info: options.show_tensor_info,
        },
    );
    let svg = graphviz::render_svg(options.engine.program(), &dot_text)?;
    let mut page = page(input, view, shown_pairs, names, options, &svg, nodes, edges)?;
    if let Some(w) = simpler_artifacts::manifest::check(input) {
        // The same warning the command printed on stderr, as a banner at the top of the page.
        let banner = format!(
            "<body><div class=\"run-warning\" role=\"alert\" style=\"background:#fef2f2;\
             border:2px solid #dc2626;color:#7f1d1d;padding:10px 14px;margin:8px\"><strong>Warning: \
             this file may not be what its run wrote.</strong> {}</div>",
            escape_html(&w)
        );
        page = page.replacen("<body>", &banner, 1);
    }
    let _hold = made_from.hold(output)?;
    simpler_artifacts::publish::publish_bytes_with(output, options.publish, page.as_bytes())?;
    Ok(HtmlStats { nodes, edges })
}

/// Refuses views a browser cannot draw ([`ErrorKind::TooLargeForBrowser`]) and `dot` layouts
/// past [`DOT_MAX_NODES`] ([`ErrorKind::TooLargeForDot`]); returns a warning for slow `dot`
/// layouts.
pub fn check_size(nodes: usize, edges: usize, options: &HtmlOptions) -> Result<Option<String>, Error> {
    if nodes > BROWSER_MAX_NODES || edges > BROWSER_MAX_EDGES {
        return Err(ErrorKind::TooLargeForBrowser {
            nodes,
            edges,
            max_nodes: BROWSER_MAX_NODES,
            max_edges: BROWSER_MAX_EDGES,
        }
        .into());
    }
    if nodes > DOT_MAX_NODES && options.engine == Engine::Dot {
        return Err(ErrorKind::TooLargeForDot {
            nodes,
            max_nodes: DOT_MAX_NODES,
        }
        .into());
    }
    if nodes > DOT_WARN_NODES && options.engine == Engine::Dot {
        return Ok(Some(format!(
            "warning: {nodes} tasks with --engine dot can take minutes and gigabytes to lay out; \
             --engine sfdp is much faster for graphs past {DOT_WARN_NODES} tasks"
        )));
    }
    Ok(None)
}

pub use simpler_artifacts::html::escape as escape_html;

/// JSON safe to embed in a `<script>` element (`simpler_artifacts::html::script_json`).
fn script_json<T: Serialize>(value: &T) -> Result<String, Error> {
    Ok(simpler_artifacts::html::script_json(value)?)
}

#[allow(clippy::too_many_arguments)]
fn page(
    input: &Path,
    view: &View<'_>,
    shown_pairs: &[bool],
    names: Option<&NameMap>,
    options: &HtmlOptions,
    svg: &str,
    nodes: usize,
    edges: usize,
) -> Result<String, Error> {
    let graph = view.graph();
    let adj = crate::graph::Adjacency::new(graph, |i| view.pair_shown(i) && shown_pairs[i]);
    let mut stats = BTreeMap::new();
    let mut spmd = BTreeMap::new();
    for n in view.nodes() {
        let key = dot::node_key(graph.id(n));
        let task = graph.task(n);
        let blocks = task.and_then(|t| t.spmd_blocks()).unwrap_or(1);
        if blocks > 1 {
            spmd.insert(key.clone(), blocks);
        }
        let func = crate::text::func_label(graph, n);
        let peers = |list: &[u32]| -> Vec<String> {
            list.iter()
                .map(|&p| dot::node_key(graph.id(p as usize)))
                .collect()
        };
        stats.insert(
            key,
            NodeStats {
                label: graph.display(n),
                kind: graph.kind(n).as_str(),
                func,
                name_hint: dot::name_hint(graph, n, names),
                blocks,
                fanin: peers(adj.fanin(n)),
                fanout: peers(adj.fanout(n)),
                marker: dot::fire_marker(graph, &adj, n),
                pred_by_hint: by_hint(graph, adj.fanin(n), names),
                succ_by_hint: by_hint(graph, adj.fanout(n), names),
            },
        );
    }
    let name = input
        .file_name()
        .map_or_else(|| "deps.json".into(), |f| f.to_string_lossy().into_owned());
    let title = format!("{name} — {nodes} nodes, {edges} edges");
    let mut notes = Vec::new();
    if options.edge_mode != EdgeMode::Full {
        notes.push(format!(
            "edge mode: {} (other edges drawn faint)",
            options.edge_mode.name()
        ));
    }
    if options.focused {
        notes.push("neighbourhood view (--focus)".to_string());
    }
    notes.extend(graph.gaps().notes());
    let note = if notes.is_empty() {
        String::new()
    } else {
        format!("<span class=\"warn\">{}</span>", escape_html(&notes.join(" · ")))
    };
    Ok(PAGE
        .replace("@CSS@", CSS)
        .replace("@JS@", JS)
        .replace("@TITLE@", &escape_html(&title))
        .replace("@NOTE@", &note)
        .replace("@DEP_STATS@", &script_json(&stats)?)
        .replace("@SPMD_BLOCKS@", &script_json(&spmd)?)
        .replace("@SVG@", svg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(engine: Engine) -> HtmlOptions {
        HtmlOptions {
            engine,
            direction: Direction::Lr,
            show_tensor_info: false,
            edge_mode: EdgeMode::Full,
            focused: false,
            publish: Default::default(),
        }
    }

    #[test]
    fn size_limits() {
        let ok = |nodes, engine| check_size(nodes, 0, &options(engine)).unwrap();
        assert_eq!(ok(BROWSER_MAX_NODES, Engine::Sfdp), None);
        assert_eq!(ok(DOT_WARN_NODES, Engine::Dot), None);
        assert_eq!(
            ok(DOT_WARN_NODES + 1, Engine::Dot).as_deref(),
            Some(
                "warning: 1001 tasks with --engine dot can take minutes and gigabytes to lay out; \
                 --engine sfdp is much faster for graphs past 1000 tasks"
            )
        );
        assert_eq!(ok(DOT_WARN_NODES + 1, Engine::Sfdp), None);
        assert!(check_size(DOT_MAX_NODES, 0, &options(Engine::Dot)).is_ok());
        let err = check_size(DOT_MAX_NODES + 1, 0, &options(Engine::Dot))
            .unwrap_err()
            .to_string();
        assert!(err.contains("refused past 3000. Use --engine sfdp"), "{err}");
        assert_eq!(ok(DOT_MAX_NODES + 1, Engine::Sfdp), None);
        let err = check_size(10, BROWSER_MAX_EDGES + 1, &options(Engine::Sfdp))
            .unwrap_err()
            .to_string();
        assert!(err.contains("--focus TASK --depth K"), "{err}");
    }

    #[test]
    fn script_json_cannot_close_the_script_element() {
        let text = script_json(&"</script><!--<script>").unwrap();
        assert_eq!(text, r#""\u003c/script\u003e\u003c!--\u003cscript\u003e""#);
    }
}
