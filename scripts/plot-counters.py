#!/usr/bin/env python3
"""Draws the counter tracks of a `merged_swimlane.json` as an SVG picture, the way a trace
viewer shows them: one band per counter and series, a step line between samples.

    python3 scripts/plot-counters.py TRACE.json OUT.svg

The picture in docs/why-slow.md was made this way (then rendered to PNG with
`chromium --headless --screenshot`), since ui.perfetto.dev needs the network. Only the
standard library is used.
"""

import json
import sys
from xml.sax.saxutils import escape

BAND_H = 46
LABEL_W = 250
PLOT_W = 760
TOP = 30
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]


def series_of(trace):
    """{(counter name, series): [(ts_us, value)]} in trace order."""
    out = {}
    for e in trace["traceEvents"]:
        if e.get("ph") != "C":
            continue
        for key, value in e.get("args", {}).items():
            out.setdefault((e["name"], key), []).append((float(e["ts"]), float(value)))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        trace = json.load(f)
    # Series that stay at zero (an unused ring, no MIX tasks) are left out.
    series = {k: pts for k, pts in series_of(trace).items() if any(v for _, v in pts)}
    if not series:
        sys.exit(f"{sys.argv[1]}: no counter events")
    t0 = min(p[0] for pts in series.values() for p in pts)
    t1 = max(p[0] for pts in series.values() for p in pts)
    span = max(t1 - t0, 1e-9)
    x = lambda t: LABEL_W + (t - t0) / span * PLOT_W
    height = TOP + BAND_H * len(series) + 30
    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LABEL_W + PLOT_W + 20}" height="{height}" '
        'font-family="Helvetica, Arial, sans-serif" font-size="12">',
        f'<rect width="100%" height="100%" fill="white"/>',
        f'<text x="8" y="18" font-weight="bold">{escape(sys.argv[1].split("/")[-1])}: counter tracks</text>',
    ]
    for i, ((name, key), pts) in enumerate(sorted(series.items())):
        y0 = TOP + i * BAND_H
        top = max(max(v for _, v in pts), 1.0)
        svg.append(f'<rect x="{LABEL_W}" y="{y0}" width="{PLOT_W}" height="{BAND_H - 6}" fill="#f4f4f4"/>')
        svg.append(f'<text x="8" y="{y0 + BAND_H / 2}">{escape(name)} · {escape(key)} (max {top:g})</text>')
        y = lambda v: y0 + (BAND_H - 8) - v / top * (BAND_H - 12)
        # A step line: hold each value until the next sample.
        (first_t, first_v), rest = pts[0], pts[1:]
        path = [f"M{x(first_t):.1f} {y(first_v):.1f}"]
        path += [f"H{x(t):.1f} V{y(v):.1f}" for t, v in rest]
        path.append(f"H{x(t1):.1f}")
        svg.append(f'<path d="{" ".join(path)}" fill="none" stroke="{COLOURS[i % len(COLOURS)]}" stroke-width="1.6"/>')
    ms = span / 1000
    svg.append(f'<text x="{LABEL_W}" y="{height - 10}">0 ms</text>')
    svg.append(f'<text x="{LABEL_W + PLOT_W - 60}" y="{height - 10}">{ms:.1f} ms</text>')
    svg.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
