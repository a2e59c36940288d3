"""Assemble the HTML report of one or more stored runs (from the results database only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from foilbench.report import sections
from foilbench.report.html import page
from foilbench.store.db import ResultsStore


@dataclass
class RunData:
    """Everything the report needs about one run."""

    run: dict
    metrics: pd.DataFrame
    items: pd.DataFrame

    @property
    def label(self) -> str:
        return f"{self.run['model_spec']} · {self.run['benchmark_name']}"


def load_runs(db_path: str | Path, run_ids: list[str]) -> list[RunData]:
    with ResultsStore(db_path, read_only=True) as store:
        if not run_ids:
            run_ids = store.list_runs()["run_id"].tolist()
        return [RunData(store.get_run(r), store.load_metrics(r), store.load_item_results(r))
                for r in run_ids]


def render_report(runs: list[RunData]) -> str:
    parts = [
        sections.headline(runs),
        sections.forest(runs),
        sections.edit_tier_heatmap(runs),
        sections.margins(runs),
        sections.pixel_change(runs),
        sections.swap_confusion(runs),
        sections.compass(runs),
        sections.blind_audit(runs),
        sections.examples(runs),
        sections.provenance(runs),
    ]
    models = sorted({r.run["model_spec"] for r in runs})
    benches = sorted({r.run["benchmark_name"] for r in runs})
    subtitle = f"{len(runs)} run(s): {len(models)} model(s) x {len(benches)} benchmark(s)"
    return page("foilbench report", subtitle, "".join(p for p in parts if p))


def write_report(db_path: str | Path, run_ids: list[str], out_path: str | Path) -> Path:
    """Write one self-contained HTML file for ``run_ids`` (all runs when empty)."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(load_runs(db_path, list(run_ids))), encoding="utf-8")
    return out
