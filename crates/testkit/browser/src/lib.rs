//! Test-only driver for Debian's headless Chromium, through `chromedriver` (W3C WebDriver).
//!
//! The HTML tools of `simpler` (the scope-stats report, the deps viewer) ship a small inline
//! script. Their tests load the generated page in a real browser and check what a user would see:
//! no console errors, a tooltip on hover, a modal on click. This crate is the smallest driver
//! that does that: it starts `/usr/bin/chromedriver` on a free loopback port, opens one headless
//! session of `/usr/bin/chromium` with a fresh profile, and offers a handful of commands.
//! Dropping the [`Browser`] ends the session, kills the chromedriver process group it started and
//! removes the temporary profile.
//!
//! # Availability
//!
//! [`Browser::launch`] returns `Ok(None)` only when chromium or chromedriver is not installed
//! *and* the `CI` environment variable is unset or empty, so a developer without a browser can
//! still run the other tests. In CI a missing browser is an error. Install with
//! `apt-get install -y chromium chromium-driver`. The environment variables
//! `SIMPLER_CHROMIUM` and `SIMPLER_CHROMEDRIVER` override the binary paths.
//!
//! # Example
//!
//! ```no_run
//! use simpler_testkit_browser::{Browser, Key};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let Some(browser) = Browser::launch()? else {
//!     eprintln!("skipped: no chromium/chromedriver installed (and CI is not set)");
//!     return Ok(());
//! };
//! browser.goto_file(std::path::Path::new("/tmp/report.html"))?;
//! let title = browser.execute("return document.title;", &[])?;
//! assert_eq!(title, "report");
//!
//! let point = browser.find("svg circle.hit")?;
//! browser.hover(&point)?;
//! browser.click(&browser.find(".chart")?)?;
//! browser.wait_for("return !document.getElementById('modal').hidden;", 5_000)?;
//! browser.press_key(Key::ESCAPE)?;
//!
//! assert!(browser.console_errors()?.is_empty());
//! browser.screenshot(&simpler_testkit_browser::screenshot_path("report.png"))?;
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod base64;
mod http;
mod process;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use process::Driver;

/// The JSON key under which WebDriver wraps a web element reference.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How often [`Browser::wait_for`] re-evaluates its condition.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// Chromium command-line switches for a quiet, offline, sandbox-free headless run as root.
const CHROMIUM_ARGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
];

/// An error from launching the browser or from one WebDriver command. The message names the
/// command and carries chromedriver's own error text.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Result of every fallible call in this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// WebDriver key codes for [`Browser::press_key`]. Printable keys are passed as themselves
/// (e.g. `"f"`).
pub struct Key;

impl Key {
    /// The Escape key.
    pub const ESCAPE: &'static str = "\u{E00C}";
    /// The Enter key.
    pub const ENTER: &'static str = "\u{E007}";
    /// The Tab key.
    pub const TAB: &'static str = "\u{E004}";
    /// The space bar.
    pub const SPACE: &'static str = "\u{E00D}";
}

/// A reference to one element of the current page, from [`Browser::find`] or
/// [`Browser::find_all`]. It goes stale when the page navigates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    id: String,
}

impl Element {
    /// The element as a script argument for [`Browser::execute`] (`arguments[i]` in the script).
    pub fn to_arg(&self) -> Value {
        json!({ ELEMENT_KEY: self.id })
    }
}

/// One entry of the browser console log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// Chromium's level name: `SEVERE` (errors, uncaught exceptions), `WARNING`, `INFO`, ...
    pub level: String,
    /// The message text, prefixed by chromium with the source location.
    pub message: String,
}

/// One headless Chromium session driven through chromedriver. See the [crate docs](crate).
pub struct Browser {
    session: String,
    driver: Driver,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium session with a fresh profile.
    ///
    /// Returns `Ok(None)` when chromium or chromedriver is missing and `CI` is not set;
    /// returns an error when they are missing in CI, or when either fails to start.
    pub fn launch() -> Result<Option<Browser>> {
        let chromium = process::find_binary("SIMPLER_CHROMIUM", &["chromium", "chromium-browser"]);
        let chromedriver = process::find_binary("SIMPLER_CHROMEDRIVER", &["chromedriver"]);
        let (chromium, chromedriver) = match (chromium, chromedriver) {
            (Some(a), Some(b)) => (a, b),
            (a, b) => {
                if process::in_ci() {
                    return Err(Error::new(format!(
                        "CI is set but the browser is missing (chromium: {}, chromedriver: {}); \
                         install the Debian packages `chromium chromium-driver`",
                        if a.is_some() { "found" } else { "missing" },
                        if b.is_some() { "found" } else { "missing" },
                    )));
                }
                return Ok(None);
            }
        };
        let driver = Driver::start(&chromedriver)?;
        let mut args: Vec<String> = CHROMIUM_ARGS.iter().map(|s| s.to_string()).collect();
        args.push(format!("--user-data-dir={}", driver.profile_dir().display()));
        let caps = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium.to_string_lossy(),
                        "args": args,
                    },
                    "goog:loggingPrefs": { "browser": "ALL" },
                }
            }
        });
        let value = driver
            .command("POST", "/session", Some(&caps))
            .map_err(|e| driver.with_log(e))?;
        let session = value
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::new(format!("new session: no sessionId in {value}")))?
            .to_string();
        Ok(Some(Browser { session, driver }))
    }

    fn cmd(&self, method: &str, suffix: &str, body: Option<&Value>) -> Result<Value> {
        let path = format!("/session/{}{}", self.session, suffix);
        self.driver.command(method, &path, body)
    }

    /// Navigates to `url` and waits for the page load to finish.
    pub fn goto(&self, url: &str) -> Result<()> {
        self.cmd("POST", "/url", Some(&json!({ "url": url }))).map(drop)
    }

    /// Navigates to a local file (made absolute first) through a `file://` URL.
    pub fn goto_file(&self, path: &Path) -> Result<()> {
        let abs = std::path::absolute(path).map_err(|e| Error::new(format!("{}: {e}", path.display())))?;
        self.goto(&file_url(&abs))
    }

    /// Resizes the browser window (CSS pixels).
    pub fn set_window_size(&self, width: u32, height: u32) -> Result<()> {
        self.cmd(
            "POST",
            "/window/rect",
            Some(&json!({ "width": width, "height": height })),
        )
        .map(drop)
    }

    /// Runs `script` as the body of a function in the page (`return` gives the result) with
    /// `args` available as `arguments[i]`, and returns its JSON result.
    pub fn execute(&self, script: &str, args: &[Value]) -> Result<Value> {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(&json!({ "script": script, "args": args })),
        )
    }

    /// Re-runs `script` (like [`execute`](Self::execute)) until it returns `true`, or fails
    /// after `timeout_ms` milliseconds naming the script.
    pub fn wait_for(&self, script: &str, timeout_ms: u64) -> Result<()> {
        let deadline = Instant::now() + Duration::from_millis(timeout_ms);
        loop {
            if self.execute(script, &[])? == Value::Bool(true) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(Error::new(format!(
                    "condition still false after {timeout_ms} ms: {script}"
                )));
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// The first element matching the CSS selector, or an error naming the selector.
    pub fn find(&self, css: &str) -> Result<Element> {
        let v = self.cmd(
            "POST",
            "/element",
            Some(&json!({ "using": "css selector", "value": css })),
        )?;
        element_from(&v).ok_or_else(|| Error::new(format!("find {css:?}: unexpected reply {v}")))
    }

    /// Every element matching the CSS selector, in document order (possibly none).
    pub fn find_all(&self, css: &str) -> Result<Vec<Element>> {
        let v = self.cmd(
            "POST",
            "/elements",
            Some(&json!({ "using": "css selector", "value": css })),
        )?;
        let list = v
            .as_array()
            .ok_or_else(|| Error::new(format!("find_all {css:?}: unexpected reply {v}")))?;
        Ok(list.iter().filter_map(element_from).collect())
    }

    /// The rendered text of an element.
    pub fn text(&self, element: &Element) -> Result<String> {
        let v = self.cmd("GET", &format!("/element/{}/text", element.id), None)?;
        Ok(v.as_str().unwrap_or_default().to_string())
    }

    /// Moves the mouse to the centre of `element` (scrolling it into view first), firing the
    /// usual `pointerover`/`mouseover`/`mousemove` events and the CSS `:hover` state.
    pub fn hover(&self, element: &Element) -> Result<()> {
        self.scroll_into_view(element)?;
        self.pointer(vec![json!({
            "type": "pointerMove", "duration": 0,
            "origin": element.to_arg(), "x": 0, "y": 0
        })])
    }

    /// Clicks the centre of `element` with the left mouse button (works for SVG elements too).
    pub fn click(&self, element: &Element) -> Result<()> {
        self.scroll_into_view(element)?;
        self.pointer(vec![
            json!({ "type": "pointerMove", "duration": 0, "origin": element.to_arg(), "x": 0, "y": 0 }),
            json!({ "type": "pointerDown", "button": 0 }),
            json!({ "type": "pointerUp", "button": 0 }),
        ])
    }

    /// Clicks at a viewport position in CSS pixels (e.g. on a modal backdrop's edge).
    pub fn click_at(&self, x: i64, y: i64) -> Result<()> {
        self.pointer(vec![
            json!({ "type": "pointerMove", "duration": 0, "origin": "viewport", "x": x, "y": y }),
            json!({ "type": "pointerDown", "button": 0 }),
            json!({ "type": "pointerUp", "button": 0 }),
        ])
    }

    /// Presses and releases each key of `keys` on the focused element (or the document).
    /// Use [`Key`] constants for special keys, or plain text such as `"f"`.
    pub fn press_key(&self, keys: &str) -> Result<()> {
        let mut actions = Vec::new();
        for c in keys.chars() {
            actions.push(json!({ "type": "keyDown", "value": c.to_string() }));
            actions.push(json!({ "type": "keyUp", "value": c.to_string() }));
        }
        let body = json!({ "actions": [{ "type": "key", "id": "keyboard", "actions": actions }] });
        self.cmd("POST", "/actions", Some(&body)).map(drop)
    }

    /// Drains the browser console log collected since the last call (chromium's
    /// `goog:loggingPrefs`), including uncaught exceptions and failed resource loads.
    pub fn console_log(&self) -> Result<Vec<LogEntry>> {
        let v = self.cmd("POST", "/se/log", Some(&json!({ "type": "browser" })))?;
        let list = v
            .as_array()
            .ok_or_else(|| Error::new(format!("console log: unexpected reply {v}")))?;
        Ok(list
            .iter()
            .map(|e| LogEntry {
                level: e["level"].as_str().unwrap_or_default().to_string(),
                message: e["message"].as_str().unwrap_or_default().to_string(),
            })
            .collect())
    }

    /// The console messages at level `SEVERE` (errors) since the last log read.
    pub fn console_errors(&self) -> Result<Vec<String>> {
        Ok(self
            .console_log()?
            .into_iter()
            .filter(|e| e.level == "SEVERE")
            .map(|e| e.message)
            .collect())
    }

    /// Saves a PNG screenshot of the viewport to `path`, creating parent directories.
    pub fn screenshot(&self, path: &Path) -> Result<()> {
        let v = self.cmd("GET", "/screenshot", None)?;
        let png = v
            .as_str()
            .and_then(base64::decode)
            .ok_or_else(|| Error::new("screenshot: reply is not base64 text"))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::new(format!("{}: {e}", dir.display())))?;
        }
        std::fs::write(path, png).map_err(|e| Error::new(format!("{}: {e}", path.display())))
    }

    fn scroll_into_view(&self, element: &Element) -> Result<()> {
        self.execute(
            "arguments[0].scrollIntoView({block: 'center', inline: 'center'});",
            &[element.to_arg()],
        )
        .map(drop)
    }

    fn pointer(&self, actions: Vec<Value>) -> Result<()> {
        let body = json!({ "actions": [{
            "type": "pointer", "id": "mouse",
            "parameters": { "pointerType": "mouse" },
            "actions": actions
        }] });
        self.cmd("POST", "/actions", Some(&body)).map(drop)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Ends chromium cleanly; the Driver's own Drop then kills chromedriver's process group.
        let _ = self.cmd("DELETE", "", None);
    }
}

fn element_from(v: &Value) -> Option<Element> {
    v.get(ELEMENT_KEY)
        .and_then(Value::as_str)
        .map(|id| Element { id: id.to_string() })
}

/// The `file://` URL of an absolute path, percent-encoding everything but unreserved
/// characters and `/`.
pub fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// The workspace's cargo target directory: `CARGO_TARGET_DIR` when set (relative paths are
/// taken from the workspace root), else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let root = root.canonicalize().unwrap_or(root);
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("target"),
    }
}

/// Where tests keep screenshots: `<target>/screenshots/<name>`.
pub fn screenshot_path(name: &str) -> PathBuf {
    target_dir().join("screenshots").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_url_escapes_spaces_and_keeps_slashes() {
        assert_eq!(
            file_url(Path::new("/tmp/a b/r%.html")),
            "file:///tmp/a%20b/r%25.html"
        );
    }

    #[test]
    fn screenshot_path_is_under_target() {
        let p = screenshot_path("x.png");
        assert!(p.ends_with("screenshots/x.png"), "{}", p.display());
    }
}
