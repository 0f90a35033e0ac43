//! One inline SVG line chart: scope index on x, observed usage on y, one polyline per metric,
//! and one hoverable point (`.pts circle`) per plotted value carrying the tooltip data.
//!
//! Layout follows the original tool: a 900×300 view box with paddings L74 R24 T28 B48, the
//! y-range is the chart's peak × 1.1, and ticks come from [`crate::ticks`]. Series longer than
//! [`MAX_POINTS`] are reduced by [`crate::reduce`], which always keeps the peak.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::format;
use crate::metrics::{peak, Unit};
use crate::reduce::reduce;
use crate::ticks::{index_ticks, value_ticks};

/// At most this many points are drawn per line.
pub(crate) const MAX_POINTS: usize = 500;

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 300.0;
const PAD_L: f64 = 74.0;
const PAD_R: f64 = 24.0;
const PAD_T: f64 = 28.0;
const PAD_B: f64 = 48.0;

/// One line of a chart.
pub(crate) struct Line<'a> {
    /// Metric label shown in the tooltip.
    pub(crate) label: &'a str,
    /// Stroke colour.
    pub(crate) color: &'a str,
    /// One value per scope index.
    pub(crate) values: &'a [i64],
    /// The site id of each scope index.
    pub(crate) sites: &'a [u32],
}

/// Maps the file's site ids to the compact ids used in the page's site table, so the page
/// carries only the sites of plotted points.
#[derive(Default)]
pub(crate) struct SiteTable {
    ids: HashMap<u32, u32>,
    order: Vec<u32>,
}

impl SiteTable {
    fn id(&mut self, site: u32) -> u32 {
        let next = self.order.len() as u32;
        *self.ids.entry(site).or_insert_with(|| {
            self.order.push(site);
            next
        })
    }

    /// The site strings in page-id order.
    pub(crate) fn strings<'a>(&'a self, sites: &'a [String]) -> impl Iterator<Item = &'a str> {
        self.order
            .iter()
            .map(|&s| sites.get(s as usize).map_or("", String::as_str))
    }
}

/// What was drawn, for the caption under the chart.
pub(crate) struct Drawn {
    /// Points per line in the data.
    pub(crate) total: usize,
    /// Points drawn for the longest line (less than `total` when reduced).
    pub(crate) plotted: usize,
}

/// Appends a chart figure (clickable to enlarge) with the given accessible title.
pub(crate) fn render(
    out: &mut String,
    title: &str,
    unit: Unit,
    lines: &[Line<'_>],
    sites: &mut SiteTable,
) -> Drawn {
    let n = lines.iter().map(|l| l.values.len()).max().unwrap_or(0);
    let plots: Vec<Vec<usize>> = lines.iter().map(|l| reduce(l.values, MAX_POINTS)).collect();
    let peak_all = lines.iter().filter_map(|l| peak(l.values)).map(|p| p.value).max();
    let min_all = lines
        .iter()
        .zip(&plots)
        .flat_map(|(l, p)| p.iter().map(|&i| l.values[i]))
        .min()
        .unwrap_or(0);
    let y_lo = (min_all.min(0)) as f64;
    let peak_v = peak_all.unwrap_or(0);
    let mut y_hi = if peak_v > 0 { peak_v as f64 * 1.1 } else { 1.0 };
    if y_hi <= y_lo {
        y_hi = y_lo + 1.0;
    }
    let plot_w = WIDTH - PAD_L - PAD_R;
    let plot_h = HEIGHT - PAD_T - PAD_B;
    let x_of = |i: usize| {
        if n <= 1 {
            PAD_L + plot_w / 2.0
        } else {
            PAD_L + plot_w * i as f64 / (n - 1) as f64
        }
    };
    let y_of = |v: f64| PAD_T + plot_h * (1.0 - (v - y_lo) / (y_hi - y_lo));

    let (div, suffix, integer_only) = match unit {
        Unit::Bytes => {
            let (d, s) = format::byte_scale(y_hi);
            (d, s, d == 1.0)
        }
        Unit::Count(name) => (1.0, name, true),
    };
    let _ = write!(
        out,
        "<figure class=\"chart\" tabindex=\"0\" role=\"button\" aria-label=\"{} (click to enlarge)\">\
         <svg viewBox=\"0 0 {WIDTH} {HEIGHT}\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" \
         aria-label=\"{}\" data-peak=\"{peak_v}\" data-points=\"{n}\">",
        format::html(title),
        format::html(title)
    );
    // y grid and labels
    out.push_str("<g class=\"grid\">");
    for t in value_ticks(y_lo / div, y_hi / div, integer_only) {
        let y = y_of(t * div);
        let label = if integer_only {
            format::int(t.round() as i64)
        } else {
            trim_float(t)
        };
        let _ = write!(
            out,
            "<line x1=\"{PAD_L}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"yt\" x=\"{:.1}\" y=\"{:.1}\">{label}</text>",
            WIDTH - PAD_R,
            PAD_L - 8.0,
            y + 4.0
        );
    }
    for i in index_ticks(n) {
        let x = x_of(i);
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{PAD_T}\" y2=\"{:.1}\"/>\
             <text class=\"xt\" x=\"{x:.1}\" y=\"{:.1}\">{}</text>",
            HEIGHT - PAD_B + 6.0,
            HEIGHT - PAD_B + 20.0,
            format::int(i as i64)
        );
    }
    let _ = write!(
        out,
        "</g><text class=\"axis\" x=\"{:.1}\" y=\"{:.1}\">scope index</text>\
         <text class=\"unit\" x=\"{PAD_L}\" y=\"{:.1}\">{}</text>",
        PAD_L + plot_w / 2.0,
        HEIGHT - 8.0,
        PAD_T - 10.0,
        format::html(suffix)
    );
    for (line, keep) in lines.iter().zip(&plots) {
        let line_peak = peak(line.values);
        let _ = write!(
            out,
            "<g class=\"series\" data-metric=\"{}\" data-max=\"{}\" style=\"--c:{}\"><polyline points=\"",
            format::html(line.label),
            line_peak.map_or(0, |p| p.value),
            line.color
        );
        for &i in keep {
            let _ = write!(out, "{:.1},{:.1} ", x_of(i), y_of(line.values[i] as f64));
        }
        out.push_str("\"/><g class=\"pts\">");
        for &i in keep {
            point(
                out,
                "",
                i,
                line,
                unit,
                sites,
                x_of(i),
                y_of(line.values[i] as f64),
            );
        }
        out.push_str("</g></g>");
    }
    // Peak markers last, so no other line's points cover them; the first line (the risk
    // metric) on top.
    for line in lines.iter().rev() {
        if let Some(p) = peak(line.values) {
            let _ = write!(
                out,
                "<g class=\"series peaks\" data-metric=\"{}\" style=\"--c:{}\"><g class=\"pts\">",
                format::html(line.label),
                line.color
            );
            point(
                out,
                " class=\"peak\"",
                p.index,
                line,
                unit,
                sites,
                x_of(p.index),
                y_of(p.value as f64),
            );
            out.push_str("</g></g>");
        }
    }
    out.push_str("<circle class=\"hl\" r=\"7\" cx=\"-20\" cy=\"-20\"/></svg></figure>");
    Drawn {
        total: n,
        plotted: plots.iter().map(Vec::len).max().unwrap_or(0),
    }
}

#[allow(clippy::too_many_arguments)]
fn point(
    out: &mut String,
    class: &str,
    i: usize,
    line: &Line<'_>,
    unit: Unit,
    sites: &mut SiteTable,
    x: f64,
    y: f64,
) {
    let v = line.values[i];
    let site = line.sites.get(i).map_or(0, |&s| sites.id(s));
    let _ = write!(
        out,
        "<circle{class} cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{}\" data-i=\"{i}\" data-v=\"{v}\" \
         data-y=\"{}\" data-s=\"{site}\"/>",
        if class.is_empty() { 5 } else { 4 },
        format::short(v, unit)
    );
}

/// A tick value in a scaled unit: up to two decimals, trailing zeros removed.
fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y_range_is_peak_times_1_1_and_peak_is_plotted() {
        let values: Vec<i64> = (0..2000).map(|i| (i * 7919) % 1000).chain([4321]).collect();
        let sites = vec![0u32; values.len()];
        let mut out = String::new();
        let mut table = SiteTable::default();
        let drawn = render(
            &mut out,
            "t",
            Unit::Count("slots"),
            &[Line {
                label: "High water",
                color: "#000",
                values: &values,
                sites: &sites,
            }],
            &mut table,
        );
        assert_eq!(drawn.total, 2001);
        assert!(drawn.plotted <= MAX_POINTS);
        assert!(out.contains("data-peak=\"4321\""));
        assert!(out.contains("data-v=\"4321\""));
        // The top of the plot (y = PAD_T) is 4321 × 1.1; the peak sits at 1/1.1 of the height.
        let y_peak = PAD_T + (HEIGHT - PAD_T - PAD_B) * (1.0 - 1.0 / 1.1);
        assert!(out.contains(&format!("cy=\"{y_peak:.1}\"")), "{y_peak}");
    }

    #[test]
    fn trims_tick_labels() {
        assert_eq!(trim_float(2.5), "2.5");
        assert_eq!(trim_float(2.0), "2");
        assert_eq!(trim_float(0.25), "0.25");
    }
}
