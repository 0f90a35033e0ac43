//! Runnable orchestrations behind `simpler run <example>`: each builds its inputs, runs on a
//! [`Worker`](simpler_runtime::Worker) and checks its outputs against a golden.
//!
//! Everything that can fail returns an [`Error`]; its [`ErrorKind`] tells a bad `--param`
//! (with the key, value and rule) from a runtime error ([`ErrorKind::Run`]).

pub mod bench;
pub mod chain_barrier;
pub mod edge_sources;
mod error;
mod params;
pub mod vector_example;

use simpler_runtime::{CallConfig, RunReport};

pub use error::{Error, ErrorKind};
pub use params::{ParamSpec, Params};

/// The result of comparing outputs with their golden values.
#[derive(Clone, Debug, PartialEq)]
pub struct Golden {
    /// Elements compared.
    pub checked: u64,
    /// Elements that differ.
    pub mismatches: u64,
    /// The first mismatch, if any: (index, got, expected).
    pub first_mismatch: Option<(u64, f64, f64)>,
}

impl Golden {
    /// Compares `got` with `expected(k)` (exact for integers, 1e-5 relative for floats).
    pub fn compare<T: Copy + Into<f64>>(got: &[T], expected: impl Fn(u64) -> f64) -> Golden {
        let mut g = Golden {
            checked: 0,
            mismatches: 0,
            first_mismatch: None,
        };
        for (k, &v) in got.iter().enumerate() {
            let (v, e) = (v.into(), expected(k as u64));
            g.checked += 1;
            if (v - e).abs() > 1e-5 * e.abs().max(1.0) {
                g.mismatches += 1;
                g.first_mismatch.get_or_insert((k as u64, v, e));
            }
        }
        g
    }
    /// True when every element matched.
    pub fn passed(&self) -> bool {
        self.mismatches == 0 && self.checked > 0
    }
    /// One line for the summary.
    pub fn describe(&self) -> String {
        match self.first_mismatch {
            None => format!("golden OK ({} elements)", self.checked),
            Some((k, got, want)) => format!(
                "golden FAILED: {} of {} elements differ; first at [{k}]: got {got}, expected {want}",
                self.mismatches, self.checked
            ),
        }
    }
}

/// A finished example run.
#[derive(Debug)]
pub struct Outcome {
    /// The runtime's report.
    pub report: RunReport,
    /// The golden comparison.
    pub golden: Golden,
}

/// A runnable example.
pub trait Example: Sync {
    /// Its name on the command line.
    fn name(&self) -> &'static str;
    /// One line about it.
    fn about(&self) -> &'static str;
    /// The parameters it accepts.
    fn params(&self) -> &'static [ParamSpec];
    /// Runs it with `cfg`.
    fn run(&self, cfg: &CallConfig, params: &Params) -> Result<Outcome, Error>;
}

/// Every built-in example.
pub fn all() -> &'static [&'static dyn Example] {
    &[
        &vector_example::VectorExample,
        &chain_barrier::ChainBarrier,
        &edge_sources::EdgeSources,
    ]
}

/// The example called `name`.
pub fn find(name: &str) -> Option<&'static dyn Example> {
    all().iter().copied().find(|e| e.name() == name)
}
