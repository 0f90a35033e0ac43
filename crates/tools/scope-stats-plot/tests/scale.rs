//! A large generated file: charts are reduced for drawing, the page says so, and every chart's
//! plotted maximum equals the true maximum, recomputed here from the JSONL.

mod common;

use std::collections::HashMap;

use common::{generate, peak_row, scratch, tags};
use serde_json::Value;

/// Samples in the generated file: enough for every ring's series to be reduced.
const SAMPLES: u64 = 60_000;

/// High-water peaks per (resource, ring) and the global tensormap peak, by a plain stack
/// pairing of the (well-nested) generated file.
fn true_peaks(path: &std::path::Path) -> (HashMap<(String, u64), i64>, i64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut stacks: HashMap<u64, Vec<Value>> = HashMap::new();
    let mut peaks: HashMap<(String, u64), i64> = HashMap::new();
    let mut tensormap = i64::MIN;
    for line in text.lines().skip(1) {
        let s: Value = serde_json::from_str(line).unwrap();
        let ring = s["ring"].as_u64().unwrap();
        if s["phase"] == "begin" {
            stacks.entry(ring).or_default().push(s);
            continue;
        }
        let b = stacks.get_mut(&ring).unwrap().pop().unwrap();
        assert_eq!(b["site"], s["site"]);
        for r in ["task_window", "heap", "dep_pool"] {
            let hw = s[format!("{r}_end")].as_i64().unwrap() - b[format!("{r}_start")].as_i64().unwrap();
            let e = peaks.entry((r.to_string(), ring)).or_insert(i64::MIN);
            *e = (*e).max(hw);
        }
        tensormap = tensormap.max(s["tensormap"].as_i64().unwrap());
    }
    (peaks, tensormap)
}

#[test]
fn reduced_charts_keep_every_peak() {
    let dir = scratch("scale");
    let input = dir.join("scope_stats.jsonl");
    generate::write_jsonl(&input, SAMPLES).unwrap();
    let html =
        std::fs::read_to_string(simpler_scope_stats_plot::render_report(&input, None).unwrap()).unwrap();
    assert!(html.contains("data-healthy=\"true\""));
    assert!(html.contains("Points reduced for drawing"));

    let (peaks, tm_peak) = true_peaks(&input);
    for ((resource, ring), peak) in &peaks {
        let row = peak_row(&html, resource, &ring.to_string());
        assert_eq!(row["data-peak"], peak.to_string(), "{resource} ring {ring}");
    }
    assert_eq!(
        peak_row(&html, "tensormap", "global")["data-peak"],
        tm_peak.to_string()
    );

    // Every chart: the largest plotted value is the chart's true peak, and each line's
    // plotted maximum is that line's true maximum.
    let charts: Vec<&str> = html.split("<svg viewBox").skip(1).collect();
    assert_eq!(
        charts.len(),
        3 * 4 * 2 + 1,
        "4 rings × 3 resources × 2 charts + TensorMap"
    );
    let mut reduced = 0;
    let mut checked = 0;
    for chart in charts {
        let chart = &chart[..chart.find("</svg>").unwrap()];
        let head = tags(chart, " xmlns=")[0].clone();
        let points: usize = head["data-points"].parse().unwrap();
        for series in chart.split("<g class=\"series\"").skip(1) {
            let attrs = &tags(&format!("<g{series}"), "<g")[0];
            let plotted: Vec<i64> = tags(series, "<circle cx=")
                .iter()
                .map(|c| c["data-v"].parse().unwrap())
                .collect();
            assert!(plotted.len() <= 500, "at most 500 points per line");
            if plotted.len() < points {
                reduced += 1;
            }
            assert_eq!(
                plotted.iter().max().unwrap().to_string(),
                attrs["data-max"],
                "plotted maximum of {}",
                attrs["data-metric"]
            );
        }
        // Pressure charts: the High water line's plotted maximum is the JSONL's true peak.
        let title = head["aria-label"].as_str();
        if let Some(name) = title.strip_suffix(": resource pressure") {
            let (resource, ring) = name.split_once(" ring_depth ").unwrap();
            let hw = tags(chart, "<g class=\"series\" data-metric=\"High water\"");
            let truth = peaks[&(resource.to_string(), ring.parse::<u64>().unwrap())];
            assert_eq!(hw[0]["data-max"], truth.to_string(), "{title}");
            checked += 1;
        }
        let all_max = tags(chart, "<g class=\"series\"")
            .iter()
            .map(|s| s["data-max"].parse::<i64>().unwrap())
            .max()
            .unwrap();
        assert_eq!(head["data-peak"], all_max.to_string());
    }
    assert!(reduced > 0, "the file is large enough to need reduction");
    assert_eq!(checked, 12, "every ring resource's pressure chart was checked");
}
