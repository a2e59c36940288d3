"""A human study's results: ``<stem>_report.json`` and ``<stem>_decisions.parquet`` (every
answer in order, with its unit's fields) written into a new or empty folder, and the report
in one call. Both Auto-Comp studies (:mod:`foilbench.review.concepts`,
:mod:`foilbench.review.solvability`) keep their answers in a
:class:`~foilbench.review.study_log.StudyLog` and their units by key, so they share this."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from foilbench.review.units import ReviewError


def write_study(out_dir: str | Path, stem: str, report: dict, rows: list[dict],
                columns: list[str]) -> Path:
    import pandas as pd

    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReviewError(f"--export {out} exists and is not an empty folder; choose a new one")
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=columns).to_parquet(out / f"{stem}_decisions.parquet",
                                                   index=False)
    (out / f"{stem}_report.json").write_text(json.dumps(report, indent=2, sort_keys=True)
                                             + "\n")
    return out


def export_study(study: Any, out_dir: str | Path, stem: str,
                 row: Callable[[int, Any, str, str], dict], columns: list[str]) -> dict:
    """Write ``study.report()`` and one ``row(seq, unit, answer, at)`` per answer in the
    study's log, in order (answers naming no unit of the sample are left out); the report."""
    rep = study.report()
    rows = [row(seq, study.unit_by_key[key], answer, at)
            for seq, key, answer, at in study.log.history() if key in study.unit_by_key]
    write_study(out_dir, stem, rep, rows, columns)
    return rep


def study_report(open_study: Callable[..., Any], bench_dir: str | Path,
                 review_dir: str | Path | None, n: int, seed: int) -> dict:
    """The report of the study ``open_study(benchmark, folder, n=, seed=)`` opens on the
    benchmark at ``bench_dir`` (answers in ``review_dir``, default ``bench_dir/review``),
    closed after."""
    from foilbench.data.format import load_benchmark

    study = open_study(load_benchmark(bench_dir), review_dir or Path(bench_dir) / "review",
                       n=n, seed=seed)
    try:
        return study.report()
    finally:
        study.close()
