"""COMPASS skill load: how each skill's accuracy falls with the count of each primitive type.

COMPASS §6.2 (Eq. 4): "R@1_t = beta_O n_O(c) + beta_A n_A(c) + beta_R n_R(c) + alpha", fitted
by ordinary least squares over the skill items of skill t in {O, A, R} (items whose K = 4
negatives all target primitives of type t), one fit per structural level. b_t on its own count
is the *self-load*, the others *cross-load*.

Table 3 caption (COMPASS): "Values represent change in R@1 (percentage points) per unit increase
in primitive count (Eq. 4) ... * and ** denote statistical significance at p < 0.005 and
p < 0.001, respectively." So :func:`table3` prints coefficients x 100 (percentage points, R@1
is a 0/1 outcome) with exactly those two marks (:func:`stars`).

Standard errors: the paper does not say which it used. Both are computed and kept, each under
its own name in the long table (``se_classical``/``p_classical`` and ``se_hc3``/``p_hc3``):

* ``classical``: the default OLS errors (statsmodels' default), which assume one error variance for all
  items (what an unstated OLS most likely used);
* ``hc3``: heteroskedasticity-robust (MacKinnon-White HC3). R@1 is 0/1, so Eq. 4 is a linear
  probability model whose error variance p(1 - p) changes with the counts by construction;
  the classical errors are then not valid. foilbench's default.

Both p-values are two-sided t tests with the residual degrees of freedom. ``se``/``p`` repeat
the chosen type (``se_type`` says which); every table names its type.

A count that is constant within a (skill, level) cell (n_A = 0 throughout L2-OR, say) is not
estimable and is reported as NaN rather than silently absorbed into the intercept. Skill items
with a number of negatives other than K = 4 (benchmarks built before K was enforced) are left
out and counted (``attrs["dropped_k"]``), as COMPASS §6.1 asks for "K = 4 hard negatives per
caption".

A fit that cannot say anything says why instead of printing numbers (``note``, a column of
the long table and of Table 3): too few rows, or R@1 without variance (every skill item right,
or every one wrong), are not fitted; a fitted row names the counts it could not estimate and
an intercept outside 0-100% (R@1 extrapolated to zero counts that never occur).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.errors import FoilbenchError

REGRESSORS: dict[str, str] = {"n_o": "b_O", "n_a": "b_A", "n_r": "b_R"}
TERMS: tuple[str, ...] = ("b_O", "b_A", "b_R", "a")
SKILLS: tuple[str, ...] = ("O", "A", "R")
SE_TYPES: dict[str, str] = {
    "classical": "classical OLS standard errors (homoskedastic)",
    "hc3": "heteroskedasticity-robust HC3 standard errors",
}
DEFAULT_SE = "hc3"
K_SKILL = 4
STAR_CUTS = ((0.001, "**"), (0.005, "*"))  # COMPASS Table 3
STARS_NOTE = "* p < 0.005, ** p < 0.001 (COMPASS Table 3)"


def _check_se(se_type: str) -> None:
    if se_type not in SE_TYPES:
        raise FoilbenchError(f"unknown standard-error type {se_type!r}; use one of "
                             f"{', '.join(SE_TYPES)}")


def _ols(y: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int]:
    """OLS by least squares: (params, classical SE, HC3 SE, R^2, residual df).

    classical: sqrt(diag(s^2 (X'X)^-1)), s^2 = RSS / (n - p);
    HC3 (MacKinnon & White 1985): sqrt(diag((X'X)^-1 X' diag(e_i^2 / (1 - h_ii)^2) X (X'X)^-1)),
    h_ii the leverages; R^2 = 1 - RSS / TSS (centred: the design holds an intercept). The same
    numbers as statsmodels' ``OLS(y, X).fit()`` and ``fit(cov_type="HC3")`` (tested against it).
    """
    n, p = X.shape
    params, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ params
    df = n - p
    inv = np.linalg.pinv(X.T @ X)
    rss = float(resid @ resid)
    se_classical = np.sqrt(np.diag(inv) * rss / df)
    leverage = np.einsum("ij,jk,ik->i", X, inv, X)
    with np.errstate(divide="ignore", invalid="ignore"):
        weights = resid ** 2 / (1.0 - leverage) ** 2
    meat = X.T @ (X * weights[:, None])
    se_hc3 = np.sqrt(np.diag(inv @ meat @ inv))
    centred = y - y.mean()
    tss = float(centred @ centred)
    r2 = 1.0 - rss / tss if tss > 0 else np.nan
    return params, se_classical, se_hc3, r2, df


def _two_sided_p(estimate: np.ndarray, se: np.ndarray, df: int) -> np.ndarray:
    """Two-sided t-test p-values with ``df`` residual degrees of freedom."""
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * stats.t.sf(np.abs(estimate / se), df)


def ols_skill_load(y: np.ndarray, counts: pd.DataFrame, se_type: str = DEFAULT_SE
                   ) -> pd.DataFrame:
    """Fit y = sum_t b_t n_t + a; one row per term with estimate, both standard-error types
    (``se_classical``, ``p_classical``, ``se_hc3``, ``p_hc3``), the chosen one as ``se``/``p``,
    and n, r2 (NaN where not estimable), ``note`` (why not fitted, or what the fit cannot
    say; '' when nothing). ``counts`` holds the columns of REGRESSORS."""
    _check_se(se_type)
    y = np.asarray(y, dtype=np.float64)
    usable = [c for c in REGRESSORS if counts[c].nunique() > 1]
    blank = (np.nan,) * 5
    rows = {t: blank for t in TERMS}
    r2 = np.nan
    why = unfit_reason(y, len(usable) + 1)
    if why is None:
        X = np.column_stack([counts[c].to_numpy(np.float64) for c in usable] + [np.ones(len(y))])
        params, se_c, se_h, r2, df = _ols(y, X)
        p_c, p_h = _two_sided_p(params, se_c, df), _two_sided_p(params, se_h, df)
        names = [REGRESSORS[c] for c in usable] + ["a"]
        for k, name in enumerate(names):
            rows[name] = (float(params[k]), float(se_c[k]), float(p_c[k]), float(se_h[k]),
                          float(p_h[k]))
    note = why or fit_note(counts, usable, rows["a"][0])
    out = pd.DataFrame([{"term": t, "estimate": e, "se_classical": sc, "p_classical": pc,
                         "se_hc3": sh, "p_hc3": ph, "n": len(y), "r2": r2, "note": note}
                        for t, (e, sc, pc, sh, ph) in rows.items()])
    out["se"] = out[f"se_{se_type}"]
    out["p"] = out[f"p_{se_type}"]
    out["se_type"] = se_type
    return out


LONG_COLUMNS = ["term", "estimate", "se", "p", "se_type", "se_classical", "p_classical",
                "se_hc3", "p_hc3", "n", "r2", "note"]


def unfit_reason(y: np.ndarray, n_terms: int) -> str | None:
    """Why Eq. 4 is not fitted on these outcomes, or None: fewer rows than terms + 1 (no
    residual degree of freedom), or R@1 the same on every item (nothing to explain: OLS would
    print zero loads and R^2 undefined)."""
    if len(y) <= n_terms:
        return (f"not fitted: too few rows ({len(y)} item(s) for {n_terms} term(s); a fit "
                "needs more rows than terms)")
    if np.all(y == y[0]):
        return (f"not fitted: no variance in R@1 (every one of the {len(y)} item(s) "
                f"{'right' if y[0] >= 1 else 'wrong' if y[0] <= 0 else f'at {y[0]:.2f}'}), so "
                "no count can explain it")
    return None


def fit_note(counts: pd.DataFrame, usable: list[str], intercept: float) -> str:
    """What a fitted row must say: the counts left out because they do not vary (their load is
    not estimable), and an intercept outside 0-100% (R@1 at zero counts extrapolated past
    the counts observed)."""
    parts = []
    fixed = [c for c in REGRESSORS if c not in usable]
    if fixed:
        parts.append("no variance in " + ", ".join(
            f"{c} (always {counts[c].iloc[0]})" for c in fixed) + ": not estimable (-)")
    if np.isfinite(intercept) and not 0.0 <= intercept <= 1.0:
        lows = ", ".join(f"{c} >= {int(counts[c].min())}" for c in usable)
        parts.append(f"intercept {100 * intercept:.1f} pts lies outside 0-100: R@1 at zero "
                     f"counts, extrapolated beyond the observed counts ({lows})")
    return "; ".join(parts)


def _negatives_per_item(items: pd.DataFrame) -> pd.Series | None:
    if "captions" not in items.columns:
        return None
    return items["captions"].map(lambda c: len(c) - 1 if c is not None else -1)


def skill_load(items: pd.DataFrame, se_type: str = DEFAULT_SE) -> pd.DataFrame:
    """Long table: [run_id,] level, skill, term, estimate, se, p, se_type, both SE types, n,
    r2 from ``role == 'skill'`` items (columns level, skill, n_o, n_a, n_r, r1). Skill items
    whose ``captions`` hold other than K = 4 negatives are left out; their number is in
    ``out.attrs["dropped_k"]``."""
    _check_se(se_type)
    need = {"role", "level", "skill", "r1", *REGRESSORS}
    missing = sorted(need - set(items.columns))
    if missing:
        raise FoilbenchError(f"COMPASS skill load needs item columns {', '.join(missing)}")
    skill_items = items[items["role"] == "skill"]
    dropped = 0
    k = _negatives_per_item(skill_items)
    if k is not None:
        dropped = int((k != K_SKILL).sum())
        skill_items = skill_items[k == K_SKILL]
    keys = [k for k in ("run_id",) if k in items.columns] + ["level", "skill"]
    frames = []
    for group, df in skill_items.groupby(keys, sort=True):
        fit = ols_skill_load(df["r1"].to_numpy(), df[list(REGRESSORS)], se_type)
        for key, v in zip(keys, group if isinstance(group, tuple) else (group,), strict=True):
            fit[key] = v
        frames.append(fit)
    if frames:
        out = pd.concat(frames, ignore_index=True)[[*keys, *LONG_COLUMNS]]
    else:
        out = pd.DataFrame(columns=[*keys, *LONG_COLUMNS])
    out.attrs["dropped_k"] = dropped
    return out


def stars(p: float) -> str:
    """COMPASS Table 3's marks: "**" for p < 0.001, "*" for p < 0.005, else "" (strict <).

    >>> [stars(p) for p in (0.0009, 0.001, 0.0049, 0.005)]
    ['**', '*', '*', '']
    """
    if not np.isfinite(p):
        return ""
    return next((mark for cut, mark in STAR_CUTS if p < cut), "")


def table3(long: pd.DataFrame, digits: int = 2, se_type: str | None = None) -> pd.DataFrame:
    """COMPASS Table 3 layout: one row per ([run,] level, skill); columns b_O, b_A, b_R, a as
    "estimate** (se)" in percentage points (x 100, ``digits`` decimals as the paper's two)
    with the paper's marks (:data:`STARS_NOTE`), then n, R^2 and the standard-error type.
    ``se_type`` picks ``classical`` or ``hc3`` from the long table (default: its ``se``)."""
    keys = [k for k in ("run_id", "level", "skill") if k in long.columns]
    if se_type is not None:
        _check_se(se_type)
    se_col = f"se_{se_type}" if se_type else "se"
    p_col = f"p_{se_type}" if se_type else "p"
    rows = []
    for group, df in long.groupby(keys, sort=True):
        row = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        for rec in df.to_dict(orient="records"):
            est, se = 100 * rec["estimate"], 100 * rec[se_col]
            row[rec["term"]] = ("-" if not np.isfinite(est) else
                                f"{est:+.{digits}f}{stars(rec[p_col])} ({se:.{digits}f})")
        row["n"] = int(df["n"].iloc[0])
        r2 = df["r2"].iloc[0]
        row["R2"] = "-" if not np.isfinite(r2) else f"{r2:.3f}"
        row["se_type"] = se_type or (str(df["se_type"].iloc[0]) if "se_type" in df else "")
        note = df["note"].iloc[0] if "note" in df else ""
        row["note"] = note if isinstance(note, str) else ""
        rows.append(row)
    return pd.DataFrame(rows, columns=[*keys, *TERMS, "n", "R2", "se_type", "note"])


def table3_note(se_type: str = DEFAULT_SE) -> str:
    """The line printed under Table 3: units, marks and the standard-error type."""
    _check_se(se_type)
    return (f"Coefficients in percentage points of R@1 per unit count (COMPASS Eq. 4), "
            f"(standard error); {STARS_NOTE}; {SE_TYPES[se_type]} ({se_type}); the paper does "
            "not state its standard-error type.")
