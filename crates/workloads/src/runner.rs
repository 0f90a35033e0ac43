//! Runs a [`Program`] on a fresh [`Worker`]: allocates and fills the external tensors,
//! replays the operations on the orchestrator (rebasing each symbolic view onto its real
//! buffer), and evaluates the golden checks.

use std::sync::Arc;

use crate::error::{Error, ErrorKind};
use simpler_core::{DepKind, TaskArgs, TaskId, Tensor, TensorArg};
use simpler_runtime::{CallConfig, Orchestrator, RunReport, Worker};

use crate::kernels;
use crate::program::{ArgOp, Base, Check, Expected, External, FillOp, KernelSet, Op, Program, SymTensor};

/// The result of one golden check.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// The checked tensor's name.
    pub tensor: String,
    /// Elements compared.
    pub checked: u64,
    /// Elements outside the tolerance.
    pub mismatches: u64,
    /// The first mismatch: (row-major index, got, expected).
    pub first_mismatch: Option<(u64, f64, f64)>,
}

impl CheckResult {
    /// True if and only if every element matched.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }
    /// One line for a summary.
    pub fn describe(&self) -> String {
        match self.first_mismatch {
            None => format!("{}: OK ({} elements)", self.tensor, self.checked),
            Some((k, got, want)) => format!(
                "{}: FAILED, {} of {} elements differ; first at [{k}]: got {got}, expected {want}",
                self.tensor, self.mismatches, self.checked
            ),
        }
    }
}

/// splitmix64: a tiny, well-mixed 64-bit generator (Steele, Lea, Flood 2014).
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1) with 53 random bits.
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn fill(w: &Worker, t: &Tensor, f: &FillOp) -> Result<(), simpler_runtime::memory::MemoryError> {
    match f {
        FillOp::Zeros => {}
        FillOp::Constant(v) => w.fill_with(t, |_| *v)?,
        FillOp::Iota { start, step } => w.fill_with(t, |k| start + step * k as f64)?,
        FillOp::Random { seed, min, max } => {
            let mut rng = SplitMix64::new(*seed);
            w.fill_with(t, |_| min + (max - min) * rng.next_f64())?
        }
        FillOp::Values(v) => w.fill_with(t, |k| v[k as usize])?,
    }
    Ok(())
}

/// Rebases a symbolic view onto its real buffer.
fn rebase(sym: &SymTensor, externals: &[Tensor], outputs: &[Option<Tensor>]) -> Result<Tensor, String> {
    let real = match sym.base {
        Base::External(k) => externals[k],
        Base::Output(k) => outputs[k].ok_or_else(|| format!("output slot {k} was never produced"))?,
    };
    let mut parts = sym.view.to_parts();
    parts.addr = real.addr();
    parts.size_bytes = real.size_bytes();
    parts.owner = real.owner();
    Tensor::from_parts(&parts).map_err(|e| e.to_string())
}

fn orchestrate(o: &mut Orchestrator, prog: &Program, externals: &[Tensor]) -> simpler_runtime::OrchResult {
    let mut outputs: Vec<Option<Tensor>> = vec![None; prog.outputs];
    let mut ids: Vec<TaskId> = Vec::with_capacity(prog.tasks);
    let mut dep_ids: Vec<TaskId> = Vec::new();
    let mut dep_kinds: Vec<DepKind> = Vec::new();
    for op in &prog.ops {
        match op {
            Op::Begin(mode, site) => o.begin_scope(*mode, *site),
            Op::End => o.end_scope(),
            Op::Alloc(outs) => {
                let infos: Vec<_> = outs.iter().map(|(ci, _)| *ci).collect();
                let r = o.alloc_tensors(&infos)?;
                for (k, (_, slot)) in outs.iter().enumerate() {
                    outputs[*slot] = r.get(k);
                }
                ids.push(r.id());
            }
            Op::Submit(s) => {
                dep_ids.clear();
                dep_kinds.clear();
                for &(t, kind) in &s.deps {
                    dep_ids.push(ids[t]);
                    dep_kinds.push(kind);
                }
                let mut args = TaskArgs::new();
                let mut out_slots = Vec::new();
                for a in &s.args {
                    match a {
                        ArgOp::Output { ci, slot } => {
                            args.output(*ci);
                            out_slots.push(*slot);
                        }
                        ArgOp::Tensor { tag, t } => {
                            let real = rebase(t, externals, &outputs).map_err(|e| o.report_fatal(e))?;
                            let arg = TensorArg::with_tag(*tag, real).expect("outputs are handled above");
                            args.arg(arg);
                        }
                    }
                }
                for &v in &s.scalars {
                    args.scalar(v);
                }
                if !dep_ids.is_empty() {
                    args.set_dependencies_with_kinds(&dep_ids, &dep_kinds);
                }
                args.block_num(s.block_num)
                    .require_sync_start(s.require_sync_start);
                if s.allow_early_resolve {
                    args.allow_early_resolve();
                }
                for i in (0..64).filter(|i| s.dump_mask & (1u64 << i) != 0) {
                    args.dump_arg(i);
                }
                let r = o.submit(s.kernels, &args)?;
                for (k, slot) in out_slots.into_iter().enumerate() {
                    outputs[slot] = r.get(k);
                }
                ids.push(r.id());
            }
        }
    }
    Ok(())
}

/// Refuses external tensors that cannot all fit in this machine's memory (`limit` bytes),
/// before any is allocated: each is allocated and zero-filled before the run starts, so a
/// workload or a `--from-deps` capture that names more than the machine holds (a million
/// 64 KiB buffers) would otherwise exhaust it one page at a time.
fn check_host_memory(externals: &[External], limit: Option<u64>) -> Result<(), Error> {
    let Some(limit) = limit else { return Ok(()) };
    // Saturating: the parsers bound every tensor today, but five `u32` dimensions of 8-byte
    // elements are past `u128`, and a total that wrapped would pass the check.
    let bytes = |e: &External| {
        e.shape.iter().fold(u128::from(e.dtype.size()), |acc, &d| {
            acc.saturating_mul(u128::from(d))
        })
    };
    let need = externals
        .iter()
        .map(bytes)
        .fold(0u128, |acc, b| acc.saturating_add(b));
    if need <= u128::from(limit) {
        return Ok(());
    }
    let largest = externals
        .iter()
        .max_by_key(|e| bytes(e))
        .expect("a total above zero has a tensor");
    Err(ErrorKind::HostMemory {
        count: externals.len(),
        need,
        limit: u128::from(limit),
        largest: largest.name.clone(),
        largest_bytes: bytes(largest),
    }
    .into())
}

fn run_check(w: &Worker, c: &Check, real: &Tensor) -> Result<CheckResult, Error> {
    let mut parts = c.view.to_parts();
    parts.addr = real.addr();
    parts.size_bytes = real.size_bytes();
    let view = Tensor::from_parts(&parts).map_err(|e| ErrorKind::CheckView {
        label: c.label.clone(),
        message: e.to_string(),
    })?;
    let got = w.read_f64(&view).map_err(|source| ErrorKind::Memory {
        what: format!("reading checked tensor `{}`", c.label),
        source,
    })?;
    let mut r = CheckResult {
        tensor: c.label.clone(),
        checked: 0,
        mismatches: 0,
        first_mismatch: None,
    };
    for (k, &v) in got.iter().enumerate() {
        let e = match &c.expected {
            Expected::Constant(e) => *e,
            Expected::Values(vals) => vals[k],
        };
        r.checked += 1;
        if (v - e).abs() > c.tolerance * e.abs().max(1.0) || v.is_nan() != e.is_nan() {
            r.mismatches += 1;
            r.first_mismatch.get_or_insert((k as u64, v, e));
        }
    }
    Ok(r)
}

/// What [`run_program`] produced.
pub(crate) struct ProgramRun {
    pub report: RunReport,
    pub checks: Vec<CheckResult>,
}

/// Runs `prog` with `cfg`; a fatal run is an error carrying the [`simpler_runtime::RunError`].
pub(crate) fn run_program(prog: Arc<Program>, cfg: &CallConfig) -> Result<ProgramRun, Error> {
    let mut w = Worker::new();
    match &prog.kernels {
        KernelSet::Library => kernels::register_library(&mut w)?,
        KernelSet::Noops(ids) => kernels::register_noops(&mut w, ids)?,
    }
    check_host_memory(&prog.externals, simpler_artifacts::host::mem_total_bytes())?;
    let mut externals = Vec::with_capacity(prog.externals.len());
    for e in &prog.externals {
        let what = |doing: &str| match &e.declared_at {
            Some(at) => format!("{at}: {doing} external tensor `{}`", e.name),
            None => format!("{doing} external tensor `{}`", e.name),
        };
        let t = w
            .alloc_tensor(&e.shape, e.dtype)
            .map_err(|source| ErrorKind::Memory {
                what: what("allocating"),
                source,
            })?;
        fill(&w, &t, &e.fill).map_err(|source| ErrorKind::Memory {
            what: what("filling"),
            source,
        })?;
        externals.push(t);
    }
    let ext = Arc::new(externals);
    let (p, x) = (prog.clone(), ext.clone());
    let report = w.run_at(cfg, prog.root_site, move |o| orchestrate(o, &p, &x))?;
    let checks = prog
        .checks
        .iter()
        .map(|c| run_check(&w, c, &ext[c.external]))
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(ProgramRun { report, checks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn external(name: &str, elems: u32) -> External {
        External {
            name: name.to_string(),
            declared_at: None,
            shape: vec![elems],
            dtype: simpler_core::DType::Float32,
            fill: FillOp::Zeros,
        }
    }

    /// The externals' bytes in all against the limit; the message names the total, the limit
    /// and the largest tensor.
    #[test]
    fn externals_past_the_hosts_memory_are_refused() {
        let externals = [external("a", 1024), external("b", 4096)];
        let e = check_host_memory(&externals, Some(16 << 10)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the 2 external tensor(s) need 20.0 KiB of host memory, more than this machine's 16.0 KiB \
             (the largest, `b`, takes 16.0 KiB); none was allocated"
        );
        assert!(
            check_host_memory(&externals, Some(20 << 10)).is_ok(),
            "at the limit"
        );
        assert!(check_host_memory(&externals, None).is_ok(), "no limit known");
        assert!(check_host_memory(&[], Some(0)).is_ok());
    }

    /// A shape whose bytes are past `u128` is refused, not wrapped into a small total.
    #[test]
    fn a_shape_past_u128_saturates_and_is_refused() {
        let huge = External {
            name: "huge".to_string(),
            declared_at: None,
            shape: vec![u32::MAX; 5],
            dtype: simpler_core::DType::Int64,
            fill: FillOp::Zeros,
        };
        let e = check_host_memory(&[huge.clone(), huge], Some(u64::MAX)).unwrap_err();
        let ErrorKind::HostMemory {
            need, largest_bytes, ..
        } = e.kind()
        else {
            panic!("not a host memory error: {e}");
        };
        assert_eq!((*need, *largest_bytes), (u128::MAX, u128::MAX));
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs for seed 1234567 from the reference C implementation.
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
        let mut r = SplitMix64::new(7);
        let v = r.next_f64();
        assert!((0.0..1.0).contains(&v));
    }
}
