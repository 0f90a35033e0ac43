//! `simpler scope-stats-plot`: turns `scope_stats/scope_stats.jsonl` into one self-contained,
//! offline HTML report (`../shared/spec/scope-stats.md` §1 Step 3 and "Reading the report", §3).
//!
//! ```text
//! simpler scope-stats-plot path/to/scope_stats.jsonl              # writes scope_stats.html next to it
//! simpler scope-stats-plot path/to/scope_stats.jsonl --out-dir /tmp/report
//! ```
//!
//! # Pipeline
//!
//! 1. `load`: stream the file once (progress bar on stderr for big inputs), pair
//!    begin/end samples by nesting per ring and site, keep per-scope metrics only.
//! 2. `metrics`: the three metrics, peaks, capacities and usage percentages.
//! 3. `status`: the sampling status ("healthy" or what is wrong).
//! 4. `page` + `panels` + `chart`: the HTML,
//!    with inline SVG charts (reduced by `reduce` for long series, never losing
//!    the peak) and an inline script for tooltips and the enlarge-on-click modal.
//!
//! # Input errors
//!
//! A missing file, an empty file, a first line that is not metadata, or a malformed line is an
//! [`Error`] naming the file and the line ([`ErrorKind`] tells which, with [`Error::line`]). A
//! final line cut off mid-write is not: the report says the file is incomplete and renders
//! everything before it.

#![warn(missing_docs)]

mod chart;
mod error;
mod format;
mod load;
mod metrics;
mod page;
mod panels;
mod plan_section;
mod progress;
mod reduce;
mod status;
mod ticks;

use std::path::{Path, PathBuf};

use simpler_artifacts::provenance::Provenance;

pub use error::{Error, ErrorKind};

/// The report's file name, written next to the input or into `--out-dir`.
pub const REPORT_FILE_NAME: &str = "scope_stats.html";

/// Command-line arguments of `simpler scope-stats-plot`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Path to a scope_stats.jsonl produced by a run with --enable-scope-stats.
    pub jsonl: PathBuf,
    /// Where to write scope_stats.html (created if missing; default: next to the input).
    #[arg(long = "out-dir", value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Runs the subcommand: renders the report and prints one line naming the file written.
pub fn run(args: Args) -> Result<(), Error> {
    let path = render_report(&args.jsonl, args.out_dir.as_deref())?;
    simpler_artifacts::outln!("wrote {}", path.display());
    Ok(())
}

/// Renders `jsonl` into `<out_dir or the input's directory>/scope_stats.html`, creating the
/// directory if needed, and returns the path written. `simpler run` calls this after a run
/// with `--enable-scope-stats`.
pub fn render_report(jsonl: &Path, out_dir: Option<&Path>) -> Result<PathBuf, Error> {
    let run_warning = simpler_artifacts::manifest::check(jsonl);
    if let Some(w) = &run_warning {
        simpler_artifacts::errln!("warning: {w}");
    }
    let dir = match out_dir {
        Some(d) => d.to_path_buf(),
        None => match jsonl.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        },
    };
    let out = dir.join(REPORT_FILE_NAME);
    // Noted before the read: the report is refused if the samples are replaced meanwhile.
    let made_from = Provenance::of(&[jsonl]);
    let foreign = made_from.foreign_destination(&out);
    if let Some(w) = &foreign {
        simpler_artifacts::errln!("warning: {w}");
    }
    let loaded = load::load(jsonl)?;
    // Said on the console as well as in the report (found by a review: only the HTML did).
    if let Some(t) = &loaded.truncated {
        simpler_artifacts::errln!("warning: {}: incomplete file: {t}", jsonl.display());
    } else if let Some(why) = loaded.meta.missing_samples(loaded.samples) {
        simpler_artifacts::errln!("warning: {}: {why}", jsonl.display());
    }
    if let Some(v) = loaded.meta.version.filter(|v| !(4..=6).contains(v)) {
        simpler_artifacts::errln!("warning: {}: {}", jsonl.display(), unknown_schema(v));
    }
    let file_name = jsonl.file_name().map_or_else(
        || jsonl.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let plan = plan_section::load_beside(jsonl);
    let origin = match simpler_artifacts::manifest::run_id_of(jsonl) {
        Some(run) => format!("{} (run {run})", jsonl.display()),
        None => format!("{} (listed by no run's manifest)", jsonl.display()),
    };
    let source = page::Source {
        file_name: &file_name,
        origin: &origin,
        run_warning: run_warning.as_deref(),
        foreign: foreign.as_deref(),
    };
    let html = page::render(&loaded, &source, plan.as_ref());
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(ErrorKind::CreateDir { dir, source }.into());
    }
    let _hold = made_from.hold(&out)?;
    // The file's name is the tool's (only its folder is the user's): a link there is replaced.
    let options = simpler_artifacts::publish::Options::default().chosen_name();
    simpler_artifacts::publish::publish_bytes_with(&out, options, html.as_bytes())?;
    Ok(out)
}

/// What the report says of a metadata `version` this reader does not know (it knows 4 to 6,
/// the original's, and the spec schema, which has none).
pub(crate) fn unknown_schema(version: u64) -> String {
    format!(
        "unknown schema version {version} (this reader knows 4 to 6 and the spec schema without a \
         version): read as the spec schema, keys it does not know ignored; figures may be missing or misread"
    )
}
