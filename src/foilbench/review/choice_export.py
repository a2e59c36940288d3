"""Export a validated choice benchmark: the items whose negative a reviewer judged false.

SugarCrepe §4.1 keeps, after Stage 2, only the negatives humans judged to be false of the image
and fluent. The export is an ordinary ``choice`` benchmark of those items with ``validated =
True``, validated on write and read back, plus ``validation_report.json`` (verdict counts and
discard rates, overall and per type, with Wilson intervals) and
``validation_decisions.parquet`` (the full log, undos included). An unfinished validation is
refused unless ``allow_pending``; pending items are then left out and the manifest is partial.
``foilbench construct sugarcrepe OUT --out FINAL`` runs Algorithm 1 on the result (the
exported folder is its CAPTIONS).
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from foilbench.data.format import load_benchmark, make_benchmark, write_benchmark
from foilbench.review.choice import KEEP, VERDICTS, ChoiceSession
from foilbench.review.units import ReviewError

REPORT_JSON = "validation_report.json"
DECISIONS_FILE = "validation_decisions.parquet"


def export_validated(session: ChoiceSession, out_dir: str | Path, *,
                     allow_pending: bool = False) -> dict:
    """Write the kept items under ``out_dir``; returns the report (``n_items``, ``out``)."""
    bench = session.bench
    out = Path(out_dir)
    if out.resolve() == bench.root.resolve():
        raise ReviewError(f"--out {out} is the benchmark under review; choose a new folder")
    if out.exists() and any(out.iterdir()):
        raise ReviewError(f"--out {out} exists and is not empty; choose a new folder")
    summary = session.summary()
    if summary["pending"] and not allow_pending:
        raise ReviewError(f"validation unfinished: {summary['pending']} item(s) pending; "
                          "finish them in `foilbench review DIR`, or pass --allow-pending to "
                          "export only what was judged")
    current = session.store.current()
    kept = [u.item_id for u in session.units if current.get(u.item_id) == KEEP]
    if not kept:
        raise ReviewError("no negative was judged false of its image, so there is nothing to "
                          "export")
    items = bench.items[bench.items["item_id"].astype(str).isin(set(kept))].reset_index(
        drop=True)
    items["validated"] = True
    report = {"benchmark": bench.name, "source": str(bench.root.resolve()),
              "source_checksum": bench.manifest.checksum,
              "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "protocol": "SugarCrepe §4.1 Stage 2 (human filtering of false negatives and "
                          "non-fluent text)",
              "verdicts": {v: label for v, (_, label) in VERDICTS.items()},
              "complete": not summary["pending"], **summary, "kept": len(kept)}
    extras = dict(bench.manifest.extras)
    extras["human_validation"] = {
        "source_checksum": bench.manifest.checksum, "items_reviewed": summary["decided"],
        "items_kept": len(kept), "complete": report["complete"],
        "discard_rate": summary["overall"]["discard"]["rate"],
        "discard_rate_by_type": {t: e["discard"]["rate"]
                                 for t, e in summary["by_edit_type"].items()}}
    note = (f"Human-validated (SugarCrepe §4.1 Stage 2): {len(kept)} of {len(session.units)} "
            "negatives judged false of the image and fluent.")
    manifest = replace(bench.manifest, checksum="", extras=extras,
                       partial=bench.manifest.partial or not report["complete"],
                       description=(bench.manifest.description + " " + note).strip())
    write_benchmark(make_benchmark(manifest, items, bench.root), out)
    load_benchmark(out)  # read back: the export must be a valid benchmark
    report["n_items"], report["out"] = len(items), str(out.resolve())
    (out / REPORT_JSON).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    log = pd.DataFrame(session.store.events(),
                       columns=["seq", "item", "verdict", "reverts", "created"])
    log["reverts"] = log["reverts"].astype("Int64")
    log.to_parquet(out / DECISIONS_FILE, index=False)
    return report
