"""The report's figures as inline SVG (:mod:`foilbench.report.svg`). Inputs are plain
DataFrames; each function returns a :class:`Figure` that
:func:`foilbench.report.html.figure_img` places in the page.

These were matplotlib figures; each is a handful of marks, so SVG draws them as well without
matplotlib's import (most of a second per run) and stays sharp at any zoom.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from foilbench.report.svg import (
    PALETTE,
    Canvas,
    Scale,
    clip_label,
    diverging,
    ecdf_points,
    label_width,
    nice_ticks,
    tick_label,
)

CHANCE = "#b3261e"
POINT = "#1f3a5f"
INTERVAL = "#7d93b2"
GRID = "#e3e3e3"


@dataclass
class Figure:
    """An SVG figure: ``svg`` is the markup."""

    svg: str

    def to_svg(self) -> str:
        return self.svg


def _x_axis(c: Canvas, x: Scale, top: float, bottom: float, ticks, label: str,
            fmt=tick_label) -> None:
    for t in ticks:
        c.line(x(t), top, x(t), bottom, stroke=GRID)
        c.text(x(t), bottom + 14, fmt(t), size=10, anchor="middle", fill="#555")
    c.line(x.a, bottom, x.b, bottom, stroke="#888")
    c.text((x.a + x.b) / 2, bottom + 30, label, size=11, anchor="middle", fill="#444")


def _legend(c: Canvas, x: float, y: float, items: list[tuple[str, str]], width: float) -> None:
    for k, (name, colour) in enumerate(items):
        c.rect(x, y + 14 * k - 8, 10, 10, colour)
        c.text(x + 14, y + 14 * k + 1, clip_label(name, width - 14), size=10)


def forest_plot(rows: pd.DataFrame, title: str) -> Figure:
    """Point estimates with 95% intervals, one line per row, each with its own chance tick
    (columns: label, value, ci_low, ci_high, chance)."""
    rows = rows.reset_index(drop=True)
    left = label_width(rows["label"])
    plot_w, row_h, top = 380.0, 22.0, 30.0
    height = top + row_h * len(rows) + 44
    c = Canvas(left + plot_w + 20, height, title)
    c.title(title)
    x = Scale(0.0, 1.0, left, left + plot_w)
    bottom = top + row_h * len(rows)
    _x_axis(c, x, top, bottom, nice_ticks(0, 1, 4),
            "accuracy with 95% CI; red tick: that row's chance")
    for k, r in rows.iterrows():
        y = top + row_h * (k + 0.5)
        c.text(left - 8, y + 4, clip_label(r["label"], left - 12), size=11, anchor="end")
        lo, hi, v = (float(r[n]) for n in ("ci_low", "ci_high", "value"))
        if np.isfinite(lo) and np.isfinite(hi):
            c.line(x(lo), y, x(hi), y, stroke=INTERVAL, width=1.5)
            for end in (lo, hi):
                c.line(x(end), y - 4, x(end), y + 4, stroke=INTERVAL, width=1.5)
        if np.isfinite(float(r["chance"])):
            cx = x(float(r["chance"]))
            c.line(cx, y - 8, cx, y + 8, stroke=CHANCE, width=2)
        if np.isfinite(v):
            c.circle(x(v), y, 4, POINT, title=f"{r['label']}: {100 * v:.1f}% "
                                              f"[{100 * lo:.1f}, {100 * hi:.1f}]")
    return Figure(c.markup())


def heatmap(table: pd.DataFrame, title: str) -> Figure:
    """Accuracy heatmap of a (rows x columns) table of proportions (numbers: percent)."""
    values = table.to_numpy(dtype=float)
    left = label_width([str(r) for r in table.index])
    cell_w, cell_h, top = 64.0, 24.0, 46.0
    n_rows, n_cols = values.shape
    width = max(left + cell_w * n_cols + 70, len(title) * 7.2 + 20)
    c = Canvas(width, top + cell_h * n_rows + 16, title)
    c.title(title)
    for j, col in enumerate(table.columns):
        c.text(left + cell_w * (j + 0.5), top - 8, clip_label(col, cell_w), size=10,
               anchor="middle")
    for i, row in enumerate(table.index):
        y = top + cell_h * i
        c.text(left - 8, y + cell_h / 2 + 4, clip_label(row, left - 12), size=11, anchor="end")
        for j in range(n_cols):
            v = values[i, j]
            xx = left + cell_w * j
            c.rect(xx, y, cell_w - 1, cell_h - 1, diverging(v),
                   title=f"{row} / {table.columns[j]}: " + ("n/a" if v != v else f"{100 * v:.1f}%"))
            if v == v:
                c.text(xx + cell_w / 2, y + cell_h / 2 + 4, f"{100 * v:.0f}", size=10,
                       anchor="middle", fill="#111")
    bar_x = left + cell_w * n_cols + 16
    steps = 20
    bar_h = max(cell_h * n_rows, 60.0)
    for k in range(steps):
        c.rect(bar_x, top + bar_h * (1 - (k + 1) / steps), 12, bar_h / steps + 0.5,
               diverging((k + 0.5) / steps))
    for t in (0.0, 0.5, 1.0):
        c.text(bar_x + 16, top + bar_h * (1 - t) + 4, f"{100 * t:.0f}", size=9)
    c.height = max(c.height, top + bar_h + 16)
    return Figure(c.markup())


def ecdf_plot(series: dict[str, np.ndarray], title: str, xlabel: str,
              vline: float | None = 0.0) -> Figure:
    """Empirical CDFs of several samples on one axis."""
    curves = {name: ecdf_points(v) for name, v in series.items()}
    xs = [x for x, _ in curves.values() if len(x)]
    lo = min((float(x[0]) for x in xs), default=0.0)
    hi = max((float(x[-1]) for x in xs), default=1.0)
    if vline is not None:
        lo, hi = min(lo, vline), max(hi, vline)
    pad = 0.03 * (hi - lo or 1.0)
    lo, hi = lo - pad, hi + pad
    left, plot_w, plot_h, top = 48.0, 420.0, 220.0, 30.0
    legend_w = min(max(label_width(series) + 24, 120.0), 330.0)
    c = Canvas(left + plot_w + legend_w, top + plot_h + 44, title)
    c.title(title)
    x, y = Scale(lo, hi, left, left + plot_w), Scale(0.0, 1.0, top + plot_h, top)
    _x_axis(c, x, top, top + plot_h, nice_ticks(lo, hi), xlabel)
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        c.line(left, y(t), left + plot_w, y(t), stroke=GRID)
        c.text(left - 6, y(t) + 3, f"{100 * t:g}", size=10, anchor="end", fill="#555")
    c.text(12, top + plot_h / 2, "percent of items", size=11, anchor="middle", rotate=-90)
    if vline is not None:
        c.line(x(vline), top, x(vline), top + plot_h, stroke="#888", dash="2 3")
    legend = []
    for k, (name, (vx, fy)) in enumerate(curves.items()):
        colour = PALETTE[k % len(PALETTE)]
        legend.append((name, colour))
        points, prev = [], 0.0
        for a, b in zip(vx, fy, strict=True):
            points += [(x(a), y(prev)), (x(a), y(b))]
            prev = b
        if points:
            points.append((x(hi), y(prev)))
        c.path(points, colour)
    _legend(c, left + plot_w + 14, top + 8, legend, legend_w - 20)
    return Figure(c.markup())


def grouped_bars(table: pd.DataFrame, title: str, chance: float | None = None) -> Figure:
    """Bars of a (groups x series) table of proportions, e.g. N x {swap, confusion}."""
    values = table.to_numpy(dtype=float)
    n_groups, n_series = values.shape
    left, group_w, plot_h, top = 48.0, 70.0, 220.0, 30.0
    plot_w = max(group_w * n_groups, 160.0)
    c = Canvas(left + plot_w + 170, top + plot_h + 50, title)
    c.title(title)
    y = Scale(0.0, 1.0, top + plot_h, top)
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        c.line(left, y(t), left + plot_w, y(t), stroke=GRID)
        c.text(left - 6, y(t) + 3, f"{t:g}", size=10, anchor="end", fill="#555")
    c.text(12, top + plot_h / 2, "R@1", size=11, anchor="middle", rotate=-90)
    bar_w = 0.8 * group_w / max(n_series, 1)
    for g, name in enumerate(table.index):
        x0 = left + group_w * g + 0.1 * group_w
        for s in range(n_series):
            v = values[g, s]
            if v == v:
                c.rect(x0 + bar_w * s, y(v), bar_w - 1, y(0) - y(v), PALETTE[s % len(PALETTE)],
                       title=f"{name} / {table.columns[s]}: {100 * v:.1f}%")
        c.text(left + group_w * (g + 0.5), top + plot_h + 14, clip_label(name, group_w),
               size=10, anchor="middle")
    c.line(left, top + plot_h, left + plot_w, top + plot_h, stroke="#888")
    if chance is not None:
        c.line(left, y(chance), left + plot_w, y(chance), stroke=CHANCE, dash="4 3")
    _legend(c, left + plot_w + 14, top + 8,
            [(str(col), PALETTE[s % len(PALETTE)]) for s, col in enumerate(table.columns)], 150)
    return Figure(c.markup())
