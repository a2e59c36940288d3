"""``serve``'s model drill-down: per benchmark the overall metrics, the primary one marked
and first (``r1_valid`` before ``r1`` on Auto-Comp), each breakdown of the primary metric and
every other metric by breakdown collapsed, so the page opens short."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pandas as pd

from foilbench.report.html import esc, fmt_pct, page, table
from foilbench.store.db import ResultsStore
from foilbench.store.repeats import stored_repeats


def _unit(unit) -> str:
    """A row's unit of n (:mod:`foilbench.stats.units`); rows stored before units: none."""
    return unit if isinstance(unit, str) and unit else "not recorded"


BREAKDOWNS = ("edit_type", "tier", "n_objects", "condition")


def model_page(db_path: Path, fp: str) -> str:
    """One section per benchmark: the overall metrics with the benchmark's primary metric
    marked (*) and first, then each breakdown of the primary metric, collapsed, and every
    metric by every breakdown, collapsed."""
    from foilbench.report.build import RunData
    from foilbench.report.headline import primary_metric

    with ResultsStore(db_path, read_only=True) as store:
        runs = store.con.execute(
            "SELECT run_id, model_spec, benchmark_name, created FROM runs "
            "WHERE model_fingerprint = ? ORDER BY created", [fp]).df()
        kept, _ = stored_repeats(store.con)
        runs = runs[runs["run_id"].isin(kept)]
        parts = []
        for r in runs.itertuples():
            info, m = store.get_run(r.run_id), store.load_metrics(r.run_id)
            primary = primary_metric(RunData(info, m, pd.DataFrame()))
            parts.append(_model_section(r, m, primary))
    title = runs["model_spec"].iloc[0] if len(runs) else fp
    return page(f"model {title}", f"fingerprint {fp}", "".join(parts) or "<p>no runs</p>")


def _model_section(r, m: pd.DataFrame, primary: str) -> str:
    m = m.assign(_later=m["metric"] != primary).sort_values(
        ["_later", "metric", "group_by", "group_value"], kind="stable")

    def rows(frame: pd.DataFrame, by: bool) -> list[list]:
        return [[*([x.group_value or ""] if by else []),
                 x.metric + (" *" if x.metric == primary else ""), fmt_pct(x.value),
                 f"[{fmt_pct(x.ci_low)}, {fmt_pct(x.ci_high)}]", fmt_pct(x.chance), int(x.n),
                 _unit(x.unit)] for x in frame.itertuples()]

    heads = ["metric", "%", "95% CI", "chance %", "n", "unit of n"]
    num = [False, True, False, True, True, False]
    out = [f"<section><h2>{esc(r.benchmark_name)}</h2>"
           f'<p><a href="/items?run={quote(r.run_id)}">browse items</a> · * primary metric '
           "(listed first)</p>", table(heads, rows(m[m["group_by"] == ""], False),
                                       numeric=num)]
    for by in BREAKDOWNS:
        part = m[(m["group_by"] == by) & (m["metric"] == primary)]
        if not part.empty:
            out.append(f"<details><summary>{esc(primary)} by {esc(by)} ({len(part)})"
                       "</summary>" + table(["value", *heads], rows(part, True),
                                            numeric=[False, *num]) + "</details>")
    rest = m[m["group_by"].isin(BREAKDOWNS) & (m["metric"] != primary)]
    if not rest.empty:
        out.append(f"<details><summary>other metrics by breakdown ({len(rest)} rows)</summary>"
                   + table(["by", "value", *heads],
                           [[x.group_by, *row] for x, row in zip(
                               rest.itertuples(), rows(rest, True), strict=True)],
                           numeric=[False, False, *num]) + "</details>")
    return "".join(out) + "</section>"
