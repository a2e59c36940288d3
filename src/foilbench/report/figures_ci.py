"""Figures with intervals and chance: the headline dot plot, per-edit-type bars, and the
model-vs-model difference plot (inline SVG via :mod:`foilbench.report.svg`).

Every figure sizes its canvas to its longest title and labels, so no title is cut; values are
proportions drawn on a 0-100 % axis, and each row or bar carries its own chance mark, because
benchmarks differ in chance (a 2x2 Group is 1/6, a 1-of-2 choice 1/2) and must never be read
against each other's scale.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from foilbench.report.figures import CHANCE, GRID, INTERVAL, POINT, Figure, _x_axis
from foilbench.report.svg import PALETTE, Canvas, Scale, clip_label, label_width, nice_ticks

BELOW = "#b3261e"
ABOVE = "#127a3a"
AT = "#6a7385"


def _titled(width: float, height: float, title: str) -> Canvas:
    """A canvas at least as wide as its title, with the title drawn centred."""
    c = Canvas(width, height, title)
    c.title(title)
    return c


def verdict_colour(lo: float, hi: float, chance: float) -> str:
    """Green when the whole interval is above chance, red when below, grey when it spans it."""
    if not (math.isfinite(lo) and math.isfinite(hi) and math.isfinite(chance)):
        return AT
    return ABOVE if lo > chance else BELOW if hi < chance else AT


def headline_plot(rows: pd.DataFrame, title: str) -> Figure:
    """One panel per benchmark, one line per model: the primary metric's point, its 95%
    interval and the benchmark's chance as a dashed red line (columns: benchmark, metric,
    model, value, ci_low, ci_high, chance)."""
    rows = rows.reset_index(drop=True)
    left = max(label_width(rows["model"], maximum=320), 90.0)
    plot_w, row_h, head_h, gap = 520.0, 20.0, 22.0, 12.0
    n_bench = rows["benchmark"].nunique()
    height = 30 + n_bench * (head_h + gap) + row_h * len(rows) + 46
    c = _titled(left + plot_w + 150, height, title)
    x = Scale(0.0, 1.0, left, left + plot_w)
    y = 30.0
    for bench, g in rows.groupby("benchmark", sort=False):
        chance = float(g["chance"].iloc[0])
        head = f"{bench} · {g['metric'].iloc[0]} (chance {100 * chance:.1f}%)"
        c.text(left, y + 14, head, size=11, bold=True)
        y += head_h
        top = y
        for t in nice_ticks(0, 1, 4):
            c.line(x(t), top, x(t), top + row_h * len(g), stroke=GRID)
        for _, r in g.iterrows():
            cy = y + row_h / 2
            lo, hi, v = float(r["ci_low"]), float(r["ci_high"]), float(r["value"])
            colour = verdict_colour(lo, hi, chance)
            c.text(left - 8, cy + 4, clip_label(r["model"], left - 12), size=11, anchor="end")
            if math.isfinite(lo) and math.isfinite(hi):
                c.line(x(lo), cy, x(hi), cy, stroke=INTERVAL, width=2)
            if math.isfinite(v):
                c.circle(x(v), cy, 4.5, colour, title=f"{r['model']} on {bench}: "
                         f"{100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], chance "
                         f"{100 * chance:.1f}%")
                c.text(left + plot_w + 10, cy + 4, f"{100 * v:.1f} [{100 * lo:.1f}, "
                       f"{100 * hi:.1f}]", size=10, fill=colour)
            y += row_h
        if math.isfinite(chance):
            c.line(x(chance), top - 3, x(chance), y + 3, stroke=CHANCE, width=1.5, dash="4 3")
        y += gap
    _x_axis(c, x, y, y, nice_ticks(0, 1, 4), "percent correct, 95% interval; dashed red: "
            "chance; green: interval above chance, red: below, grey: spans it",
            fmt=lambda t: f"{100 * t:g}")
    c.height = y + 40
    return Figure(c.markup())


def bars_ci(table: pd.DataFrame, title: str, ylabel: str = "percent correct") -> Figure:
    """Grouped bars with 95% interval whiskers and a chance tick per bar (columns: group,
    series, value, ci_low, ci_high, chance); groups along x, one colour per series."""
    groups = list(dict.fromkeys(table["group"]))
    series = list(dict.fromkeys(table["series"]))
    n_s = max(len(series), 1)
    group_w = max(26.0 * n_s + 16, 56.0)
    first = min(label_width(groups[:1], maximum=200), 190.0)
    left = max(52.0, 0.77 * first - group_w / 2 + 6)  # the first slanted label fits
    plot_h, top = 200.0, 34.0
    label_h = max(label_width(groups, maximum=200) * 0.72, 30.0)  # labels drawn at -40 degrees
    plot_w = group_w * len(groups)
    legend_w = max(label_width(series, maximum=340) + 30, 140.0)
    c = _titled(left + plot_w + legend_w + 10, top + plot_h + label_h + 30, title)
    y = Scale(0.0, 1.0, top + plot_h, top)
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        c.line(left, y(t), left + plot_w, y(t), stroke=GRID)
        c.text(left - 6, y(t) + 3, f"{100 * t:g}", size=10, anchor="end", fill="#555")
    c.text(14, top + plot_h / 2, ylabel, size=11, anchor="middle", rotate=-90)
    bar_w = (group_w - 12) / n_s
    by = {(r["group"], r["series"]): r for _, r in table.iterrows()}
    for g, name in enumerate(groups):
        x0 = left + group_w * g + 6
        for s, ser in enumerate(series):
            r = by.get((name, ser))
            if r is None or not math.isfinite(float(r["value"])):
                continue
            v, lo, hi, ch = (float(r[k]) for k in ("value", "ci_low", "ci_high", "chance"))
            bx = x0 + bar_w * s
            c.rect(bx, y(v), bar_w - 2, y(0) - y(v), PALETTE[s % len(PALETTE)],
                   title=f"{name} / {ser}: {100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], "
                         f"chance {100 * ch:.1f}%")
            mid = bx + (bar_w - 2) / 2
            if math.isfinite(lo) and math.isfinite(hi):
                c.line(mid, y(lo), mid, y(hi), stroke="#222", width=1.2)
                for end in (lo, hi):
                    c.line(mid - 3, y(end), mid + 3, y(end), stroke="#222", width=1.2)
            if math.isfinite(ch):
                c.line(bx - 1, y(ch), bx + bar_w - 1, y(ch), stroke=CHANCE, width=2)
        lx, ly = left + group_w * (g + 0.5), top + plot_h + 12
        c.text(lx, ly, clip_label(name, 190), size=10, anchor="end", rotate=-40)
    c.line(left, top + plot_h, left + plot_w, top + plot_h, stroke="#888")
    items = [(str(s), PALETTE[k % len(PALETTE)]) for k, s in enumerate(series)]
    items.append(("chance (per bar)", CHANCE))
    for k, (name, colour) in enumerate(items):
        lx, ly = left + plot_w + 16, top + 8 + 15 * k
        c.rect(lx, ly - 8, 10, 10, colour)
        c.text(lx + 14, ly + 1, clip_label(name, legend_w - 24), size=10)
    return Figure(c.markup())


def delta_plot(rows: pd.DataFrame, title: str) -> Figure:
    """Paired differences A - B in percentage points with their 95% paired intervals around a
    zero line (columns: label, delta, ci_low, ci_high, p_value)."""
    rows = rows.reset_index(drop=True)
    left = label_width(rows["label"], maximum=420)
    plot_w, row_h, top = 420.0, 22.0, 30.0
    ext = np.nanmax(np.abs(rows[["ci_low", "ci_high", "delta"]].to_numpy(dtype=float)))
    ext = max(float(ext) if np.isfinite(ext) else 0.0, 0.02) * 1.1
    bottom = top + row_h * len(rows)
    c = _titled(left + plot_w + 190, bottom + 46, title)
    x = Scale(-ext, ext, left, left + plot_w)
    _x_axis(c, x, top, bottom, nice_ticks(-ext, ext, 6),
            "difference in percentage points (A - B), paired 95% interval",
            fmt=lambda t: f"{100 * t:+g}" if t else "0")
    c.line(x(0), top - 4, x(0), bottom, stroke="#444", width=1.2)
    for k, r in rows.iterrows():
        cy = top + row_h * (k + 0.5)
        d, lo, hi = float(r["delta"]), float(r["ci_low"]), float(r["ci_high"])
        colour = verdict_colour(lo, hi, 0.0)
        c.text(left - 8, cy + 4, clip_label(r["label"], left - 12), size=11, anchor="end")
        c.line(x(lo), cy, x(hi), cy, stroke=INTERVAL, width=2)
        c.circle(x(d), cy, 4.5, colour if colour != AT else POINT,
                 title=f"{r['label']}: {100 * d:+.1f} pp [{100 * lo:+.1f}, {100 * hi:+.1f}]")
        c.text(left + plot_w + 10, cy + 4, f"{100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
               f" p={_p(r['p_value'])}", size=10, fill=colour)
    return Figure(c.markup())


def _p(p: float) -> str:
    p = float(p)
    return "<0.001" if p < 0.001 else f"{p:.3f}" if p < 0.1 else f"{p:.2f}"
