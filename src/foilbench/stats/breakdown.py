"""Metrics with intervals, overall and per metadata column value (pure functions).

Input: a long table with one row per (item, metric) holding ``outcome`` in [0, 1], ``tie``,
``chance`` and metadata columns (see :func:`foilbench.scoring.aggregate.long_outcomes`).
For each metric and group:

    value = k / n with k = sum of outcomes, n = number of items
    chance = mean of the items' chance levels (1/4, 1/4, 1/6 for pairs; 1/(K+1) for choices)
    ties  = number of items whose outcome was decided by an exact tie (scored as failure)

Interval methods (``ci_method``):
    ``"auto"``       per group, what its clusters can support (CompoSET App. C):
                     - at least :data:`MIN_BOOTSTRAP_CLUSTERS` (30) scenes and 0 < value < 1:
                       the scene-clustered percentile bootstrap (``bootstrap:scene_id``);
                     - 2 to 29 scenes: Wilson on the design-effect sample size with the
                       t(G-1) quantile (``cluster-wilson:scene_id (G scenes < 30)``,
                       :mod:`foilbench.stats.few_clusters`); few scenes make the bootstrap
                       too narrow;
                     - 30+ scenes with the value at 0 or 1: Wilson over items
                       (``wilson (estimate at 0%)``): every resample would equal the value;
                     - no cluster column: Wilson (``wilson``); one scene: Wilson, labelled
                       ``wilson (1 scene: items not independent)``.
    ``"bootstrap"``  percentile bootstrap, clustered when a cluster column exists, else over items
    ``"wilson"``     Wilson score interval;  ``"wald"``  Wald interval clamped to [0, 1]
The row's ``ci_method`` names the method and, in parentheses, why ``auto`` chose it.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
import pandas as pd

from foilbench.stats.bootstrap import DEFAULT_N_BOOT, DEFAULT_SEED, cluster_bootstrap_ci
from foilbench.stats.few_clusters import MIN_BOOTSTRAP_CLUSTERS, cluster_wilson_ci
from foilbench.stats.intervals import wald_ci, wilson_ci

CI_METHODS = ("auto", "bootstrap", "wilson", "wald")
CLUSTER_COLUMN = "scene_id"
MISSING = "NA"
COLUMNS = ["metric", "group_by", "group_value", "value", "k", "n", "ci_low", "ci_high",
           "ci_method", "chance", "ties"]


def z_for(level: float) -> float:
    """Two-sided normal quantile; exactly 1.96 at 95% as in the papers."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return 1.96 if level == 0.95 else NormalDist().inv_cdf(1 - (1 - level) / 2)


def summarise(outcomes: np.ndarray, *, chance: np.ndarray | None = None,
              ties: np.ndarray | None = None, clusters: np.ndarray | None = None,
              method: str = "auto", n_boot: int = DEFAULT_N_BOOT, seed: int = DEFAULT_SEED,
              level: float = 0.95, cluster_name: str = CLUSTER_COLUMN) -> dict:
    """value, k, n, ci_low, ci_high, ci_method, chance, ties of one group of items.

    >>> r = summarise(np.array([1, 1, 0, 1]), method="wald")
    >>> r["value"], r["k"], r["n"], r["ci_method"]
    (0.75, 3.0, 4, 'wald')
    """
    if method not in CI_METHODS:
        raise ValueError(f"unknown ci method {method!r}; use one of {', '.join(CI_METHODS)}")
    values = np.asarray(outcomes, dtype=np.float64)
    n = len(values)
    if n == 0:
        raise ValueError("cannot summarise an empty group")
    k = float(values.sum())
    z = z_for(level)
    n_clusters = len(pd.unique(np.asarray(clusters))) if clusters is not None else 0
    use, why = auto_method(n_clusters, k, n) if method == "auto" else (method, "")
    if method == "bootstrap" and clusters is not None and n_clusters < 2:
        use, why = "wilson", "1 scene: items not independent"
    if use == "bootstrap":
        lo, hi = cluster_bootstrap_ci(values, clusters, n_boot=n_boot, seed=seed, level=level)
        label = f"bootstrap:{cluster_name}" if clusters is not None else "bootstrap:item"
    elif use == "cluster-wilson":
        if clusters is None:
            raise ValueError("the cluster-Wilson interval needs cluster labels")
        lo, hi = cluster_wilson_ci(values, clusters, level=level)
        label = f"cluster-wilson:{cluster_name}"
    elif use == "wilson":
        (lo, hi), label = wilson_ci(k, n, z), "wilson"
    else:
        (lo, hi), label = wald_ci(k, n, z), "wald"
    if why:
        label += f" ({why})"
    return {
        "value": k / n, "k": k, "n": n, "ci_low": float(lo), "ci_high": float(hi),
        "ci_method": label,
        "chance": float(np.mean(chance)) if chance is not None else float("nan"),
        "ties": int(np.sum(ties)) if ties is not None else 0,
    }


def auto_method(n_clusters: int, k: float, n: int) -> tuple[str, str]:
    """(method, why) that ``ci_method="auto"`` uses for a group (see the module docstring).

    >>> auto_method(80, 30, 100)
    ('bootstrap', '')
    >>> auto_method(5, 30, 100)
    ('cluster-wilson', '5 scenes < 30')
    >>> auto_method(80, 100, 100)
    ('wilson', 'estimate at 100%')
    >>> auto_method(0, 3, 10), auto_method(1, 3, 10)
    (('wilson', ''), ('wilson', '1 scene: items not independent'))
    """
    if n_clusters == 0:
        return "wilson", ""
    if n_clusters == 1:
        return "wilson", "1 scene: items not independent"
    if n_clusters < MIN_BOOTSTRAP_CLUSTERS:
        return "cluster-wilson", f"{n_clusters} scenes < {MIN_BOOTSTRAP_CLUSTERS}"
    if k <= 0 or k >= n:
        return "wilson", f"estimate at {0 if k <= 0 else 100}%"
    return "bootstrap", ""


def default_breakdown_columns(table: pd.DataFrame, candidates: Sequence[str],
                              cluster_col: str = CLUSTER_COLUMN) -> list[str]:
    """Those of ``candidates`` (the caller's metadata columns: stats knows no data schema)
    present with at least two distinct values (a single-valued column repeats the overall row).
    The cluster column is excluded: a per-scene breakdown has one cluster per group.

    >>> t = pd.DataFrame({"tier": ["short", "long"], "scene_id": ["a", "b"], "n": [1, 1]})
    >>> default_breakdown_columns(t, ["scene_id", "tier", "n", "absent"])
    ['tier']
    """
    return [c for c in candidates
            if c in table.columns and c != cluster_col and _label_count(table[c]) > 1]


def group_labels(values: pd.Series) -> pd.Series:
    """``values.map(group_label)``, the same labels: for a column of strings or of NumPy
    numbers or booleans with no missing value, :func:`group_label` is asked once per distinct
    value (``pd.factorize``; values it counts as one, ``0.0`` and ``-0.0``, share a label as
    they do when each is labelled), not once per row of a run's long table. Any other column
    is labelled value by value."""
    if _labelled_by_value(values) and not values.isna().any():
        codes, uniques = pd.factorize(values)
        labels = np.array([group_label(v) for v in uniques], dtype=object)
        return pd.Series(labels[codes], index=values.index, dtype=object)
    return values.map(group_label)


def _label_count(values: pd.Series) -> int:
    """How many distinct :func:`group_label` s ``values`` holds. A column of strings or of
    NumPy numbers or booleans is labelled by its distinct values (a run's long table repeats
    each value thousands of times): there, values pandas counts as one (``0.0`` and
    ``-0.0``, the missing ones) share a label. Any other column (an object column may mix
    ``True`` and ``1``, equal but labelled apart; a categorical maps its categories only)
    has every value labelled."""
    if _labelled_by_value(values):
        return len({group_label(v) for v in values.unique()})
    return values.map(group_label).nunique()


def _labelled_by_value(values: pd.Series) -> bool:
    """Whether ``values`` (strings, or NumPy numbers or booleans) may be labelled once per
    distinct value: pandas' equal values then get equal labels (see :func:`_label_count`)."""
    dtype = values.dtype
    return isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype)
                                                 and dtype.kind in "biuf")


def group_label(value: object) -> str:
    """A stable string for a metadata value (integers stored as floats print as integers)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return MISSING
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def metric_table(table: pd.DataFrame, *, by: Sequence[str] | None = None,
                 candidates: Sequence[str] | None = None, method: str = "auto",
                 cluster_col: str | None = CLUSTER_COLUMN, n_boot: int = DEFAULT_N_BOOT,
                 seed: int = DEFAULT_SEED, level: float = 0.95,
                 overall: bool = True) -> pd.DataFrame:
    """Overall rows (``group_by == ""``) then one row per (column, value), for every metric.

    ``by`` names the breakdown columns (any column of ``table``); ``by=None`` takes those of
    ``candidates`` that vary (:func:`default_breakdown_columns`; callers pass the data schema's
    metadata columns), and one of the two must be given. ``overall=False`` leaves the overall
    rows out (a caller that has them in another unit): each row is summarised on its own,
    with its own seeded bootstrap, so the other rows are the same either way.
    """
    if by is None and candidates is None:
        raise ValueError("metric_table needs by= (breakdown columns) or candidates= (the "
                         "metadata columns to break down by when they vary)")
    missing = [c for c in (by or []) if c not in table.columns]
    if missing:
        raise ValueError(f"breakdown column(s) {', '.join(missing)} not in the results "
                         f"(have: {', '.join(map(str, table.columns))})")
    has_clusters = cluster_col is not None and cluster_col in table.columns \
        and table[cluster_col].notna().all()
    columns = default_breakdown_columns(table, candidates or []) if by is None else list(by)
    rows = []
    for metric, part in table.groupby("metric", sort=False):
        groups = [("", "", part)] if overall else []
        for col in columns:
            labels = group_labels(part[col])
            groups += [(col, val, part[labels == val]) for val in sorted(labels.unique())]
        for col, val, sub in groups:
            stats = summarise(sub["outcome"].to_numpy(), chance=sub["chance"].to_numpy(),
                              ties=sub["tie"].to_numpy(),
                              clusters=sub[cluster_col].astype(str).to_numpy()
                              if has_clusters else None,
                              method=method, n_boot=n_boot, seed=seed, level=level,
                              cluster_name=cluster_col or "")
            rows.append({"metric": metric, "group_by": col, "group_value": val, **stats})
    return pd.DataFrame(rows, columns=COLUMNS)
