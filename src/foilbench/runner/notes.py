"""What a run must say about itself: notes that change how its numbers read.

Each note is computed with the cell (:func:`foilbench.runner.cell.evaluate_cell`), printed by
the runner as a warning, and stored with the run (``eval_stats``), so ``summary.json``,
``show`` and the report carry it too:

- ``text``: captions the model's tokenizer truncated and tokens it could not represent
  (:func:`foilbench.models.text_limits.text_report`).
- ``interval_note``: why the intervals are not the scene-clustered bootstrap the user asked
  for (``--ci-method auto`` or ``bootstrap``) when some items have no ``scene_id``. The
  clustered bootstrap needs every item's cluster (:func:`foilbench.stats.breakdown.metric_table`
  clusters only when the column is complete), so one null switches the whole run to Wilson
  (auto) or to resampling items (bootstrap): both treat items of one scene as independent and
  give narrower intervals than the scenes justify.
- ``data_note``: what validates but makes numbers meaningless (a non-finite ``unit_chance``,
  items whose two captions or two images are identical: every such item is a tie), from
  :func:`foilbench.data.suspicious.suspicious`; ``inspect`` lists the same as problems.
- ``image_note``: images holding several frames (an animated GIF, an APNG, a multi-page TIFF),
  each scored on its first frame (:func:`image_note`).
- ``cluster_note``: the overall intervals rest on few scenes (fewer than
  :data:`~foilbench.stats.few_clusters.MIN_BOOTSTRAP_CLUSTERS`) or on one, so ``auto`` used the
  few-cluster Wilson interval (:mod:`foilbench.stats.few_clusters`) and the intervals are wide
  (printed); ``few_scene_rows``: how many rows, breakdowns included, did so (stored only).
- ``near_ties`` (counted by the engine, :mod:`foilbench.scoring.near_ties`): decisions within
  float32 rounding of a tie, which another correct implementation may score the other way;
  with ``near_ties_settled`` / ``near_ties_changed`` when the engine rescored them in float64
  (:mod:`foilbench.scoring.settle`). Near ties the engine settled without changing an
  outcome are a note (``show``, the report, summary.json), not a console warning
  (:func:`warning_lines`); a warning stays when an outcome changed or none were settled.
"""

from __future__ import annotations

from typing import Any

from foilbench.data.format import Benchmark
from foilbench.data.suspicious import suspicious
from foilbench.display import safe_text
from foilbench.models.text_limits import describe, text_report
from foilbench.stats.breakdown import CLUSTER_COLUMN
from foilbench.stats.few_clusters import MIN_BOOTSTRAP_CLUSTERS


def interval_note(bench: Benchmark, ci_method: str) -> str | None:
    """Why the intervals fall back from the scene-clustered bootstrap, or None."""
    items = bench.items
    if ci_method not in ("auto", "bootstrap") or CLUSTER_COLUMN not in items.columns:
        return None
    nulls = int(items[CLUSTER_COLUMN].isna().sum())
    if nulls == 0:
        return None
    instead = ("Wilson intervals" if ci_method == "auto"
               else "a bootstrap over items (not scenes)")
    return (f"{CLUSTER_COLUMN} is null for {nulls} of {len(items)} items, so the intervals are "
            f"{instead} instead of the scene-clustered bootstrap: items of one scene count as "
            f"independent and the intervals may be too narrow. Give every item a "
            f"{CLUSTER_COLUMN}, or pass --ci-method wilson to choose this on purpose.")


def data_note(bench: Benchmark) -> str | None:
    """One line on the benchmark's suspicious contents, or None (see the module docstring)."""
    found = suspicious(bench)
    if not found:
        return None
    by: dict[str, list[str]] = {}
    for p in found:
        by.setdefault(p.reason, []).append(p.item_id or p.field)
    parts = [f"{len(ids)} {reason} ({', '.join(map(str, ids[:3]))}"
             f"{', ...' if len(ids) > 3 else ''})" for reason, ids in by.items()]
    return (f"suspicious benchmark contents: {'; '.join(parts)}; such items can only tie and "
            f"a bad unit_chance makes chance-relative numbers meaningless (run `foilbench "
            f"inspect` on the benchmark for details)")


def cluster_note(metrics: Any) -> str | None:
    """Why the intervals are wide: the overall rows rest on few scenes (or one), or None.

    ``metrics`` is a metric table (:func:`foilbench.stats.breakdown.metric_table`)."""
    if metrics is None or len(metrics) == 0 or "ci_method" not in metrics:
        return None
    labels = metrics["ci_method"].astype(str)
    few = labels.str.startswith("cluster-wilson") | labels.str.contains("1 scene", regex=False)
    overall = metrics[(metrics["group_by"] == "") & few]
    if overall.empty:
        return None
    label = str(overall.iloc[0]["ci_method"])
    return (f"few scenes: the intervals are {label}, not the scene-clustered bootstrap, which "
            f"needs about {MIN_BOOTSTRAP_CLUSTERS} scenes to cover 95%; they are wide because "
            f"few scenes say little about the next scene. Add scenes for tighter intervals.")


def few_scene_rows(metrics: Any) -> int:
    """How many rows (breakdowns included) used an interval for few scenes; stored, not
    printed: each row's ci_method already says so where it is shown."""
    if metrics is None or len(metrics) == 0 or "ci_method" not in metrics:
        return 0
    labels = metrics["ci_method"].astype(str)
    return int((labels.str.startswith("cluster-wilson")
                | labels.str.contains("1 scene", regex=False)).sum())


def image_note(bench: Benchmark) -> str | None:
    """Images that hold several frames (an animated GIF, an APNG, a multi-page TIFF), which
    every model sees as their first frame only, or None. EXIF orientation is never applied,
    by the models or the review app (docs/images.md)."""
    from foilbench.data.images import frame_count

    multi = []
    for rel in bench.unique_images():
        if isinstance(rel, str):
            n = frame_count(bench.image_path(rel))
            if n > 1:
                multi.append((rel, n))
    if not multi:
        return None
    shown = ", ".join(f"{safe_text(rel, 60)} ({n} frames)" for rel, n in multi[:3])
    return (f"{len(multi)} image(s) hold several frames ({shown}{', ...' if len(multi) > 3 else ''}"
            "): each is scored on its first frame only")


def cell_notes(adapter: Any, bench: Benchmark, ci_method: str,
               metrics: Any = None) -> dict[str, Any]:
    """``{"text", "interval_note", "data_note", "image_note", "cluster_note",
    "few_scene_rows", "subset"}``
    for one cell (None: nothing to say; ``subset`` is the G.4 subset record)."""
    from foilbench.provenance import subset_record

    return {"text": text_report(adapter, bench.unique_texts()),
            "interval_note": interval_note(bench, ci_method),
            "data_note": data_note(bench),
            "image_note": image_note(bench),
            "cluster_note": cluster_note(metrics) if ci_method == "auto" else None,
            "few_scene_rows": few_scene_rows(metrics),
            "subset": subset_record(bench.manifest.extras)}


def note_lines(stats: dict[str, Any]) -> list[str]:
    """The console lines of a cell's stored notes (empty when there is nothing to say); the
    report's provenance section prints the same (report/sections.py)."""
    from foilbench.scoring.near_ties import near_tie_note
    from foilbench.scoring.precision import precision_note

    return [line for line in (describe(stats.get("text")), stats.get("interval_note"),
                              stats.get("data_note"), stats.get("image_note"),
                              stats.get("cluster_note"),
                              precision_note(stats), near_tie_note(stats)) if line]


def settled_unchanged(stats: dict[str, Any]) -> bool:
    """Near ties that were all rescored in float64 and changed no outcome."""
    counts = [c for c in (stats.get("near_ties") or {}).values() if c]
    changed = [c for c in (stats.get("near_ties_changed") or {}).values() if c]
    return bool(counts) and int(stats.get("near_ties_settled") or 0) > 0 and not changed


def warning_lines(stats: dict[str, Any]) -> list[str]:
    """:func:`note_lines` the runner prints as warnings while it runs: all but near ties that
    were settled and changed nothing (those stay notes in ``show`` and the report)."""
    from foilbench.scoring.near_ties import near_tie_note

    quiet = near_tie_note(stats) if settled_unchanged(stats) else None
    return [line for line in note_lines(stats) if line != quiet]


def repeat_lines(stats: dict[str, Any]) -> list[str]:
    """'repeat of run X ...' for a run stored by ``run --rerun`` (``eval_stats.repeat_of``)."""
    first = stats.get("repeat_of")
    if not isinstance(first, str) or not first:
        return []
    return [f"repeat of run {first[:8]} (same model fingerprint, benchmark checksum and "
            "settings; stored by --rerun): views show one run per model, benchmark and "
            "settings"]
