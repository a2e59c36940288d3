"""Write a human study's results: ``<stem>_report.json`` and ``<stem>_decisions.parquet``
(every answer in order, with its unit's fields), into a new or empty folder."""

from __future__ import annotations

import json
from pathlib import Path

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
