//! Helpers shared by the report tests: fixture paths, rendering into a private directory, and
//! a tiny attribute reader for the HTML tags the assertions look at.

#![allow(dead_code)]

pub mod generate;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A fixture under `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A fresh, empty directory under cargo's per-target test tmp dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("scope-stats-plot")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Renders a fixture into its own scratch dir and returns the HTML path and text.
pub fn render_fixture(name: &str) -> (PathBuf, String) {
    let out = scratch(name);
    let path = simpler_scope_stats_plot::render_report(&data(name), Some(&out))
        .unwrap_or_else(|e| panic!("{name}: {e:#}"));
    assert_eq!(path, out.join("scope_stats.html"));
    let html = std::fs::read_to_string(&path).unwrap();
    (path, html)
}

fn unescape(v: &str) -> String {
    v.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The attributes of every start tag that begins with `prefix` (e.g. `<tr class="peak-row"`).
pub fn tags(html: &str, prefix: &str) -> Vec<HashMap<String, String>> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(prefix) {
        let tag_start = &rest[at..];
        let end = tag_start.find('>').expect("unterminated tag");
        let tag = &tag_start[..end];
        let mut attrs = HashMap::new();
        let mut t = tag;
        while let Some(eq) = t.find("=\"") {
            let name = t[..eq].rsplit(' ').next().unwrap().to_string();
            let after = &t[eq + 2..];
            let close = after.find('"').expect("unterminated attribute");
            attrs.insert(name, unescape(&after[..close]));
            t = &after[close + 1..];
        }
        out.push(attrs);
        rest = &tag_start[end..];
    }
    out
}

/// The single Top Peaks row for `resource` on `ring` ("global" for TensorMap).
pub fn peak_row(html: &str, resource: &str, ring: &str) -> HashMap<String, String> {
    let rows: Vec<_> = tags(html, "<tr class=\"peak-row\"")
        .into_iter()
        .filter(|r| r["data-resource"] == resource && r["data-ring"] == ring)
        .collect();
    assert_eq!(rows.len(), 1, "rows for {resource}/{ring}");
    rows.into_iter().next().unwrap()
}

/// The text of the status chips in the header.
pub fn status_chips(html: &str) -> Vec<String> {
    let start = html.find("id=\"status-chips\"").expect("status chips");
    let block = &html[start..];
    let block = &block[..block.find("</div>").unwrap()];
    block
        .split("<span class=\"chip status ")
        .skip(1)
        .map(|s| {
            let text = &s[s.find('>').unwrap() + 1..];
            unescape(&text[..text.find("</span>").unwrap()])
        })
        .collect()
}
