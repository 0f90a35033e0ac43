//! The original's scope-stats files of schema versions 4, 5 and 6
//! (`tests/interop/scope_stats/` at the repository root): each renders, and the report's
//! stable sections (the header subtitle, Collection, Top Peaks and the dep_pool section's
//! verdict) match the case's expected sections (for version 4:
//! `tests/interop/scope_stats/v4/expected/sections.html`). Version 4 has no dep-pool fields:
//! the dep pool reads "unknown" everywhere and no zero stands in for it.
//!
//! `UPDATE_GOLDEN=1 cargo test -p simpler-scope-stats-plot --test interop` rewrites the
//! expected files (review the diff before committing).

use std::fs;
use std::path::{Path, PathBuf};

use simpler_scope_stats_plot::render_report;
use simpler_testkit_golden::Goldens;

fn interop() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../tests/interop/scope_stats")
}

/// The text from `start` up to and including the first `end` after it.
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("{start} not in the page"));
    let to = from + page[from..].find(end).expect("end marker") + end.len();
    &page[from..to]
}

/// The stable sections, one per line.
fn sections(page: &str) -> String {
    let dep_pool = between(page, "<section class=\"resource\" id=\"res-dep_pool\">", "</h2>");
    let verdict = if page.contains("id=\"dep_pool-unknown\"") {
        between(page, "<p class=\"chip warn unknown-resource\"", "</p>")
    } else {
        "(dep_pool charted)"
    };
    [
        between(page, "<p class=\"subtitle\">", "</p>"),
        between(page, "<section id=\"collection\">", "</section>"),
        between(page, "<section id=\"top-peaks\">", "</section>"),
        dep_pool,
        verdict,
    ]
    .join("\n")
        + "\n"
}

/// Renders a case in its own scratch folder (`scratch` names it) and returns the page.
fn render(case: &Path, scratch: &str) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("scope-stats-interop")
        .join(scratch);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let jsonl = dir.join("scope_stats.jsonl");
    fs::copy(case.join("scope_stats.jsonl"), &jsonl).unwrap();
    let html = render_report(&jsonl, None).unwrap();
    fs::read_to_string(html).unwrap()
}

#[test]
fn schema_versions_4_to_6_render_with_unknowns_marked() {
    let mut goldens = Goldens::new();
    for version in ["v4", "v5", "v6"] {
        let case = interop().join(version);
        let page = render(&case, version);
        goldens.check(version, &case.join("expected/sections.html"), &sections(&page));
        let dep_pool_charts = page.contains("class=\"ring-panel\" open data-resource=\"dep_pool\"");
        assert_eq!(dep_pool_charts, version != "v4", "{version}: dep_pool panels");
    }
    goldens.finish();
}

/// In version 4 no dep-pool figure is made from the absent fields: no peak, no percentage.
#[test]
fn version_4_never_shows_the_dep_pool_as_zero() {
    let page = render(&interop().join("v4"), "v4-zero");
    let top = between(&page, "<section id=\"top-peaks\">", "</section>");
    for row in top.split("<tr class=\"peak-row").skip(1) {
        if row.contains("data-resource=\"dep_pool\"") {
            assert!(row.contains("data-peak=\"unknown\""), "{row}");
            assert!(!row.contains("0.00%"), "{row}");
        }
    }
    assert_eq!(
        top.matches("data-resource=\"dep_pool\"").count(),
        2,
        "one row per ring"
    );
}
