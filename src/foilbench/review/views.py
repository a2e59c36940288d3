"""JSON views of review units for the app: what the browser shows for one scene or instance.

Pure functions of (units, snapshot, drift cache); no HTTP here, so they are tested directly.
Image URLs name files by their item path (``/file?path=``): the app serves only paths the
items list (see :mod:`foilbench.review.app`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path
from urllib.parse import quote

import numpy as np

from foilbench.review.drift import drift_map, drift_stats, load_mask
from foilbench.review.rubric import PHASES
from foilbench.review.state import Snapshot
from foilbench.review.text import highlight, phrase_kept, word_diff
from foilbench.review.units import LONGER_TIERS, SHORT, Instance, ReviewError, ReviewUnits


def file_url(rel: str) -> str:
    return "/file?path=" + quote(rel, safe="")


def overlay_url(kind: str, key: str) -> str:
    return f"/overlay/{kind}?key=" + quote(key, safe="")


class DriftCache:
    """Drift maps and masks of recently viewed instances (small LRU; a reviewer moves on)."""

    def __init__(self, units: ReviewUnits, maxsize: int = 64):
        self.units = units
        self.root = units.bench.root
        self.maxsize = maxsize
        self._items: OrderedDict[str, tuple[np.ndarray, np.ndarray | None, dict]] = \
            OrderedDict()
        self._lock = threading.Lock()

    def get(self, inst: Instance) -> tuple[np.ndarray, np.ndarray | None, dict]:
        with self._lock:
            if inst.key in self._items:
                self._items.move_to_end(inst.key)
                return self._items[inst.key]
        drift, resized = drift_map(self.root / inst.image_base, self.root / inst.image_foil)
        h, w = drift.shape
        mask = load_mask(self.root / inst.mask if inst.mask else None, (w, h))
        entry = (drift, mask, drift_stats(drift, mask, resized))
        with self._lock:
            self._items[inst.key] = entry
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)
        return entry


def _decision(snap: Snapshot, phase: str, key: str) -> dict | None:
    d = snap.decision(phase, key)
    return None if d is None else {**asdict(d), "failed": list(d.failed)}


def config_view(units: ReviewUnits) -> dict:
    bench = units.bench
    return {
        "benchmark": bench.name, "root": str(Path(bench.root).resolve()),
        "n_items": len(bench), "edit_types": units.edit_types,
        "has_masks": units.mask_column is not None,
        "phases": [{"key": p.key, "title": p.title, "unit": p.unit,
                    "description": p.description,
                    "criteria": [{"key": c.key, "short": c.short, "question": c.question}
                                 for c in p.criteria]} for p in PHASES],
    }


def scene_view(units: ReviewUnits, snap: Snapshot, key: str) -> dict:
    scene = units.scene_by_key.get(key)
    if scene is None:
        raise ReviewError(f"no scene {key!r} in this benchmark")
    types = sorted({units.instance_by_key[k].edit_type for k in scene.instance_keys})
    return {"phase": "base", "key": key, "status": snap.scene_status(key),
            "decision": _decision(snap, "base", key),
            "images": [file_url(p) for p in scene.base_images], "image_paths":
                list(scene.base_images), "captions": list(scene.captions),
            "n_instances": len(scene.instance_keys), "edit_types": types,
            "changed": ("base", key) in snap.changed}


def _instance(units: ReviewUnits, key: str) -> Instance:
    inst = units.instance_by_key.get(key)
    if inst is None:
        raise ReviewError(f"no instance {key!r} in this benchmark")
    return inst


def instance_view(units: ReviewUnits, snap: Snapshot, key: str, drift: DriftCache) -> dict:
    inst = _instance(units, key)
    short_base, short_foil = inst.captions.get(SHORT) or next(iter(inst.captions.values()))
    stats = drift.get(inst)[2]
    return {
        "phase": "instance", "key": key, "status": snap.instance_status(key),
        "decision": _decision(snap, "instance", key), "scene": inst.scene,
        "scene_status": snap.scene_status(inst.scene), "edit_type": inst.edit_type,
        "meta": inst.meta, "item_ids": list(inst.item_ids),
        "base": file_url(inst.image_base), "foil": file_url(inst.image_foil),
        "paths": {"base": inst.image_base, "foil": inst.image_foil, "mask": inst.mask},
        "mask_overlay": overlay_url("mask", key) if inst.mask else None,
        "mask_outline": overlay_url("outline", key) if inst.mask else None,
        "drift_overlay": overlay_url("drift", key), "drift": stats,
        "checks": dict(inst.checks),  # the construction's automatic checks, "not checked"
        "changed": ("instance", key) in snap.changed,
        "caption_base": word_diff(short_base, short_foil),
        "caption_foil": word_diff(short_foil, short_base),
        "tiers": list(inst.captions),
    }


def verbosity_view(units: ReviewUnits, snap: Snapshot, key: str) -> dict:
    inst = _instance(units, key)
    if not inst.has_verbosity:
        raise ReviewError(f"instance {key!r} has no medium or long caption to review")
    short_base, short_foil = inst.captions.get(SHORT) or next(iter(inst.captions.values()))
    tiers = []
    for tier, (cb, cf) in inst.captions.items():
        longer = tier in LONGER_TIERS
        tiers.append({"tier": tier,
                      "base": highlight(short_base, cb), "foil": highlight(short_foil, cf),
                      "base_kept": phrase_kept(short_base, cb) if longer else None,
                      "foil_kept": phrase_kept(short_foil, cf) if longer else None})
    return {"phase": "verbosity", "key": key, "status": snap.verbosity_status(key),
            "changed": ("verbosity", key) in snap.changed,
            "decision": _decision(snap, "verbosity", key), "edit_type": inst.edit_type,
            "scene": inst.scene, "base": file_url(inst.image_base),
            "foil": file_url(inst.image_foil), "short": [short_base, short_foil],
            "tiers": tiers}


def unit_view(units: ReviewUnits, snap: Snapshot, phase: str, key: str,
              drift: DriftCache) -> dict:
    if phase == "base":
        return scene_view(units, snap, key)
    if phase == "instance":
        return instance_view(units, snap, key, drift)
    if phase == "verbosity":
        return verbosity_view(units, snap, key)
    raise ReviewError(f"unknown review phase {phase!r}")
