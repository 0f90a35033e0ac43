//! Built-in examples, workload files and `--from-deps` re-runs from Python: the same runners as
//! `simpler run`, with a Python `CallConfig` as the command line's settings layer. Each returns
//! `(report, checks)`, `checks` a list of `(passed, description)`.

use std::path::PathBuf;

use pyo3::prelude::*;
use simpler_runtime::RunError;
use simpler_workloads::{Outcome, Overrides};

use crate::errors::WorkloadError;
use crate::report::PyReport;
use crate::worker::finish;

/// The layer with the wired edges recorded unless it says otherwise (`Report.edges`).
fn edges_on(mut s: simpler_runtime::config::Settings) -> simpler_runtime::config::Settings {
    s.record_fanin = s.record_fanin.or(Some(true));
    s
}

/// `(passed, description)` of each golden check.
type Checks = Vec<(bool, String)>;

/// An error and its causes, `": "`-joined (what `simpler` prints with `{:#}`).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A runner's error: its run error as the run's exception, anything else as `WorkloadError`.
fn failed(py: Python<'_>, run: Result<RunError, String>, render_views: bool) -> PyErr {
    match run {
        Ok(e) => match finish(py, Err(e), render_views, Default::default()) {
            Err(err) => err,
            Ok(_) => WorkloadError::new_err("the run failed without an error"),
        },
        Err(text) => WorkloadError::new_err(text),
    }
}

/// Records the first failed golden check in the run's manifest (`failed_check`), as
/// `simpler run` does: the same run from Python leaves the same `run.json`, and every tool
/// that reads its artifacts says their results were wrong.
fn record_failed_check(report: &mut simpler_runtime::RunReport, checks: &[(bool, String)]) {
    if let (Some((_, detail)), Some(output)) = (checks.iter().find(|c| !c.0), report.output.as_mut()) {
        output.record_failed_check(detail.clone());
    }
}

fn workload_outcome(py: Python<'_>, mut o: Outcome, render_views: bool) -> PyResult<(Py<PyReport>, Checks)> {
    let mut checks: Checks = o.checks.iter().map(|c| (c.passed(), c.describe())).collect();
    // The golden checks only: a re-run's wired edges are not a result check (nor are they
    // for `simpler run --from-deps`).
    record_failed_check(&mut o.report, &checks);
    if let Some(fd) = &o.from_deps {
        // What the re-run approximated, as `simpler run --from-deps` says it (found by a
        // review: a passing re-run from Python said nothing of it).
        for a in &fd.approximations {
            simpler_artifacts::errln!("approximated: {a}");
        }
        let e = &fd.edges;
        checks.push((
            fd.complete(),
            format!(
                "{} of {} captured edges wired; {} missing, {} extra; {} not reproduced",
                e.captured - e.missing.len(),
                e.captured,
                e.missing.len(),
                e.extra.len(),
                fd.not_reproduced.len()
            ),
        ));
    }
    let report = finish(py, Ok(o.report), render_views, Default::default())?;
    Ok((report, checks))
}

/// Runs the built-in example `name` with `params` (`"KEY=VALUE"`) and its golden check.
#[pyfunction]
#[pyo3(signature = (name, params, config, render_views = false))]
fn run_example(
    py: Python<'_>,
    name: &str,
    params: Vec<String>,
    config: &Bound<'_, PyAny>,
    render_views: bool,
) -> PyResult<(Py<PyReport>, Checks)> {
    let Some(ex) = simpler_examples::find(name) else {
        let names: Vec<_> = simpler_examples::all().iter().map(|e| e.name()).collect();
        return Err(WorkloadError::new_err(format!(
            "unknown example `{name}`; built-in examples: {}",
            names.join(", ")
        )));
    };
    let params = simpler_examples::Params::parse(ex.name(), &params, ex.params())
        .map_err(|e| WorkloadError::new_err(chain(&e)))?;
    let mut settings = edges_on(crate::config::settings(config)?);
    settings.subject = settings
        .subject
        .or_else(|| Some(format!("{} ({})", ex.name(), params.case_name(ex.params()))));
    let cfg = settings.into_config();
    let outcome = py.detach(|| ex.run(&cfg, &params));
    match outcome {
        Ok(mut o) => {
            let checks = vec![(o.golden.passed(), o.golden.describe())];
            record_failed_check(&mut o.report, &checks);
            Ok((
                finish(py, Ok(o.report), render_views, Default::default())?,
                checks,
            ))
        }
        Err(e) => Err(failed(
            py,
            e.into_run_error().map_err(|e| chain(&e)),
            render_views,
        )),
    }
}

/// The workload runner's overrides: the config as the command line's layer.
fn overrides(config: &Bound<'_, PyAny>, params: Vec<String>, allow_incomplete: bool) -> PyResult<Overrides> {
    Ok(Overrides {
        settings: edges_on(crate::config::settings(config)?),
        params,
        allow_incomplete,
    })
}

/// Runs a workload-runner call without the GIL; its outcome, or its error as the exception.
fn run_file(
    py: Python<'_>,
    render_views: bool,
    run: impl FnOnce() -> Result<Outcome, simpler_workloads::Error> + Send,
) -> PyResult<(Py<PyReport>, Checks)> {
    match py.detach(run) {
        Ok(outcome) => workload_outcome(py, outcome, render_views),
        Err(e) => Err({
            // What a stopped `--from-deps` re-run approximated, as `simpler run` says it.
            for a in e.approximations() {
                simpler_artifacts::errln!("approximated: {a}");
            }
            failed(py, e.into_run_error().map_err(|e| chain(&e)), render_views)
        }),
    }
}

/// Runs the workload file at `path` (`docs/workloads.md`) with `params` (`"NAME=VALUE"`).
/// When the file turns a diagnostic on and neither it nor `config` names a folder, the
/// artifacts go to a new `outputs/<folder_base>_<stamp>/`, as `simpler run FILE.json` does.
#[pyfunction]
#[pyo3(signature = (path, params, config, render_views = false, folder_base = None))]
fn run_workload(
    py: Python<'_>,
    path: PathBuf,
    params: Vec<String>,
    config: &Bound<'_, PyAny>,
    render_views: bool,
    folder_base: Option<String>,
) -> PyResult<(Py<PyReport>, Checks)> {
    let w = simpler_workloads::load(&path).map_err(|e| WorkloadError::new_err(chain(&e)))?;
    let mut o = overrides(config, params, false)?;
    let merged = w.settings().clone().overlaid(&o.settings);
    let mut made = None;
    if let Some(base) = folder_base.filter(|_| merged.any_diagnostic() && merged.output_prefix.is_none()) {
        let folder = output_folder(&base)?;
        o.settings.output_prefix = Some(folder.clone());
        made = Some(folder);
    }
    let result = run_file(py, render_views, || simpler_workloads::run_workload(&w, &o));
    if result.is_err() {
        if let Some(folder) = made {
            remove_if_empty(&folder);
        }
    }
    result
}

/// Removes `folder` if it is an empty folder: one this call made for a run that then never
/// claimed it (its config refused), so that a failed call leaves no empty artifact folder.
/// A folder with anything in it is left alone.
fn remove_if_empty(folder: &std::path::Path) {
    let _ = std::fs::remove_dir(folder); // fails, and removes nothing, unless empty
}

/// Re-runs the tasks of a captured deps.json (no-op kernels, same views and deps).
#[pyfunction]
#[pyo3(signature = (path, config, allow_incomplete = false, render_views = false))]
fn run_from_deps(
    py: Python<'_>,
    path: PathBuf,
    config: &Bound<'_, PyAny>,
    allow_incomplete: bool,
    render_views: bool,
) -> PyResult<(Py<PyReport>, Checks)> {
    let o = overrides(config, Vec::new(), allow_incomplete)?;
    run_file(py, render_views, || simpler_workloads::run_from_deps(&path, &o))
}

/// Creates and returns a new output folder `outputs/<base>_<UTC stamp>[_N]` (relative to the
/// working directory), as `simpler run` picks one; `base` is sanitized as the original's scene
/// tests do (alphanumerics and `._-` kept, anything else `_`), and cut to
/// [`simpler_artifacts::output_folder::MAX_BASE_NAME`] bytes with a hash when longer.
#[pyfunction]
fn output_folder(base: &str) -> PyResult<PathBuf> {
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let clean = simpler_artifacts::output_folder::bounded_name(&clean);
    let name = format!("{clean}_{}", simpler_artifacts::time::utc_stamp());
    simpler_artifacts::output_folder::unique_folder(std::path::Path::new("outputs"), &name)
        .map_err(|e| WorkloadError::new_err(format!("creating outputs/{name}: {e}")))
}

/// Names of the built-in examples.
#[pyfunction]
fn examples() -> Vec<&'static str> {
    simpler_examples::all().iter().map(|e| e.name()).collect()
}

/// Adds the functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_example, m)?)?;
    m.add_function(wrap_pyfunction!(run_workload, m)?)?;
    m.add_function(wrap_pyfunction!(run_from_deps, m)?)?;
    m.add_function(wrap_pyfunction!(examples, m)?)?;
    m.add_function(wrap_pyfunction!(output_folder, m)?)?;
    Ok(())
}
