"""The report's Auto-Comp Table 15: per-relation accuracy at N = 2 of the Swap set, one table
per task that has relations, relations as rows and models as columns
(:func:`foilbench.analysis.autocomp_relations.per_relation_accuracy`).

Auto-Comp App. A.4: "we disaggregate the N=2 Swap results. We focus on N=2 compositions as
this allows for a clean, isolated analysis of each relation". The paper's table is the
Position task; a task such as Relative Size is broken down the same way when the run holds it.
"""

from __future__ import annotations

import pandas as pd

from foilbench.report.html import esc, fmt_pct, section, table

NEEDED = {"task", "n_objects", "negative_set", "values"}
METRIC = "r1"


def _frame(group, labels) -> pd.DataFrame | None:
    frames = [r.items.assign(model=labels[r.run["run_id"]]) for r in group
              if NEEDED | {METRIC} <= set(r.items.columns)]
    return pd.concat(frames, ignore_index=True) if frames else None


def relation_words() -> set[str]:
    """Auto-Comp §4's spatial and size relations, in the world's words ("under" -> "below")."""
    from foilbench.negatives import PAPER_RELATIONS, PAPER_SIZE_RELATIONS, canonical_relation

    return {canonical_relation(w) for w in (*PAPER_RELATIONS, *PAPER_SIZE_RELATIONS)}


def relation_tasks(df: pd.DataFrame) -> list[str]:
    """Tasks whose N = 2 Swap concepts all hold a relation (Position, Relative Size); an
    attribute task's value (a colour) is no relation and gets no table."""
    words = relation_words()
    at2 = df[(df["n_objects"] == 2) & (df["negative_set"] == "swap")]
    out = []
    for task, g in at2.groupby(at2["task"].astype(str), sort=True):
        firsts = {canonical_relation_of(v) for v in g["values"]}
        if firsts and firsts <= words:
            out.append(task)
    return out


def canonical_relation_of(values) -> str:
    from foilbench.negatives import canonical_relation

    vals = list(values) if values is not None else []
    return canonical_relation(vals[0]) if vals else ""


def relation_rows(df: pd.DataFrame, task: str) -> tuple[list[str], list[list]]:
    """Headers and rows (relation, n, then "acc [lo, hi]" per model) of one task."""
    from foilbench.analysis.autocomp_relations import per_relation_accuracy

    tab = per_relation_accuracy(df, METRIC, task, 2, "swap")
    models = list(dict.fromkeys(df["model"]))
    rows = []
    for rel, g in tab.groupby("relation", sort=True):
        cells = {m: f"{fmt_pct(r['accuracy'])} [{fmt_pct(r['ci_low'])}, {fmt_pct(r['ci_high'])}]"
                 for m, r in zip(g["model"], g.to_dict(orient="records"), strict=True)}
        ns = sorted(set(g["n"].astype(int)))
        rows.append([rel, "/".join(map(str, ns)), *(cells.get(m, "–") for m in models)])
    return ["relation", "items", *models], rows


def relations_section(runs) -> str:
    """'' when no run holds N = 2 Swap items with relations."""
    from foilbench.report.headline import benchmark_frames

    parts = []
    for name, df in benchmark_frames(runs, _frame):
        for task in relation_tasks(df):
            heads, rows = relation_rows(df, task)
            parts.append(f"<h3>{esc(name)}: {esc(task)}, N = 2, "
                         "Swap</h3>" + table(heads, rows,
                                             numeric=[False] + [True] * (len(heads) - 1)))
    if not parts:
        return ""
    return section("Auto-Comp Table 15: accuracy per relation", "".join(parts), "relations",
                   "R@1 % (the paper's accuracy: the positive above every candidate, strict >) "
                   "of the N = 2 Swap items, counted under the concept's one relation "
                   "(Auto-Comp App. A.4), with Wilson 95% intervals; 'items' is n per model. "
                   "All items per (task, N, set) are pooled over the benchmark's conditions.")
