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
    // equal there, so the top line's point names the one under it.
    let point = browser
        .find("details[data-resource='heap'][data-ring='1'] .series[data-metric='Live at exit'] .pts circle")
        .unwrap();
    browser.hover(&point).unwrap();
    browser
        .wait_for("return !document.getElementById('tooltip').hidden;", 5_000)
        .unwrap();
    let tooltip = browser.text(&browser.find("#tooltip").unwrap()).unwrap();
    assert_eq!(
        tooltip,
        "Live at exit · scope #0 · y=192.00 KiB · site=vector_example.rs:77 (same as High water)"
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
}
