//! `simpler deps-viewer`: views of a `deps.json` dependency graph.
//!
//! - **Text** (default, [`write_text_view`]): a SUMMARY, a one-line-per-task TASK INDEX and a
//!   FANIN/FANOUT block per task, for grep and diff. Streams the input; handles millions of
//!   tasks and edges.
//! - **HTML** (`--format html`): a Graphviz-laid-out SVG in a self-contained page with
//!   pan/zoom, a legend and a click-for-details panel.
//!
//! Both honour `--edge-mode` ([`reduce`], with byte-range proofs in [`dataflow`]) and
//! `--focus TASK --depth K` ([`focus`]).
//!
//! Modules, one job each: [`cli`] (flags), [`input`] (paths), [`graph`] (streaming load and
//! index), [`view`] (what is shown), [`reduce`], [`focus`], [`names`] (name maps),
//! [`sidecar`] (perf sidecar), [`text`], [`detail`] (argument details for HTML), [`dot`]
//! (DOT emission), [`graphviz`] (layout), [`html`] (the page), [`error`] (what can fail:
//! [`Error`] and its [`ErrorKind`]).

use std::path::{Path, PathBuf};

pub mod cli;
pub mod dataflow;
pub mod detail;
pub mod dot;
pub mod error;
pub mod focus;
pub mod graph;
pub mod graphviz;
pub mod html;
pub mod input;
pub mod names;
pub mod reduce;
pub mod sidecar;
pub mod text;
pub mod view;

pub use cli::{Args, Direction, EdgeMode, Engine, Format};
pub use error::{Error, ErrorKind};

use graph::{Graph, Kind};
use names::NameMap;
use simpler_artifacts::provenance::Provenance;
use view::View;

/// Runs `simpler deps-viewer`: writes the requested view and prints one line saying what was
/// written.
///
/// HTML-only flags in text mode fail with [`ErrorKind::Usage`], a [`clap::Error`] (exit code
/// 2 in the `simpler` binary). A missing or malformed input fails with [`ErrorKind::Read`],
/// whose message names the file and, for bad JSON, the line and column.
pub fn run(args: Args) -> Result<(), Error> {
    cli::check_format_flags(&args).map_err(ErrorKind::Usage)?;
    let input = input::resolve_input(args.deps_json.as_deref())?;
    // A missing input whose run folder says why (found by a review: the manifest check first
    // warned it was "not a file of" the run, then the read failed with "No such file").
    if !input.exists() {
        let folder = input
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Some(why) = simpler_artifacts::manifest::why_missing(folder, "dep_gen") {
            return Err(ErrorKind::Missing { path: input, why }.into());
        }
    }
    let warning = warn_if_untrusted(&input);
    let focus = args.focus.as_deref().map(focus::parse_task_ref).transpose()?;
    // A link at a name the tool chose is replaced, not written through (`chosen_name`).
    let publish = match args.output {
        Some(_) => simpler_artifacts::publish::Options::default(),
        None => simpler_artifacts::publish::Options::default().chosen_name(),
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| input::default_output(&input, args.format, args.edge_mode, focus));
    cli::check_output_is_not_input(&output, &input).map_err(ErrorKind::Usage)?;
    if let Some(why) = simpler_artifacts::manifest::output_conflict(&output, &[&input]) {
        return Err(ErrorKind::Usage(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            format!("{why}\n"),
        ))
        .into());
    }
    // Noted before the read: the view is refused if the graph is replaced meanwhile beside it.
    let made_from = Provenance::of(&[&input]);
    if let Some(w) = made_from.foreign_destination(&output) {
        simpler_artifacts::errln!("warning: {w}");
    }
    let graph = Graph::load(&input)?;
    for note in graph.gaps().notes() {
        simpler_artifacts::errln!("note: {}: {note}", input.display());
    }
    let names = names::resolve(args.func_names.as_deref(), &input)?;

    let reduction = match args.edge_mode {
        EdgeMode::Full => None,
        EdgeMode::Reduced | EdgeMode::Omitted => Some(reduce::reduce(&graph)?),
        EdgeMode::ReducedDataflow | EdgeMode::OmittedDataflow => {
            let structural = reduce::reduce(&graph)?;
            Some(dataflow::refine(&input, &graph, structural)?)
        }
    };
    if let Some(r) = &reduction {
        report_reduction(&graph, r, args.edge_mode);
    }
    let nodes = match focus {
        Some(id) => Some(focus::neighbourhood(
            &graph,
            id,
            args.depth.unwrap_or(cli::DEFAULT_FOCUS_DEPTH),
        )?),
        None => None,
    };

    match args.format {
        Format::Text => {
            let pairs = reduce::select(args.edge_mode, graph.pairs().len(), reduction.as_ref());
            let view = View::new(&graph, nodes, pairs);
            let counts = write_text_file(
                &input,
                &output,
                &view,
                names.as_ref(),
                warning,
                &made_from,
                publish,
            )?;
            simpler_artifacts::outln!(
                "Wrote {} ({} tasks, {} unique edges, {} annotated edges, format=text)",
                output.display(),
                counts.tasks,
                counts.unique_edges,
                counts.annotated_edges
            );
        }
        Format::Html => {
            let options = html::HtmlOptions {
                engine: args.engine.unwrap_or_default(),
                direction: args.direction.unwrap_or_default(),
                show_tensor_info: args.show_tensor_info,
                edge_mode: args.edge_mode,
                focused: focus.is_some(),
                publish,
            };
            let shown = reduce::select(args.edge_mode, graph.pairs().len(), reduction.as_ref());
            let view = View::new(&graph, nodes, vec![true; graph.pairs().len()]);
            let stats = html::write_html_view(
                &input,
                &output,
                &view,
                &shown,
                names.as_ref(),
                &options,
                &made_from,
            )?;
            simpler_artifacts::outln!(
                "Wrote {} ({} nodes, {} edges, engine={}, format=html)",
                output.display(),
                stats.nodes,
                stats.edges,
                options.engine.program()
            );
        }
    }
    Ok(())
}

/// Writes the full text view of `deps_json` to `deps_viewer.txt` next to it (using a sibling
/// `name_map*.json` if there is one) and returns the path written. This is what
/// `simpler run --enable-dep-gen` calls after writing deps.json.
pub fn write_text_view(deps_json: &Path) -> Result<PathBuf, Error> {
    let warning = warn_if_untrusted(deps_json);
    let output = input::default_output(deps_json, Format::Text, EdgeMode::Full, None);
    let made_from = Provenance::of(&[deps_json]);
    let graph = Graph::load(deps_json)?;
    let names = names::resolve(None, deps_json)?;
    write_text_file(
        deps_json,
        &output,
        &View::full(&graph),
        names.as_ref(),
        warning,
        &made_from,
        simpler_artifacts::publish::Options::default().chosen_name(),
    )?;
    Ok(output)
}

fn write_text_file(
    input: &Path,
    output: &Path,
    view: &View<'_>,
    names: Option<&NameMap>,
    warning: Option<String>,
    made_from: &Provenance,
    publish: simpler_artifacts::publish::Options,
) -> Result<text::Counts, Error> {
    let unlisted = view.graph().unlisted_succs().map(|(id, n)| {
        format!(
            "{}: {n} task(s) with predecessors are not in tasks[] (first: {}): only alloc tasks are left \
             out, and they have none; shown as kind=unknown",
            input.display(),
            graph::display_id(id, true)
        )
    });
    if let Some(w) = &unlisted {
        simpler_artifacts::errln!("warning: {w}");
    }
    let warning = match (warning, unlisted) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    };
    let summary = text::Summary {
        source: input.display().to_string(),
        perf_sidecar: sidecar::perf_sidecar_loaded(input),
        func_name_map: names.is_some_and(|m| any_name_resolved(view, m)),
        warning,
    };
    let _hold = made_from.hold(output)?;
    let published =
        simpler_artifacts::publish::publish_with(output, publish, |w| text::write_text(w, view, &summary))?;
    Ok(published.value)
}

/// Prints the run manifest's warning about `input` (a failed run, a stale or changed file)
/// and returns it for the view.
fn warn_if_untrusted(input: &Path) -> Option<String> {
    let warning = simpler_artifacts::manifest::check(input);
    if let Some(w) = &warning {
        simpler_artifacts::errln!("warning: {w}");
    }
    warning
}

/// Returns true if and only if some shown submitted task has a kernel the map names.
fn any_name_resolved(view: &View<'_>, names: &NameMap) -> bool {
    let graph = view.graph();
    view.nodes().any(|n| {
        graph.kind(n) == Kind::Submit
            && graph
                .task(n)
                .and_then(|t| t.slots())
                .is_some_and(|s| s.iter().any(|&k| k >= 0 && names.get(k).is_some()))
    })
}

/// How many removed/shown edges `report_reduction` lists before summarising the rest.
const LISTED_REDUCTION_EDGES: usize = 100;

fn report_reduction(graph: &Graph, r: &reduce::Reduction, mode: EdgeMode) {
    if !r.is_dag {
        let shows = match mode {
            EdgeMode::Omitted | EdgeMode::OmittedDataflow => format!(
                "no edge is called redundant, so --edge-mode {} shows none",
                mode.name()
            ),
            _ => format!(
                "nothing is dropped, so --edge-mode {} shows every edge",
                mode.name()
            ),
        };
        simpler_artifacts::errln!("warning: the graph has a cycle (a runtime never writes one); {shows}");
        return;
    }
    let total = graph.pairs().len();
    let dropped = r.dropped_count();
    let verified = if mode.is_dataflow() {
        " (dataflow-verified)"
    } else {
        ""
    };
    match mode {
        EdgeMode::Reduced | EdgeMode::ReducedDataflow => simpler_artifacts::outln!(
            "Transitive reduction{verified}: removed {dropped} redundant edge(s) of {total} ({} kept)",
            total - dropped
        ),
        _ => {
            simpler_artifacts::outln!("Redundant edges only{verified}: showing {dropped} of {total} edge(s)")
        }
    }
    let listed = graph.pairs().iter().zip(&r.dropped).filter(|(_, &d)| d);
    for (p, _) in listed.clone().take(LISTED_REDUCTION_EDGES) {
        simpler_artifacts::outln!(
            "  - {} -> {}",
            graph.display(p.pred as usize),
            graph.display(p.succ as usize)
        );
    }
    if dropped > LISTED_REDUCTION_EDGES {
        simpler_artifacts::outln!("  ... and {} more", dropped - LISTED_REDUCTION_EDGES);
    }
}
