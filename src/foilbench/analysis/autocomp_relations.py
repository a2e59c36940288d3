"""Auto-Comp Table 15: per-relation accuracy on the N = 2 Position Swap benchmark.

Auto-Comp App. A.4: "To investigate whether model performance on the Position benchmark varies
by the specific spatial relation, we disaggregate the N=2 Swap results. We focus on N=2
compositions as this allows for a clean, isolated analysis of each relation". At N = 2 a
concept has one relation (``values[0]``); an item's outcome (R@1, strict >) is counted under
it. foilbench adds each cell's n and Wilson 95% interval, and takes any task, N and set
(``task``, ``n``, ``negative_set``) so Relative Size can be broken down the same way.
"""

from __future__ import annotations

import pandas as pd

from foilbench.analysis.frame import require


def per_relation_accuracy(df: pd.DataFrame, metric: str = "r1", task: str = "position",
                          n: int = 2, negative_set: str = "swap") -> pd.DataFrame:
    """Rows (model, relation): n, accuracy, Wilson interval of ``metric``."""
    from foilbench.stats import wilson_ci

    require(df, ["model", "task", "n_objects", "negative_set", "values", metric],
            "per-relation accuracy")
    sub = df[(df["task"] == task) & (df["n_objects"] == n) & (df["negative_set"] == negative_set)
             & df[metric].notna()]
    if sub.empty:
        raise ValueError(f"no {negative_set} item of task {task!r} at N = {n} in these runs")
    if n != 2:
        raise ValueError("per-relation accuracy is defined at N = 2 (one relation per concept)")
    sub = sub.assign(relation=[list(v)[0] for v in sub["values"]])
    rows = []
    for (model, rel), g in sub.groupby(["model", "relation"], sort=True):
        k, m = int(g[metric].sum()), len(g)
        lo, hi = wilson_ci(k, m)
        rows.append({"model": model, "relation": rel, "n": m, "accuracy": k / m,
                     "ci_low": lo, "ci_high": hi})
    return pd.DataFrame(rows)
