//! The HTML page: header, Formula Guide, collection details, incomplete statistics, Top Peaks,
//! then the resource sections from [`crate::panels`]. One self-contained document: the CSS and
//! the script are inlined, the charts are inline SVG, nothing is fetched.

use std::fmt::Write as _;

use simpler_artifacts::scope_stats::{Phase, COUNTER_SATURATED};

use crate::chart::SiteTable;
use crate::format::{self, html};
use crate::load::Loaded;
use crate::metrics::{self, Capacity, Resource, METRICS, RING_RESOURCES};
use crate::panels;
use crate::status;

const STYLE: &str = include_str!("../assets/style.css");
const SCRIPT: &str = include_str!("../assets/script.js");

/// What the report says of where its samples came from.
pub(crate) struct Source<'a> {
    /// The input's file name (the title).
    pub file_name: &'a str,
    /// The input's path and the run that wrote it, as the header's source line says.
    pub origin: &'a str,
    /// The run manifest's warning about the input (a failed or stale run).
    pub run_warning: Option<&'a str>,
    /// The report is written into the folder of another run than the samples' (found by a
    /// review: such a report replaced that run's own and read as that run's).
    pub foreign: Option<&'a str>,
}

/// Renders the whole report for `loaded`, titled with the input's file name.
pub(crate) fn render(
    loaded: &Loaded,
    source: &Source<'_>,
    plan: Option<&Result<simpler_artifacts::plan::PlanFile, String>>,
) -> String {
    let file_name = source.file_name;
    let mut sites = SiteTable::default();
    let mut body = String::with_capacity(1 << 20);
    if let Some(w) = source.run_warning {
        let _ = write!(
            body,
            "<div class=\"run-warning\" role=\"alert\"><strong>Warning: this file may not be what \
             its run wrote.</strong> {}</div>",
            html(w)
        );
    }
    if let Some(w) = source.foreign {
        let _ = write!(
            body,
            "<div class=\"run-warning\" role=\"alert\"><strong>Warning: this report is not of the run \
             whose folder holds it.</strong> {}</div>",
            html(w)
        );
    }
    header(&mut body, loaded, file_name);
    let _ = write!(
        body,
        "<p class=\"source\">Source: <code id=\"jsonl-source\">{}</code></p>",
        html(source.origin)
    );
    formula_guide(&mut body);
    collection(&mut body, loaded);
    incomplete(&mut body, loaded);
    top_peaks(&mut body, loaded);
    if let Some(p) = plan {
        crate::plan_section::section(&mut body, p);
    }
    panels::resource_sections(&mut body, loaded, &mut sites);

    let mut out = String::with_capacity(body.len() + STYLE.len() + SCRIPT.len() + 4096);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>scope_stats: {}</title><style>{STYLE}</style></head><body><main>",
        html(file_name)
    );
    out.push_str(&body);
    out.push_str(
        "</main><div id=\"tooltip\" class=\"tooltip\" role=\"tooltip\" hidden></div>\
         <div id=\"chart-modal\" class=\"modal\" hidden><div class=\"modal-backdrop\" data-close></div>\
         <div class=\"modal-box\" role=\"dialog\" aria-modal=\"true\" aria-label=\"Enlarged chart\">\
         <button type=\"button\" class=\"modal-close\" data-close aria-label=\"Close\">×</button>\
         <div id=\"chart-modal-content\"></div></div></div>",
    );
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"site-table\">{}</script><script>{SCRIPT}</script></body></html>",
        format::json_strings(sites.strings(&loaded.sites))
    );
    out.push('\n');
    out
}

/// The most common end site across all pairs; ties go to the site that completed first.
fn dominant_site(l: &Loaded) -> Option<&str> {
    let mut counts: Vec<(u64, usize)> = vec![(0, usize::MAX); l.sites.len()];
    for (order, &s) in l.tensormap.sites.iter().enumerate() {
        let c = &mut counts[s as usize];
        c.0 += 1;
        c.1 = c.1.min(order);
    }
    let best = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| c.0 > 0)
        .max_by(|a, b| a.1 .0.cmp(&b.1 .0).then(b.1 .1.cmp(&a.1 .1)))?;
    l.sites.get(best.0).map(String::as_str)
}

fn header(out: &mut String, l: &Loaded, file_name: &str) {
    let st = status::classify(l);
    let pairs = l.pairs();
    let _ = write!(
        out,
        "<header class=\"report-head\" data-healthy=\"{}\"><p class=\"eyebrow\">scope_stats report</p>\
         <h1 id=\"jsonl-name\">{}</h1><p class=\"dominant\">Dominant scope site: <code id=\"dominant-site\">{}</code> · \
         {} paired scopes</p><div class=\"chips\" id=\"status-chips\">",
        st.healthy,
        html(file_name),
        dominant_site(l).map_or_else(|| "n/a (no paired scopes)".to_string(), html),
        format::int(pairs as u64)
    );
    for c in &st.chips {
        let _ = write!(
            out,
            "<span class=\"chip status {}\">{}</span>",
            c.class,
            html(&c.text)
        );
    }
    out.push_str("</div><div class=\"chips\" id=\"count-chips\">");
    let total = match l.meta.total {
        Some(COUNTER_SATURATED) => "total records: saturated (unknown)".to_string(),
        Some(t) => format!("{} records (device total)", format::int(t)),
        None => "total records: unknown".to_string(),
    };
    let mut count_chips = vec![
        total,
        format!("{} samples in file", format::int(l.samples)),
        format!("{} total paired scopes", format::int(pairs as u64)),
        format!("{} ring_depths", l.rings.len()),
    ];
    if let Some(rx) = l.meta.host_received_records {
        count_chips.push(format!("{} host received", format::int(rx)));
    }
    if let Some(kept) = l.meta.host_retained_records {
        count_chips.push(format!("{} host retained", format::int(kept)));
    }
    for c in count_chips {
        let _ = write!(out, "<span class=\"chip\">{}</span>", html(&c));
    }
    out.push_str("</div>");
    let _ = write!(
        out,
        "<p class=\"subtitle\">{}</p></header>",
        match (pairs > 0, l.unknown_reason(Resource::DepPool).is_some()) {
            (true, false) => "Resources: task_window, heap, dep_pool by ring_depth; TensorMap global.",
            (true, true) => {
                "Resources: task_window, heap by ring_depth (dep_pool unknown); TensorMap global."
            }
            (false, _) => "No paired scopes: there is no per-scope data to chart.",
        }
    );
}

fn formula_guide(out: &mut String) {
    out.push_str(
        "<section id=\"formula-guide\"><h2>Formula Guide</h2><h3>Resources</h3><div class=\"grid-cards\">",
    );
    for r in RING_RESOURCES.into_iter().chain([Resource::TensorMap]) {
        let _ = write!(
            out,
            "<div class=\"card\" data-resource=\"{}\"><b><span class=\"dot\" style=\"background:{}\"></span>{}</b><p>{}</p></div>",
            r.key(),
            r.color(),
            r.label(),
            html(r.description())
        );
    }
    out.push_str("</div><h3>Chart metrics</h3><div class=\"grid-cards\">");
    for m in METRICS {
        let _ = write!(
            out,
            "<div class=\"card\" data-metric=\"{}\"><b><span class=\"swatch\" style=\"background:{}\"></span>{} \
             (<code>{}</code>)</b><p><code>{}</code></p><p>{}</p></div>",
            m.key(),
            m.color(),
            m.label(),
            m.key(),
            html(m.formula()),
            html(m.meaning())
        );
    }
    out.push_str(
        "</div><p class=\"note\">head / tail are each resource's allocation frontier and released \
         boundary at the sampled scope boundary. All are monotonic, non-wrapping counters (bytes for \
         heap, entries for the others), so every delta is an exact subtraction. TensorMap is one \
         in-use value, so it shows only <code>real_occupancy</code> (live entries at scope exit). \
         The risk metric is <code>scope_high_water</code> for ring resources and \
         <code>real_occupancy</code> for TensorMap. Use = peak / capacity, with two decimals; a \
         missing capacity gives no percentage and a zero capacity is a real one. \
         Scope index = a scope's position on its chart's x axis: scopes are numbered in the order \
         they ended, per ring_depth (TensorMap numbers all scopes together).</p></section>",
    );
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "unknown (null)".to_string(), T::to_string)
}

fn opt_count(v: Option<u64>) -> String {
    match v {
        Some(COUNTER_SATURATED) => format!("{} (saturated: unknown)", format::int(COUNTER_SATURATED)),
        Some(n) => format::int(n),
        None => "unknown (null)".to_string(),
    }
}

fn caps(v: &Option<Vec<u64>>) -> String {
    v.as_ref().map_or_else(
        || "unknown (null)".to_string(),
        |c| {
            let parts: Vec<String> = c.iter().map(|x| format::int(*x)).collect();
            format!("[{}]", parts.join(", "))
        },
    )
}

fn collection(out: &mut String, l: &Loaded) {
    let m = &l.meta;
    out.push_str("<section id=\"collection\"><h2>Collection</h2><dl class=\"kv\">");
    let mut rows: Vec<(&str, String)> = vec![
        (
            "schema",
            match m.version {
                Some(v @ 4..=6) => format!("older schema (version {v}, no run_epoch/buf_seq)"),
                Some(v) => crate::unknown_schema(v),
                None => "spec schema".to_string(),
            },
        ),
        ("fatal", opt(&m.fatal)),
        ("dropped", opt_count(m.dropped)),
        ("total", opt_count(m.total)),
    ];
    if m.collection_verdict.is_some()
        || m.counts_unknown.is_some()
        || m.host_received_records.is_some()
        || m.host_retained_records.is_some()
    {
        rows.push((
            "collection_verdict",
            m.collection_verdict
                .as_ref()
                .map_or_else(|| "absent".to_string(), |v| v.as_str().to_string()),
        ));
        rows.push(("counts_unknown", opt(&m.counts_unknown)));
        rows.push(("host_received_records", opt_count(m.host_received_records)));
        rows.push(("host_retained_records", opt_count(m.host_retained_records)));
    }
    rows.push(("task_window_max", caps(&m.task_window_max)));
    rows.push(("heap_max", caps(&m.heap_max)));
    rows.push(("dep_pool_max", caps(&m.dep_pool_max)));
    rows.push(("tensormap_max", opt_count(m.tensormap_max)));
    for (k, v) in rows.iter_mut() {
        if m.absent.contains(k) {
            *v = "unknown (absent: not in this file's schema)".to_string();
        }
    }
    for (k, v) in rows {
        let _ = write!(
            out,
            "<dt><code>{k}</code></dt><dd data-key=\"{k}\">{}</dd>",
            html(&v)
        );
    }
    out.push_str("</dl></section>");
}

fn incomplete(out: &mut String, l: &Loaded) {
    if l.unpaired.is_empty() && l.truncated.is_none() {
        return;
    }
    let (begins, ends) = l.unpaired_counts();
    let _ = write!(
        out,
        "<section id=\"incomplete\"><h2>Incomplete statistics</h2><p>These samples found no partner \
         and are left out of every metric; no pair is ever made up for them. {} unpaired begin(s) \
         (a scope with no end: a fatal, a cut-off run, or a lost record) and {} unpaired end(s).</p>",
        format::int(begins),
        format::int(ends)
    );
    if let Some(t) = &l.truncated {
        let _ = write!(
            out,
            "<p class=\"chip warn\" id=\"truncated\">Incomplete file: {}. Everything before it is rendered.</p>",
            html(t)
        );
    }
    if !l.unpaired.is_empty() {
        out.push_str(
            "<table id=\"unpaired\"><thead><tr><th>Sample</th><th>ring_depth</th><th>depth</th>\
             <th>Site</th><th>Count</th><th>First line</th></tr></thead><tbody>",
        );
        for (k, v) in &l.unpaired {
            let phase = match k.phase {
                Phase::Begin => "begin",
                Phase::End => "end",
            };
            let site = l.sites.get(k.site as usize).map_or("", String::as_str);
            let _ = write!(
                out,
                "<tr data-phase=\"{phase}\" data-site=\"{}\" data-count=\"{}\"><td>unpaired {phase}</td>\
                 <td>{}</td><td>{}</td><td class=\"mono\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                html(site),
                v.count,
                k.ring,
                k.depth,
                html(site),
                format::int(v.count),
                v.first_line
            );
        }
        out.push_str("</tbody></table>");
    }
    out.push_str("</section>");
}

/// One Top Peaks row's values.
pub(crate) struct PeakRow {
    pub(crate) resource: Resource,
    pub(crate) ring: Option<u32>,
    /// `None` when the resource is unknown in this file ([`Loaded::unknown_reason`]).
    pub(crate) peak: Option<i64>,
    pub(crate) index: usize,
    pub(crate) site: u32,
    pub(crate) capacity: Capacity,
}

/// The Top Peaks rows: every (ring resource, ring) with pairs, then the global TensorMap.
pub(crate) fn peak_rows(l: &Loaded) -> Vec<PeakRow> {
    let mut rows = Vec::new();
    for (&ring, series) in &l.rings {
        for (ri, r) in RING_RESOURCES.into_iter().enumerate() {
            let metric = r.risk_metric() as usize;
            if l.unknown_reason(r).is_some() {
                rows.push(PeakRow {
                    resource: r,
                    ring: Some(ring),
                    peak: None,
                    index: 0,
                    site: 0,
                    capacity: metrics::capacity(&l.meta, r, ring),
                });
            } else if let Some(p) = metrics::peak(&series.values[ri][metric]) {
                rows.push(PeakRow {
                    resource: r,
                    ring: Some(ring),
                    peak: Some(p.value),
                    index: p.index,
                    site: series.sites[p.index],
                    capacity: metrics::capacity(&l.meta, r, ring),
                });
            }
        }
    }
    if let Some(p) = metrics::peak(&l.tensormap.values) {
        rows.push(PeakRow {
            resource: Resource::TensorMap,
            ring: None,
            peak: Some(p.value),
            index: p.index,
            site: l.tensormap.sites[p.index],
            capacity: metrics::capacity(&l.meta, Resource::TensorMap, 0),
        });
    }
    rows
}

/// The Capacity cell text.
pub(crate) fn capacity_text(cap: Capacity, r: Resource) -> String {
    match cap {
        Capacity::Unknown => "unknown capacity".to_string(),
        Capacity::Known(c) => format::value(i64::try_from(c).unwrap_or(i64::MAX), r.unit()),
    }
}

/// A Use bar with its percentage label.
pub(crate) fn use_bar(out: &mut String, usage: metrics::Usage) {
    let _ = write!(
        out,
        "<div class=\"use\"><div class=\"bar {}\"><span style=\"width:{:.1}%\"></span></div>\
         <span class=\"pct\">{}</span></div>",
        usage.class(),
        usage.fill() * 100.0,
        html(&usage.text())
    );
}

fn top_peaks(out: &mut String, l: &Loaded) {
    out.push_str(
        "<section id=\"top-peaks\"><h2>Top Peaks</h2><table><thead><tr><th>Resource</th><th>ring_depth</th>\
         <th>Metric</th><th>Peak</th><th>Capacity</th><th>Use</th><th>Site</th><th>Scope Index</th></tr></thead><tbody>",
    );
    let rows = peak_rows(l);
    if rows.is_empty() {
        out.push_str("<tr><td colspan=\"8\">No paired scopes found.</td></tr>");
    }
    for row in rows {
        let r = row.resource;
        let Some(peak) = row.peak else {
            let reason = l.unknown_reason(r).unwrap_or_default();
            let ring = row.ring.map_or_else(|| "global".to_string(), |n| n.to_string());
            let _ = write!(
                out,
                "<tr class=\"peak-row unknown\" data-resource=\"{}\" data-ring=\"{ring}\" data-peak=\"unknown\">\
                 <td>{}</td><td>ring_depth {ring}</td><td>{}</td><td class=\"num\" title=\"{}\">unknown</td>\
                 <td class=\"num\">{}</td><td>no percentage</td><td>-</td><td>-</td></tr>",
                r.key(),
                r.label(),
                r.risk_metric().label(),
                html(&reason),
                capacity_text(row.capacity, r)
            );
            continue;
        };
        let usage = metrics::usage(peak, row.capacity);
        let site = l.sites.get(row.site as usize).map_or("", String::as_str);
        let ring = row
            .ring
            .map_or_else(|| "global".to_string(), |n| format!("ring_depth {n}"));
        let cap_attr = match row.capacity {
            Capacity::Unknown => "unknown".to_string(),
            Capacity::Known(c) => c.to_string(),
        };
        let _ = write!(
            out,
            "<tr class=\"peak-row\" data-resource=\"{}\" data-ring=\"{}\" data-peak=\"{}\" data-capacity=\"{cap_attr}\" \
             data-use=\"{}\" data-site=\"{}\" data-scope=\"{}\"><td>{}</td><td>{ring}</td><td>{}</td>\
             <td class=\"num\" title=\"{}\">{}</td><td class=\"num\">{}</td><td>",
            r.key(),
            row.ring.map_or_else(|| "global".to_string(), |n| n.to_string()),
            peak,
            html(&usage.text()),
            html(site),
            row.index,
            r.label(),
            r.risk_metric().label(),
            format::int(peak),
            format::value(peak, r.unit()),
            capacity_text(row.capacity, r)
        );
        use_bar(out, usage);
        let _ = write!(
            out,
            "</td><td class=\"mono\">{}</td><td>#{}</td></tr>",
            html(site),
            row.index
        );
    }
    out.push_str("</tbody></table>");
    unended_note(out, l);
    out.push_str("</section>");
}

/// Under Top Peaks, when scopes never ended (the run stopped inside them): their peaks are
/// not in the table, and the scope that drove the stop is one of them, most likely the one
/// begun last (named). Found by a review: after a fatal, Top Peaks named a sibling scope that
/// ended normally as the peak, without a word about the one that did not end.
fn unended_note(out: &mut String, l: &Loaded) {
    let begins = l.unpaired.iter().filter(|(k, _)| k.phase == Phase::Begin);
    let Some((last, _)) = begins.clone().max_by_key(|(_, v)| v.first_line) else {
        return;
    };
    let count: u64 = begins.map(|(_, v)| v.count).sum();
    let site = l.sites.get(last.site as usize).map_or("", String::as_str);
    let _ = write!(
        out,
        "<p class=\"chip warn\" id=\"unended-scopes\">{} scope(s) never ended (the run stopped inside them), \
         so their peaks are not above; the last one begun, most likely what drove the stop, is at <span class=\"mono\">{}</span> \
         (ring_depth {}, depth {}). See Incomplete statistics.</p>",
        format::int(count),
        html(site),
        last.ring,
        last.depth
    );
}
