//! Validation with JSON paths: walks the typed workload, evaluates expressions, unrolls
//! `repeat`, resolves names, labels and kernels, builds every view against a placeholder
//! buffer (so out-of-bounds views are caught before the run), and emits the flat [`Program`].
//!
//! Name rules: external tensors are visible everywhere; a name bound inside a scope (an output,
//! an `alloc` buffer, a `let` view) is visible in that scope and the scopes nested in it, and
//! using it after the scope ends is an error (a runtime output must not outlive its scope).
//! `repeat` does not open a scope. Labels are global; a label refers to the latest task that
//! carried it, and deps may only name earlier tasks.

use std::collections::BTreeMap;

// Labels and names are the user's own strings from their own file, so a hash that is fast
// rather than one that resists chosen collisions (a million labels: 0.916 of the time with
// it, docs/workloads.md).
use rustc_hash::FxHashMap as HashMap;

use simpler_core::{DType, TaskId, Tensor, TensorCreateInfo, MAX_TENSOR_ARGS};
use simpler_runtime::orchestrator::MAX_SCOPE_DEPTH;
use simpler_runtime::ScopeMode;

use crate::error::{WResult, WorkloadError};

mod tasks;
mod views;

use crate::expr::{compile, Env, ExprError, Template};
use crate::program::{Base, Check, Expected, External, FillOp, KernelSet, Op, Program, SymTensor};
use crate::schema::{
    AllocSpec, CheckSpec, Expect, Expr, Fill, LetSpec, Mode, RepeatSpec, ScopeSpec, Stmt, TensorDecl,
    WorkloadSpec,
};

/// Largest number of tasks a workload may expand to.
pub const MAX_TASKS: usize = 20_000_000;

/// Largest external tensor, in bytes (device memory is host memory here).
pub(crate) const MAX_EXTERNAL_BYTES: u64 = 1 << 32;

/// Largest raw-view `start_offset` (keeps byte arithmetic far from overflow).
const MAX_START_OFFSET: i64 = 1 << 40;

/// Elements a `formula` fill or check may evaluate.
const MAX_FORMULA_ELEMENTS: u64 = 1 << 24;

/// Elements all the `formula` fills and checks of a workload may evaluate together: their
/// values are held as 8-byte numbers until the run (512 MiB at this bound), which the host
/// memory check of the tensors does not count; ten tensors of 2^24 took 1.5 GB before.
const MAX_FORMULA_ELEMENTS_TOTAL: u64 = 1 << 26;

/// Statements, loop iterations and dependency-range entries an expansion may run. The task
/// limit alone does not bound loops that submit nothing: two nested `repeat`s of 20M with an
/// empty body ran without end, and a dependency range of 20M in each of 20M tasks would too.
pub(crate) const MAX_STEPS: u64 = 10 * MAX_TASKS as u64;

fn err(path: &str, rule: impl Into<String>) -> WorkloadError {
    WorkloadError::new(path, rule)
}

/// Checks that a loop's variable stays an `i64` through its last iteration (`from + count − 1`).
fn loop_fits(from: i64, count: i64, path: &str) -> WResult<()> {
    if count > 0 && from.checked_add(count - 1).is_none() {
        return Err(err(
            path,
            format!(
                "{count} iterations from {from} pass the largest integer, {}",
                i64::MAX
            ),
        ));
    }
    Ok(())
}

/// Parses a dtype name, listing the valid ones on failure.
pub(crate) fn parse_dtype(name: Option<&str>, path: &str) -> WResult<DType> {
    let Some(name) = name else {
        return Ok(DType::Float32);
    };
    DType::from_name(name).ok_or_else(|| {
        let all: Vec<_> = DType::ALL.iter().map(|d| d.name()).collect();
        err(
            path,
            format!("bad dtype `{name}`; valid dtypes: {}", all.join(", ")),
        )
    })
}

struct NameScope {
    path: String,
    names: HashMap<String, SymTensor>,
}

struct Expander {
    env: Env,
    prog: Program,
    names: Vec<NameScope>,
    dead: HashMap<String, String>,
    labels: HashMap<String, usize>,
    /// Per task index, the stamp (index + 1) of the last task whose explicit dependencies
    /// named it, per kind (WAIT|RETAIN, WAIT): how a task's list drops repeats.
    dep_seen: Vec<[u32; 2]>,
    external_names: HashMap<String, usize>,
    /// Each external tensor's whole view (names can be rebound; checks use these).
    external_views: Vec<Tensor>,
    /// Runtime scope depth (0 = root).
    depth: usize,
    manual_depth: Option<usize>,
    /// Steps run so far (see [`MAX_STEPS`]).
    steps: u64,
    /// Formula elements evaluated so far (see [`MAX_FORMULA_ELEMENTS_TOTAL`]).
    formula_elements: u64,
    /// The workload's name, the first part of its scopes' sites.
    workload: String,
    /// Each scope statement's site by its path, made once however often it runs.
    scope_sites: HashMap<String, simpler_runtime::Site>,
}

/// Validates `spec` with `constants` and expands it into a program; `name` (the workload's)
/// begins its scopes' sites.
pub(crate) fn expand(spec: &WorkloadSpec, constants: &BTreeMap<String, i64>, name: &str) -> WResult<Program> {
    let mut x = Expander {
        env: Env::with_constants(constants),
        prog: Program::new(
            KernelSet::Library,
            simpler_runtime::Site::interned(&format!("{name}:body")),
        ),
        names: vec![NameScope {
            path: "tensors".into(),
            names: HashMap::default(),
        }],
        dead: HashMap::default(),
        labels: HashMap::default(),
        dep_seen: Vec::new(),
        external_names: HashMap::default(),
        external_views: Vec::new(),
        depth: 0,
        manual_depth: None,
        steps: 0,
        formula_elements: 0,
        workload: name.to_string(),
        scope_sites: HashMap::default(),
    };
    for (i, t) in spec.tensors.iter().enumerate() {
        x.external(t, &format!("tensors[{i}]"))?;
    }
    x.stmts(&spec.body, "body")?;
    for (i, c) in spec.checks.iter().enumerate() {
        x.check(c, &format!("checks[{i}]"))?;
    }
    Ok(x.prog)
}

impl Expander {
    // === expressions ===

    fn int(&self, e: &Expr, path: &str) -> WResult<i64> {
        match e {
            Expr::Int(v) => Ok(*v),
            Expr::Text(c) => (**c)
                .as_ref()
                .map_err(ExprError::clone)
                .and_then(|c| c.eval(&self.env))
                .map_err(|e| err(path, e.to_string())),
        }
    }

    fn ranged(&self, e: &Expr, path: &str, min: i64, max: i64) -> WResult<i64> {
        let v = self.int(e, path)?;
        if v < min || v > max {
            return Err(err(path, format!("value {v} is out of range {min}..={max}")));
        }
        Ok(v)
    }

    fn u32_at(&self, e: &Expr, path: &str) -> WResult<u32> {
        Ok(self.ranged(e, path, 0, i64::from(u32::MAX))? as u32)
    }

    fn dims(&self, v: &[Expr], path: &str) -> WResult<Vec<u32>> {
        v.iter()
            .enumerate()
            .map(|(d, e)| self.u32_at(e, &format!("{path}[{d}]")))
            .collect()
    }

    /// `t` expanded; `path` (built only for an error) is where the template is used.
    fn template(&self, t: &Template, path: impl FnOnce() -> String) -> WResult<String> {
        t.expand(&self.env).map_err(|e| err(&path(), e.to_string()))
    }

    // === external tensors and checks ===

    fn external(&mut self, t: &TensorDecl, path: &str) -> WResult<()> {
        if self.external_names.contains_key(&t.name) {
            return Err(err(
                &format!("{path}.name"),
                format!("external tensor `{}` is declared twice", t.name),
            ));
        }
        let dtype = parse_dtype(t.dtype.as_deref(), &format!("{path}.dtype"))?;
        let shape = self.dims(&t.shape, &format!("{path}.shape"))?;
        let numel: u64 = shape.iter().map(|&s| u64::from(s)).fold(1, u64::saturating_mul);
        if numel.saturating_mul(dtype.size()) > MAX_EXTERNAL_BYTES {
            return Err(err(
                &format!("{path}.shape"),
                format!("an external tensor holds at most {MAX_EXTERNAL_BYTES} bytes; this one needs {numel} elements of {dtype}"),
            ));
        }
        let view = Tensor::contiguous(0, numel * dtype.size(), &shape, dtype, TaskId::INVALID)
            .map_err(|e| err(&format!("{path}.shape"), e.to_string()))?;
        let fill = match &t.fill {
            None => FillOp::Zeros,
            Some(Fill::Constant(v)) => FillOp::Constant(*v),
            Some(Fill::Iota(i)) => FillOp::Iota {
                start: i.start,
                step: i.step,
            },
            Some(Fill::Random(r)) => {
                if r.min.partial_cmp(&r.max) != Some(std::cmp::Ordering::Less) {
                    return Err(err(
                        &format!("{path}.fill.random"),
                        format!("min {} must be below max {}", r.min, r.max),
                    ));
                }
                FillOp::Random {
                    seed: r.seed,
                    min: r.min,
                    max: r.max,
                }
            }
            Some(Fill::Formula(f)) => {
                FillOp::Values(self.formula(f, numel, &format!("{path}.fill.formula"))?)
            }
        };
        let k = self.prog.externals.len();
        self.prog.externals.push(External {
            name: t.name.clone(),
            declared_at: Some(path.to_string()),
            shape,
            dtype,
            fill,
        });
        self.external_names.insert(t.name.clone(), k);
        self.external_views.push(view);
        self.names[0].names.insert(
            t.name.clone(),
            SymTensor {
                base: Base::External(k),
                view,
            },
        );
        Ok(())
    }

    fn formula(&mut self, f: &str, n: u64, path: &str) -> WResult<Vec<f64>> {
        if n > MAX_FORMULA_ELEMENTS {
            return Err(err(
                path,
                format!("a formula covers at most {MAX_FORMULA_ELEMENTS} elements, this tensor has {n}"),
            ));
        }
        self.formula_elements += n;
        if self.formula_elements > MAX_FORMULA_ELEMENTS_TOTAL {
            return Err(err(
                path,
                format!(
                    "the workload's formulas cover at most {MAX_FORMULA_ELEMENTS_TOTAL} elements together \
                     (their values are held until the run); with this one they cover {}",
                    self.formula_elements
                ),
            ));
        }
        // Parsed once and its names found once: each element only evaluates the tree.
        let compiled = compile(f).map_err(|e| err(path, e.to_string()))?;
        self.env.push("k", 0);
        let result = compiled.bind(&self.env).and_then(|bound| {
            let mut out = Vec::with_capacity(n as usize);
            for k in 0..n {
                self.env.set_last(k as i64);
                out.push(bound.eval(&self.env)? as f64);
            }
            Ok(out)
        });
        self.env.pop();
        result.map_err(|e| err(path, e.to_string()))
    }

    fn check(&mut self, c: &CheckSpec, path: &str) -> WResult<()> {
        let Some(&ext) = self.external_names.get(&c.tensor) else {
            return Err(err(
                &format!("{path}.tensor"),
                format!(
                    "`{}` is not an external tensor; checks read external tensors (declared in `tensors`) after the run",
                    c.tensor
                ),
            ));
        };
        let mut sym = SymTensor {
            base: Base::External(ext),
            view: self.external_views[ext],
        };
        if let Some(v) = &c.view {
            sym.view = self.view(sym.view, v, &format!("{path}.view"))?;
        }
        let n = sym.view.numel();
        if n > sym.view.buffer_numel() {
            // Strides that revisit elements can name up to 2^64 of them; the check reads each
            // into host memory, so a view is bounded by the tensor it reads.
            return Err(err(
                &format!("{path}.view"),
                format!(
                    "a check reads at most the {} elements of `{}`, this view has {n}",
                    sym.view.buffer_numel(),
                    c.tensor
                ),
            ));
        }
        let expected = match &c.expect {
            Expect::Constant(v) => Expected::Constant(*v),
            Expect::Formula(f) => Expected::Values(self.formula(f, n, &format!("{path}.expect.formula"))?),
            Expect::Values(v) => {
                if v.len() as u64 != n {
                    return Err(err(
                        &format!("{path}.expect.values"),
                        format!("{} values for a view of {n} elements", v.len()),
                    ));
                }
                Expected::Values(v.clone())
            }
        };
        let tolerance = c.tolerance.unwrap_or(1e-5);
        if tolerance.is_nan() || tolerance < 0.0 {
            return Err(err(&format!("{path}.tolerance"), "tolerance must be >= 0"));
        }
        self.prog.checks.push(Check {
            label: c.tensor.clone(),
            external: ext,
            view: sym.view,
            expected,
            tolerance,
        });
        Ok(())
    }

    // === statements ===

    fn stmts(&mut self, body: &[Stmt], path: &str) -> WResult<()> {
        for (i, s) in body.iter().enumerate() {
            let p = format!("{path}[{i}]");
            self.step(&p)?;
            match s {
                Stmt::Scope(sc) => self.scope(sc, &p)?,
                Stmt::Submit(t) => self.task(t, &format!("{p}.submit"), false)?,
                Stmt::Dummy(t) => self.task(t, &format!("{p}.dummy"), true)?,
                Stmt::Alloc(a) => self.alloc(a, &format!("{p}.alloc"))?,
                Stmt::Repeat(r) => self.repeat(r, &format!("{p}.repeat"))?,
                Stmt::Let(l) => self.let_(l, &format!("{p}.let"))?,
            }
            if self.prog.tasks > MAX_TASKS {
                return Err(err(
                    &p,
                    format!("the workload expands to more than {MAX_TASKS} tasks"),
                ));
            }
        }
        Ok(())
    }

    fn scope(&mut self, sc: &ScopeSpec, path: &str) -> WResult<()> {
        if sc.mode == Mode::Auto && self.manual_depth.is_some() {
            return Err(err(
                &format!("{path}.scope.mode"),
                "an auto scope cannot be nested inside a manual scope",
            ));
        }
        if self.depth + 1 >= MAX_SCOPE_DEPTH {
            return Err(err(
                &format!("{path}.scope"),
                format!("scopes nest deeper than {MAX_SCOPE_DEPTH} (the root scope included)"),
            ));
        }
        let mode = match sc.mode {
            Mode::Auto => ScopeMode::Auto,
            Mode::Manual => ScopeMode::Manual,
        };
        let site = match self.scope_sites.get(path) {
            Some(&site) => site,
            None => {
                let site = simpler_runtime::Site::interned(&format!("{}:{path}.scope", self.workload));
                self.scope_sites.insert(path.to_string(), site);
                site
            }
        };
        self.prog.ops.push(Op::Begin(mode, site));
        self.depth += 1;
        let started_manual = mode == ScopeMode::Manual && self.manual_depth.is_none();
        if started_manual {
            self.manual_depth = Some(self.depth);
        }
        self.names.push(NameScope {
            path: path.to_string(),
            names: HashMap::default(),
        });
        let r = self.stmts(&sc.body, &format!("{path}.scope.body"));
        let ended = self.names.pop().expect("pushed above");
        for name in ended.names.into_keys() {
            self.dead.insert(name, ended.path.clone());
        }
        if started_manual {
            self.manual_depth = None;
        }
        self.depth -= 1;
        self.prog.ops.push(Op::End);
        r
    }

    fn repeat(&mut self, r: &RepeatSpec, path: &str) -> WResult<()> {
        let from = match &r.from {
            Some(e) => self.int(e, &format!("{path}.from"))?,
            None => 0,
        };
        let count = self.ranged(&r.count, &format!("{path}.count"), 0, MAX_TASKS as i64)?;
        if r.var.is_empty() || !r.var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(err(&format!("{path}.var"), format!("`{}` is not a name", r.var)));
        }
        let body_path = format!("{path}.body");
        loop_fits(from, count, &format!("{path}.from"))?;
        self.env.push(&r.var, from);
        let mut result = Ok(());
        for it in 0..count {
            let v = from + it;
            self.env.set_last(v);
            if let Err(e) = self.step(path).and_then(|()| self.stmts(&r.body, &body_path)) {
                result = Err(e.in_loop(&r.var, v));
                break;
            }
        }
        self.env.pop();
        result
    }

    /// Counts one step of the expansion against [`MAX_STEPS`].
    fn step(&mut self, path: &str) -> WResult<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(err(
                path,
                format!(
                    "the workload expands through more than {MAX_STEPS} statements, loop iterations and dependency-range entries"
                ),
            ));
        }
        Ok(())
    }

    fn bind(&mut self, name: String, t: SymTensor) {
        self.dead.remove(&name);
        self.names
            .last_mut()
            .expect("the root name scope is never popped")
            .names
            .insert(name, t);
    }

    fn lookup(&self, name: &str, path: &str) -> WResult<SymTensor> {
        for s in self.names.iter().rev() {
            if let Some(t) = s.names.get(name) {
                return Ok(*t);
            }
        }
        if let Some(scope) = self.dead.get(name) {
            return Err(err(
                path,
                format!(
                    "tensor `{name}` is used after its scope: it was bound inside the scope at {scope}, which has ended"
                ),
            ));
        }
        let mut known: Vec<&str> = self
            .names
            .iter()
            .flat_map(|s| s.names.keys().map(String::as_str))
            .collect();
        known.sort_unstable();
        known.dedup();
        let more = known.len().saturating_sub(20);
        known.truncate(20);
        let mut list = known.join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        Err(err(
            path,
            format!("unknown tensor `{name}`; tensors in scope: {list}"),
        ))
    }

    fn let_(&mut self, l: &LetSpec, path: &str) -> WResult<()> {
        let name = self.template(&l.name, || format!("{path}.name"))?;
        let tname = self.template(&l.tensor, || format!("{path}.tensor"))?;
        let t = self.lookup(&tname, &format!("{path}.tensor"))?;
        let t = self.apply_ops(t, &l.ops(), path)?;
        self.bind(name, t);
        Ok(())
    }

    fn alloc(&mut self, a: &AllocSpec, path: &str) -> WResult<()> {
        if a.outputs.is_empty() {
            return Err(err(&format!("{path}.outputs"), "alloc needs at least one output"));
        }
        if a.outputs.len() > MAX_TENSOR_ARGS {
            return Err(err(
                &format!("{path}.outputs"),
                format!(
                    "too many args: {} outputs; a task takes at most {MAX_TENSOR_ARGS} tensor arguments",
                    a.outputs.len()
                ),
            ));
        }
        let mut outs = Vec::with_capacity(a.outputs.len());
        let mut binds = Vec::new();
        for (j, o) in a.outputs.iter().enumerate() {
            let p = format!("{path}.outputs[{j}]");
            let name = self.template(&o.name, || format!("{p}.name"))?;
            let ci = self.create_info(&o.shape, o.dtype.as_deref(), o.manual_dep, o.initial_value, &p)?;
            let slot = self.prog.new_output();
            outs.push((ci, slot));
            binds.push((name, slot, ci));
        }
        let task = self.prog.tasks;
        self.prog.push_alloc(outs);
        if let Some(l) = &a.label {
            let l = self.template(l, || format!("{path}.label"))?;
            self.labels.insert(l, task);
        }
        for (name, slot, ci) in binds {
            self.bind(
                name,
                SymTensor {
                    base: Base::Output(slot),
                    view: ci.materialize(0, TaskId::INVALID),
                },
            );
        }
        Ok(())
    }

    fn create_info(
        &self,
        shape: &[Expr],
        dtype: Option<&str>,
        manual_dep: bool,
        initial_value: Option<f64>,
        path: &str,
    ) -> WResult<TensorCreateInfo> {
        let dtype = parse_dtype(dtype, &format!("{path}.dtype"))?;
        let shape = self.dims(shape, &format!("{path}.shape"))?;
        let mut ci = TensorCreateInfo::new(&shape, dtype)
            .map_err(|e| err(&format!("{path}.shape"), e.to_string()))?
            .with_manual_dep(manual_dep);
        if let Some(v) = initial_value {
            ci = ci.with_initial_value(v);
        }
        Ok(ci)
    }
}
