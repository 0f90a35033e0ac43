//! `--param KEY=VALUE` parsing with a clear error for unknown keys and bad values.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Result};

/// One parameter an example accepts.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// The key.
    pub key: &'static str,
    /// Default value.
    pub default: &'static str,
    /// What it sets.
    pub help: &'static str,
}

/// Parsed parameters of one example run.
#[derive(Clone, Debug, Default)]
pub struct Params {
    values: BTreeMap<String, String>,
}

impl Params {
    /// Parses `KEY=VALUE` pairs against `specs` (defaults fill the rest).
    pub fn parse(example: &str, pairs: &[String], specs: &[ParamSpec]) -> Result<Params> {
        let mut values: BTreeMap<String, String> = specs
            .iter()
            .map(|s| (s.key.to_string(), s.default.to_string()))
            .collect();
        for pair in pairs {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| anyhow!("--param `{pair}` is not KEY=VALUE"))?;
            if !values.contains_key(k) {
                let keys: Vec<_> = specs.iter().map(|s| s.key).collect();
                let valid = if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                };
                bail!("{example} has no parameter `{k}`; valid parameters: {valid}");
            }
            values.insert(k.to_string(), v.to_string());
        }
        Ok(Params { values })
    }

    /// An unsigned parameter.
    pub fn u64(&self, key: &str) -> Result<u64> {
        let v = self
            .values
            .get(key)
            .ok_or_else(|| anyhow!("missing parameter `{key}`"))?;
        v.parse()
            .map_err(|_| anyhow!("--param {key}={v}: expected a non-negative integer"))
    }

    /// An unsigned parameter that must fit in u32 and be at least `min`.
    pub fn u32_at_least(&self, key: &str, min: u32) -> Result<u32> {
        let v = self.u64(key)?;
        let v = u32::try_from(v).map_err(|_| anyhow!("--param {key}={v}: too large"))?;
        if v < min {
            bail!("--param {key}={v}: must be at least {min}");
        }
        Ok(v)
    }

    /// The case name: the non-default parameters, e.g. `n_64`, or `default`.
    pub fn case_name(&self, specs: &[ParamSpec]) -> String {
        let parts: Vec<String> = specs
            .iter()
            .filter(|s| self.values.get(s.key).is_some_and(|v| v != s.default))
            .map(|s| format!("{}_{}", s.key, self.values[s.key]))
            .collect();
        if parts.is_empty() {
            "default".into()
        } else {
            parts.join("_")
        }
    }
}
