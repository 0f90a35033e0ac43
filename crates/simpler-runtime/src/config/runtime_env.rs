//! The `runtime_env` keys: one declaration each ([`RUNTIME_ENV_KEYS`]), from which parsing,
//! validation messages, the environment variables, `simpler run --help` and the table in
//! `docs/configuration.md` are all derived.
//!
//! Ring sizes resolve per ring and per resource: a value set in `runtime_env` (a workload
//! file's, then the command line's) wins, then the key's environment variable (one number for
//! all rings or four comma-separated numbers), then the key's default. Invalid values are
//! errors that name the key, the value and the rule, never silently ignored: so are a number
//! not written plainly (a sign, spaces), a key given twice in `--runtime-env` pairs and an
//! environment variable whose value is not UTF-8.
//!
//! Adding a key: a variant of [`RingResource`], its [`KeyDecl`] in [`RUNTIME_ENV_KEYS`], its
//! field in [`RingSizes`] (filled in [`RuntimeEnv::resolve_with_env`]); then the code that
//! consumes it. Nothing else restates a key.

use std::ffi::OsString;
use std::fmt::Write as _;

use simpler_core::MAX_RINGS;

use super::{ConfigError, ConfigErrorKind};

/// Default task window per ring (a power of two).
pub const DEFAULT_TASK_WINDOW: u64 = 16384;
/// Default heap per ring, in bytes.
pub const DEFAULT_HEAP: u64 = 256 << 20;
/// Default dependency pool per ring, in entries.
pub const DEFAULT_DEP_POOL: u64 = 16384;

/// Everything there is to know about one `runtime_env` key.
#[derive(Debug)]
pub struct KeyDecl {
    /// The key, as written in `runtime_env` and `--runtime-env KEY=VALUE`.
    pub key: &'static str,
    /// The environment variable that sets it for every run of the process.
    pub env_var: &'static str,
    /// The value when nothing sets it.
    pub default: u64,
    /// The rule a value must follow, as errors and docs state it.
    pub rule: &'static str,
    /// The rule as code.
    pub valid: fn(u64) -> bool,
    /// What it sizes, for `--help` and the docs.
    pub doc: &'static str,
}

fn valid_window(v: u64) -> bool {
    v.is_power_of_two() && (4..=i32::MAX as u64).contains(&v)
}
fn valid_heap(v: u64) -> bool {
    v >= 1024
}
fn valid_pool(v: u64) -> bool {
    (4..=i32::MAX as u64).contains(&v)
}

/// The declarations, in [`RingResource`] order.
pub const RUNTIME_ENV_KEYS: [KeyDecl; RingResource::COUNT] = [
    KeyDecl {
        key: "ring_task_window",
        env_var: "SIMPLER_RING_TASK_WINDOW",
        default: DEFAULT_TASK_WINDOW,
        rule: "a power of two in [4, 2147483647]",
        valid: valid_window,
        doc: "task slots per ring; at most window-1 tasks of a ring are in flight, and one scope \
              holds at most window-1 tasks",
    },
    KeyDecl {
        key: "ring_heap",
        env_var: "SIMPLER_RING_HEAP",
        default: DEFAULT_HEAP,
        rule: "at least 1024 bytes",
        valid: valid_heap,
        doc: "heap bytes per ring, from which OUTPUT tensors are allocated",
    },
    KeyDecl {
        key: "ring_dep_pool",
        env_var: "SIMPLER_RING_DEP_POOL",
        default: DEFAULT_DEP_POOL,
        rule: "in [4, 2147483647]",
        valid: valid_pool,
        doc: "dependency-list entries per ring (one per pending producer of a task), also the size \
              of the ring's fanin spill pool",
    },
];

/// One `runtime_env` key (a resource of every ring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingResource {
    /// Task slots per ring.
    TaskWindow,
    /// Heap bytes per ring.
    Heap,
    /// Dependency-pool entries per ring.
    DepPool,
}

impl RingResource {
    /// How many keys there are.
    pub const COUNT: usize = 3;
    /// All of them, in declaration order.
    pub const ALL: [RingResource; RingResource::COUNT] = [
        RingResource::TaskWindow,
        RingResource::Heap,
        RingResource::DepPool,
    ];

    /// Its declaration.
    pub const fn decl(self) -> &'static KeyDecl {
        &RUNTIME_ENV_KEYS[self as usize]
    }
    /// The `runtime_env` key.
    pub const fn key(self) -> &'static str {
        self.decl().key
    }
    /// The environment variable.
    pub const fn env_var(self) -> &'static str {
        self.decl().env_var
    }
    /// The rule a value must follow, as shown in errors.
    pub const fn rule(self) -> &'static str {
        self.decl().rule
    }
    /// The key named `key`.
    pub fn from_key(key: &str) -> Option<RingResource> {
        RingResource::ALL.into_iter().find(|r| r.key() == key)
    }
}

/// Per-ring values of the `runtime_env` keys, each set or not: one layer of the settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuntimeEnv {
    values: [[Option<u64>; MAX_RINGS]; RingResource::COUNT],
}

impl RuntimeEnv {
    /// The value set for `key` on `ring`, if any.
    pub fn get(&self, key: RingResource, ring: usize) -> Option<u64> {
        self.values[key as usize][ring]
    }
    /// Sets `key` on one ring (programmatic use; not validated until [`RuntimeEnv::resolve`]).
    pub fn set_ring(&mut self, key: RingResource, ring: usize, value: u64) {
        self.values[key as usize][ring] = Some(value);
    }
    /// True when `key` is set on some ring.
    pub fn is_set(&self, key: RingResource) -> bool {
        self.values[key as usize].iter().any(Option::is_some)
    }

    /// Sets `key` from `value`: one number for every ring, or four comma-separated numbers.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let Some(res) = RingResource::from_key(key) else {
            let keys: Vec<_> = RingResource::ALL.iter().map(|r| r.key()).collect();
            return Err(ConfigError::new(
                ConfigErrorKind::UnknownKey { key: key.to_string() },
                format!("unknown runtime_env key `{key}`; valid keys: {}", keys.join(", ")),
            ));
        };
        let vals = parse_ring_values(value, res, &format!("runtime_env {key}"))?;
        self.values[res as usize] = vals.map(Some);
        Ok(())
    }

    /// Parses `KEY=VALUE` (the `--runtime-env` form). The value is taken as written: spaces
    /// around it are refused as inside it ([`RuntimeEnv::set`]).
    pub fn set_pair(&mut self, pair: &str) -> Result<(), ConfigError> {
        self.set_pair_key(pair).map(|_| ())
    }

    /// [`RuntimeEnv::set_pair`], returning the key it set.
    fn set_pair_key(&mut self, pair: &str) -> Result<RingResource, ConfigError> {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            ConfigError::new(
                ConfigErrorKind::Malformed {
                    key: "runtime_env".into(),
                    value: pair.to_string(),
                },
                format!("runtime_env `{pair}` is not KEY=VALUE"),
            )
        })?;
        let k = k.trim();
        self.set(k, v)?;
        Ok(RingResource::from_key(k).expect("set accepted the key"))
    }

    /// A layer from `KEY=VALUE` pairs (the `--runtime-env` form). A key given twice is an
    /// error ([`duplicate_key`]), as in a workload file's `runtime_env`: the last one won
    /// without a word (found by a review).
    pub fn from_pairs<S: AsRef<str>>(pairs: impl IntoIterator<Item = S>) -> Result<RuntimeEnv, ConfigError> {
        let mut env = RuntimeEnv::default();
        let mut given: [Option<String>; RingResource::COUNT] = Default::default();
        for pair in pairs {
            let pair = pair.as_ref();
            let res = env.set_pair_key(pair)?;
            if let Some(first) = &given[res as usize] {
                return Err(duplicate_key(res.key(), first, pair));
            }
            given[res as usize] = Some(pair.to_string());
        }
        Ok(env)
    }

    /// This layer with `over`'s values on top (per key and ring, a set value wins).
    pub fn overlaid(mut self, over: &RuntimeEnv) -> RuntimeEnv {
        for (mine, theirs) in self.values.iter_mut().zip(&over.values) {
            for (m, t) in mine.iter_mut().zip(theirs) {
                if t.is_some() {
                    *m = *t;
                }
            }
        }
        self
    }

    /// The environment-variable layer, read through `env`.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<RuntimeEnv, ConfigError> {
        let mut out = RuntimeEnv::default();
        for res in RingResource::ALL {
            if let Some(v) = env(res.env_var()) {
                let origin = format!("environment variable {}", res.env_var());
                out.values[res as usize] = parse_ring_values(&v, res, &origin)?.map(Some);
            }
        }
        Ok(out)
    }

    /// Resolves every ring's sizes (this layer > environment > default), validating each. An
    /// environment variable whose value is not UTF-8 is an error naming it (it was taken as
    /// unset, and the default used, without a word: found by a review).
    pub fn resolve(&self) -> Result<RingSizes, ConfigError> {
        self.resolve_with_os_env(|name| std::env::var_os(name))
    }

    /// [`RuntimeEnv::resolve`] with an explicit lookup of the raw (OS) environment.
    fn resolve_with_os_env(&self, env: impl Fn(&str) -> Option<OsString>) -> Result<RingSizes, ConfigError> {
        let mut text: [Option<String>; RingResource::COUNT] = Default::default();
        for res in RingResource::ALL {
            text[res as usize] = env(res.env_var()).map(|v| utf8_env_value(res, v)).transpose()?;
        }
        self.resolve_with_env(|name| {
            let res = RingResource::ALL.into_iter().find(|r| r.env_var() == name)?;
            text[res as usize].clone()
        })
    }

    /// [`RuntimeEnv::resolve`] with an explicit environment lookup (for tests).
    pub fn resolve_with_env(&self, env: impl Fn(&str) -> Option<String>) -> Result<RingSizes, ConfigError> {
        let merged = RuntimeEnv::from_env(env)?.overlaid(self);
        let value = |res: RingResource, ring: usize| merged.get(res, ring).unwrap_or(res.decl().default);
        for res in RingResource::ALL {
            for ring in 0..MAX_RINGS {
                check_value(res, value(res, ring), &format!("runtime_env {}", res.key()))?;
            }
        }
        Ok(RingSizes {
            task_window: std::array::from_fn(|r| value(RingResource::TaskWindow, r) as u32),
            heap: std::array::from_fn(|r| value(RingResource::Heap, r)),
            dep_pool: std::array::from_fn(|r| value(RingResource::DepPool, r) as u32),
        })
    }
}

fn check_value(res: RingResource, v: u64, origin: &str) -> Result<(), ConfigError> {
    if (res.decl().valid)(v) {
        return Ok(());
    }
    Err(ConfigError::new(
        ConfigErrorKind::InvalidValue {
            key: res.key(),
            value: v.to_string(),
            rule: res.rule(),
        },
        format!("{origin}: {v} is invalid; {} must be {}", res.key(), res.rule()),
    ))
}

/// The text of `res`'s environment variable, which must be UTF-8.
fn utf8_env_value(res: RingResource, value: OsString) -> Result<String, ConfigError> {
    value.into_string().map_err(|raw| {
        let shown = raw.as_encoded_bytes().escape_ascii().to_string();
        ConfigError::new(
            ConfigErrorKind::Malformed {
                key: res.key().to_string(),
                value: shown.clone(),
            },
            format!(
                "environment variable {}: its value `{shown}` is not valid UTF-8; {} is one number or \
                 {MAX_RINGS} comma-separated numbers (one per ring)",
                res.env_var(),
                res.key()
            ),
        )
    })
}

/// The error of a `runtime_env` key given twice, quoting both (`first`, then `again`): the
/// message of a workload file's duplicate key (`runtime_env: duplicate key ...`), also for
/// `simpler plan --check`.
pub fn duplicate_key(key: &str, first: &str, again: &str) -> ConfigError {
    ConfigError::new(
        ConfigErrorKind::Malformed {
            key: key.to_string(),
            value: again.to_string(),
        },
        format!("runtime_env: duplicate key `{key}` (`{first}`, then `{again}`); give each key once"),
    )
}

/// One number or [`MAX_RINGS`] comma-separated numbers, each written plainly: decimal digits
/// only. A sign or spaces are refused with the number as written (`+1024` and ` 1024` were
/// taken as 1024).
fn parse_ring_values(value: &str, res: RingResource, origin: &str) -> Result<[u64; MAX_RINGS], ConfigError> {
    let parts: Vec<&str> = value.split(',').collect();
    let malformed = |message: String| {
        ConfigError::new(
            ConfigErrorKind::Malformed {
                key: res.key().to_string(),
                value: value.to_string(),
            },
            message,
        )
    };
    if parts.len() != 1 && parts.len() != MAX_RINGS {
        return Err(malformed(format!(
            "{origin}: `{value}` must be one number or {MAX_RINGS} comma-separated numbers (one per ring)"
        )));
    }
    let mut vals = [0u64; MAX_RINGS];
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    for (i, p) in parts.iter().enumerate() {
        if !digits(p) && digits(p.trim().strip_prefix('+').unwrap_or(p.trim())) {
            return Err(malformed(format!(
                "{origin}: `{p}` is not written plainly: a number is decimal digits only, without a sign or spaces"
            )));
        }
        let v: u64 = p
            .parse()
            .map_err(|_| malformed(format!("{origin}: `{p}` is not a non-negative integer")))?;
        check_value(res, v, origin)?;
        vals[i] = v;
    }
    if parts.len() == 1 {
        vals = [vals[0]; MAX_RINGS];
    }
    Ok(vals)
}

/// The effective per-ring sizes of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingSizes {
    /// Task slots per ring.
    pub task_window: [u32; MAX_RINGS],
    /// Heap bytes per ring.
    pub heap: [u64; MAX_RINGS],
    /// Dependency-pool entries per ring.
    pub dep_pool: [u32; MAX_RINGS],
}

/// The `--runtime-env` help text: every key with its rule, default and environment variable.
pub fn help() -> String {
    let mut s = String::from(
        "Ring size override KEY=VALUE; VALUE is one number for every ring or four comma-separated \
         numbers (one per ring). Keys:",
    );
    for d in &RUNTIME_ENV_KEYS {
        let _ = write!(
            s,
            "\n  {}: {} ({}; default {}, environment {})",
            d.key, d.doc, d.rule, d.default, d.env_var
        );
    }
    s
}

/// The Markdown table of the keys in `docs/configuration.md` (a test keeps the two equal).
pub fn markdown_table() -> String {
    let mut s =
        String::from("| key | sizes | rule | default | environment variable |\n|---|---|---|---|---|\n");
    for d in &RUNTIME_ENV_KEYS {
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | `{}` |",
            d.key, d.doc, d.rule, d.default, d.env_var
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    /// Found by a review: a `SIMPLER_RING_*` value that is not UTF-8 was taken as unset, and the
    /// default used, without a word.
    #[test]
    fn an_environment_value_that_is_not_utf8_is_an_error_naming_the_variable() {
        let err = RuntimeEnv::default()
            .resolve_with_os_env(|k| (k == "SIMPLER_RING_HEAP").then(|| OsString::from_vec(vec![b'1', 0xff])))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "environment variable SIMPLER_RING_HEAP: its value `1\\xff` is not valid UTF-8; ring_heap is one \
             number or 4 comma-separated numbers (one per ring)"
        );
        // A UTF-8 value still resolves.
        let sizes = RuntimeEnv::default()
            .resolve_with_os_env(|k| (k == "SIMPLER_RING_HEAP").then(|| OsString::from("2048")))
            .unwrap();
        assert_eq!(sizes.heap, [2048; MAX_RINGS]);
    }

    /// Found by a review: `+1024` and ` 1024` were taken as 1024, on the command line, in a
    /// workload file's text, in the environment and in `plan --check` alike (one parser).
    #[test]
    fn a_number_with_a_sign_or_spaces_is_refused() {
        let plain = |origin: &str, p: &str| {
            format!(
                "{origin}: `{p}` is not written plainly: a number is decimal digits only, without a sign or spaces"
            )
        };
        for (pair, part) in [
            ("ring_heap=+1024", "+1024"),
            ("ring_heap= 1024", " 1024"),
            ("ring_heap=1024 ", "1024 "),
            ("ring_heap=1024,2048, 4096,8192", " 4096"),
            ("ring_heap=1024,+2048,4096,8192", "+2048"),
        ] {
            let err = RuntimeEnv::from_pairs([pair]).unwrap_err();
            assert_eq!(err.to_string(), plain("runtime_env ring_heap", part), "{pair}");
        }
        let err = RuntimeEnv::default()
            .resolve_with_env(|k| (k == "SIMPLER_RING_DEP_POOL").then(|| "+64".to_string()))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            plain("environment variable SIMPLER_RING_DEP_POOL", "+64")
        );
        // Not a number at all keeps its message; plain numbers pass.
        assert_eq!(
            RuntimeEnv::from_pairs(["ring_heap=-1024"])
                .unwrap_err()
                .to_string(),
            "runtime_env ring_heap: `-1024` is not a non-negative integer"
        );
        let env = RuntimeEnv::from_pairs(["ring_heap=1024,2048,4096,8192", " ring_dep_pool=64"]).unwrap();
        assert_eq!(env.get(RingResource::Heap, 3), Some(8192));
        assert_eq!(env.get(RingResource::DepPool, 0), Some(64));
    }

    /// Found by a review: a key given twice took the last value without a word, where a
    /// workload file's `runtime_env` refuses a duplicate key.
    #[test]
    fn a_key_given_twice_is_an_error() {
        let err =
            RuntimeEnv::from_pairs(["ring_heap=1024", "ring_dep_pool=64", "ring_heap=2048"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "runtime_env: duplicate key `ring_heap` (`ring_heap=1024`, then `ring_heap=2048`); give each key once"
        );
    }
}
