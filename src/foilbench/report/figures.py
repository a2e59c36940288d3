"""Matplotlib figures of the report. Inputs are plain DataFrames; outputs are figures.

The Agg backend is selected inside each function (never at import), so importing this
module has no side effects.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def forest_plot(rows: pd.DataFrame, title: str):
    """Point estimates with 95% intervals, one line per row, each with its own chance tick
    (columns: label, value, ci_low, ci_high, chance)."""
    plt = _plt()
    rows = rows.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.2))
    y = np.arange(len(rows))[::-1]
    ax.errorbar(rows["value"], y, xerr=[rows["value"] - rows["ci_low"],
                                        rows["ci_high"] - rows["value"]],
                fmt="o", color="#1f3a5f", ecolor="#7d93b2", capsize=3)
    ax.scatter(rows["chance"], y, marker="|", s=220, color="#b3261e", zorder=3,
               label="chance")
    ax.set_yticks(y, rows["label"])
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy with 95% CI; red tick: that row's chance")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


def heatmap(table: pd.DataFrame, title: str):
    """Accuracy heatmap of a (rows x columns) table of proportions."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(1.1 * table.shape[1] + 2.5, 0.38 * table.shape[0] + 1.3))
    im = ax.imshow(table.to_numpy(dtype=float), vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    ax.set_xticks(range(table.shape[1]), [str(c) for c in table.columns])
    ax.set_yticks(range(table.shape[0]), [str(r) for r in table.index])
    for (r, c), v in np.ndenumerate(table.to_numpy(dtype=float)):
        if v == v:
            ax.text(c, r, f"{100 * v:.0f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.04)
    ax.set_title(title, fontsize=10)
    return fig


def ecdf_plot(series: dict[str, np.ndarray], title: str, xlabel: str, vline: float | None = 0.0):
    """Empirical CDFs of several samples on one axis."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for label, values in series.items():
        v = np.sort(np.asarray(values, dtype=float))
        v = v[np.isfinite(v)]
        if len(v):
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=label)
    if vline is not None:
        ax.axvline(vline, color="#888", lw=1, ls=":")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of items")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig


def grouped_bars(table: pd.DataFrame, title: str, chance: float | None = None):
    """Bars of a (groups x series) table of proportions, e.g. N x {swap, confusion}."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    n_series = table.shape[1]
    width = 0.8 / max(n_series, 1)
    x = np.arange(table.shape[0])
    for k, col in enumerate(table.columns):
        ax.bar(x + k * width - 0.4 + width / 2, table[col].to_numpy(dtype=float), width,
               label=str(col))
    if chance is not None:
        ax.axhline(chance, color="#b3261e", ls="--", lw=1)
    ax.set_xticks(x, [str(i) for i in table.index], rotation=20, fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("R@1")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    return fig
