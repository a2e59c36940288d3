"""Horizontal grouped bars with intervals and chance, readable at any count of groups.

One block per group (an edit type, an Auto-Comp cell), one bar per series (a model) on a
0-100 % axis, each bar with its 95% interval whisker, its own chance tick and its value
printed beside it. Groups stack downwards, so 16 edit types make a taller figure, never a
wider one: the canvas stays under :data:`MAX_WIDTH` px and is drawn at its own size in the
report (all text at least 11 px) at 1400 px and at 800 px wide windows alike.
"""

from __future__ import annotations

import math

import pandas as pd

from foilbench.report.figures import CHANCE, GRID, Figure
from foilbench.report.svg import PALETTE, Canvas, Scale, clip_label, text_width

MAX_WIDTH = 680.0  # fits an 800 px window (report margins included) without scaling
FONT = 11  # every text in the figure, so none is drawn below 11 px
BAR_H, BLOCK_GAP = 13.0, 10.0


def _legend(c: Canvas, left: float, y: float, series: list[str], width: float) -> float:
    """Series swatches, the chance tick and the whisker, wrapped to ``width``; returns the
    y below them."""
    items = [(str(s), "swatch", PALETTE[k % len(PALETTE)]) for k, s in enumerate(series)]
    items += [("chance", "tick", CHANCE), ("95% interval", "whisker", "#222")]
    x = left
    for name, kind, colour in items:
        name = clip_label(name, width - 40)
        w = 18 + text_width(name, FONT) + 14
        if x + w > left + width and x > left:
            x, y = left, y + 16
        if kind == "swatch":
            c.rect(x, y - 9, 11, 11, colour)
        elif kind == "tick":
            c.line(x + 5, y - 10, x + 5, y + 3, stroke=colour, width=2)
        else:
            c.line(x, y - 3, x + 12, y - 3, stroke=colour, width=1.2)
        c.text(x + 16, y, name, size=FONT)
        x += w
    return y + 12


def hbars_ci(table: pd.DataFrame, title: str, xlabel: str = "percent correct") -> Figure:
    """Columns: group, series, value, ci_low, ci_high, chance (proportions in [0, 1])."""
    groups = list(dict.fromkeys(table["group"]))
    series = list(dict.fromkeys(table["series"]))
    by = {(r["group"], r["series"]): r for _, r in table.iterrows()}
    left = min(max(text_width(g, FONT) for g in groups) + 14, 190.0) if groups else 60.0
    value_w = text_width("100.0 [100.0, 100.0]", FONT) + 8
    plot_w = MAX_WIDTH - left - value_w - 8
    c = Canvas(MAX_WIDTH, 0, title)
    c.title(title)
    y = _legend(c, left, 38, series, plot_w + value_w)
    x = Scale(0.0, 1.0, left, left + plot_w)
    top = y
    for name in groups:
        block = BAR_H * len(series)
        c.text(left - 8, y + block / 2 + 4, clip_label(name, left - 12), size=FONT,
               anchor="end")
        for s, ser in enumerate(series):
            r = by.get((name, ser))
            by_ = y + BAR_H * s
            if r is None or not math.isfinite(float(r["value"])):
                continue
            v, lo, hi, ch = (float(r[k]) for k in ("value", "ci_low", "ci_high", "chance"))
            c.rect(x(0), by_ + 1, x(v) - x(0), BAR_H - 2, PALETTE[s % len(PALETTE)],
                   title=f"{name} / {ser}: {100 * v:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}], "
                         f"chance {100 * ch:.1f}%")
            mid = by_ + BAR_H / 2
            if math.isfinite(lo) and math.isfinite(hi):
                c.line(x(lo), mid, x(hi), mid, stroke="#222", width=1.2)
                for end in (lo, hi):
                    c.line(x(end), mid - 3, x(end), mid + 3, stroke="#222", width=1.2)
            if math.isfinite(ch):
                c.line(x(ch), by_, x(ch), by_ + BAR_H, stroke=CHANCE, width=2)
            c.text(left + plot_w + 8, mid + 4, f"{100 * v:.1f} [{100 * lo:.1f}, "
                   f"{100 * hi:.1f}]", size=FONT, fill="#444")
        y += block + BLOCK_GAP
    bottom = y - BLOCK_GAP + 4
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        c.line(x(t), top - 4, x(t), bottom, stroke=GRID)
        c.text(x(t), bottom + 15, f"{100 * t:g}", size=FONT, anchor="middle", fill="#555")
    c.line(x(0), top - 4, x(0), bottom, stroke="#888")
    c.text(x(0.5), bottom + 32, xlabel, size=FONT, anchor="middle", fill="#444")
    c.height = bottom + 42
    return Figure(c.markup())
