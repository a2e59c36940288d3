"""COMPASS skill load: how each skill's accuracy falls with the count of each primitive type.

For skill t in {O, A, R} (items whose K negatives all target primitives of type t) and each
structural level, ordinary least squares over items (COMPASS, skill-load analysis, Table 3):

    R@1_t = b_O n_O + b_A n_A + b_R n_R + a + e

b_t on its own count is the *self-load*, the others *cross-load*. Standard errors and
two-sided p-values are statsmodels' classical OLS ones. A count that is constant within a
(skill, level) cell (n_A = 0 throughout L2-OR, say) is not estimable and is reported as NaN
rather than silently absorbed into the intercept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.errors import FoilbenchError

REGRESSORS: dict[str, str] = {"n_o": "b_O", "n_a": "b_A", "n_r": "b_R"}
TERMS: tuple[str, ...] = ("b_O", "b_A", "b_R", "a")
SKILLS: tuple[str, ...] = ("O", "A", "R")


def ols_skill_load(y: np.ndarray, counts: pd.DataFrame) -> pd.DataFrame:
    """Fit y = sum_t b_t n_t + a; one row per term with estimate, se, p (NaN if not
    estimable). ``counts`` holds the columns of REGRESSORS."""
    import statsmodels.api as sm

    y = np.asarray(y, dtype=np.float64)
    usable = [c for c in REGRESSORS if counts[c].nunique() > 1]
    rows = {t: (np.nan, np.nan, np.nan) for t in TERMS}
    r2 = np.nan
    n_params = len(usable) + 1
    if len(y) > n_params:
        X = np.column_stack([counts[c].to_numpy(np.float64) for c in usable] + [np.ones(len(y))])
        fit = sm.OLS(y, X).fit()
        names = [REGRESSORS[c] for c in usable] + ["a"]
        for k, name in enumerate(names):
            rows[name] = (float(fit.params[k]), float(fit.bse[k]), float(fit.pvalues[k]))
        r2 = float(fit.rsquared)
    return pd.DataFrame([{"term": t, "estimate": e, "se": s, "p": p, "n": len(y), "r2": r2}
                         for t, (e, s, p) in rows.items()])


def skill_load(items: pd.DataFrame) -> pd.DataFrame:
    """Long table: [run_id,] level, skill, term, estimate, se, p, n, r2 from ``role == 'skill'``
    items (columns level, skill, n_o, n_a, n_r, r1)."""
    need = {"role", "level", "skill", "r1", *REGRESSORS}
    missing = sorted(need - set(items.columns))
    if missing:
        raise FoilbenchError(f"COMPASS skill load needs item columns {', '.join(missing)}")
    skill_items = items[items["role"] == "skill"]
    keys = [k for k in ("run_id",) if k in items.columns] + ["level", "skill"]
    frames = []
    for group, df in skill_items.groupby(keys, sort=True):
        fit = ols_skill_load(df["r1"].to_numpy(), df[list(REGRESSORS)])
        for k, v in zip(keys, group if isinstance(group, tuple) else (group,), strict=True):
            fit[k] = v
        frames.append(fit)
    if not frames:
        return pd.DataFrame(columns=[*keys, "term", "estimate", "se", "p", "n", "r2"])
    out = pd.concat(frames, ignore_index=True)
    return out[[*keys, "term", "estimate", "se", "p", "n", "r2"]]


def stars(p: float) -> str:
    if not np.isfinite(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def table3(long: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """COMPASS Table 3 layout: one row per ([run,] level, skill); columns b_O, b_A, b_R, a as
    "estimate (se)" with significance stars (* p<.05, ** p<.01, *** p<.001), then n and R^2."""
    keys = [k for k in ("run_id", "level", "skill") if k in long.columns]
    rows = []
    for group, df in long.groupby(keys, sort=True):
        row = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        for rec in df.itertuples(index=False):
            row[rec.term] = ("-" if not np.isfinite(rec.estimate) else
                             f"{rec.estimate:+.{digits}f}{stars(rec.p)} ({rec.se:.{digits}f})")
        row["n"] = int(df["n"].iloc[0])
        r2 = df["r2"].iloc[0]
        row["R2"] = "-" if not np.isfinite(r2) else f"{r2:.{digits}f}"
        rows.append(row)
    return pd.DataFrame(rows, columns=[*keys, *TERMS, "n", "R2"])
