"""Assemble the HTML report of one or more stored runs (from the results database only)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from foilbench.kinds import kind_of
from foilbench.report import sections
from foilbench.report.html import DETAILS_JS, SORT_JS, contents, page
from foilbench.store.db import ResultsStore
from foilbench.store.repeats import repeats_note, split_repeats


@dataclass
class RunData:
    """Everything the report needs about one run. ``compass`` (the run's COMPASS tables) and
    ``blind`` (its benchmark's blind audit) are what the runner stored; None when it stored
    none (not applicable, or a store written before schema 2)."""

    run: dict
    metrics: pd.DataFrame
    items: pd.DataFrame
    compass: dict[str, Any] | None = None
    blind: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        return f"{self.run['model_spec']} · {self.run['benchmark_name']}"


def load_runs(db_path: str | Path, run_ids: list[str],
              held: dict[str, pd.DataFrame] | None = None) -> list[RunData]:
    """The runs ``run_ids`` (ids or unique prefixes); none given: every stored run but
    repeats (:mod:`foilbench.store.repeats`). ``held``: per-item tables by full run id that
    the caller holds, equal to what the store would give
    (:func:`foilbench.store.held_items.held_item_results`), used instead of reading them."""
    from foilbench.store.repeats import stored_repeats

    with ResultsStore(db_path, read_only=True) as store:
        if not run_ids:  # every run, one per (model, benchmark, settings)
            run_ids, _ = stored_repeats(store.con)
        return [_load_run(store, r, held or {}) for r in run_ids]


def _load_run(store: ResultsStore, run_id: str, held: dict[str, pd.DataFrame]) -> RunData:
    run = store.get_run(run_id)
    blind = None
    if kind_of(run["benchmark_kind"]).has_caption_candidates and isinstance(run.get("benchmark_checksum"), str):
        blind = store.load_blind_reference(run["benchmark_checksum"],
                                           n_items=int(run["n_items"]))
    items = held.get(run["run_id"])
    if items is None:
        items = store.load_item_results(run_id)
    return RunData(run, store.load_metrics(run_id), items,
                   compass=store.load_compass(run_id), blind=blind)


def render_report(runs: list[RunData]) -> str:
    from foilbench.report.headline import headline_parts
    from foilbench.report.relations_view import relations_section
    from foilbench.report.robustness_view import robustness_section
    from foilbench.report.units_view import units_section

    kept, hidden = split_repeats([r.run for r in runs])
    runs = [r for r in runs if r.run["run_id"] in kept]  # never a run against its repeat
    computed = headline_parts(runs)  # paired bootstraps, shared by headline and differences
    top = sections.headline(runs, computed) + sections.differences(computed)
    below = "".join(p for p in (
        sections.every_metric(runs),
        sections.edit_type_bars(runs),
        sections.edit_tier_heatmap(runs),
        units_section(runs),
        sections.margins(runs),
        robustness_section(runs),
        sections.pixel_change(runs),
        sections.swap_confusion(runs),
        relations_section(runs),
        sections.compass(runs),
        sections.blind_audit(runs),
        sections.examples(runs),
        sections.provenance(runs),
    ) if p)
    models = sorted({r.run["model_spec"] for r in runs})
    benches = sorted({r.run["benchmark_name"] for r in runs})
    subtitle = f"{len(runs)} run(s): {len(models)} model(s) x {len(benches)} benchmark(s)"
    if hidden:
        subtitle += f"; {repeats_note(hidden, ' (the latest of each is shown)')}"
    return page("foilbench report", subtitle, top + contents(below) + below,
                script=SORT_JS + DETAILS_JS)


def write_report(db_path: str | Path, run_ids: list[str], out_path: str | Path,
                 held: dict[str, pd.DataFrame] | None = None) -> Path:
    """Write one self-contained HTML file for ``run_ids`` (all runs when empty); ``held``:
    see :func:`load_runs`."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(load_runs(db_path, list(run_ids), held)), encoding="utf-8")
    return out
