//! The serde types of a workload file, one struct per JSON object (see `docs/workloads.md`).
//!
//! Every object denies unknown fields, so a typo is an error with its JSON path rather than a
//! silently ignored key. Integer fields that may depend on loop variables are [`Expr`]s: a JSON
//! integer or a string expression.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::expr::Template;

/// A whole workload file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Optional JSON Schema reference (ignored).
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// Short name (used for the default output folder); defaults to the file stem.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// `"tmr"` or `"hbg"` (default `"tmr"`); `--runtime` overrides it.
    #[serde(default)]
    pub runtime: Option<String>,
    /// Ring size overrides: `ring_task_window`, `ring_heap`, `ring_dep_pool`.
    #[serde(default, deserialize_with = "simpler_artifacts::unique_keys::unique_map")]
    pub runtime_env: BTreeMap<String, EnvValue>,
    /// Diagnostics to enable.
    #[serde(default)]
    pub diagnostics: Diagnostics,
    /// Number of clusters (1 AIC + 2 AIV each).
    #[serde(default)]
    pub clusters: Option<usize>,
    /// Tensor-map entry capacity.
    #[serde(default)]
    pub tensormap_capacity: Option<usize>,
    /// Named integer constants usable in every expression (`--param NAME=V` overrides).
    #[serde(default, deserialize_with = "simpler_artifacts::unique_keys::unique_map")]
    pub constants: BTreeMap<String, i64>,
    /// External tensors, allocated and filled before the run.
    #[serde(default)]
    pub tensors: Vec<TensorDecl>,
    /// The orchestration: statements run inside the root scope.
    pub body: Vec<Stmt>,
    /// Expected values of external tensors after the run.
    #[serde(default)]
    pub checks: Vec<CheckSpec>,
}

/// An integer that may be an expression over loop variables and constants.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A JSON integer.
    Int(i64),
    /// An expression such as `"i*64"`, parsed once when the file is read (a syntax error is
    /// kept and reported where the expression is evaluated, with its JSON path): an expansion
    /// evaluates it once per use, a million times in a loop of a million.
    Text(Box<Result<crate::expr::Compiled, crate::expr::ExprError>>),
}

impl<'de> Deserialize<'de> for Expr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Expr, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Expr;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an integer or an integer expression string such as \"i*64\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Expr, E> {
                Ok(Expr::Int(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Expr, E> {
                i64::try_from(v)
                    .map(Expr::Int)
                    .map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Expr, E> {
                Ok(Expr::Text(Box::new(crate::expr::compile(v))))
            }
        }
        d.deserialize_any(V)
    }
}

/// A `runtime_env` value: one number for all rings, four numbers, or the CLI's string form.
/// Anything else is refused saying what is accepted (a float such as `1e9` too: the sizes are
/// whole numbers).
#[derive(Clone, Debug)]
pub enum EnvValue {
    /// One number for every ring.
    One(u64),
    /// One number per ring.
    PerRing(Vec<u64>),
    /// `"1024"` or `"1024,2048,4096,8192"`.
    Text(String),
}

/// What a `runtime_env` value may be, as errors say it.
const ENV_VALUE_EXPECTED: &str =
    "a whole number of 0 or more (every ring), a list of 4 of them (one per ring), \
     or a string of either (\"1024\" or \"1024,2048,4096,8192\")";

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EnvValue, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = EnvValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(ENV_VALUE_EXPECTED)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<EnvValue, E> {
                Ok(EnvValue::One(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<EnvValue, A::Error> {
                let mut v = Vec::new();
                while let Some(n) = seq.next_element::<RingNumber>()? {
                    v.push(n.0);
                }
                Ok(EnvValue::PerRing(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// One ring's number in a `runtime_env` list.
struct RingNumber(u64);

impl<'de> Deserialize<'de> for RingNumber {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RingNumber, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = RingNumber;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a whole number of 0 or more for each ring")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RingNumber, E> {
                Ok(RingNumber(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// `diagnostics.enable_l2_swimlane`: on/off, or the original's level number.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(
    untagged,
    expecting = "expected `true`, `false` or a level from 0 to 4 (0 off, 1 kernel start/end ... 4 everything)"
)]
pub enum SwimlaneSwitch {
    /// `true` records everything (level 4); `false` nothing.
    On(bool),
    /// A level: 0 off, 1–4 as `--enable-l2-swimlane=LEVEL`.
    Level(u64),
}

impl Default for SwimlaneSwitch {
    fn default() -> Self {
        SwimlaneSwitch::On(false)
    }
}

/// Diagnostics switches.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagnostics {
    /// Write scope_stats/scope_stats.jsonl.
    #[serde(default)]
    pub enable_scope_stats: bool,
    /// Write deps.json.
    #[serde(default)]
    pub enable_dep_gen: bool,
    /// Write l2_swimlane_records.json: `true` (level 4, everything), `false`, or a level 0–4.
    #[serde(default)]
    pub enable_l2_swimlane: SwimlaneSwitch,
    /// Args dump level 0..=3 (`args_dump/`).
    #[serde(default)]
    pub dump_args: Option<u64>,
    /// Where artifacts go (default `outputs/<name>_<timestamp>/`).
    #[serde(default)]
    pub output_prefix: Option<String>,
}

/// An external tensor.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorDecl {
    /// Its name.
    pub name: String,
    /// Element type (default `FLOAT32`).
    #[serde(default)]
    pub dtype: Option<String>,
    /// Elements per dimension (1 to 5 dimensions).
    pub shape: Vec<Expr>,
    /// Initial contents (default zeros).
    #[serde(default)]
    pub fill: Option<Fill>,
}

/// How an external tensor is filled before the run.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Fill {
    /// Every element the same value.
    Constant(f64),
    /// `start + step·k` for element `k` (row-major).
    Iota(Iota),
    /// Uniform in `[min, max)` from a seeded splitmix64 stream.
    Random(Random),
    /// An integer expression of the flat index `k`.
    Formula(String),
}

/// Parameters of [`Fill::Iota`].
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Iota {
    /// First value (default 0).
    #[serde(default)]
    pub start: f64,
    /// Increment (default 1).
    #[serde(default = "one")]
    pub step: f64,
}

/// Parameters of [`Fill::Random`].
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Random {
    /// Seed of the stream.
    pub seed: u64,
    /// Lower bound (default 0).
    #[serde(default)]
    pub min: f64,
    /// Upper bound, exclusive (default 1).
    #[serde(default = "one")]
    pub max: f64,
}

fn one() -> f64 {
    1.0
}

/// One statement of a body.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Stmt {
    /// A nested scope.
    Scope(ScopeSpec),
    /// A task with kernels.
    Submit(TaskSpec),
    /// A dependency-only task (no kernel).
    Dummy(TaskSpec),
    /// `alloc_tensors`: runtime buffers through a hidden allocation task.
    Alloc(AllocSpec),
    /// A loop.
    Repeat(RepeatSpec),
    /// Binds a name to a view of a tensor.
    Let(LetSpec),
}

/// Scope mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Creator retention and tensor-map lookups.
    #[default]
    Auto,
    /// Explicit deps only.
    Manual,
}

/// A nested scope.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeSpec {
    /// `auto` (default) or `manual`.
    #[serde(default)]
    pub mode: Mode,
    /// Its statements.
    pub body: Vec<Stmt>,
}

/// A kernel by library name or func id.
#[derive(Clone, Debug)]
pub enum KernelRef {
    /// A func id.
    Id(u32),
    /// A library name.
    Name(String),
}

impl<'de> Deserialize<'de> for KernelRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = KernelRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a kernel name or a func id (an integer in [0, 4294967295])")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<KernelRef, E> {
                u32::try_from(v)
                    .map(KernelRef::Id)
                    .map_err(|_| E::custom(format_args!("func id {v} is larger than 4294967295")))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<KernelRef, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::custom(format_args!(
                        "func id {v} is negative; a func id is an integer in [0, 4294967295]"
                    ))),
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<KernelRef, E> {
                Ok(KernelRef::Name(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Kernels per subslot of a cluster, for mixed tasks.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixedSpec {
    /// Kernel on the AIC.
    #[serde(default)]
    pub aic: Option<KernelRef>,
    /// Kernel on the first AIV.
    #[serde(default)]
    pub aiv0: Option<KernelRef>,
    /// Kernel on the second AIV.
    #[serde(default)]
    pub aiv1: Option<KernelRef>,
}

/// Core type names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoreName {
    /// Cube core.
    Aic,
    /// Vector core.
    Aiv,
}

/// A submit or dummy task.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Label template (`"t{i}"`) other tasks' deps refer to.
    #[serde(default)]
    pub label: Option<Template>,
    /// One kernel (its core type comes from the library unless `core` says otherwise).
    #[serde(default)]
    pub kernel: Option<KernelRef>,
    /// Core type the kernel is submitted to (checked against the kernel's).
    #[serde(default)]
    pub core: Option<CoreName>,
    /// Kernels per subslot (a mixed task).
    #[serde(default)]
    pub kernels: Option<MixedSpec>,
    /// Tensor arguments, in order.
    #[serde(default)]
    pub args: Vec<ArgSpec>,
    /// Scalar arguments, in order.
    #[serde(default)]
    pub scalars: Vec<Scalar>,
    /// Explicit WAIT|RETAIN dependencies, by label.
    #[serde(default)]
    pub deps: Vec<DepRef>,
    /// Explicit WAIT-only dependencies, by label.
    #[serde(default)]
    pub deps_wait: Vec<DepRef>,
    /// SPMD block count (default 1).
    #[serde(default)]
    pub block_num: Option<Expr>,
    /// All blocks must start at once.
    #[serde(default)]
    pub require_sync_start: bool,
    /// Early-dispatch hint.
    #[serde(default)]
    pub allow_early_resolve: bool,
    /// Args dump selection: `true` selects every argument, a list selects argument indices
    /// (tensors first, then scalars).
    #[serde(default)]
    pub dump: Option<DumpSelection>,
}

/// A task's args dump selection in a workload file.
#[derive(Clone, Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "expected `true` (every argument), `false` (none) or a list of argument indices such as [0, 2]"
)]
pub enum DumpSelection {
    /// `true`: every argument; `false`: none.
    All(bool),
    /// These argument indices.
    Indices(Vec<usize>),
}

/// One explicit dependency (a label template) or a range of them.
#[derive(Clone, Debug)]
pub enum DepRef {
    /// A label template, e.g. `"t{i-1}"`.
    Label(Template),
    /// `label` for `each` = from, from+1, ... (`count` values).
    Range(DepRange),
}

impl<'de> Deserialize<'de> for DepRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DepRef, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DepRef;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a label (a string such as \"t{i-1}\") or a range of labels \
                     ({\"each\": \"j\", \"count\": \"N\", \"label\": \"p{j}\"})",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DepRef, E> {
                Ok(DepRef::Label(Template::parse(v)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<DepRef, A::Error> {
                DepRange::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(DepRef::Range)
            }
        }
        d.deserialize_any(V)
    }
}

/// A range of labels: `{"each": "j", "count": "N", "label": "p{j}"}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DepRange {
    /// The variable.
    pub each: String,
    /// First value (default 0).
    #[serde(default)]
    pub from: Option<Expr>,
    /// Number of values.
    pub count: Expr,
    /// The label template.
    pub label: Template,
}

/// A scalar argument: a bare integer (i64 bits), a bare float (f32 bits), or typed.
#[derive(Clone, Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a number, or a typed scalar such as {\"u32\": \"i*4\"} (f32, f64, u32, u64 or i64)"
)]
pub enum Scalar {
    /// Integer, as two's-complement 64-bit.
    Int(i64),
    /// Float, as f32 bits (what `add_scalar` and `fill` read).
    Float(f64),
    /// An explicitly typed scalar.
    Typed(TypedScalar),
}

/// A typed scalar.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TypedScalar {
    /// f32 bits, zero-extended.
    F32(f64),
    /// f64 bits.
    F64(f64),
    /// Unsigned 32-bit (an expression).
    U32(Expr),
    /// Unsigned 64-bit (an expression).
    U64(Expr),
    /// Signed 64-bit (an expression).
    I64(Expr),
}

/// A sub-box view (`shape` + `offsets`) or a raw view (`shape` + `strides` + `start_offset`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewSpec {
    /// Elements per dimension.
    pub shape: Vec<Expr>,
    /// Offsets per dimension (sub-box form; default zeros).
    #[serde(default)]
    pub offsets: Option<Vec<Expr>>,
    /// Strides per dimension in elements (raw form).
    #[serde(default)]
    pub strides: Option<Vec<Expr>>,
    /// First element's offset from the buffer base (raw form).
    #[serde(default)]
    pub start_offset: Option<Expr>,
}

/// `elements start, start+step, ... < end` of dimension `dim`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SliceSpec {
    /// The dimension.
    pub dim: usize,
    /// First index (default 0).
    #[serde(default)]
    pub start: Option<Expr>,
    /// One past the last index (default the extent).
    #[serde(default)]
    pub end: Option<Expr>,
    /// Step (default 1).
    #[serde(default)]
    pub step: Option<Expr>,
}

/// One slice or several (applied in order).
#[derive(Clone, Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a slice {\"dim\": D, \"start\": S, \"end\": E, \"step\": K} (start, end and step optional) or a list of them"
)]
pub enum Slices {
    /// One slice.
    One(SliceSpec),
    /// Several.
    Many(Vec<SliceSpec>),
}

impl Slices {
    /// The slices in order.
    pub fn as_slice(&self) -> &[SliceSpec] {
        match self {
            Slices::One(s) => std::slice::from_ref(s),
            Slices::Many(v) => v,
        }
    }
}

/// View operations shared by args and `let`, borrowed from the spec (an expansion applies
/// them once per use, a million times in a loop of a million: nothing is copied); applied in
/// the order view → slice → reshape → transpose → version → manual_dep.
#[derive(Clone, Copy, Debug)]
pub struct ViewOps<'a> {
    /// A sub-box or raw view.
    pub view: Option<&'a ViewSpec>,
    /// Strided slices.
    pub slice: Option<&'a Slices>,
    /// A new row-major shape (contiguous views only).
    pub reshape: Option<&'a [Expr]>,
    /// Two dimensions to swap.
    pub transpose: Option<[usize; 2]>,
    /// The view's version.
    pub version: Option<i32>,
    /// Skip tensor-map lookups and inserts for this view.
    pub manual_dep: Option<bool>,
}

/// One tensor argument: exactly one tag key naming a tensor (or, for `output`, the name the
/// new buffer gets), plus view operations or, for `output`, a create-info.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgSpec {
    /// INPUT.
    #[serde(default)]
    pub input: Option<Template>,
    /// OUTPUT from a create-info; the value names the new tensor.
    #[serde(default)]
    pub output: Option<Template>,
    /// INOUT.
    #[serde(default)]
    pub inout: Option<Template>,
    /// OUTPUT_EXISTING.
    #[serde(default)]
    pub output_existing: Option<Template>,
    /// NO_DEP.
    #[serde(default)]
    pub no_dep: Option<Template>,
    /// Output shape (for `output`).
    #[serde(default)]
    pub shape: Option<Vec<Expr>>,
    /// Output dtype (for `output`, default FLOAT32).
    #[serde(default)]
    pub dtype: Option<String>,
    /// Output fill value at submit (for `output`).
    #[serde(default)]
    pub initial_value: Option<f64>,
    /// A sub-box or raw view.
    #[serde(default)]
    pub view: Option<ViewSpec>,
    /// Strided slices.
    #[serde(default)]
    pub slice: Option<Slices>,
    /// A new row-major shape.
    #[serde(default)]
    pub reshape: Option<Vec<Expr>>,
    /// Two dimensions to swap.
    #[serde(default)]
    pub transpose: Option<[usize; 2]>,
    /// The view's version.
    #[serde(default)]
    pub version: Option<i32>,
    /// manual_dep of the view (or of the output's create-info).
    #[serde(default)]
    pub manual_dep: Option<bool>,
}

impl ArgSpec {
    /// The view operations of this argument.
    pub fn ops(&self) -> ViewOps<'_> {
        ViewOps {
            view: self.view.as_ref(),
            slice: self.slice.as_ref(),
            reshape: self.reshape.as_deref(),
            transpose: self.transpose,
            version: self.version,
            manual_dep: self.manual_dep,
        }
    }
}

/// An output create-info of `alloc`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputDecl {
    /// The name the buffer gets (a template).
    pub name: Template,
    /// Elements per dimension.
    pub shape: Vec<Expr>,
    /// Element type (default FLOAT32).
    #[serde(default)]
    pub dtype: Option<String>,
    /// manual_dep of the buffer.
    #[serde(default)]
    pub manual_dep: bool,
    /// Fill value at allocation.
    #[serde(default)]
    pub initial_value: Option<f64>,
}

/// `alloc_tensors`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocSpec {
    /// Label of the hidden allocation task (for explicit deps in manual scopes).
    #[serde(default)]
    pub label: Option<Template>,
    /// The buffers.
    pub outputs: Vec<OutputDecl>,
}

/// A loop: `body` runs `count` times with `var` = from, from+1, ...
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    /// Loop variable name.
    pub var: String,
    /// First value (default 0).
    #[serde(default)]
    pub from: Option<Expr>,
    /// Number of iterations.
    pub count: Expr,
    /// The statements.
    pub body: Vec<Stmt>,
}

/// Binds `name` to a view of `tensor`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LetSpec {
    /// The new name (a template).
    pub name: Template,
    /// The tensor it views (a template).
    pub tensor: Template,
    /// A sub-box or raw view.
    #[serde(default)]
    pub view: Option<ViewSpec>,
    /// Strided slices.
    #[serde(default)]
    pub slice: Option<Slices>,
    /// A new row-major shape.
    #[serde(default)]
    pub reshape: Option<Vec<Expr>>,
    /// Two dimensions to swap.
    #[serde(default)]
    pub transpose: Option<[usize; 2]>,
    /// The view's version.
    #[serde(default)]
    pub version: Option<i32>,
    /// manual_dep of the view.
    #[serde(default)]
    pub manual_dep: Option<bool>,
}

impl LetSpec {
    /// The view operations.
    pub fn ops(&self) -> ViewOps<'_> {
        ViewOps {
            view: self.view.as_ref(),
            slice: self.slice.as_ref(),
            reshape: self.reshape.as_deref(),
            transpose: self.transpose,
            version: self.version,
            manual_dep: self.manual_dep,
        }
    }
}

/// Expected contents of an external tensor (or a view of it) after the run.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// The external tensor.
    pub tensor: String,
    /// Check only this sub-box or raw view.
    #[serde(default)]
    pub view: Option<ViewSpec>,
    /// Expected values.
    pub expect: Expect,
    /// Allowed absolute difference, relative to max(1, |expected|) (default 1e-5).
    #[serde(default)]
    pub tolerance: Option<f64>,
}

/// Expected values.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Expect {
    /// Every element equals this.
    Constant(f64),
    /// Element `k` (row-major over the view) equals this integer expression of `k`.
    Formula(String),
    /// Exactly these values, row-major.
    Values(Vec<f64>),
}
