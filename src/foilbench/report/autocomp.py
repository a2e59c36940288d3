"""The report's Auto-Comp section: r1_valid per negative set (Swap vs Confusion) and N as
percent bars with 95% intervals and chance, and r1 (the paper's) beside r1_valid (primary) per
cell with intervals, the items that hold a true negative and the mean chance. Cells too small
for an interval worth reading are pooled (:data:`POOL_RULE`)."""

from __future__ import annotations

import pandas as pd

from foilbench.analysis.autocomp_valid import BY, COMPACT_BY, NEEDED, validity_table
from foilbench.report.html import esc, figure_img, fmt_pct, section, table

OPERATIONS = ("swap", "confusion")
NOTE = ("r1 is the paper's accuracy (the positive above every candidate, Auto-Comp §3); "
        "r1_valid, the primary metric (*), leaves out the negatives that are true of the image "
        "(paraphrases, equivalent relational chains) and scores against the false ones only. "
        "Chance is the mean per-item 1/(K+1) of each cell (K after equal texts are removed: a "
        "repeated relation shrinks the Confusion set), beside the paper's nominal closed form. "
        "Ties count as failures (strict >).")


MIN_CELL = 30  # items; finer Auto-Comp cells are pooled (negative set x N) below this
POOL_RULE = (f"Cells: negative set x task x N x condition when every such cell holds at least "
             f"{MIN_CELL} items, else pooled to negative set x N (a cell of 16 items gives an "
             "interval about 50 points wide). Intervals: 95%, the run's own method over the "
             "cell's items (scene-clustered bootstrap where items carry scene_id, few-scene "
             "Wilson below 30 scenes).")


def _frames(runs) -> list[tuple[object, pd.DataFrame]]:
    """(run, its Auto-Comp items with the model's label) for runs that hold r1_valid."""
    from foilbench.report.headline import model_labels

    labels = model_labels(runs)
    return [(r, r.items.assign(model=labels[r.run["run_id"]])) for r in runs
            if all(c in r.items.columns for c in NEEDED)]


def cell_interval(items: pd.DataFrame, metric: str, n_boot: int,
                  seed: int) -> tuple[float, float, float, str]:
    """(value, ci_low, ci_high, method) of ``metric`` over ``items`` (one cell), with the
    run's interval method (:func:`foilbench.stats.breakdown.metric_table`, ``auto``)."""
    from foilbench.stats.breakdown import metric_table

    long = pd.DataFrame({"metric": metric, "outcome": items[metric].astype(float),
                         "tie": items[f"tie_{metric}"].astype(bool),
                         "chance": items[f"chance_{metric}"].astype(float)})
    if "scene_id" in items.columns:
        long["scene_id"] = items["scene_id"].to_numpy()
    row = metric_table(long, by=[], n_boot=n_boot, seed=seed).iloc[0]
    return float(row["value"]), float(row["ci_low"]), float(row["ci_high"]), str(
        row["ci_method"])


def cell_columns(frames: list[pd.DataFrame]) -> list[str]:
    """The finest cells (:data:`BY`) when each holds >= :data:`MIN_CELL` items, else
    :data:`COMPACT_BY`, pooled."""
    both = pd.concat(frames, ignore_index=True)
    fine = [c for c in BY if c in both.columns]
    if both.groupby(["model", *fine], dropna=False).size().min() >= MIN_CELL:
        return fine
    return [c for c in COMPACT_BY if c in both.columns]


def _cells(runs):
    """(cell columns, one dict per (model, cell) with the validity columns and both metrics'
    intervals)."""
    pairs = _frames(runs)
    if not pairs:
        return [], []
    cols = cell_columns([f for _, f in pairs])
    out = []
    for r, frame in pairs:
        boot, seed = int(r.run.get("n_boot") or 1000), int(r.run.get("seed") or 0)
        tab = validity_table(frame, by=cols).set_index(cols)
        for key, g in frame.groupby(cols, sort=True, dropna=False):
            row = tab.loc[key].to_dict()
            row.update(dict(zip(cols, key if isinstance(key, tuple) else (key,), strict=True)))
            for m in ("r1", "r1_valid"):
                row[m], row[f"{m}_low"], row[f"{m}_high"], row["method"] = cell_interval(
                    g, m, boot, seed)
            out.append(row)
    return cols, out


def _bars(cols, cells) -> str:
    """r1_valid (primary) per cell and model, percent with intervals and chance."""
    from foilbench.report.figures_bars import hbars_ci

    if not cells:
        return ""
    rows = [{"group": " · ".join(f"N={c[k]}" if k == "n_objects" else str(c[k])
                                 for k in cols),
             "series": c["model"], "value": c["r1_valid"], "ci_low": c["r1_valid_low"],
             "ci_high": c["r1_valid_high"], "chance": c["chance_r1_valid"]} for c in cells]
    title = "Auto-Comp: r1_valid per negative set and N, 95% intervals and chance"
    return figure_img(hbars_ci(pd.DataFrame(rows), title), "swap vs confusion")


def _validity(cols, cells) -> str:
    if not cells:
        return ""
    heads = ["model", *cols, "items", "with a true negative", "r1 % [95% CI]",
             "r1_valid % * [95% CI]", "chance r1 %", "chance r1_valid %", "paper chance %"]
    rows = [[c["model"], *(str(c[k]) for k in cols), int(c["n_items"]),
             int(c["with_true_negative"]), _ci(c, "r1"), _ci(c, "r1_valid"),
             fmt_pct(c["chance_r1"]), fmt_pct(c["chance_r1_valid"]),
             "-" if pd.isna(c["paper_chance"]) else fmt_pct(c["paper_chance"])]
            for c in sorted(cells, key=lambda c: tuple(str(c[k]) for k in cols))]
    frame = pd.DataFrame(cells)
    affected = (frame.groupby("model")["with_true_negative"].sum().max(),
                frame.groupby("model")["n_items"].sum().max())
    head = (f"<p>{affected[0]} of {affected[1]} Auto-Comp items per model hold at least one "
            "negative that is true of the image.</p>")
    methods = ", ".join(sorted(set(frame["method"])))
    return (head + table(heads, rows, numeric=[False] * (len(cols) + 1) + [True] * 7,
                         table_id="autocomp-valid")
            + f"<p class='note'>{esc(POOL_RULE)} Used here: {esc(methods)}.</p>")


def _ci(c: dict, m: str) -> str:
    return f"{fmt_pct(c[m])} [{fmt_pct(c[m + '_low'])}, {fmt_pct(c[m + '_high'])}]"


def autocomp_section(runs) -> str:
    """'' when no run is an Auto-Comp run."""
    cols, cells = _cells(runs)
    body = _bars(cols, cells) + _validity(cols, cells)
    if not body:
        return ""
    return section("Auto-Comp: Swap vs Confusion, r1 vs r1_valid", body, "autocomp", NOTE)
