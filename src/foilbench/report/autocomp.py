"""The report's Auto-Comp section: Swap vs Confusion bars, and r1 (the paper's) beside r1_valid
(primary) per cell with the items that hold a true negative and the mean chance."""

from __future__ import annotations

import pandas as pd

from foilbench.analysis.autocomp_valid import BY, NEEDED, validity_table
from foilbench.report import figures
from foilbench.report.html import figure_img, fmt_pct, section, table

OPERATIONS = ("swap", "confusion")
NOTE = ("r1 is the paper's accuracy (the positive above every candidate, Auto-Comp §3); "
        "r1_valid, the primary metric (*), leaves out the negatives that are true of the image "
        "(paraphrases, equivalent relational chains) and scores against the false ones only. "
        "Chance is the mean per-item 1/(K+1) of each cell (K after equal texts are removed: a "
        "repeated relation shrinks the Confusion set), beside the paper's nominal closed form. "
        "Ties count as failures (strict >).")


def _bars(runs) -> list[str]:
    rows = []
    for r in runs:
        it = r.items
        if not {"operation", "r1", "n_objects"} <= set(it.columns):
            continue
        it = it[it["operation"].isin(OPERATIONS)]
        metrics = [m for m in ("r1", "r1_valid") if m in it.columns]
        for (op, n), g in it.groupby(["operation", "n_objects"]):
            for m in metrics:
                rows.append({"model": r.run["model_spec"], "series": f"{op} {m}", "N": int(n),
                             "value": g[m].mean()})
    imgs = []
    if rows:
        for model, g in pd.DataFrame(rows).groupby("model"):
            tab = g.pivot_table(index="N", columns="series", values="value")
            imgs.append(figure_img(figures.grouped_bars(tab, f"Swap vs Confusion — {model}"),
                                   "swap vs confusion"))
    return imgs


def _validity(runs) -> str:
    frames = []
    for r in runs:
        if all(c in r.items.columns for c in NEEDED):
            frames.append(r.items.assign(model=r.run["model_spec"]))
    if not frames:
        return ""
    tab = validity_table(pd.concat(frames, ignore_index=True), by=BY)
    cols = [c for c in ("model", *BY) if c in tab.columns]
    heads = [*cols, "items", "with a true negative", "r1 %", "r1_valid % *", "chance r1 %",
             "chance r1_valid %", "paper chance %"]
    rows = [[*(str(row[c]) for c in cols), int(row["n_items"]), int(row["with_true_negative"]),
             fmt_pct(row["r1"]), fmt_pct(row["r1_valid"]), fmt_pct(row["chance_r1"]),
             fmt_pct(row["chance_r1_valid"]),
             "-" if pd.isna(row["paper_chance"]) else fmt_pct(row["paper_chance"])]
            for _, row in tab.iterrows()]
    affected = (tab.groupby("model")["with_true_negative"].sum().max(),
                tab.groupby("model")["n_items"].sum().max())
    head = (f"<p>{affected[0]} of {affected[1]} Auto-Comp items per model hold at least one "
            "negative that is true of the image.</p>")
    return head + table(heads, rows, numeric=[False] * len(cols) + [True] * 7,
                        table_id="autocomp-valid")


def autocomp_section(runs) -> str:
    """'' when no run is an Auto-Comp run."""
    body = "".join(_bars(runs)) + _validity(runs)
    if not body:
        return ""
    return section("Auto-Comp: Swap vs Confusion, r1 vs r1_valid", body, "autocomp", NOTE)
