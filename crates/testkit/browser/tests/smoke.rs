//! Drives a real headless Chromium over a tiny page exercising every command of the driver.

use simpler_testkit_browser::{screenshot_path, Browser, Key};

const PAGE: &str = r#"<!doctype html>
<html><head><title>smoke</title></head>
<body>
<svg width="300" height="120"><circle id="dot" cx="60" cy="60" r="20" fill="red"/></svg>
<p id="hovered">none</p><p id="clicked">0</p><p id="key">none</p>
<script>
document.getElementById('dot').addEventListener('mouseover', function () {
  document.getElementById('hovered').textContent = 'dot';
});
document.getElementById('dot').addEventListener('click', function () {
  var c = document.getElementById('clicked');
  c.textContent = String(Number(c.textContent) + 1);
});
document.addEventListener('keydown', function (e) {
  document.getElementById('key').textContent = e.key;
});
console.error('deliberate smoke error');
</script>
</body></html>"#;

#[test]
fn drives_every_command() {
    let Some(browser) = Browser::launch().expect("launch chromium") else {
        eprintln!("skipped: chromium/chromedriver not installed and CI is not set");
        return;
    };
    let dir = std::env::temp_dir().join(format!("simpler-browser-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("smoke page.html");
    std::fs::write(&page, PAGE).unwrap();

    browser.goto_file(&page).unwrap();
    assert_eq!(browser.execute("return document.title;", &[]).unwrap(), "smoke");

    let errors = browser.console_errors().unwrap();
    assert!(
        errors.iter().any(|m| m.contains("deliberate smoke error")),
        "console errors: {errors:?}"
    );
    // Reading the log drains it.
    assert!(browser.console_errors().unwrap().is_empty());

    let dot = browser.find("#dot").unwrap();
    browser.hover(&dot).unwrap();
    browser
        .wait_for(
            "return document.getElementById('hovered').textContent === 'dot';",
            5_000,
        )
        .unwrap();

    browser.click(&dot).unwrap();
    let clicked = browser.find("#clicked").unwrap();
    assert_eq!(browser.text(&clicked).unwrap(), "1");

    browser.press_key(Key::ESCAPE).unwrap();
    assert_eq!(browser.text(&browser.find("#key").unwrap()).unwrap(), "Escape");
    browser.press_key("f").unwrap();
    assert_eq!(browser.text(&browser.find("#key").unwrap()).unwrap(), "f");

    assert_eq!(browser.find_all("circle").unwrap().len(), 1);
    assert!(browser.find("#absent").is_err());
    let err = browser.wait_for("return false;", 100).unwrap_err();
    assert!(err.to_string().contains("still false"), "{err}");

    let shot = screenshot_path("testkit-browser-smoke.png");
    browser.screenshot(&shot).unwrap();
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");

    drop(browser);
    let _ = std::fs::remove_dir_all(&dir);
}
