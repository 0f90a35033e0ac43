//! Submits and dummies: kernels and their core types, arity, arguments, scalars, deps.

use simpler_core::{ArgTag, DepKind, TaskId, MAX_SCALAR_ARGS, MAX_TENSOR_ARGS};
use simpler_runtime::{CoreType, MixedKernels};

use super::{err, loop_fits, Expander, MAX_TASKS};
use crate::error::WResult;
use crate::expr::Template;
use crate::kernels::{self, KernelInfo, ScalarType};
use crate::program::{ArgOp, Base, SubmitOp, SymTensor};
use crate::schema::{ArgSpec, CoreName, DepRef, DumpSelection, KernelRef, Scalar, TaskSpec, TypedScalar};

impl Expander {
    fn kernel(&self, r: &KernelRef, path: &str) -> WResult<&'static KernelInfo> {
        match r {
            KernelRef::Name(n) => kernels::by_name(n).ok_or_else(|| {
                err(
                    path,
                    format!("unknown kernel `{n}`; library kernels: {}", kernels::names()),
                )
            }),
            KernelRef::Id(id) => kernels::by_id(*id).ok_or_else(|| {
                err(
                    path,
                    format!(
                        "func id {id} is not in the kernel library (ids 0..={}: {})",
                        kernels::LIBRARY.len() - 1,
                        kernels::names()
                    ),
                )
            }),
        }
    }

    fn on_core(k: &KernelInfo, want: CoreType, slot: &str, path: &str) -> WResult<()> {
        if k.core != want {
            return Err(err(
                path,
                format!(
                    "kernel `{}` (func id {}) runs on {} cores but was submitted to an {} {slot}",
                    k.name,
                    k.func_id,
                    k.core.name(),
                    want.name()
                ),
            ));
        }
        Ok(())
    }

    fn kernels_of(&self, t: &TaskSpec, base: &str) -> WResult<(MixedKernels, Vec<&'static KernelInfo>)> {
        match (&t.kernel, &t.kernels) {
            (Some(_), Some(_)) => Err(err(base, "give either `kernel` or `kernels`, not both")),
            (None, None) => Err(err(
                base,
                "a submit needs `kernel` (one kernel) or `kernels` (per subslot); use `dummy` for a task without kernel",
            )),
            (Some(r), None) => {
                let k = self.kernel(r, &format!("{base}.kernel"))?;
                let core = match t.core {
                    None => k.core,
                    Some(CoreName::Aic) => CoreType::Aic,
                    Some(CoreName::Aiv) => CoreType::Aiv,
                };
                Self::on_core(k, core, "core", &format!("{base}.core"))?;
                let mk = match core {
                    CoreType::Aic => MixedKernels::aic(k.func_id as i32),
                    CoreType::Aiv => MixedKernels::aiv(k.func_id as i32),
                };
                Ok((mk, vec![k]))
            }
            (None, Some(m)) => {
                if t.core.is_some() {
                    return Err(err(
                        &format!("{base}.core"),
                        "`core` applies to `kernel`; `kernels` names the subslots",
                    ));
                }
                let mut mk = MixedKernels::NONE;
                let mut used = Vec::new();
                for (slot, r, want) in [
                    ("aic", &m.aic, CoreType::Aic),
                    ("aiv0", &m.aiv0, CoreType::Aiv),
                    ("aiv1", &m.aiv1, CoreType::Aiv),
                ] {
                    let Some(r) = r else { continue };
                    let p = format!("{base}.kernels.{slot}");
                    let k = self.kernel(r, &p)?;
                    Self::on_core(k, want, "subslot", &p)?;
                    match slot {
                        "aic" => mk.aic = k.func_id as i32,
                        "aiv0" => mk.aiv0 = k.func_id as i32,
                        _ => mk.aiv1 = k.func_id as i32,
                    }
                    used.push(k);
                }
                if used.is_empty() {
                    return Err(err(
                        &format!("{base}.kernels"),
                        "no kernel in any subslot; use `dummy` for a task without kernel",
                    ));
                }
                Ok((mk, used))
            }
        }
    }

    pub(super) fn task(&mut self, t: &TaskSpec, base: &str, dummy: bool) -> WResult<()> {
        let (kernels, used) = if dummy {
            if t.kernel.is_some() || t.kernels.is_some() || t.core.is_some() {
                return Err(err(
                    base,
                    "a dummy task has no kernel (`kernel`, `kernels`, `core`)",
                ));
            }
            (MixedKernels::NONE, Vec::new())
        } else {
            self.kernels_of(t, base)?
        };
        if t.args.len() > MAX_TENSOR_ARGS {
            return Err(err(
                &format!("{base}.args"),
                format!(
                    "too many args: {} tensor arguments; a task takes at most {MAX_TENSOR_ARGS}",
                    t.args.len()
                ),
            ));
        }
        if t.scalars.len() > MAX_SCALAR_ARGS {
            return Err(err(
                &format!("{base}.scalars"),
                format!(
                    "too many args: {} scalar arguments; a task takes at most {MAX_SCALAR_ARGS}",
                    t.scalars.len()
                ),
            ));
        }
        for k in &used {
            if t.args.len() < k.min_tensors || t.scalars.len() < k.min_scalars {
                return Err(err(
                    &format!("{base}.args"),
                    format!(
                        "kernel `{}` takes {}; got {} tensor and {} scalar arguments",
                        k.name,
                        k.signature,
                        t.args.len(),
                        t.scalars.len()
                    ),
                ));
            }
        }
        let mut args = Vec::with_capacity(t.args.len());
        let mut binds = Vec::new();
        for (j, a) in t.args.iter().enumerate() {
            let p = format!("{base}.args[{j}]");
            let (op, bind) = self.arg(a, &p)?;
            args.push(op);
            binds.extend(bind);
        }
        let shapes: Vec<&[u32]> = args
            .iter()
            .map(|a| match a {
                ArgOp::Output { ci, .. } => ci.shape(),
                ArgOp::Tensor { t, .. } => t.view.shape(),
            })
            .collect();
        for k in &used {
            k.check_shapes(&shapes).map_err(|m| {
                err(
                    &format!("{base}.args"),
                    format!("kernel `{}` takes {}: {m}", k.name, k.signature),
                )
            })?;
        }
        let scalars = t
            .scalars
            .iter()
            .enumerate()
            .map(|(j, s)| {
                let declared = used.iter().find_map(|k| k.scalar_types.get(j).copied());
                self.scalar(s, declared, &format!("{base}.scalars[{j}]"))
            })
            .collect::<WResult<Vec<u64>>>()?;
        let mut deps = Vec::with_capacity(t.deps.len() + t.deps_wait.len());
        for (field, list, kind) in [
            ("deps", &t.deps, DepKind::WaitRetain),
            ("deps_wait", &t.deps_wait, DepKind::Wait),
        ] {
            for (j, d) in list.iter().enumerate() {
                let p = format!("{base}.{field}[{j}]");
                match d {
                    DepRef::Label(l) => {
                        let task = self.label(l, || p.clone())?;
                        self.add_dep(&mut deps, task, kind);
                    }
                    DepRef::Range(r) => {
                        let from = match &r.from {
                            Some(e) => self.int(e, &format!("{p}.from"))?,
                            None => 0,
                        };
                        let count = self.ranged(&r.count, &format!("{p}.count"), 0, MAX_TASKS as i64)?;
                        loop_fits(from, count, &format!("{p}.from"))?;
                        self.env.push(&r.each, from);
                        let mut res = Ok(());
                        for it in 0..count {
                            self.env.set_last(from + it);
                            match self
                                .step(&p)
                                .and_then(|()| self.label(&r.label, || format!("{p}.label")))
                            {
                                Ok(task) => self.add_dep(&mut deps, task, kind),
                                Err(e) => {
                                    res = Err(e.in_loop(&r.each, from + it));
                                    break;
                                }
                            }
                        }
                        self.env.pop();
                        res?;
                    }
                }
            }
        }
        let block_num = match &t.block_num {
            Some(e) => self.ranged(e, &format!("{base}.block_num"), 1, i64::from(u16::MAX))? as u16,
            None => 1,
        };
        let n_args = args.len() + scalars.len();
        let dump_mask = match &t.dump {
            None | Some(DumpSelection::All(false)) => 0,
            Some(_) if dummy => {
                return Err(err(
                    &format!("{base}.dump"),
                    "a dummy task runs no kernel, so its arguments are never dumped",
                ))
            }
            Some(DumpSelection::All(true)) if n_args == 0 => {
                return Err(err(&format!("{base}.dump"), "the task has no arguments to dump"))
            }
            Some(DumpSelection::All(true)) => u64::MAX >> (64 - n_args),
            Some(DumpSelection::Indices(v)) => {
                let mut m = 0u64;
                for (k, &i) in v.iter().enumerate() {
                    if i >= n_args {
                        return Err(err(
                            &format!("{base}.dump[{k}]"),
                            format!("argument {i} does not exist: the task has {n_args} (tensors first, then scalars)"),
                        ));
                    }
                    m |= 1u64 << i;
                }
                m
            }
        };
        let task_index = self.prog.tasks;
        let manual = self.manual_depth.is_some();
        self.prog.push_submit(
            SubmitOp {
                kernels,
                args,
                scalars,
                deps,
                block_num,
                require_sync_start: t.require_sync_start,
                allow_early_resolve: t.allow_early_resolve,
                dump_mask,
            },
            manual,
        );
        if let Some(l) = &t.label {
            let l = self.template(l, || format!("{base}.label"))?;
            self.labels.insert(l, task_index);
        }
        for (name, t) in binds {
            self.bind(name, t);
        }
        Ok(())
    }

    /// The task `template` names now; `path` (built only for an error) is where it is used.
    fn label(&self, template: &Template, path: impl Fn() -> String) -> WResult<usize> {
        let expanded;
        let label = match template.literal() {
            Some(text) => text,
            None => {
                expanded = self.template(template, &path)?;
                expanded.as_str()
            }
        };
        self.labels.get(label).copied().ok_or_else(|| {
            err(
                &path(),
                format!("unknown label `{label}`: no earlier task has this label"),
            )
        })
    }

    /// Adds the explicit dependency on `task` of `kind` to the list of the task being expanded,
    /// unless the list has it already: the runtime keeps one edge per producer anyway, and a
    /// range over one label 20M times held 3 GB of copies.
    fn add_dep(&mut self, deps: &mut Vec<(usize, DepKind)>, task: usize, kind: DepKind) {
        // The stamp of the task being expanded (its index + 1; 0 is "never").
        let stamp = self.prog.tasks as u32 + 1;
        if self.dep_seen.len() <= task {
            self.dep_seen.resize(self.prog.tasks, [0; 2]);
        }
        let seen = &mut self.dep_seen[task][usize::from(kind == DepKind::Wait)];
        if *seen != stamp {
            *seen = stamp;
            deps.push((task, kind));
        }
    }

    /// A scalar's bits. A bare number takes the type the kernel reads at this position
    /// (`5` for `fill` is 5.0f32); without one, an integer is its two's complement and a float
    /// its f32 bits.
    fn scalar(&self, s: &Scalar, declared: Option<ScalarType>, path: &str) -> WResult<u64> {
        Ok(match (s, declared) {
            (Scalar::Int(v), Some(ScalarType::F32)) => u64::from((*v as f32).to_bits()),
            (Scalar::Float(v), Some(ScalarType::U64)) => {
                if v.fract() != 0.0 || *v < 0.0 || *v > u64::MAX as f64 {
                    return Err(err(
                        path,
                        format!("{v} is not a valid u64 for this kernel's scalar"),
                    ));
                }
                *v as u64
            }
            (Scalar::Int(v), _) => *v as u64,
            (Scalar::Float(v), _) => u64::from((*v as f32).to_bits()),
            (Scalar::Typed(t), _) => self.typed_scalar(t, path)?,
        })
    }

    fn typed_scalar(&self, s: &TypedScalar, path: &str) -> WResult<u64> {
        Ok(match s {
            TypedScalar::F32(v) => u64::from((*v as f32).to_bits()),
            TypedScalar::F64(v) => v.to_bits(),
            TypedScalar::U32(e) => u64::from(self.u32_at(e, &format!("{path}.u32"))?),
            TypedScalar::U64(e) => self.ranged(e, &format!("{path}.u64"), 0, i64::MAX)? as u64,
            TypedScalar::I64(e) => self.int(e, &format!("{path}.i64"))? as u64,
        })
    }

    /// One tensor argument; an output also returns the name it binds after the submit.
    fn arg(&mut self, a: &ArgSpec, path: &str) -> WResult<(ArgOp, Option<(String, SymTensor)>)> {
        let tags = [
            ("input", &a.input, ArgTag::Input),
            ("output", &a.output, ArgTag::Output),
            ("inout", &a.inout, ArgTag::Inout),
            ("output_existing", &a.output_existing, ArgTag::OutputExisting),
            ("no_dep", &a.no_dep, ArgTag::NoDep),
        ];
        let present: Vec<_> = tags
            .iter()
            .filter_map(|&(key, name, tag)| Some((key, name.as_ref()?, tag)))
            .collect();
        let &(key, name, tag) = match present.as_slice() {
            [one] => one,
            _ => {
                return Err(err(
                    path,
                    format!(
                    "an argument needs exactly one of input, output, inout, output_existing, no_dep (got {})",
                    present.len()
                ),
                ))
            }
        };
        let name = self.template(name, || format!("{path}.{key}"))?;
        if tag == ArgTag::Output {
            for (field, set) in [
                ("view", a.view.is_some()),
                ("slice", a.slice.is_some()),
                ("reshape", a.reshape.is_some()),
                ("transpose", a.transpose.is_some()),
                ("version", a.version.is_some()),
            ] {
                if set {
                    return Err(err(
                        &format!("{path}.{field}"),
                        "an output is a new buffer: `shape`, `dtype`, `manual_dep` and `initial_value` describe it; views apply to existing tensors",
                    ));
                }
            }
            let Some(shape) = &a.shape else {
                return Err(err(path, "an output needs a `shape`"));
            };
            let ci = self.create_info(
                shape,
                a.dtype.as_deref(),
                a.manual_dep.unwrap_or(false),
                a.initial_value,
                path,
            )?;
            let slot = self.prog.new_output();
            let sym = SymTensor {
                base: Base::Output(slot),
                view: ci.materialize(0, TaskId::INVALID),
            };
            return Ok((ArgOp::Output { ci, slot }, Some((name, sym))));
        }
        for (field, set) in [
            ("shape", a.shape.is_some()),
            ("dtype", a.dtype.is_some()),
            ("initial_value", a.initial_value.is_some()),
        ] {
            if set {
                return Err(err(
                    &format!("{path}.{field}"),
                    format!("`{field}` belongs to `output`; use `view` to view an existing tensor"),
                ));
            }
        }
        let t = self.lookup(&name, &format!("{path}.{key}"))?;
        let t = self.apply_ops(t, &a.ops(), path)?;
        Ok((ArgOp::Tensor { tag, t }, None))
    }
}

#[cfg(test)]
mod tests {
    use simpler_core::DepKind;

    use crate::program::Op;

    /// The explicit dependencies each submit of `body` (a JSON array) carries.
    fn deps_of(body: &str) -> Vec<Vec<(usize, DepKind)>> {
        let w = crate::load_str(&format!(r#"{{ "body": {body} }}"#), "t").unwrap();
        w.program
            .ops
            .iter()
            .filter_map(|op| match op {
                Op::Submit(s) => Some(s.deps.clone()),
                _ => None,
            })
            .collect()
    }

    /// A task's list keeps each (producer, kind) once, in the order first named: the runtime
    /// wires one edge per producer anyway, and a range naming one label 20M times held 3.1 GB
    /// of copies before MAX_STEPS stopped it (now a few MB).
    #[test]
    fn a_task_lists_each_dependency_once() {
        let deps = deps_of(
            r#"[ { "submit": { "label": "a", "kernel": "noop" } },
                 { "submit": { "label": "b", "kernel": "noop" } },
                 { "submit": { "kernel": "noop",
                     "deps": [ "b", "a", "b", { "each": "j", "count": 1000, "label": "a" } ],
                     "deps_wait": [ "a", "a" ] } },
                 { "submit": { "kernel": "noop", "deps": [ "a", "a" ] } } ]"#,
        );
        assert_eq!(
            deps[2..],
            [
                vec![
                    (1, DepKind::WaitRetain),
                    (0, DepKind::WaitRetain),
                    (0, DepKind::Wait)
                ],
                vec![(0, DepKind::WaitRetain)],
            ]
        );
    }
}
