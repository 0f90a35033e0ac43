//! A predecessor that ends after its successor starts: exactly one `hb_violation`.

use crate::check::at_start_of;
use crate::util::{convert_into, testdata};

#[test]
fn exactly_one_hb_violation_between_the_bar_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (summary, trace) = convert_into(&testdata("hb_violation/l2_swimlane_records.json"), dir.path());
    assert_eq!(summary.unique_pairs, 3);
    assert_eq!((summary.flows.dependency, summary.flows.hb_violation), (2, 1));

    let hb = trace.flows_named("hb_violation");
    assert_eq!(hb.len(), 1);
    assert!(at_start_of(&hb[0].s, trace.task_slices("1")[0]));
    assert!(at_start_of(&hb[0].f, trace.task_slices("2")[0]));
    assert_eq!(
        (hb[0].s["ts"].as_f64(), hb[0].f["ts"].as_f64()),
        (Some(1.0), Some(3.0))
    );
    assert_eq!(trace.flows_named("dependency").len(), 2);
    assert_eq!(trace.flows().len(), 3);

    let mut out = Vec::new();
    summary.write_report(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("Flows: 2 dependency, 1 hb_violation (3 unique pairs in "),
        "{text}"
    );
}
