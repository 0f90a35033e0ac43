//! Command-line flags ([`Args`]) and the checks that need more than one flag.

use std::path::PathBuf;

use clap::ValueEnum;

/// `simpler deps-viewer`: a text or HTML view of a deps.json dependency graph.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// The deps.json to view [default: that of the newest run under ./outputs/ (the folder of
    /// the newest run.json); an error if it has none].
    #[arg(value_name = "DEPS_JSON")]
    pub deps_json: Option<PathBuf>,
    /// Output file (default: deps_viewer.txt / deps_viewer.html next to DEPS_JSON;
    /// `deps_viewer_<mode>.*` for other edge modes); never the DEPS_JSON being viewed, the
    /// run.json beside it, or a file that run.json lists as the run's artifact.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Graphviz layout engine (HTML only) [default: dot]; sfdp suits graphs past 1,000 nodes.
    #[arg(long, value_enum)]
    pub engine: Option<Engine>,
    /// Layout direction (HTML only) [default: LR].
    #[arg(long, value_enum)]
    pub direction: Option<Direction>,
    /// Kernel id → name map: a flat `{"<id>": "<name>"}` object or `{"callable_id_to_name": {...}}`
    /// [default: the run's own name_map*.json (per run.json), else the newest next to DEPS_JSON].
    #[arg(long, value_name = "PATH")]
    pub func_names: Option<PathBuf>,
    /// HTML only: draw per-task tensor rows and route edges to argument ports.
    #[arg(long)]
    pub show_tensor_info: bool,
    /// Which edges to show: all, the transitive reduction, or only what the reduction drops;
    /// the `_dataflow` modes also drop creator edges that byte ranges prove redundant.
    #[arg(long, value_enum, default_value_t = EdgeMode::Full)]
    pub edge_mode: EdgeMode,
    /// Show only the neighbourhood of one task: a raw id (4294967296) or "RING,LOCAL" ("1,0").
    #[arg(long, value_name = "TASK")]
    pub focus: Option<String>,
    /// With --focus: how many dependency hops to follow upstream and downstream [default: 2].
    #[arg(long, value_name = "K", requires = "focus")]
    pub depth: Option<u32>,
}

/// Output format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Plain text for grep and diff (no Graphviz needed).
    #[default]
    Text,
    /// Self-contained pan/zoom HTML page around a Graphviz SVG.
    Html,
}

/// Graphviz layout engine; each is the Graphviz binary of the same name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// Layered layout (best for DAGs up to about 1,000 nodes).
    #[default]
    Dot,
    /// Spring model.
    Neato,
    /// Scalable force-directed layout (large graphs).
    Sfdp,
    /// Force-directed layout.
    Fdp,
    /// Circular layout.
    Circo,
    /// Radial layout.
    Twopi,
}

impl Engine {
    /// The Graphviz program name.
    pub fn program(self) -> &'static str {
        match self {
            Engine::Dot => "dot",
            Engine::Neato => "neato",
            Engine::Sfdp => "sfdp",
            Engine::Fdp => "fdp",
            Engine::Circo => "circo",
            Engine::Twopi => "twopi",
        }
    }
}

/// Graphviz `rankdir`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Direction {
    /// Top to bottom.
    #[value(name = "TB")]
    Tb,
    /// Left to right.
    #[default]
    #[value(name = "LR")]
    Lr,
    /// Bottom to top.
    #[value(name = "BT")]
    Bt,
    /// Right to left.
    #[value(name = "RL")]
    Rl,
}

impl Direction {
    /// The `rankdir` value.
    pub fn rankdir(self) -> &'static str {
        match self {
            Direction::Tb => "TB",
            Direction::Lr => "LR",
            Direction::Bt => "BT",
            Direction::Rl => "RL",
        }
    }
}

/// Which edges a view shows (see [`crate::reduce`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum EdgeMode {
    /// Every edge.
    #[default]
    Full,
    /// Drop edges implied by a longer path, except those carrying a creator edge.
    Reduced,
    /// Only the edges `reduced` drops.
    Omitted,
    /// `reduced`, and also creator edges whose byte ranges prove them redundant
    /// ([`crate::dataflow`]).
    #[value(name = "reduced_dataflow")]
    ReducedDataflow,
    /// Only the edges `reduced_dataflow` drops.
    #[value(name = "omitted_dataflow")]
    OmittedDataflow,
}

impl EdgeMode {
    /// The mode's name, as used in default output file names.
    pub fn name(self) -> &'static str {
        match self {
            EdgeMode::Full => "full",
            EdgeMode::Reduced => "reduced",
            EdgeMode::Omitted => "omitted",
            EdgeMode::ReducedDataflow => "reduced_dataflow",
            EdgeMode::OmittedDataflow => "omitted_dataflow",
        }
    }

    /// Returns true if and only if the mode proves creator edges redundant by byte ranges.
    pub fn is_dataflow(self) -> bool {
        matches!(self, EdgeMode::ReducedDataflow | EdgeMode::OmittedDataflow)
    }
}

/// Default number of hops for `--focus` without `--depth`.
pub const DEFAULT_FOCUS_DEPTH: u32 = 2;

/// Refuses an `--output` that is the input itself (`-o deps.json` replaced the run's graph
/// with its view, and every later read of it failed).
pub(crate) fn check_output_is_not_input(
    output: &std::path::Path,
    input: &std::path::Path,
) -> Result<(), clap::Error> {
    let same = match (std::fs::canonicalize(output), std::fs::canonicalize(input)) {
        (Ok(o), Ok(i)) => o == i,
        _ => false,
    };
    if same {
        return Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            format!(
                "--output {} is the deps.json being viewed; choose another file\n",
                output.display()
            ),
        ));
    }
    Ok(())
}

/// Rejects HTML-only flags in text mode, as clap usage errors (exit code 2).
pub(crate) fn check_format_flags(args: &Args) -> Result<(), clap::Error> {
    if args.format == Format::Html {
        return Ok(());
    }
    let offending = [
        (args.engine.is_some(), "--engine"),
        (args.direction.is_some(), "--direction"),
        (args.show_tensor_info, "--show-tensor-info"),
    ];
    match offending.iter().find(|(present, _)| *present) {
        Some((_, flag)) => Err(clap::Error::raw(
            clap::error::ErrorKind::ArgumentConflict,
            format!("{flag} is only valid with --format html\n"),
        )),
        None => Ok(()),
    }
}
