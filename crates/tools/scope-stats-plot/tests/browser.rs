//! Loads the report in headless Chromium: no console errors, a tooltip on hover, the modal on
//! click, and the modal gone after Escape, the close button and the backdrop. Screenshots are
//! kept under `target/screenshots/`.
//!
//! Skipped (with a message) only where no browser is installed and `CI` is unset.

mod common;

use common::render_fixture;
use simpler_testkit_browser::{screenshot_path, Browser, Key};

const MODAL_OPEN: &str = "return !document.getElementById('chart-modal').hidden && \
     document.querySelector('#chart-modal-content svg') !== null;";
const MODAL_GONE: &str = "return document.getElementById('chart-modal').hidden && \
     document.getElementById('chart-modal-content').childElementCount === 0;";

#[test]
fn report_works_in_headless_chromium() {
    let Some(browser) = Browser::launch().expect("launch headless chromium") else {
        eprintln!("skipped: chromium/chromedriver not installed and CI is not set");
        return;
    };
    let (report, _) = render_fixture("vector_example.jsonl");
    browser.set_window_size(1400, 1000).unwrap();
    browser.goto_file(&report).unwrap();
    assert_eq!(
        browser.execute("return document.readyState;", &[]).unwrap(),
        "complete"
    );
    let errors = browser.console_errors().unwrap();
    assert!(errors.is_empty(), "console errors on load: {errors:?}");
    browser
        .screenshot(&screenshot_path("scope-stats-header.png"))
        .unwrap();

    // Hover the inner scope's point (heap, ring_depth 1). High water and Live at exit are
    // equal there; the High water peak marker is on top and names the line under it.
    let point = browser
        .find("details[data-resource='heap'][data-ring='1'] .series[data-metric='High water'] circle.peak")
        .unwrap();
    browser.hover(&point).unwrap();
    browser
        .wait_for("return !document.getElementById('tooltip').hidden;", 5_000)
        .unwrap();
    let tooltip = browser.text(&browser.find("#tooltip").unwrap()).unwrap();
    assert_eq!(
        tooltip,
        "High water · scope #0 · y=192.00 KiB · site=vector_example.rs:77 (same as Live at exit)"
    );
    let highlighted = browser
        .execute(
            "var hl = arguments[0].ownerSVGElement.querySelector('circle.hl'); \
             return hl.classList.contains('on') && hl.getAttribute('cx') === arguments[0].getAttribute('cx');",
            &[point.to_arg()],
        )
        .unwrap();
    assert_eq!(highlighted, true, "hovered point is highlighted");
    browser
        .screenshot(&screenshot_path("scope-stats-report.png"))
        .unwrap();

    // Click → modal with a copy of the chart; Escape removes it.
    let figure = browser
        .find("details[data-resource='task_window'][data-ring='0'] figure.chart")
        .unwrap();
    browser.click(&figure).unwrap();
    browser.wait_for(MODAL_OPEN, 5_000).unwrap();
    browser
        .screenshot(&screenshot_path("scope-stats-modal.png"))
        .unwrap();
    browser.press_key(Key::ESCAPE).unwrap();
    browser.wait_for(MODAL_GONE, 5_000).unwrap();

    // The close button and the backdrop close it too.
    browser.click(&figure).unwrap();
    browser.wait_for(MODAL_OPEN, 5_000).unwrap();
    browser.click(&browser.find(".modal-close").unwrap()).unwrap();
    browser.wait_for(MODAL_GONE, 5_000).unwrap();
    browser.click(&figure).unwrap();
    browser.wait_for(MODAL_OPEN, 5_000).unwrap();
    browser.click_at(5, 5).unwrap();
    browser.wait_for(MODAL_GONE, 5_000).unwrap();

    let errors = browser.console_errors().unwrap();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    assert!(screenshot_path("scope-stats-report.png").is_file());

    // Incomplete data (fatal, unpaired begins) and reduced charts also load cleanly, and the
    // peak marker of a reduced chart reports the true peak.
    let (fatal, _) = render_fixture("fatal_unpaired.jsonl");
    browser.goto_file(&fatal).unwrap();
    let errors = browser.console_errors().unwrap();
    assert!(errors.is_empty(), "console errors (fatal report): {errors:?}");

    let dir = common::scratch("browser-large");
    let input = dir.join("scope_stats.jsonl");
    common::generate::write_jsonl(&input, 40_000).unwrap();
    let large = simpler_scope_stats_plot::render_report(&input, None).unwrap();
    browser.goto_file(&large).unwrap();
    let errors = browser.console_errors().unwrap();
    assert!(errors.is_empty(), "console errors (large report): {errors:?}");
    let panel = "details[data-resource='task_window'][data-ring='1']";
    let reduced = browser.find(&format!("{panel} p.reduced")).unwrap();
    assert!(browser
        .text(&reduced)
        .unwrap()
        .starts_with("Points reduced for drawing"));
    let peak = browser
        .find(&format!("{panel} .series[data-metric='High water'] circle.peak"))
        .unwrap();
    browser.hover(&peak).unwrap();
    browser
        .wait_for("return !document.getElementById('tooltip').hidden;", 5_000)
        .unwrap();
    let tooltip = browser.text(&browser.find("#tooltip").unwrap()).unwrap();
    let row = common::peak_row(&std::fs::read_to_string(&large).unwrap(), "task_window", "1");
    assert!(
        tooltip.starts_with(&format!(
            "High water · scope #{} · y={} · site={}",
            row["data-scope"], row["data-peak"], row["data-site"]
        )),
        "{tooltip} vs {row:?}"
    );
    browser
        .screenshot(&screenshot_path("scope-stats-large.png"))
        .unwrap();
}
