"""The models x benchmarks matrix of CompoSET Table 8, and its CSV, Markdown and LaTeX forms.

Each cell is one stored run's overall value of the benchmark's primary metric (Group for 2x2
benchmarks, T2I or I2T R@1 for the others, as the benchmark's manifest says) with its 95%
interval. Pure functions over a long table with one row per (model, benchmark):

    model, benchmark, metric, value, ci_low, ci_high, n, partial, run_id

Values are fractions in [0, 1]; the text forms print percentages with one decimal
(``63.2 [60.1, 66.3]``), as the paper does.

Intervals. CompoSET Table 8: "Each cell reports point estimate (%) with 95% Wald confidence
interval [lo, hi] (§C)", with §C's Wald "p +- 1.96 sqrt(p(1 - p)/n), clamped to [0, 1]". The
text forms therefore print the Wald interval computed from the cell's value and n
(``interval="wald"``, :func:`wald_bounds`). The run's own interval (``ci_low``/``ci_high``:
the scene-clustered bootstrap where items have scenes, which §C reports as "27-71% wider than
the row-level Wald intervals of Table 8") stays in the long table and in the store beside it
(``interval="stored"`` prints it); the CSV carries both (``wald_low``, ``wald_high``). A partial benchmark (items dropped under
``--allow-partial``) is marked with a dagger in every form, never silently mixed in; a missing
cell (a failed run) prints as an em dash.

Unit of n. A cell may carry its stored row's ``unit`` (:mod:`foilbench.stats.units`); the text
forms then say, per benchmark, which unit and n the cells use: on a CompoSET-format benchmark
``foilbench sweep``'s default is per instance (§5: "n=1,776"), where Table 8's cells match Wald
at n = 3 x 1,776 (``--unit pooled``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from foilbench.stats.intervals import wald_ci

CELL_COLUMNS = ["model", "benchmark", "metric", "value", "ci_low", "ci_high", "n", "partial",
                "run_id"]
PARTIAL_MARK = "\u2020"
MISSING = "\u2014"
PARTIAL_NOTE = "partial benchmark: items were dropped (--allow-partial); see the run's record"


def check_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """Validate the long table: required columns, one row per (model, benchmark)."""
    missing = [c for c in CELL_COLUMNS if c not in cells.columns]
    if missing:
        raise ValueError(f"matrix cells need column(s) {', '.join(missing)} "
                         f"(have: {', '.join(map(str, cells.columns))})")
    dup = cells.duplicated(["model", "benchmark"])
    if dup.any():
        first = cells.loc[dup, ["model", "benchmark"]].iloc[0].tolist()
        raise ValueError(f"matrix cells: more than one row for model {first[0]!r} on "
                         f"benchmark {first[1]!r}")
    return cells[CELL_COLUMNS + (["unit"] if "unit" in cells.columns else [])]


def unit_note(cells: pd.DataFrame) -> str:
    """'Unit of n: B1: per instance, tier mean (n = instances), n = 1280; B2: ...' for the
    cells that carry a unit ('' when none does)."""
    from foilbench.stats.units import LABELS

    if "unit" not in cells.columns:
        return ""
    parts = []
    for bench, part in cells.groupby("benchmark", sort=False):
        known = part.dropna(subset=["unit"])
        if known.empty:
            continue
        units = ", ".join(LABELS.get(u, u) for u in dict.fromkeys(known["unit"]))
        ns = ", ".join(str(int(n)) for n in dict.fromkeys(known["n"]))
        parts.append(f"{bench}: {units}, n = {ns}")
    return ("Unit of n: " + "; ".join(parts) + ".") if parts else ""


INTERVALS = {"wald": "95% Wald interval (CompoSET Table 8)",
             "stored": "95% interval as stored with the run (its ci_method, as run and show "
                       "print it: the scene-clustered bootstrap from 30 scenes on)"}


NOT_TABLE8_UNITS = ("instance", "per_tier")


def interval_label(cells: pd.DataFrame, interval: str) -> str:
    """The label of the printed interval. A Wald interval is Table 8's only at Table 8's n:
    its CompoSET cells match Wald at the pooled n (13.9 [13.0, 14.9] at n = 5,328), while a
    per-instance cell (the sweep's default unit on CompoSET, §5's "n=1,776") gives
    [12.3, 15.5]; such cells are labelled by their unit, not as Table 8's."""
    if interval != "wald" or "unit" not in cells.columns:
        return INTERVALS[interval]
    units = set(cells["unit"].dropna().astype(str))
    if not units & set(NOT_TABLE8_UNITS):
        return INTERVALS[interval]
    return ("95% Wald interval at each cell's n (per-instance cells: CompoSET §5's "
            "headline interval, n = instances; Table 8's cells are Wald at the pooled n: "
            "--unit pooled)")


def wald_bounds(value: float, n: float) -> tuple[float, float]:
    """The Table-8 interval of a cell: Wald on k = value x n successes of n (clamped).

    >>> wald_bounds(0.5, 100)
    (0.402, 0.598)
    """
    if value is None or n is None or not (np.isfinite(value) and np.isfinite(n)) or n <= 0:
        return (float("nan"), float("nan"))
    return wald_ci(value * n, n)


def _bounds(row, interval: str) -> tuple[float, float]:
    if interval == "wald":
        return wald_bounds(row.value, row.n)
    if interval == "stored":
        return (row.ci_low, row.ci_high)
    raise ValueError(f"unknown interval {interval!r}; use one of {', '.join(INTERVALS)}")


def _order(values: pd.Series, order: Sequence[str] | None) -> list[str]:
    seen = list(dict.fromkeys(values.astype(str)))
    if order is None:
        return seen
    return list(order) + [v for v in seen if v not in order]


def format_cell(value: float, ci_low: float, ci_high: float, *, digits: int = 1) -> str:
    """``0.632, 0.601, 0.663`` -> ``"63.2 [60.1, 66.3]"``; NaN value -> em dash.

    >>> format_cell(0.632, 0.601, 0.663)
    '63.2 [60.1, 66.3]'
    """
    if value is None or not np.isfinite(value):
        return MISSING
    pct = [100.0 * v for v in (value, ci_low, ci_high)]
    return f"{pct[0]:.{digits}f} [{pct[1]:.{digits}f}, {pct[2]:.{digits}f}]"


def column_labels(cells: pd.DataFrame, benchmarks: list[str]) -> dict[str, str]:
    """Benchmark -> ``"name (metric)"``, with the dagger when any run on it was partial."""
    labels = {}
    for bench in benchmarks:
        part = cells[cells["benchmark"] == bench]
        metrics = list(dict.fromkeys(part["metric"].dropna().astype(str)))
        mark = PARTIAL_MARK if part["partial"].fillna(False).astype(bool).any() else ""
        labels[bench] = f"{bench}{mark} ({'/'.join(metrics)})" if metrics else f"{bench}{mark}"
    return labels


def wide_text(cells: pd.DataFrame, models: Sequence[str] | None = None,
              benchmarks: Sequence[str] | None = None, *, digits: int = 1,
              interval: str = "wald") -> pd.DataFrame:
    """Rows models, columns benchmark labels, each cell ``"value [lo, hi]"`` (percent) with
    the Wald interval (``interval="stored"``: the run's stored interval)."""
    cells = check_cells(cells)
    rows = _order(cells["model"], models)
    cols = _order(cells["benchmark"], benchmarks)
    text = {(r.model, r.benchmark): format_cell(r.value, *_bounds(r, interval), digits=digits)
            for r in cells.itertuples(index=False)}
    labels = column_labels(cells, cols)
    table = pd.DataFrame([[text.get((m, b), MISSING) for b in cols] for m in rows],
                         index=pd.Index(rows, name="model"), columns=[labels[b] for b in cols])
    return table


def has_partial(cells: pd.DataFrame) -> bool:
    return bool(cells["partial"].fillna(False).astype(bool).any())


def to_csv(cells: pd.DataFrame) -> str:
    """Long CSV, one row per cell, full precision (fractions), for re-analysis: the stored
    interval (``ci_low``, ``ci_high``) and the Table-8 Wald interval (``wald_low``,
    ``wald_high``) side by side."""
    cells = check_cells(cells).copy()
    wald = [wald_bounds(v, n) for v, n in zip(cells["value"], cells["n"], strict=True)]
    cells["wald_low"] = [lo for lo, _ in wald]
    cells["wald_high"] = [hi for _, hi in wald]
    return cells.to_csv(index=False, lineterminator="\n")


def to_markdown(cells: pd.DataFrame, models: Sequence[str] | None = None,
                benchmarks: Sequence[str] | None = None, *, digits: int = 1,
                interval: str = "wald") -> str:
    """A GitHub-flavoured Markdown table; footnotes name the interval and the partial mark."""
    table = wide_text(cells, models, benchmarks, digits=digits, interval=interval)
    header = ["model", *table.columns]
    lines = ["| " + " | ".join(_md(h) for h in header) + " |",
             "| " + " | ".join(["---"] + ["---:"] * len(table.columns)) + " |"]
    for model, row in table.iterrows():
        lines.append("| " + " | ".join([_md(str(model)), *map(_md, row.tolist())]) + " |")
    lines.append("")
    lines.append(f"Cells: primary metric, % with {interval_label(cells, interval)}.")
    if unit_note(cells):
        lines.append(unit_note(cells))
    if has_partial(cells):
        lines.append(f"{PARTIAL_MARK} {PARTIAL_NOTE}.")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", PARTIAL_MARK: r"$^\dagger$", MISSING: "---"}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters (and map the dagger and em dash)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(cells: pd.DataFrame, models: Sequence[str] | None = None,
             benchmarks: Sequence[str] | None = None, *, digits: int = 1,
             caption: str | None = None, interval: str = "wald") -> str:
    """A ``table`` environment (booktabs) with the interval (Wald by default, as Table 8) in
    small type beside each value."""
    cells = check_cells(cells)
    if caption is None:
        which = ("Wald interval" if interval == "wald" else "interval as stored")
        if interval == "wald" and interval_label(cells, interval) != INTERVALS["wald"]:
            which += " at each cell's n, per instance where so marked; not Table 8's pooled n"
        caption = f"Primary metric per benchmark (\\%, 95\\% {which})."
    rows = _order(cells["model"], models)
    cols = _order(cells["benchmark"], benchmarks)
    labels = column_labels(cells, cols)
    by_key = {(r.model, r.benchmark): r for r in cells.itertuples(index=False)}
    out = [r"\begin{table}[t]", r"\centering", r"\small",
           r"\begin{tabular}{l" + "c" * len(cols) + "}", r"\toprule",
           " & ".join(["Model", *(latex_escape(labels[b]) for b in cols)]) + r" \\",
           r"\midrule"]
    for model in rows:
        parts = [latex_escape(model)]
        for bench in cols:
            r = by_key.get((model, bench))
            if r is None or r.value is None or not np.isfinite(r.value):
                parts.append("---")
                continue
            lo, hi = _bounds(r, interval)
            parts.append(f"{100 * r.value:.{digits}f} {{\\scriptsize[{100 * lo:.{digits}f}, "
                         f"{100 * hi:.{digits}f}]}}")
        out.append(" & ".join(parts) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    note = f" {latex_escape(PARTIAL_MARK)} {latex_escape(PARTIAL_NOTE)}." if has_partial(cells) \
        else ""
    units = f" {latex_escape(unit_note(cells))}" if unit_note(cells) else ""
    out += [f"\\caption{{{caption}{units}{note}}}", r"\end{table}"]
    return "\n".join(out) + "\n"


def cell_from_metrics(metrics: pd.DataFrame, metric: str) -> dict:
    """The overall row (``group_by == ""``) of ``metric`` from a stored run's metric table."""
    rows = metrics[(metrics["metric"] == metric) & (metrics["group_by"].fillna("") == "")]
    if rows.empty:
        have = sorted(metrics["metric"].unique())
        raise ValueError(f"no overall {metric!r} row in the run's metrics (have: "
                         f"{', '.join(have)})")
    row = rows.iloc[0]
    unit = row.get("unit")
    return {"metric": metric, "value": float(row["value"]), "ci_low": float(row["ci_low"]),
            "ci_high": float(row["ci_high"]), "n": int(row["n"]),
            "unit": unit if isinstance(unit, str) else None}
