//! Resource sections: task_window, heap and dep_pool split by ring_depth into panels (a
//! resource-pressure chart with High water and Live at exit, then a separate per-scope
//! allocation chart), and TensorMap as one global panel; each panel with its side summary.

use std::fmt::Write as _;

use crate::chart::{self, Drawn, Line, SiteTable};
use crate::format::{self, html};
use crate::load::Loaded;
use crate::metrics::{self, Capacity, Metric, Peak, Resource, RING_RESOURCES};
use crate::page::{capacity_text, use_bar};

/// Appends one section per resource that has paired scopes.
pub(crate) fn resource_sections(out: &mut String, l: &Loaded, sites: &mut SiteTable) {
    if l.pairs() == 0 {
        return;
    }
    for (ri, r) in RING_RESOURCES.into_iter().enumerate() {
        section_head(out, r);
        if let Some(reason) = l.unknown_reason(r) {
            let _ = write!(
                out,
                "<p class=\"chip warn unknown-resource\" id=\"{}-unknown\">{}: {}</p></section>",
                r.key(),
                r.label(),
                html(&reason)
            );
            continue;
        }
        for (&ring, series) in &l.rings {
            let cap = metrics::capacity(&l.meta, r, ring);
            let _ = write!(
                out,
                "<details class=\"ring-panel\" open data-resource=\"{}\" data-ring=\"{ring}\">\
                 <summary>ring_depth {ring} <span class=\"muted\">· {} scope(s)</span></summary>\
                 <div class=\"panel-body\"><div class=\"chart-stack\"><h4>Resource pressure</h4>",
                r.key(),
                format::int(series.len() as i64)
            );
            let line = |m: Metric| Line {
                label: m.label(),
                color: m.color(),
                values: &series.values[ri][m as usize],
                sites: &series.sites,
            };
            let title = format!("{} ring_depth {ring}: resource pressure", r.label());
            let d1 = chart::render(
                out,
                &title,
                r.unit(),
                &[line(Metric::HighWater), line(Metric::Live)],
                sites,
            );
            reduced_note(out, &d1);
            out.push_str("<h4>Alloc per scope</h4>");
            let title = format!("{} ring_depth {ring}: allocation per scope", r.label());
            let d2 = chart::render(out, &title, r.unit(), &[line(Metric::Alloc)], sites);
            reduced_note(out, &d2);
            out.push_str("</div><aside class=\"summary\"><h4>Line colors</h4><ul>");
            for m in [Metric::HighWater, Metric::Live, Metric::Alloc] {
                legend_item(out, m, r, metrics::peak(&series.values[ri][m as usize]), cap);
            }
            out.push_str("</ul>");
            let risk = r.risk_metric();
            if let Some(p) = metrics::peak(&series.values[ri][risk as usize]) {
                max_use(out, l, r, risk, p, series.sites[p.index], cap, None);
            }
            out.push_str("</aside></div></details>");
        }
        out.push_str("</section>");
    }

    let r = Resource::TensorMap;
    section_head(out, r);
    let tm = &l.tensormap;
    let cap = metrics::capacity(&l.meta, r, 0);
    let _ = write!(
        out,
        "<details class=\"ring-panel\" open data-resource=\"tensormap\" data-ring=\"global\">\
         <summary>global <span class=\"muted\">· {} scope(s)</span></summary>\
         <div class=\"panel-body\"><div class=\"chart-stack\"><h4>Live entries</h4>",
        format::int(tm.len() as i64)
    );
    let d = chart::render(
        out,
        "TensorMap: live entries",
        r.unit(),
        &[Line {
            label: "Live entries",
            color: r.color(),
            values: &tm.values,
            sites: &tm.sites,
        }],
        sites,
    );
    reduced_note(out, &d);
    out.push_str("</div><aside class=\"summary\"><h4>Line colors</h4><ul>");
    let p = metrics::peak(&tm.values);
    let _ = write!(
        out,
        "<li><span class=\"swatch\" style=\"background:{}\"></span><b>Live entries</b> \
         <span class=\"muted\">(real_occupancy: end.tensormap)</span><br>{}</li></ul>",
        r.color(),
        peak_use_text(p, cap, r)
    );
    if let Some(p) = p {
        let ctx = tm.rings[p.index];
        max_use(out, l, r, Metric::Live, p, tm.sites[p.index], cap, Some(ctx));
    }
    out.push_str("</aside></div></details></section>");
}

fn section_head(out: &mut String, r: Resource) {
    let what = match r {
        Resource::TensorMap => {
            "One global panel: TensorMap is not a per-ring_depth resource. Max use names the \
             ring_depth of the scope where the global peak was observed."
        }
        _ => "One panel per ring_depth.",
    };
    let _ = write!(
        out,
        "<section class=\"resource\" id=\"res-{}\"><h2><span class=\"dot\" style=\"background:{}\"></span>{}</h2>\
         <p class=\"muted\">{} {}</p>",
        r.key(),
        r.color(),
        r.label(),
        html(r.description()),
        what
    );
}

fn reduced_note(out: &mut String, d: &Drawn) {
    if d.plotted < d.total {
        let _ = write!(
            out,
            "<p class=\"reduced\">Points reduced for drawing: {} of {} scopes plotted per line \
             (each bucket keeps its minimum and maximum, so the peak is always plotted).</p>",
            format::int(d.plotted as i64),
            format::int(d.total as i64)
        );
    }
}

fn peak_use_text(p: Option<Peak>, cap: Capacity, r: Resource) -> String {
    match p {
        Some(p) => format!(
            "peak {} · use {}",
            html(&format::value(p.value, r.unit())),
            html(&metrics::usage(p.value, cap).text())
        ),
        None => "no data".to_string(),
    }
}

fn legend_item(out: &mut String, m: Metric, r: Resource, p: Option<Peak>, cap: Capacity) {
    let _ = write!(
        out,
        "<li><span class=\"swatch\" style=\"background:{}\"></span><b>{}</b> \
         <span class=\"muted\">({}: {})</span><br>{}</li>",
        m.color(),
        m.label(),
        m.key(),
        html(m.formula()),
        peak_use_text(p, cap, r)
    );
}

#[allow(clippy::too_many_arguments)]
fn max_use(
    out: &mut String,
    l: &Loaded,
    r: Resource,
    risk: Metric,
    p: Peak,
    site: u32,
    cap: Capacity,
    context_ring: Option<u32>,
) {
    let usage = metrics::usage(p.value, cap);
    let _ = write!(
        out,
        "<h4>Max use</h4><dl class=\"kv max-use\"><dt>Risk metric</dt><dd>{} ({})</dd>\
         <dt>Peak</dt><dd class=\"peak\">{}</dd><dt>Capacity</dt><dd>{}</dd><dt>Use</dt><dd>",
        risk.label(),
        risk.key(),
        html(&format::value(p.value, r.unit())),
        capacity_text(cap, r)
    );
    use_bar(out, usage);
    let _ = write!(out, "</dd><dt>Peak scope</dt><dd>#{}</dd>", p.index);
    if let Some(ring) = context_ring {
        let _ = write!(
            out,
            "<dt>Peak context ring_depth</dt><dd class=\"peak-context\">ring_depth {ring}</dd>"
        );
    }
    let _ = write!(
        out,
        "<dt>Peak site</dt><dd><code>{}</code></dd></dl>",
        html(l.sites.get(site as usize).map_or("", String::as_str))
    );
}
