//! The name map: `name_map.json` beside the artifacts, in the original's shape
//! (`{"level":2,"orchestrator_name":..,"callable_id_to_name":{"<func_id>":"<name>"}}`), so
//! the viewers (ours and the original's) can label kernels and the orchestrator. Written when
//! the run starts, whenever any diagnostic is on; the orchestrator's name is the run's subject.

use std::path::Path;

use simpler_artifacts::manifest::{DiagnosticEntry, Outcome};
use simpler_artifacts::publish::{publish_with, Options};

use super::{file_entry, Collector, Finals, Outcomes, Probes, RunFacts, StartCtx};

/// File name of the artifact under the output prefix.
pub const ARTIFACT: &str = "name_map.json";
/// The diagnostic's name in the run manifest.
pub const NAME: &str = "name_map";

/// Writes the name map when any diagnostic is on; its outcome is reported at close.
pub(crate) fn start<'a>(
    ctx: &StartCtx<'a>,
    _: &mut Probes,
) -> Result<Option<Box<dyn Collector + 'a>>, crate::collectors::DiagnosticsError> {
    if !ctx.cfg.any_diagnostic() {
        return Ok(None);
    }
    let map = simpler_artifacts::name_map::NameMap::from_pairs(
        ctx.kernels
            .iter()
            .filter_map(|k| Some((i32::try_from(k.func_id).ok()?, k.name.clone()))),
    )
    .with_orchestrator_name(ctx.cfg.subject.clone());
    let text = map.to_json();
    let dest = ctx.prefix.join(ARTIFACT);
    let entry = match publish_with(&dest, Options::closing(true), |w| {
        std::io::Write::write_all(w, text.as_bytes())
    }) {
        Ok(p) => DiagnosticEntry {
            name: NAME.into(),
            outcome: Outcome::Written,
            reason: None,
            files: vec![file_entry(ctx.prefix, &p.path, p.bytes)],
        },
        Err(e) => DiagnosticEntry {
            name: NAME.into(),
            outcome: Outcome::Failed,
            reason: Some(e.to_string()),
            files: vec![],
        },
    };
    Ok(Some(Box::new(NameMap { entry })))
}

/// The name map's outcome, decided at start.
struct NameMap {
    entry: DiagnosticEntry,
}

impl Collector for NameMap {
    fn close(self: Box<Self>, _: &Path, _: &RunFacts, _: &mut Finals, out: &mut Outcomes) {
        out.entries.push(self.entry);
    }
}
