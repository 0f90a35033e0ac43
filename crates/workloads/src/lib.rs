//! Workload files for `simpler run FILE.json`: an orchestration described in JSON (external
//! tensors, built-in kernels, nested scopes, tagged args and views, explicit deps, `repeat`
//! loops, runtime settings and golden checks), and `simpler run --from-deps deps.json`, which
//! re-runs a captured graph. The format is documented in `docs/workloads.md`, with a JSON
//! Schema in `workloads/schema.json`.
//!
//! ```no_run
//! use simpler_workloads::{load, run_workload, Overrides};
//!
//! let w = load("workloads/vector_example.json".as_ref())?;
//! let outcome = run_workload(&w, &Overrides::default())?;
//! assert!(outcome.passed());
//! # Ok::<(), simpler_workloads::Error>(())
//! ```
//!
//! Loading validates everything that can be checked before a run, and every error names the
//! JSON path and the rule (see [`WorkloadError`]).

#![warn(missing_docs)]

mod error;
mod expand;
mod expr;
pub mod from_deps;
pub mod kernels;
mod program;
mod runner;
pub mod schema;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use simpler_runtime::config::{
    ConfigError, ConfigErrorKind, DumpArgsLevel, RingResource, Settings, SwimlaneLevel, DEFAULT_HEAP,
    MAX_CLUSTERS, MAX_TENSORMAP_CAPACITY,
};
use simpler_runtime::{CallConfig, RunReport, RuntimeEnv, RuntimeKind};

pub use error::{Error, ErrorKind, WorkloadError};
pub use expr::{compile, eval, expand_template, Bound, Compiled, Env, ExprError, Template};
pub use from_deps::{replay_approximations, run_from_deps, FromDepsReport};
pub use runner::CheckResult;
pub use schema::WorkloadSpec;

use program::Program;
use schema::SwimlaneSwitch;

/// A loaded, validated workload.
#[derive(Clone, Debug)]
pub struct Workload {
    name: String,
    /// The file it was loaded from, as errors name it (`None` from [`load_str`]).
    file: Option<String>,
    spec: WorkloadSpec,
    settings: Settings,
    program: Arc<Program>,
}

impl Workload {
    /// Its name (the file's `name`, or the file stem).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The parsed file.
    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }
    /// Tasks the workload submits (dummies and allocs included), with the file's constants.
    pub fn task_count(&self) -> usize {
        self.program.tasks
    }
    /// The file's settings layer (`runtime`, `runtime_env`, `clusters`, `tensormap_capacity`,
    /// `diagnostics`); validated when the workload was loaded.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }
    /// How errors found after loading name it: its file, else its name.
    fn where_(&self) -> String {
        self.file.clone().unwrap_or_else(|| self.name.clone())
    }
    /// The runtime the file asks for (default tmr).
    pub fn runtime(&self) -> RuntimeKind {
        self.settings.runtime.unwrap_or_default()
    }
}

/// How to run a workload or a captured graph, besides what its file says.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// The caller's settings layer (usually the command line): every value it sets overrides
    /// the file's.
    pub settings: Settings,
    /// Constant overrides `NAME=VALUE` (`--param`); the workload is re-expanded with them.
    pub params: Vec<String>,
    /// `--from-deps`: re-run a deps.json whose run manifest says it is incomplete (a run that
    /// did not complete, or a file that is not the one the run wrote).
    pub allow_incomplete: bool,
}

/// A finished workload run.
#[derive(Debug)]
pub struct Outcome {
    /// The runtime's report.
    pub report: RunReport,
    /// The configuration the run used.
    pub config: CallConfig,
    /// One result per golden check of the file.
    pub checks: Vec<CheckResult>,
    /// For `--from-deps`: what was reproduced and what was not.
    pub from_deps: Option<FromDepsReport>,
}

impl Outcome {
    /// True if and only if every check passed (and, for `--from-deps`, nothing was reported
    /// as not reproduced).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(CheckResult::passed)
            && self.from_deps.as_ref().is_none_or(FromDepsReport::complete)
    }

    /// Why the run did not [pass](Outcome::passed): the first failed check, else what a
    /// `--from-deps` re-run did not reproduce; `None` when it passed.
    pub fn failure(&self) -> Option<String> {
        match self.checks.iter().find(|c| !c.passed()) {
            Some(c) => Some(c.describe()),
            None => self.from_deps.as_ref().and_then(FromDepsReport::shortfall),
        }
    }
}

/// The largest workload file [`load`] reads: 64 MiB. A workload repeats with `repeat` rather
/// than by listing, so files are small (the largest in `workloads/` is under 3 KiB); a larger
/// one is refused after a read of at most this much (a 3 GB file took 3 GB and 19 s to refuse).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads and validates the workload file at `path`. A path that is not a regular file (a named
/// pipe, whose `open` blocked for ever, or a device) and a file of more than
/// [`MAX_FILE_BYTES`] are errors naming the file, before it is read.
pub fn load(path: &Path) -> Result<Workload, Error> {
    let text = simpler_artifacts::input::read_to_string_at_most(path, MAX_FILE_BYTES, "a workload file")
        .map_err(|source| ErrorKind::Read {
            path: path.to_path_buf(),
            source,
        })?;
    // The stem names the default output folder: keep it to the safe characters of a name.
    let stem: String = path
        .file_stem()
        .map_or_else(|| "workload".to_string(), |s| s.to_string_lossy().into_owned())
        .chars()
        .take(MAX_NAME_LEN)
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect();
    let stem = if stem.is_empty() || stem.starts_with('.') {
        format!("workload{stem}")
    } else {
        stem
    };
    let file = path.display().to_string();
    let mut w = load_str(&text, &stem).map_err(|e| e.in_file(file.clone()))?;
    w.file = Some(file);
    Ok(w)
}

/// Parses and validates a workload from JSON text; `default_name` names it when the file has
/// no `name`.
pub fn load_str(text: &str, default_name: &str) -> Result<Workload, WorkloadError> {
    check_json_depth(text)?;
    let de = &mut serde_json::Deserializer::from_str(text);
    // The depth was checked above; serde_json's own limit (128) would refuse 64 nested scopes.
    de.disable_recursion_limit();
    let spec: WorkloadSpec = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let inner = e.into_inner();
        let message = inner.to_string();
        let one_key_object_went_on = inner.is_syntax() && message.starts_with("expected value");
        let second = one_key_object_went_on
            .then(|| second_key(text, inner.line(), inner.column()))
            .flatten();
        let rule = match second {
            Some((key, line, column)) => format!(
                "this object takes exactly one key, but a second one, `{key}`, follows at line {line} column {column}"
            ),
            None => shorten(&message),
        };
        WorkloadError::new(path, rule)
    })?;
    let settings = validate_settings(&spec)?;
    let name = spec.name.clone().unwrap_or_else(|| default_name.to_string());
    let program = expand::expand(&spec, &spec.constants, &name)?;
    Ok(Workload {
        name,
        file: None,
        settings,
        spec,
        program: Arc::new(program),
    })
}

fn env_value(v: &schema::EnvValue) -> String {
    match v {
        schema::EnvValue::One(n) => n.to_string(),
        schema::EnvValue::PerRing(v) => v.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
        schema::EnvValue::Text(s) => s.clone(),
    }
}

/// The file's settings layer: its `runtime`, `runtime_env`, `clusters`, `tensormap_capacity`
/// and `diagnostics`.
fn file_settings(spec: &WorkloadSpec) -> Result<Settings, WorkloadError> {
    let mut env = RuntimeEnv::default();
    for (k, v) in &spec.runtime_env {
        env.set(k, &env_value(v))
            .map_err(|e| WorkloadError::new(format!("runtime_env.{k}"), e.to_string()))?;
    }
    let d = &spec.diagnostics;
    let dump_args = match d.dump_args {
        None => None,
        Some(n) => Some(DumpArgsLevel::from_number(n).ok_or_else(|| {
            WorkloadError::new(
                "diagnostics.dump_args".to_string(),
                format!("{n} is not a dump-args level: 0 (off), 1 (partial), 2 (full) or 3 (hybrid)"),
            )
        })?),
    };
    let (enable_l2_swimlane, l2_swimlane_level) = match d.enable_l2_swimlane {
        SwimlaneSwitch::On(on) => (on, None),
        SwimlaneSwitch::Level(0) => (false, None),
        SwimlaneSwitch::Level(n) => (
            true,
            Some(SwimlaneLevel::from_number(n).ok_or_else(|| {
                WorkloadError::new(
                    "diagnostics.enable_l2_swimlane".to_string(),
                    format!("{n} is not a swimlane level: 0 (off) to 4 (everything), or true/false"),
                )
            })?),
        ),
    };
    // Found by a review: "" was taken, and a diagnostic then failed as a command-line error
    // naming neither the file nor the field.
    if d.output_prefix.as_deref() == Some("") {
        return Err(WorkloadError::new(
            "diagnostics.output_prefix".to_string(),
            "an empty path: give a folder, or leave the key out for the default one".to_string(),
        ));
    }
    Ok(Settings {
        runtime: spec.runtime.as_deref().and_then(RuntimeKind::from_name),
        clusters: spec.clusters,
        runtime_env: env,
        tensormap_capacity: spec.tensormap_capacity,
        enable_scope_stats: Some(d.enable_scope_stats),
        enable_dep_gen: Some(d.enable_dep_gen),
        enable_l2_swimlane: Some(enable_l2_swimlane),
        l2_swimlane_level,
        dump_args,
        output_prefix: d.output_prefix.as_ref().map(PathBuf::from),
        ..Settings::default()
    })
}

/// How deeply a workload file's JSON may nest: room for [`MAX_SCOPE_DEPTH`] nested scopes
/// (three JSON levels each) and their contents, far below what the parser's stack can take.
///
/// [`MAX_SCOPE_DEPTH`]: simpler_runtime::orchestrator::MAX_SCOPE_DEPTH
pub const MAX_JSON_DEPTH: usize = 256;

/// Refuses JSON nested deeper than [`MAX_JSON_DEPTH`] before it is parsed, naming the line
/// and column where the limit is crossed.
fn check_json_depth(text: &str) -> Result<(), WorkloadError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut line, mut column) = (1usize, 0usize);
    for c in text.chars() {
        column += 1;
        if c == '\n' {
            line += 1;
            column = 0;
        }
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(WorkloadError::new(
                        "",
                        format!(
                            "line {line} column {column}: JSON nested deeper than {MAX_JSON_DEPTH} levels"
                        ),
                    ));
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The key that follows a one-key object's value, when serde_json's error at `line`, `column`
/// (1-based; the column is the value's last byte) is "expected value" because the object went
/// on: a statement, a fill or a typed scalar with two keys. With where the key starts, and cut
/// and escaped for a message. `None` for any other error there: a value that did not end
/// (an unquoted name, a stray comma) is not followed by a key.
fn second_key(text: &str, line: usize, column: usize) -> Option<(String, usize, usize)> {
    let bytes = text.as_bytes();
    let line_start = match line.checked_sub(1)? {
        0 => 0,
        n => text.match_indices('\n').nth(n - 1)?.0 + 1,
    };
    let last = line_start.checked_add(column.checked_sub(1)?)?;
    // The value that ended there: an object, an array, a string or a number.
    if !matches!(bytes.get(last)?, b'}' | b']' | b'"' | b'0'..=b'9') {
        return None;
    }
    let mut at = last + 1;
    let skip = |at: &mut usize| {
        while bytes.get(*at).is_some_and(|b| b.is_ascii_whitespace()) {
            *at += 1;
        }
    };
    skip(&mut at);
    (bytes.get(at) == Some(&b',')).then_some(())?;
    at += 1;
    skip(&mut at);
    (bytes.get(at) == Some(&b'"')).then_some(())?;
    let start = at + 1;
    let mut end = start;
    while *bytes.get(end)? != b'"' {
        end += if bytes[end] == b'\\' { 2 } else { 1 };
    }
    let key: String = text
        .get(start..end)?
        .chars()
        .flat_map(char::escape_debug)
        .collect();
    const KEEP: usize = 64;
    let key = match key.char_indices().nth(KEEP) {
        Some((cut, _)) => format!("{}…", &key[..cut]),
        None => key,
    };
    let key_line = text[..at].matches('\n').count() + 1;
    let key_column = at - text[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    Some((key, key_line, key_column))
}

/// A parser message cut to at most 400 characters (serde quotes the offending value whole,
/// which may be megabytes).
fn shorten(message: &str) -> String {
    const KEEP: usize = 200;
    let chars: Vec<char> = message.chars().collect();
    if chars.len() <= 2 * KEEP {
        return message.to_string();
    }
    let head: String = chars[..KEEP].iter().collect();
    let tail: String = chars[chars.len() - KEEP..].iter().collect();
    format!("{head} … ({} characters cut) … {tail}", chars.len() - 2 * KEEP)
}

/// The longest workload name (it names the default output folder).
pub const MAX_NAME_LEN: usize = 100;

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// A workload name names a folder under `outputs/`: ASCII letters, digits, `_`, `-` and `.`,
/// not starting with `.`, at most [`MAX_NAME_LEN`] characters. Never a path.
fn validate_name(name: &str) -> Result<(), WorkloadError> {
    let bad = name.chars().find(|&c| !is_name_char(c));
    let why = if name.is_empty() {
        "is empty".to_string()
    } else if let Some(c) = bad {
        format!("contains {c:?}")
    } else if name.starts_with('.') {
        "starts with `.`".to_string()
    } else if name.len() > MAX_NAME_LEN {
        format!("is {} characters long", name.len())
    } else {
        return Ok(());
    };
    Err(WorkloadError::new(
        "name",
        format!(
            "the name {why}; a name names the output folder, so it may hold only ASCII letters, digits, \
             `_`, `-` and `.` (not first), at most {MAX_NAME_LEN} characters"
        ),
    ))
}

/// Checks the file's settings and returns its layer.
fn validate_settings(spec: &WorkloadSpec) -> Result<Settings, WorkloadError> {
    if let Some(n) = &spec.name {
        validate_name(n)?;
    }
    if let Some(r) = &spec.runtime {
        if RuntimeKind::from_name(r).is_none() {
            return Err(WorkloadError::new(
                "runtime",
                format!(
                    "unknown runtime `{r}`; valid: {}",
                    RuntimeKind::ALL.map(RuntimeKind::name).join(", ")
                ),
            ));
        }
    }
    let settings = file_settings(spec)?;
    if spec.clusters.is_some_and(|c| c == 0 || c > MAX_CLUSTERS) {
        return Err(WorkloadError::new(
            "clusters",
            format!("clusters must be in [1, {MAX_CLUSTERS}]"),
        ));
    }
    if let Some(n) = spec
        .tensormap_capacity
        .filter(|&n| n == 0 || n > MAX_TENSORMAP_CAPACITY)
    {
        return Err(WorkloadError::new(
            "tensormap_capacity",
            format!("{n} is out of range; it must be in [1, {MAX_TENSORMAP_CAPACITY}]"),
        ));
    }
    Ok(settings)
}

fn parse_params(pairs: &[String], constants: &BTreeMap<String, i64>) -> Result<BTreeMap<String, i64>, Error> {
    let mut out = constants.clone();
    for pair in pairs {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| ErrorKind::ParamNotNameValue { pair: pair.clone() })?;
        if !out.contains_key(k) {
            let names: Vec<_> = constants.keys().map(String::as_str).collect();
            return Err(ErrorKind::UnknownConstant {
                name: k.to_string(),
                constants: if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                },
            }
            .into());
        }
        let v: i64 = v.parse().map_err(|source| ErrorKind::ParamNotInteger {
            name: k.to_string(),
            value: v.to_string(),
            source,
        })?;
        out.insert(k.to_string(), v);
    }
    Ok(out)
}

/// Largest ring-0 heap the hbg auto-sizing picks (beyond it the run reports heap exhaustion).
const MAX_AUTO_HEAP: u64 = 16 << 30;

/// Builds the run configuration: the file's settings layer (if any), the caller's on top, then
/// automatic sizing of hbg's single ring for `prog` where no layer set a size.
pub(crate) fn build_config(file: &Settings, prog: &Program, o: &Overrides) -> CallConfig {
    let mut settings = file.clone().overlaid(&o.settings);
    if settings.runtime == Some(RuntimeKind::Hbg) {
        // hbg keeps the whole graph on ring 0 and reclaims nothing: size it for every task
        // unless the user chose the sizes.
        let env = &mut settings.runtime_env;
        if !env.is_set(RingResource::TaskWindow) {
            let window = RuntimeKind::hbg_task_window(prog.tasks as u64);
            env.set_ring(RingResource::TaskWindow, 0, window);
        }
        if !env.is_set(RingResource::Heap) {
            let need = (prog.output_bytes + 1024).div_ceil(1024) * 1024;
            if need > DEFAULT_HEAP && need <= MAX_AUTO_HEAP {
                env.set_ring(RingResource::Heap, 0, need);
            }
        }
        if settings.tensormap_capacity.is_none() {
            let default = CallConfig::default().tensormap_capacity;
            settings.tensormap_capacity = Some(default.max(prog.inserts + 1024));
        }
    }
    settings.into_config()
}

/// A configuration error of a value the file set and the caller did not override (ring sizes
/// past host memory): a workload-file error at its JSON path. Any other stays a
/// configuration (usage) error.
fn file_config_error(w: &Workload, overrides: &Overrides, e: ConfigError) -> Error {
    if let ConfigErrorKind::HostMemory { key } = e.kind() {
        if let Some(r) = RingResource::from_key(key) {
            if w.settings.runtime_env.is_set(r) && !overrides.settings.runtime_env.is_set(r) {
                let rule = format!(
                    "{} (accepted: {} per ring, all rings' buffers within this machine's memory)",
                    e.message(),
                    r.rule()
                );
                return WorkloadError::new(format!("runtime_env.{key}"), rule)
                    .in_file(w.where_())
                    .into();
            }
        }
    }
    e.into()
}

/// Runs a loaded workload with `overrides`; the outcome carries the report and the checks.
/// A run that stops on a fatal is an error wrapping [`simpler_runtime::RunError`].
pub fn run_workload(w: &Workload, overrides: &Overrides) -> Result<Outcome, Error> {
    let program = if overrides.params.is_empty() {
        w.program.clone()
    } else {
        let constants = parse_params(&overrides.params, &w.spec.constants)?;
        Arc::new(expand::expand(&w.spec, &constants, &w.name).map_err(|e| e.in_file(w.where_()))?)
    };
    let mut config = build_config(&w.settings, &program, overrides);
    if config.subject.is_none() {
        config.subject = Some(format!("workload {}", w.name));
    }
    config
        .validate()
        .map_err(|e| file_config_error(w, overrides, e))?;
    // An external tensor the host refused is named with the file that declares it.
    let run = runner::run_program(program, &config).map_err(|e| match e.into_kind() {
        ErrorKind::Memory { what, source } => Error::from(ErrorKind::Memory {
            what: format!("{}: {what}", w.where_()),
            source,
        }),
        kind => kind.into(),
    })?;
    Ok(Outcome {
        report: run.report,
        config,
        checks: run.checks,
        from_deps: None,
    })
}
