"""Apply the decisions: write the accepted benchmark and the QC report.

The exported folder is an ordinary foilbench benchmark holding every item (all caption tiers)
of the kept instances, with their images and masks, validated on write and read back. Beside
it: ``qc_report.json`` and ``qc_report.md`` (discard rates per phase, per edit type and per
criterion, overall, with Wilson intervals and CompoSET's 22.4% for reference) and
``qc_decisions.parquet`` (the full decision log, undos included, so the review is auditable).
A benchmark built by ``foilbench construct`` keeps its construction record (log, provenance,
survival; :mod:`foilbench.review.construction`), and its ``qc_status`` column reads
``accepted`` for every exported item.

An unfinished review is refused unless ``allow_pending`` is set; then pending instances are
left out like discarded ones, counted as pending, and the manifest is marked partial.

Scene floor. CompoSET §3: "each scene contributes at least 15 foils"; the construction applies
the floor before human review (:func:`foilbench.construct.composet.verify.stage_scene_floor`),
but Phase 2 discards (22.4% in App. B.4) can leave a scene below it. The export re-applies it
to the kept instances: a scene with fewer than ``min_foils`` kept foils is left out whole,
counted in the report and the manifest (``scene_floor``). ``min_foils`` defaults to the floor
the construction recorded (``manifest.extras["scene_floor"]["min_foils"]``, 15 by default),
or 0 (no floor) for a benchmark that records none; the paper does not say whether it
re-applied the floor after review, so the count dropped is always stated.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from foilbench.data.format import load_benchmark, make_benchmark, write_benchmark
from foilbench.review.construction import construction_summary, copy_construction_files
from foilbench.review.report_md import render_markdown
from foilbench.review.rubric import PAPER_DISCARD_RATE, PAPER_REFERENCE, PHASES
from foilbench.review.state import ReviewSession
from foilbench.review.units import ReviewError
from foilbench.staged import staged_folder

REPORT_JSON = "qc_report.json"
REPORT_MD = "qc_report.md"
DECISIONS_FILE = "qc_decisions.parquet"


def qc_report(session: ReviewSession) -> dict:
    """The QC report as a JSON-ready dict (the same numbers the app shows live)."""
    snap = session.snapshot()
    summary = snap.summary()
    bench = session.units.bench
    return {
        "benchmark": bench.name,
        "source": str(bench.root.resolve()),
        "source_checksum": bench.manifest.checksum,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "complete": not any(summary["pending"].values()),
        "criteria": {p.key: {c.key: c.question for c in p.criteria} for p in PHASES},
        "paper_reference": {"phase2_discard_rate": PAPER_DISCARD_RATE,
                            "text": PAPER_REFERENCE},
        **{k: summary[k] for k in ("progress", "pending", "phases", "by_edit_type",
                                   "overall")},
        "kept_instances": snap.kept_keys(),
        "construction": construction_summary(bench),
    }


def _copy_masks(items: pd.DataFrame, column: str | None, src: Path, out: Path) -> None:
    if column is None or column not in items.columns:
        return
    root = src.resolve()
    for rel in dict.fromkeys(r for r in items[column] if isinstance(r, str) and r):
        path = (root / rel).resolve()
        if not path.is_relative_to(root):
            raise ReviewError(f"{column} {rel!r} escapes the benchmark folder {root}")
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dst)


def construction_floor(bench) -> int:
    """The scene floor the construction applied before review, or 0 when none is recorded."""
    rec = (bench.manifest.extras or {}).get("scene_floor") or {}
    return int(rec.get("min_foils") or 0)


def apply_scene_floor(units, kept: set[str], min_foils: int) -> tuple[set[str], dict]:
    """(the kept instances of scenes with at least ``min_foils`` kept foils, the count)."""
    by_scene: dict[str, list[str]] = {}
    for inst in units.instances:
        if inst.key in kept:
            by_scene.setdefault(inst.scene, []).append(inst.key)
    short = {sc: len(keys) for sc, keys in by_scene.items() if len(keys) < min_foils}
    out = {k for sc, keys in by_scene.items() if sc not in short for k in keys}
    return out, {"min_foils": int(min_foils), "scenes_kept": len(by_scene) - len(short),
                 "scenes_below_floor": len(short),
                 "instances_dropped": sum(short.values()),
                 "below_floor": dict(sorted(short.items()))}


def export_review(session: ReviewSession, out_dir: str | Path, *,
                  allow_pending: bool = False, min_foils: int | None = None) -> dict:
    """Write the kept items as a benchmark under ``out_dir`` plus the QC report; returns the
    report dict (with ``n_items``, ``out`` and ``scene_floor`` added). ``min_foils``: the
    scene floor re-applied after review (module docstring; None: the construction's)."""
    units = session.units
    bench = units.bench
    out = Path(out_dir)
    if out.resolve() == bench.root.resolve():
        raise ReviewError(f"--out {out} is the benchmark under review; choose a new folder")
    report = qc_report(session)
    pending = report["pending"]
    if not report["complete"] and not allow_pending:
        raise ReviewError(
            f"review unfinished: {pending['base']} scene(s), {pending['instance']} "
            f"instance(s) and {pending['verbosity']} verbosity review(s) pending; finish them "
            "in `foilbench review DIR`, or pass --allow-pending to export only what was kept")
    floor = construction_floor(bench) if min_foils is None else int(min_foils)
    if floor < 0:
        raise ReviewError(f"--min-foils must be 0 or more, got {floor}")
    kept, report["scene_floor"] = apply_scene_floor(units, set(report["kept_instances"]),
                                                    floor)
    report["scene_floor"]["source"] = ("option" if min_foils is not None else
                                       "construction" if floor else "none recorded")
    item_ids = {i for inst in units.instances if inst.key in kept for i in inst.item_ids}
    items = bench.items[bench.items["item_id"].astype(str).isin(item_ids)].reset_index(
        drop=True)
    if "qc_status" in items.columns:  # construction pipelines write "pending"
        items["qc_status"] = "accepted"
    if items.empty:
        sf = report["scene_floor"]
        why = (f" ({sf['instances_dropped']} kept instance(s) were in scenes below the "
               f"{sf['min_foils']}-foil floor; lower --min-foils)" if sf["instances_dropped"]
               else "")
        raise ReviewError(f"no instance was kept, so there is no benchmark to export{why}")
    extras = dict(bench.manifest.extras)
    extras["qc"] = {"source_checksum": bench.manifest.checksum,
                    "instances_reviewed": len(units.instances), "instances_kept": len(kept),
                    "overall_discard_rate": report["overall"]["discard"]["rate"],
                    "phase2_discard_rate": report["phases"]["instance"]["discard"]["rate"],
                    "complete": report["complete"], "scene_floor": report["scene_floor"]}
    note = f"QC-reviewed (CompoSET App. B.4 protocol): {len(kept)} of {len(units.instances)} " \
           "instances kept."
    manifest = replace(bench.manifest, checksum="", extras=extras,
                       partial=bench.manifest.partial or not report["complete"],
                       description=(bench.manifest.description + " " + note).strip())
    if out.exists() and any(out.iterdir()):
        raise ReviewError(f"--out {out} exists and is not empty; choose a new folder")
    accepted = make_benchmark(manifest, items, bench.root)
    report["out"] = str(out.resolve())
    with staged_folder(out, "the reviewed benchmark") as staging:  # whole, or nothing at out
        write_benchmark(accepted, staging)
        _copy_masks(items, units.mask_column, bench.root, staging)
        load_benchmark(staging)  # read back: the export must be a valid benchmark
        report["construction_files"] = copy_construction_files(bench.root, staging)
        report["n_items"] = len(items)
        (staging / REPORT_JSON).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
        (staging / REPORT_MD).write_text(render_markdown(report))
        log = pd.DataFrame(session.store.events(),
                           columns=["seq", "phase", "unit", "action", "failed", "note",
                                    "reverts", "created"])
        log["reverts"] = log["reverts"].astype("Int64")
        log.to_parquet(staging / DECISIONS_FILE, index=False)
    return report
