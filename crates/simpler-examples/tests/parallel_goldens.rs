//! Every built-in example computes its golden however many scheduler threads run it: a result
//! that depends on which of two independent tasks runs first is a race the dependency graph
//! does not order (OUTPUT_EXISTING, for one, registers a writer without waiting for earlier
//! ones), and more threads only make it show more often.

use simpler_examples::{all, Params};
use simpler_runtime::{CallConfig, RuntimeKind};

#[test]
fn every_example_meets_its_golden_on_three_scheduler_threads() {
    for ex in all() {
        let params = Params::parse(ex.name(), &[], ex.params()).unwrap();
        for kind in [RuntimeKind::Tmr, RuntimeKind::Hbg] {
            let cfg = CallConfig {
                runtime: kind,
                scheduler_threads: 3,
                ..Default::default()
            };
            // edge_sources' old graph, whose first two fills both wrote X[16:32] with no edge
            // between them, failed about 3 runs in 100 on tmr this way.
            for run in 0..200 {
                let o = ex.run(&cfg, &params).unwrap();
                assert!(
                    o.golden.passed(),
                    "{} on {kind:?}, run {run}: {}",
                    ex.name(),
                    o.golden.describe()
                );
            }
        }
    }
}
