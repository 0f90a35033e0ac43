//! `simpler plan` on `workloads/synthetic_100k.json` (100,000 tasks): the recorded-data
//! analysis (target ≤ 2 s) and the verified search (target ≤ 60 s), one recording run first.
//!
//! `cargo bench -p simpler-plan --bench plan_100k [-- VERIFY]` (VERIFY runs per candidate,
//! default 2, as `simpler plan`). Prints the figures; asserts nothing (timings are no test).

use std::path::Path;
use std::time::Instant;

use simpler_plan::analysis::analyze_file;
use simpler_plan::record;
use simpler_plan::search::search;
use simpler_plan::target::Target;
use simpler_runtime::RuntimeKind;

fn main() {
    let verify: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(2);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../workloads/synthetic_100k.json");
    let target = Target::resolve(&path, &[]).expect("synthetic_100k.json loads");
    for runtime in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
        let dir = tempfile::tempdir().expect("temporary folder");
        let t = Instant::now();
        let (file, _) = record(&target, runtime, &dir.path().join("run")).expect("the recording run passes");
        let record_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let analysis = analyze_file(&file).expect("the recording analyses");
        let analysis_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let s = search(&target, &analysis, runtime, verify).expect("the search starts");
        let search_s = t.elapsed().as_secs_f64();
        println!(
            "plan synthetic_100k on {}: recording run {record_s:.3} s, recorded-data analysis {:.3} ms \
             ({} samples), verified search {search_s:.3} s ({} runs, {verify} per candidate; minimums together: {}, \
             suggested: {})",
            runtime.name(),
            analysis_ms,
            analysis.samples,
            s.runs,
            if s.combination_passed { "pass" } else { "FAIL" },
            if s.suggested_passed { "pass" } else { "FAIL" },
        );
    }
}
