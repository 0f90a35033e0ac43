//! `--param KEY=VALUE` parsing with a clear error for unknown keys and bad values.

use std::collections::BTreeMap;

use crate::{Error, ErrorKind};

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
    /// Every parameter's value (defaults included), by key.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    /// Parses `KEY=VALUE` pairs against `specs` (defaults fill the rest). A pair without `=`
    /// is [`ErrorKind::ParamNotKeyValue`]; a key not in `specs` is [`ErrorKind::UnknownParam`].
    pub fn parse(example: &str, pairs: &[String], specs: &[ParamSpec]) -> Result<Params, Error> {
        let mut values: BTreeMap<String, String> = specs
            .iter()
            .map(|s| (s.key.to_string(), s.default.to_string()))
            .collect();
        for pair in pairs {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| ErrorKind::ParamNotKeyValue { pair: pair.clone() })?;
            if !values.contains_key(k) {
                return Err(ErrorKind::UnknownParam {
                    example: example.to_string(),
                    key: k.to_string(),
                    valid: specs.iter().map(|s| s.key).collect(),
                }
                .into());
            }
            values.insert(k.to_string(), v.to_string());
        }
        Ok(Params { values })
    }

    /// An unsigned parameter ([`ErrorKind::MissingParam`], [`ErrorKind::NotAnInteger`]).
    pub fn u64(&self, key: &str) -> Result<u64, Error> {
        let v = self
            .values
            .get(key)
            .ok_or_else(|| ErrorKind::MissingParam { key: key.to_string() })?;
        Ok(v.parse().map_err(|_| ErrorKind::NotAnInteger {
            key: key.to_string(),
            value: v.clone(),
        })?)
    }

    /// An unsigned parameter that must fit in u32 ([`ErrorKind::ParamTooLarge`]) and be at
    /// least `min` ([`ErrorKind::ParamTooSmall`]).
    pub fn u32_at_least(&self, key: &str, min: u32) -> Result<u32, Error> {
        let v = self.u64(key)?;
        let v = u32::try_from(v).map_err(|_| ErrorKind::ParamTooLarge {
            key: key.to_string(),
            value: v,
        })?;
        if v < min {
            return Err(ErrorKind::ParamTooSmall {
                key: key.to_string(),
                value: v,
                min,
            }
            .into());
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
