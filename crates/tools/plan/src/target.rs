//! What `plan` re-runs: a workload file, a built-in example, or a captured deps.json
//! (`--from-deps` replay), each with a proposed `runtime_env`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use simpler_examples::{Example, Params};
use simpler_runtime::config::Settings;
use simpler_runtime::{FatalCode, RunError, RunReport, RuntimeEnv, RuntimeKind};
use simpler_workloads::{Overrides, Workload};

use crate::error::{Error, ErrorKind};

/// A graph that can be run again with other ring sizes.
pub enum Target {
    /// A workload file.
    Workload {
        /// The file.
        path: PathBuf,
        /// Its loaded form.
        workload: Box<Workload>,
    },
    /// A built-in example with `--param` pairs (`KEY=VALUE`; the defaults fill the rest).
    Example {
        /// The example.
        example: &'static dyn Example,
        /// Its `KEY=VALUE` parameters, checked against the example's when the target is made.
        params: Vec<String>,
        /// The run folder's `run.json` they were read from, if they were: a value the example
        /// refuses is then that file's, not a `--param` flag's ([`Target::recorded_example`]).
        recorded_in: Option<PathBuf>,
    },
    /// A captured deps.json, replayed with no-op kernels.
    Deps(PathBuf),
}

/// How one run with a candidate configuration ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trial {
    /// Completed with a correct result (golden checks, or a complete replay).
    Passed {
        /// Wall time of the run.
        wall: Duration,
        /// What a replay reproduced only approximately (empty for a workload file or an
        /// example): the run's own report, so the plan need not read the deps.json again.
        approximations: Vec<String>,
    },
    /// Stopped on a fatal.
    Fatal {
        /// The code.
        code: FatalCode,
        /// The fatal's message (it names the scope site).
        message: String,
    },
    /// Completed with a wrong result, or failed otherwise (configuration refused, ...).
    Failed {
        /// Why.
        message: String,
    },
}

impl Trial {
    /// True for [`Trial::Passed`].
    pub fn passed(&self) -> bool {
        matches!(self, Trial::Passed { .. })
    }
}

impl Target {
    /// Resolves `input`: an existing `*.json` file is a deps.json when it has the `tasks` or
    /// the `edges` of a captured graph (keys no workload file has), a workload file otherwise;
    /// anything else names a built-in example. A file that is not JSON is an error as such
    /// (before, a cut deps.json was read as a workload and refused for its `tasks` key).
    /// `params` (`--param KEY=VALUE`) belong to an example, and are an error for a file.
    pub fn resolve(input: &Path, params: &[String]) -> Result<Target, Error> {
        if input.is_file() && !params.is_empty() {
            return Err(ErrorKind::ParamsNeedExample {
                path: input.to_path_buf(),
            }
            .into());
        }
        if input.is_file() {
            let is_deps = is_deps_json(input)?;
            if is_deps {
                // Found by a review: the replay refused it with `run --from-deps`'s advice, a
                // flag `plan` does not take (a plan of part of a graph would size its rings
                // for that part).
                if let Some(why) = simpler_artifacts::manifest::check_complete(input) {
                    return Err(incomplete_graph(input, why));
                }
                return Ok(Target::Deps(input.to_path_buf()));
            }
            let workload = simpler_workloads::load(input).map_err(ErrorKind::Workload)?;
            return Ok(Target::Workload {
                path: input.to_path_buf(),
                workload: Box::new(workload),
            });
        }
        let name = input.to_string_lossy();
        match simpler_examples::find(&name) {
            Some(e) => Target::example(e, params.to_vec()),
            None => Err(ErrorKind::UnknownInput {
                path: input.to_path_buf(),
            }
            .into()),
        }
    }

    /// The example `e` with `params` (`KEY=VALUE`), checked against the ones it accepts.
    pub fn example(e: &'static dyn Example, params: Vec<String>) -> Result<Target, Error> {
        Params::parse(e.name(), &params, e.params()).map_err(ErrorKind::Params)?;
        Ok(Target::Example {
            example: e,
            params,
            recorded_in: None,
        })
    }

    /// The example `e` with the parameters `params` that the run.json at `manifest` recorded.
    /// A parameter the example refuses, now or when it runs, is said of that file and its
    /// field (`<manifest>: params.n = "9000": at most 8000 producers: ...`), not of a
    /// `--param` flag no one gave (found by a review).
    pub fn recorded_example(
        e: &'static dyn Example,
        params: &BTreeMap<String, String>,
        manifest: &Path,
    ) -> Result<Target, Error> {
        let refused = |error: simpler_examples::Error, pairs: &[String]| ErrorKind::RecordedParam {
            path: manifest.to_path_buf(),
            why: recorded_param_error(&error, pairs).unwrap_or_else(|| error.to_string()),
        };
        let pairs: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        // A key with `=` would be split at it, and another key checked in its place.
        if let Some(key) = params.keys().find(|k| k.contains('=')) {
            let error = simpler_examples::ErrorKind::UnknownParam {
                example: e.name().to_string(),
                key: key.clone(),
                valid: e.params().iter().map(|p| p.key).collect(),
            };
            return Err(refused(error.into(), &pairs).into());
        }
        if let Err(error) = Params::parse(e.name(), &pairs, e.params()) {
            return Err(refused(error, &pairs).into());
        }
        Ok(Target::Example {
            example: e,
            params: pairs,
            recorded_in: Some(manifest.to_path_buf()),
        })
    }

    /// What it is, for messages.
    pub fn subject(&self) -> String {
        match self {
            Target::Workload { path, .. } => format!("workload {}", path.display()),
            Target::Example { example, params, .. } if params.is_empty() => {
                format!("example {}", example.name())
            }
            Target::Example { example, params, .. } => {
                format!("example {} ({})", example.name(), params.join(", "))
            }
            Target::Deps(p) => format!("replay of {}", p.display()),
        }
    }

    /// What makes this target's sizes those of an approximation, one line each: for a
    /// replayed deps.json, what the replay reproduces only approximately (found by a review:
    /// outputs no task reads are re-created as 1024-byte buffers, so the plan sized the heap
    /// for those, and `--check` called sizes safe that the real run deadlocked at). Empty for
    /// a workload file or an example, which run as written.
    pub fn caveats(&self) -> Vec<String> {
        let Target::Deps(path) = self else {
            return Vec::new();
        };
        // A file the replay cannot read fails the recording run, which says why.
        self.caveats_of(simpler_workloads::replay_approximations(path).unwrap_or_default())
    }

    /// [`Target::caveats`] from the approximations a run of this target reported
    /// ([`Trial::Passed`]), without reading its deps.json again.
    pub fn caveats_of(&self, approximations: Vec<String>) -> Vec<String> {
        let Target::Deps(path) = self else {
            return Vec::new();
        };
        approximations
            .into_iter()
            .map(|a| {
                format!(
                    "the replay of {} approximates what deps.json does not record, so its sizes are the replay's: {a}",
                    path.display()
                )
            })
            .collect()
    }

    /// The runtime the target asks for (a workload file may set it; tmr otherwise).
    pub fn default_runtime(&self) -> RuntimeKind {
        match self {
            Target::Workload { workload, .. } => workload.runtime(),
            _ => RuntimeKind::Tmr,
        }
    }

    /// Runs it once with `env` (over the target's own settings) on `runtime`; with `record`,
    /// scope stats and the graph (deps.json) are written under that folder.
    pub fn run(&self, runtime: RuntimeKind, env: &RuntimeEnv, record: Option<&Path>) -> Trial {
        self.run_with(runtime, env, None, record)
    }

    /// [`Target::run`] with a tensor-map capacity too (`None`: the target's own).
    pub fn run_with(
        &self,
        runtime: RuntimeKind,
        env: &RuntimeEnv,
        tensormap: Option<usize>,
        record: Option<&Path>,
    ) -> Trial {
        let settings = Settings {
            runtime: Some(runtime),
            runtime_env: *env,
            tensormap_capacity: tensormap,
            enable_scope_stats: Some(record.is_some()),
            // The recorded graph gives the dep pool's worst case (`crate::worst_case`).
            enable_dep_gen: Some(record.is_some()),
            output_prefix: record.map(Path::to_path_buf),
            ..Default::default()
        };
        let started = Instant::now();
        // What a replay reproduced only approximately.
        let mut approximations = Vec::new();
        // The run's outcome: why its result was wrong, if it was.
        let result: Result<Option<String>, RunError> = match self {
            Target::Workload { workload, .. } => {
                let o = Overrides {
                    settings,
                    ..Default::default()
                };
                match simpler_workloads::run_workload(workload, &o) {
                    Ok(out) => Ok(said_removed(&out.report, out.failure())),
                    Err(e) => match e.into_run_error() {
                        Ok(run) => Err(said_removed_of(run)),
                        Err(other) => return failed(format!("{other:#}")),
                    },
                }
            }
            Target::Deps(path) => {
                let o = Overrides {
                    settings,
                    ..Default::default()
                };
                match simpler_workloads::run_from_deps(path, &o) {
                    Ok(out) => {
                        approximations = (out.from_deps.as_ref())
                            .map(|f| f.approximations.clone())
                            .unwrap_or_default();
                        Ok(said_removed(&out.report, out.failure()))
                    }
                    Err(e) => match e.into_run_error() {
                        Ok(run) => Err(said_removed_of(run)),
                        // A run folder's deps.json: said in `plan`'s words, not `run`'s.
                        Err(other) => {
                            return failed(match other.kind() {
                                simpler_workloads::ErrorKind::Incomplete { why } => {
                                    incomplete_graph(path, why.clone()).to_string()
                                }
                                _ => format!("{other:#}"),
                            })
                        }
                    },
                }
            }
            Target::Example {
                example: ex,
                params,
                recorded_in,
            } => {
                // The example checks the ranges of its parameters when it runs.
                let refused = |e: simpler_examples::Error| match recorded_in {
                    Some(m) => match recorded_param_error(&e, params) {
                        Some(why) => format!("{}: {why}", m.display()),
                        None => e.to_string(),
                    },
                    None => e.to_string(),
                };
                let parsed = match Params::parse(ex.name(), params, ex.params()) {
                    Ok(p) => p,
                    Err(e) => return failed(refused(e)),
                };
                match ex.run(&settings.into_config(), &parsed) {
                    Ok(out) => Ok(said_removed(
                        &out.report,
                        (!out.golden.passed()).then(|| out.golden.describe()),
                    )),
                    Err(e) => match e.into_run_error() {
                        Ok(run) => Err(said_removed_of(run)),
                        Err(other) => return failed(refused(other)),
                    },
                }
            }
        };
        match result {
            Ok(None) => Trial::Passed {
                wall: started.elapsed(),
                approximations,
            },
            Ok(Some(why)) => failed(format!("the run completed with a wrong result: {why}")),
            Err(RunError::Fatal { fatal, .. }) => Trial::Fatal {
                code: fatal.code,
                message: fatal.message,
            },
            Err(other) => failed(other.to_string()),
        }
    }
}

/// Says on stderr which files of an earlier run the recording's claim removed from the folder
/// `--output-prefix` named, as `simpler run` does (found by a review: `plan --output-prefix`
/// into an earlier run's folder replaced its files without a word); passes `value` on.
fn said_removed<T>(report: &RunReport, value: T) -> T {
    if let Some(output) = &report.output {
        let removed = output.removed_earlier();
        if !removed.is_empty() {
            simpler_artifacts::errln!(
                "note: {}: removed {} file(s) an earlier run left in this folder: {}",
                output.path().display(),
                removed.len(),
                removed.join(", ")
            );
        }
    }
    value
}

/// [`said_removed`] for a run that failed.
fn said_removed_of(run: RunError) -> RunError {
    if let RunError::Fatal { report, .. } = &run {
        said_removed(report, ());
    }
    run
}

fn failed(message: String) -> Trial {
    Trial::Failed { message }
}

/// The refusal to plan from the deps.json at `path`, whose run manifest says `why` it may be
/// incomplete, with what to plan instead: the built-in example its run.json names, with the
/// parameters it recorded, when there is one.
pub fn incomplete_graph(path: &Path, why: String) -> Error {
    let instead = recorded_example_command(path).map_or_else(
        || "record the run again with --enable-dep-gen, to completion, and plan that".to_string(),
        |command| format!("plan what the run ran, recorded afresh: `{command}`"),
    );
    ErrorKind::IncompleteGraph {
        path: path.to_path_buf(),
        why,
        instead,
    }
    .into()
}

/// `simpler plan <example> --param KEY=VALUE ..` for the built-in example the run.json of
/// `deps` names, with the parameters it recorded (which the example accepts); `None` when
/// there is no such example, or its parameters are unknown (a run.json from before they were
/// recorded, of a case other than the default one).
fn recorded_example_command(deps: &Path) -> Option<String> {
    let governing = simpler_artifacts::manifest::find_for(deps)?;
    let m = simpler_artifacts::manifest::RunManifest::read(&governing.manifest).ok()?;
    let (name, case) = m.subject.split_once(' ').unwrap_or((&m.subject, ""));
    let e = simpler_examples::find(name)?;
    if m.params.is_empty() && !matches!(case, "" | "(default)") {
        return None;
    }
    let Target::Example { params, .. } = Target::recorded_example(e, &m.params, &governing.manifest).ok()?
    else {
        return None;
    };
    let mut command = format!("simpler plan {}", e.name());
    for pair in params {
        command.push_str(&format!(
            " --param {}",
            simpler_artifacts::name_map::printable(&pair)
        ));
    }
    Some(command)
}

/// An example's refusal of one of its parameters (`pairs`, `KEY=VALUE`), said of the run.json
/// field they came from: `params.n = "9000": at most 8000 producers: ...` (the value as the
/// file has it, the example's rule without its `--param n=9000: `). `None` for any other error.
fn recorded_param_error(error: &simpler_examples::Error, pairs: &[String]) -> Option<String> {
    use simpler_examples::ErrorKind as K;
    let message = error.to_string();
    // The key, and the start of the message that names it as a flag (`--param n=9000: `).
    let (key, flag) = match error.kind() {
        K::NotAnInteger { key, value } => (key.as_str(), format!("--param {key}={value}: ")),
        K::ParamTooLarge { key, value } => (key.as_str(), format!("--param {key}={value}: ")),
        K::ParamTooSmall { key, value, .. } => (key.as_str(), format!("--param {key}={value}: ")),
        K::TooManyProducers { n, .. } => ("n", format!("--param n={n}: ")),
        K::UnknownParam { key, .. } | K::MissingParam { key } => (key.as_str(), String::new()),
        _ => return None,
    };
    let rule = message.strip_prefix(flag.as_str()).unwrap_or(&message);
    let field = format!("params.{}", simpler_artifacts::name_map::printable(key));
    let value = pairs
        .iter()
        .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
        .filter(|_| !flag.is_empty());
    Some(match value {
        Some(v) => format!("{field} = {}: {rule}", serde_json::Value::from(v)),
        None => format!("{field}: {rule}"),
    })
}

/// Whether the JSON file `input` has the `tasks` or the `edges` of a captured graph at its top
/// level; [`ErrorKind::NotJson`] if it is not JSON. A file of at most
/// [`simpler_workloads::MAX_FILE_BYTES`] (any workload file) is read whole and parsed; a larger
/// one (a deps.json, or a workload file its reader refuses for its size) is streamed, its
/// values skipped, in memory of one string: it was read whole into memory, so a 3 GB file took
/// 3 GB before it failed at line 1, and `/dev/zero` aborted. A named pipe or a device is
/// refused before it is opened ([`simpler_artifacts::input::open_regular`]).
fn is_deps_json(input: &Path) -> Result<bool, Error> {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::io::Read;

    /// The top-level value's keys, or `false` for a value that is not an object.
    struct DepsKeys;
    impl<'de> Visitor<'de> for DepsKeys {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut deps = false;
            while let Some(key) = map.next_key::<String>()? {
                deps |= key == "edges" || key == "tasks";
                map.next_value::<IgnoredAny>()?;
            }
            Ok(deps)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(false)
        }
        fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_str<E>(self, _: &str) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_unit<E>(self) -> Result<bool, E> {
            Ok(false)
        }
    }

    let read = |source| ErrorKind::Read {
        path: input.to_path_buf(),
        source,
    };
    let not_json = |error| ErrorKind::NotJson {
        path: input.to_path_buf(),
        error,
    };
    let file = simpler_artifacts::input::open_regular(input).map_err(read)?;
    let max = simpler_workloads::MAX_FILE_BYTES;
    if file.metadata().map_err(read)?.len() <= max {
        let mut bytes = Vec::new();
        file.take(max + 1).read_to_end(&mut bytes).map_err(read)?;
        if bytes.len() as u64 <= max {
            let text = simpler_artifacts::input::utf8(bytes).map_err(read)?;
            let value = serde_json::from_str::<serde_json::Value>(&text).map_err(not_json)?;
            return Ok(value
                .as_object()
                .is_some_and(|o| o.contains_key("edges") || o.contains_key("tasks")));
        }
    }
    let file = simpler_artifacts::input::open_regular(input).map_err(read)?;
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 20, file));
    let deps = (&mut de).deserialize_any(DepsKeys).map_err(not_json)?;
    de.end().map_err(not_json)?;
    Ok(deps)
}
