//! The dependency pairs of a deps.json, read with the streaming reader of
//! `simpler_artifacts::deps` (only `pred` and `succ` of each edge are kept).

use std::path::Path;

use serde::de::IgnoredAny;
use serde::Deserialize;
use simpler_artifacts::deps::{read_deps, u64_string, DepsElement, DepsReadError, DepsSink};

/// The endpoints of one `edges[]` entry; every other field is skipped.
#[derive(Deserialize)]
struct Ends {
    #[serde(with = "u64_string")]
    pred: u64,
    #[serde(with = "u64_string")]
    succ: u64,
}

impl DepsElement for Ends {}

/// Collects edge endpoints; tasks and tensors are skipped unparsed.
#[derive(Default)]
struct PairSink {
    pairs: Vec<(u64, u64)>,
}

impl DepsSink for PairSink {
    type Task = IgnoredAny;
    type Tensor = IgnoredAny;
    type Edge = Ends;

    fn task(&mut self, _: IgnoredAny) {}

    fn tensor(&mut self, _: IgnoredAny) {}

    fn edge(&mut self, edge: Ends) {
        self.pairs.push((edge.pred, edge.succ));
    }
}

/// The unique `(pred, succ)` task pairs of a deps.json.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepPairs {
    /// Unique pairs, sorted by `(pred, succ)`.
    pub pairs: Vec<(u64, u64)>,
    /// Number of annotated `edges[]` rows they came from.
    pub annotated_edges: usize,
}

impl DepPairs {
    /// Builds the unique pairs from annotated edge endpoints (duplicates allowed).
    pub fn from_edges(mut pairs: Vec<(u64, u64)>) -> DepPairs {
        let annotated_edges = pairs.len();
        pairs.sort_unstable();
        pairs.dedup();
        pairs.shrink_to_fit();
        DepPairs {
            pairs,
            annotated_edges,
        }
    }

    /// Streams the deps.json at `path`; errors name the file and the JSON location.
    pub fn load(path: &Path) -> Result<DepPairs, DepsReadError> {
        let mut sink = PairSink::default();
        read_deps(path, &mut sink)?;
        Ok(DepPairs::from_edges(sink.pairs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_projected_and_deduplicated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        std::fs::write(
            &path,
            r#"{"tasks":[{"task_id":"0"}],"tensors":[],"edges":[
                {"pred":"0","succ":"4294967296","arg":0,"source":"creator"},
                {"pred":"0","succ":"4294967296","arg":1,"source":"tensormap"},
                {"pred":"0","succ":"1","arg":-1,"source":"explicit"}]}"#,
        )
        .unwrap();
        let p = DepPairs::load(&path).unwrap();
        assert_eq!(p.pairs, [(0, 1), (0, 4_294_967_296)]);
        assert_eq!(p.annotated_edges, 3);
    }

    #[test]
    fn an_edge_without_succ_names_file_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        std::fs::write(
            &path,
            "{\"tasks\":[],\"tensors\":[],\n\"edges\":[{\"pred\":\"0\"}]}",
        )
        .unwrap();
        let err = DepPairs::load(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}:2:21: invalid deps.json: missing field `succ`", path.display())
        );
    }
}
