//! The vector-example page in headless Chromium: loads without console errors, `f` fits,
//! clicking a task opens the detail panel with its fanin/fanout. A screenshot is kept at
//! `target/screenshots/deps_viewer_vector_example.png`.

use serde_json::Value;
use simpler_testkit_browser::{screenshot_path, Browser, Key};

use crate::html::{have_graphviz, render};

fn view_state(browser: &Browser) -> (f64, f64, f64) {
    let v = browser
        .execute(
            "const v = window.depsViewer.view; return [v.scale, v.x, v.y];",
            &[],
        )
        .unwrap();
    let n = |i: usize| v[i].as_f64().unwrap();
    (n(0), n(1), n(2))
}

#[test]
fn vector_example_page_works_in_headless_chromium() {
    if !have_graphviz() {
        return;
    }
    let Some(browser) = Browser::launch().unwrap() else {
        eprintln!("skipped: no chromium/chromedriver installed (and CI is not set)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let page = render("vector_example", tmp.path(), |_| {});
    browser.goto_file(&page).unwrap();
    browser
        .wait_for(
            "return !!(window.depsViewer && document.getElementById('T0_0'));",
            5_000,
        )
        .unwrap();
    assert_eq!(browser.console_errors().unwrap(), Vec::<String>::new());

    // Reset to 1:1, then `f` fits: the scale changes and the graph is centred.
    browser.press_key("r").unwrap();
    assert_eq!(view_state(&browser), (1.0, 0.0, 0.0));
    browser.press_key("f").unwrap();
    let (scale, x, y) = view_state(&browser);
    assert!(scale != 1.0 && (x > 0.0 || y > 0.0), "fit left {scale} {x} {y}");
    let fitted = browser
        .execute(
            "const r = document.getElementById('viewport').getBoundingClientRect();\
             const b = document.querySelector('#stage svg').getBoundingClientRect();\
             return b.left >= r.left - 1 && b.right <= r.right + 1 && b.top >= r.top - 1 \
                    && b.bottom <= r.bottom + 1;",
            &[],
        )
        .unwrap();
    assert_eq!(fitted, Value::Bool(true));

    // Click task (1, 2): the panel opens with its two preds and one succ.
    assert_eq!(
        browser
            .execute("return document.getElementById('detail').hidden;", &[])
            .unwrap(),
        Value::Bool(true)
    );
    let node = browser.find("#T1_2 ellipse").unwrap();
    browser.click(&node).unwrap();
    browser
        .wait_for("return !document.getElementById('detail').hidden;", 5_000)
        .unwrap();
    let text = browser.text(&browser.find("#detail-body").unwrap()).unwrap();
    assert!(text.contains("TASK (1, 2)"), "{text}");
    assert!(text.contains("FANIN 2"), "{text}");
    assert!(text.contains("(1, 0) · f1"), "{text}");
    assert!(text.contains("(1, 1) · f1"), "{text}");
    assert!(text.contains("FANOUT 1"), "{text}");
    assert!(text.contains("(1, 3) · f0"), "{text}");
    browser
        .screenshot(&screenshot_path("deps_viewer_vector_example.png"))
        .unwrap();

    // Esc closes the panel.
    browser.press_key(Key::ESCAPE).unwrap();
    assert_eq!(
        browser
            .execute("return document.getElementById('detail').hidden;", &[])
            .unwrap(),
        Value::Bool(true)
    );
    assert_eq!(browser.console_errors().unwrap(), Vec::<String>::new());
}
