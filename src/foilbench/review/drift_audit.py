"""The manual verification phase of the CompoSET App. C drift audit ("We manually verified
every flag"), and the audit's state on disk.

The audit lives in one folder: ``drift_audit.json`` (written atomically after every flag and
every decision, so a crash or Ctrl-C loses at most the call in flight and a rerun resumes)
holding the benchmark's name and checksum, the sample parameters, and per pair its item id,
edit type, VLM flag and, for flagged pairs, the reviewer's label (``drift`` or a benign class:
:data:`foilbench.audit.drift.LABELS`), a note and when. ``spent_usd`` records the API spend
committed so far; the cap itself is held by the folder's spend ledger
(:mod:`foilbench.construct.engine.ledger`), across resumes and processes.

Decisions come from :func:`decide` (the CLI's ``--decide ITEM=LABEL`` and its interactive
``--verify`` prompt, which shows the pair's image paths and its drift heatmap numbers from
:mod:`foilbench.review.drift`). Each decision is a change to an existing flagged pair: an
unknown item or label, or a pair that was not flagged, is refused by name.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from foilbench.audit.drift import LABELS, DriftAuditError

STATE_FILE = "drift_audit.json"


def state_path(folder: str | Path) -> Path:
    return Path(folder) / STATE_FILE


def load_state(folder: str | Path) -> dict | None:
    path = state_path(folder)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DriftAuditError(f"{path}: not valid JSON ({e}); restore it or start a new "
                              "--out folder") from None


def save_state(folder: str | Path, state: dict) -> Path:
    from foilbench.jsonio import write_json

    return write_json(state_path(folder), state)


def new_state(bench, sample, n: int, tier: str, seed: int, vqa: str) -> dict:
    return {"benchmark": bench.name, "checksum": bench.manifest.checksum, "n": n,
            "tier": tier, "seed": seed, "vqa": vqa, "spent_usd": 0.0,
            "pairs": [{"item_id": str(r["item_id"]), "edit_type": str(r.get("edit_type", "")),
                       "image_base": r["image_base"], "image_foil": r["image_foil"],
                       "caption_base": r["caption_base"], "caption_foil": r["caption_foil"]}
                      for _, r in sample.iterrows()]}


def check_same(state: dict, bench, n: int, tier: str, seed: int) -> None:
    """A resumed audit must be the same audit: same benchmark, sample size, tier and seed."""
    want = {"benchmark": bench.name, "checksum": bench.manifest.checksum, "n": n, "tier": tier,
            "seed": seed}
    diff = [k for k, v in want.items() if state.get(k) != v]
    if diff:
        raise DriftAuditError(f"the audit folder holds another audit ({', '.join(diff)} "
                              "differ); use a new --out folder")


def pending(state: dict) -> list[dict]:
    """Flagged pairs without a label, in sample order."""
    return [p for p in state["pairs"] if p.get("flag") in ("yes", "unanswerable")
            and p.get("label") not in LABELS]


def decide(state: dict, item_id: str, label: str, note: str = "") -> dict:
    """Record the reviewer's label for one flagged pair (a relabel replaces the old one)."""
    if label not in LABELS:
        raise DriftAuditError(f"label {label!r} for {item_id}: possible labels: "
                              f"{', '.join(LABELS)}")
    pair = next((p for p in state["pairs"] if p["item_id"] == item_id), None)
    if pair is None:
        raise DriftAuditError(f"{item_id} is not in this drift audit's sample")
    if pair.get("flag") not in ("yes", "unanswerable"):
        raise DriftAuditError(f"{item_id} was not flagged (flag: {pair.get('flag')!r}); only "
                              "flagged pairs are verified")
    pair.update(label=label, note=note,
                decided=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    return pair
