//! A Python `CallConfig` (`simpler/config.py`, a dataclass whose fields default to `None`,
//! "not set") as one [`Settings`] layer: the worker's defaults go under it, a workload file's
//! layer under that, and [`Settings::into_config`] builds the run's `CallConfig` as everywhere
//! else.

use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use simpler_runtime::config::{DumpArgsLevel, Settings, SwimlaneLevel};
use simpler_runtime::{RuntimeEnv, RuntimeKind};

use crate::errors::ConfigError;

/// A runtime from its name (`"tmr"`, `"hbg"`), or the original's long name
/// (`"tensormap_and_ringbuffer"`, `"host_build_graph"`).
pub fn runtime_kind(name: &str) -> PyResult<RuntimeKind> {
    let short = match name {
        "tensormap_and_ringbuffer" => "tmr",
        "host_build_graph" => "hbg",
        other => other,
    };
    RuntimeKind::from_name(short).ok_or_else(|| {
        ConfigError::new_err(format!(
            "unknown runtime {name:?}; runtimes: tmr (tensormap_and_ringbuffer), hbg (host_build_graph)"
        ))
    })
}

/// The `runtime_env` dict: each value one number for every ring, four numbers (a list), or the
/// command line's text (`"1024,2048,4096,8192"`).
fn runtime_env(d: &Bound<'_, PyDict>) -> PyResult<RuntimeEnv> {
    let mut env = RuntimeEnv::default();
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            ConfigError::new_err(format!(
                "CallConfig.runtime_env: key {} is not a string (a key such as \"ring_task_window\")",
                k.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        let text = if let Ok(n) = v.extract::<u64>() {
            n.to_string()
        } else if let Ok(list) = v.extract::<Vec<u64>>() {
            list.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
        } else if let Ok(s) = v.extract::<String>() {
            s
        } else {
            return Err(ConfigError::new_err(format!(
                "runtime_env {key}: {} is not a number, a list of four numbers or their text",
                v.repr()?
            )));
        };
        env.set(&key, &text)
            .map_err(|e| ConfigError::new_err(e.to_string()))?;
    }
    Ok(env)
}

/// Reads attribute `name` of `cfg`, `None` when it is `None`.
fn field<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    cfg: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Option<T>> {
    let v = cfg.getattr(name)?;
    if v.is_none() {
        return Ok(None);
    }
    v.extract::<T>().map(Some).map_err(|e| {
        let e: PyErr = e.into();
        ConfigError::new_err(format!("CallConfig.{name}: {e}"))
    })
}

/// The settings layer of a Python `CallConfig`.
pub fn settings(cfg: &Bound<'_, PyAny>) -> PyResult<Settings> {
    let runtime = field::<String>(cfg, "runtime")?
        .map(|r| runtime_kind(&r))
        .transpose()?;
    let env = match cfg.getattr("runtime_env")? {
        v if v.is_none() => RuntimeEnv::default(),
        v => runtime_env(
            v.cast::<PyDict>()
                .map_err(|_| ConfigError::new_err("CallConfig.runtime_env: not a dict of key -> size"))?,
        )?,
    };
    let dump_args = match field::<u64>(cfg, "dump_args")? {
        None => None,
        Some(n) => Some(DumpArgsLevel::from_number(n).ok_or_else(|| {
            ConfigError::new_err(format!(
                "dump_args level {n} is not 0 (off), 1 (partial), 2 (full) or 3 (hybrid)"
            ))
        })?),
    };
    // `enable_l2_swimlane`: a bool (level 4 when true) or a level 0–4, as the original's int.
    let swimlane = cfg.getattr("enable_l2_swimlane")?;
    let (enable_l2_swimlane, l2_swimlane_level) = if swimlane.is_none() {
        (None, None)
    } else if let Ok(on) = swimlane.cast::<pyo3::types::PyBool>() {
        (Some(on.is_true()), None)
    } else {
        let n: u64 = swimlane.extract().map_err(|_| {
            ConfigError::new_err("CallConfig.enable_l2_swimlane: not a bool or a level 0 to 4")
        })?;
        match n {
            0 => (Some(false), None),
            n => (
                Some(true),
                Some(SwimlaneLevel::from_number(n).ok_or_else(|| {
                    ConfigError::new_err(format!(
                        "CallConfig.enable_l2_swimlane: level {n} is not 0 (off) to 4 (everything)"
                    ))
                })?),
            ),
        }
    };
    let timeout = match field::<f64>(cfg, "timeout")? {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(ConfigError::new_err(format!(
                "CallConfig.timeout: {t} is not a positive number of seconds"
            )))
        }
        t => t.map(|s| Duration::from_secs_f64(s.min(1e9))),
    };
    Ok(Settings {
        runtime,
        clusters: field(cfg, "clusters")?,
        scheduler_threads: field(cfg, "scheduler_threads")?,
        runtime_env: env,
        tensormap_capacity: field(cfg, "tensormap_capacity")?,
        enable_scope_stats: field(cfg, "enable_scope_stats")?,
        enable_dep_gen: field(cfg, "enable_dep_gen")?,
        enable_l2_swimlane,
        l2_swimlane_level,
        dump_args,
        output_prefix: field::<PathBuf>(cfg, "output_prefix")?,
        timeout,
        record_fanin: field(cfg, "record_edges")?,
        subject: field(cfg, "subject")?,
        params: None,
        stop_on_interrupt: None,
    })
}
