//! Property: for random orchestrations (tensors, views, tags, nested auto/manual scopes,
//! explicit deps of both kinds), the `tmr` replay and the `hbg` direct capture write the same
//! `edges[]` (same order and fields except `flags`, once task ids and tensor ids are mapped to
//! the order they were first seen), and both equal what the dependency function computes.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use proptest::prelude::*;
use simpler_artifacts::deps::{read_deps_file, DepsFile};
use simpler_core::{
    compute_fanin, register_outputs, DType, FaninSet, TaskArgs, TaskId, Tensor, TensorArg, TensorCreateInfo,
    TensorMap, TensorMapConfig,
};
use simpler_runtime::{CallConfig, CoreType, RuntimeKind, Worker};

#[derive(Clone, Debug)]
enum View {
    /// A[off .. off+len] (1-d, 64 elements), with a version.
    A { off: u32, len: u32, version: i32 },
    /// B[r0.., c0..] of a 8×8 tensor.
    B { r0: u32, rows: u32, c0: u32, cols: u32 },
    /// The output of an earlier task (by submit index), whole.
    Out(usize),
}

#[derive(Clone, Debug)]
enum Arg {
    Input(View),
    Inout(View),
    OutputExisting(View),
    NoDep(View),
    Output,
}

#[derive(Clone, Debug)]
enum Op {
    Submit {
        args: Vec<Arg>,
        deps: Vec<(usize, bool)>,
        manual_dep: bool,
    },
    Scope {
        manual: bool,
        body: Vec<Op>,
    },
}

fn view() -> impl Strategy<Value = View> {
    prop_oneof![
        (0u32..48, 1u32..17, 0i32..2).prop_map(|(off, len, version)| View::A { off, len, version }),
        (0u32..6, 1u32..3, 0u32..6, 1u32..3).prop_map(|(r0, rows, c0, cols)| View::B { r0, rows, c0, cols }),
        (0usize..40).prop_map(View::Out),
    ]
}

fn arg() -> impl Strategy<Value = Arg> {
    prop_oneof![
        3 => view().prop_map(Arg::Input),
        2 => view().prop_map(Arg::Inout),
        2 => view().prop_map(Arg::OutputExisting),
        1 => view().prop_map(Arg::NoDep),
        2 => Just(Arg::Output),
    ]
}

fn submit() -> impl Strategy<Value = Op> {
    (
        prop::collection::vec(arg(), 0..4),
        prop::collection::vec((0usize..40, any::<bool>()), 0..3),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(args, deps, manual_dep)| Op::Submit {
            args,
            deps,
            manual_dep,
        })
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let leaf = submit();
    let tree = leaf.prop_recursive(3, 40, 6, |inner| {
        prop_oneof![
            4 => inner.clone(),
            1 => (any::<bool>(), prop::collection::vec(inner, 1..6)).prop_map(|(manual, body)| Op::Scope { manual, body }),
        ]
    });
    prop::collection::vec(tree, 1..12)
}

/// Resolves views against the available tensors; `outs[i]` is submit i's first output.
struct Env {
    a: Tensor,
    b: Tensor,
    outs: Vec<Option<Tensor>>,
    ids: Vec<TaskId>,
}

impl Env {
    fn view(&self, v: &View, manual_dep: bool) -> Option<Tensor> {
        let t = match *v {
            View::A { off, len, version } => self
                .a
                .view(&[len.min(64 - off)], &[off])
                .ok()?
                .with_version(version),
            View::B { r0, rows, c0, cols } => self.b.view(&[rows, cols], &[r0, c0]).ok()?,
            View::Out(i) => (*self.outs.get(i)?)?,
        };
        Some(t.with_manual_dep(manual_dep))
    }

    fn args(&self, args: &[Arg], deps: &[(usize, bool)], manual_dep: bool) -> TaskArgs<'static> {
        let ci = TensorCreateInfo::new(&[16], DType::Float32).unwrap();
        let mut ta = TaskArgs::new();
        for a in args {
            match a {
                Arg::Output => {
                    ta.output(ci);
                }
                Arg::Input(v) | Arg::Inout(v) | Arg::OutputExisting(v) | Arg::NoDep(v) => {
                    if let Some(t) = self.view(v, manual_dep) {
                        ta.arg(match a {
                            Arg::Input(_) => TensorArg::Input(t),
                            Arg::Inout(_) => TensorArg::Inout(t),
                            Arg::OutputExisting(_) => TensorArg::OutputExisting(t),
                            _ => TensorArg::NoDep(t),
                        });
                    }
                }
            }
        }
        for &(i, wait) in deps {
            if let Some(&id) = self.ids.get(i) {
                if wait {
                    ta.dep_wait(id);
                } else {
                    ta.dep(id);
                }
            }
        }
        ta
    }
}

/// The dependency function over the same ops (ids = submit order on ring 0, fake output
/// addresses): the expected producer set of every task, by submit index.
fn expected(ops: &[Op], a: Tensor, b: Tensor) -> Vec<BTreeSet<usize>> {
    fn walk(ops: &[Op], manual: bool, env: &mut Env, map: &mut TensorMap, out: &mut Vec<BTreeSet<usize>>) {
        for op in ops {
            match op {
                Op::Scope { manual: m, body } => {
                    if manual && !m {
                        continue; // auto inside manual is refused; the generator's runs skip it too
                    }
                    walk(body, manual || *m, env, map, out);
                }
                Op::Submit {
                    args,
                    deps,
                    manual_dep,
                } => {
                    let id = TaskId::new(0, env.ids.len() as u32);
                    let ta = env.args(args, deps, *manual_dep);
                    let mut set = FaninSet::new();
                    compute_fanin(id, manual, ta.tensors(), ta.explicit_deps(), map, &mut set).unwrap();
                    register_outputs(id, manual, ta.tensors(), map).unwrap();
                    out.push(set.edges().iter().map(|(p, _)| p.local() as usize).collect());
                    let first_out = ta.tensors().iter().find_map(|x| match x {
                        TensorArg::Output(ci) => {
                            Some(ci.materialize((1 << 40) + (env.ids.len() as u64) * 4096, id))
                        }
                        _ => None,
                    });
                    env.outs.push(first_out);
                    env.ids.push(id);
                }
            }
        }
    }
    let mut env = Env {
        a,
        b,
        outs: Vec::new(),
        ids: Vec::new(),
    };
    let mut map = TensorMap::new(TensorMapConfig::unbounded());
    let mut out = Vec::new();
    walk(ops, false, &mut env, &mut map, &mut out);
    out
}

fn run(ops: Vec<Op>, kind: RuntimeKind, dir: &Path) -> (DepsFile, Tensor, Tensor) {
    let mut w = Worker::new();
    w.register_kernel(0, "noop", CoreType::Aiv, |_| Ok(())).unwrap();
    let a = w.alloc_tensor(&[64], DType::Float32).unwrap();
    let b = w.alloc_tensor(&[8, 8], DType::Float32).unwrap();
    let cfg = CallConfig {
        runtime: kind,
        enable_dep_gen: true,
        output_prefix: Some(dir.to_path_buf()),
        ..Default::default()
    };
    let env = Arc::new(Mutex::new(Env {
        a,
        b,
        outs: Vec::new(),
        ids: Vec::new(),
    }));
    fn walk(
        o: &mut simpler_runtime::Orchestrator,
        ops: &[Op],
        manual: bool,
        env: &Mutex<Env>,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        for op in ops {
            match op {
                Op::Scope { manual: m, body } => {
                    if manual && !m {
                        continue;
                    }
                    if *m {
                        o.manual_scope(|o| walk(o, body, true, env))?;
                    } else {
                        o.scope(|o| walk(o, body, manual, env))?;
                    }
                }
                Op::Submit {
                    args,
                    deps,
                    manual_dep,
                } => {
                    let ta = env.lock().args(args, deps, *manual_dep);
                    let out = o.submit_aiv(0, &ta)?;
                    let mut e = env.lock();
                    e.outs.push(out.get(0));
                    e.ids.push(out.id());
                }
            }
        }
        Ok(())
    }
    let e2 = env.clone();
    w.run(&cfg, move |o| walk(o, &ops, false, &e2)).unwrap();
    (read_deps_file(&dir.join("deps.json")).unwrap(), a, b)
}

/// edges[] with ids mapped to first-seen order, flags dropped, as comparable strings.
fn normalized(d: &DepsFile) -> Vec<String> {
    let task_pos = |id: u64| d.tasks.iter().position(|t| t.task_id == id).unwrap();
    let tensor_pos = |id: u64| d.tensors.iter().position(|t| t.tensor_id == id).unwrap();
    d.edges
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.flags = None;
            e.pred = task_pos(e.pred) as u64;
            e.succ = task_pos(e.succ) as u64;
            e.tensor_id = e.tensor_id.map(|t| tensor_pos(t) as u64);
            serde_json::to_string(&e).unwrap()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn replay_direct_capture_and_the_dependency_function_agree(ops in ops()) {
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (tmr, a, b) = run(ops.clone(), RuntimeKind::Tmr, d1.path());
        let (hbg, _, _) = run(ops.clone(), RuntimeKind::Hbg, d2.path());
        prop_assert_eq!(tmr.tasks.len(), hbg.tasks.len());
        prop_assert_eq!(normalized(&tmr), normalized(&hbg));
        let want = expected(&ops, a, b);
        prop_assert_eq!(want.len(), tmr.tasks.len());
        let pos = |id: u64| tmr.tasks.iter().position(|t| t.task_id == id).unwrap();
        let mut got = vec![BTreeSet::new(); want.len()];
        for e in &tmr.edges {
            got[pos(e.succ)].insert(pos(e.pred));
        }
        prop_assert_eq!(got, want);
    }
}
