"""What a reviewer decides on: scenes (phase 1) and instances (phases 2 and 3) of a pair set.

A pair benchmark has one row per (instance, caption tier). The review groups rows back into
the units of CompoSET's protocol (App. B.4):

- an *instance* is one base/foil image pair with its captions at every tier: the rows sharing
  ``foil_id`` when the table has that column (the world's pairs and the construction
  pipelines write it), otherwise the rows sharing the (``image_base``, ``image_foil``) pair;
- a *scene* is what a base review covers: the rows sharing ``scene_id``, otherwise those
  sharing ``image_base``. Its captions are the ``scene_caption`` column when present, else the
  distinct short-tier base captions of its instances (CompoSET anchors one per instance).

The edit mask is the PNG named by ``mask_path`` (construction pipelines) or ``mask`` (the
world's pairs), relative to the benchmark root; a set without masks is still reviewable.
Unit keys are strings stored with every decision, so a decision never refers to a row number.

Each unit also has a content hash (``digest``) of what a reviewer judges: an instance's base,
foil and mask files (their bytes) and its captions at every tier; a scene's base images and
captions. Decisions store it, so after a rebuild that changed a unit under the same key, its
old decision is not applied and the unit is listed for re-review.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.errors import FoilbenchError
from foilbench.hashing import sha256_file, sha256_text

MASK_COLUMNS = ("mask_path", "mask")
SHORT = "short"
LONGER_TIERS = ("medium", "long")
NO_EDIT_TYPE = "(none)"


class ReviewError(FoilbenchError):
    """A benchmark cannot be reviewed as given, or a review request is invalid."""


@dataclass(frozen=True)
class Instance:
    key: str
    scene: str
    edit_type: str
    image_base: str
    image_foil: str
    mask: str | None
    item_ids: tuple[str, ...]
    captions: dict[str, tuple[str, str]]  # tier -> (base caption, foil caption), short first
    meta: dict[str, str] = field(default_factory=dict)
    #: what the construction's automatic checks said ("not checked" where one did not run)
    checks: dict[str, str] = field(default_factory=dict)
    digest: str = ""  # content hash of images and captions (module docstring)

    @property
    def has_verbosity(self) -> bool:
        return any(t in self.captions for t in LONGER_TIERS)


@dataclass(frozen=True)
class Scene:
    key: str
    base_images: tuple[str, ...]
    captions: tuple[str, ...]
    instance_keys: tuple[str, ...]
    digest: str = ""


@dataclass
class ReviewUnits:
    """Scenes and instances of one benchmark, in table order, with lookups by key."""

    bench: Benchmark
    scenes: list[Scene]
    instances: list[Instance]
    mask_column: str | None
    scene_by_key: dict[str, Scene] = field(init=False)
    instance_by_key: dict[str, Instance] = field(init=False)

    def __post_init__(self) -> None:
        self.scene_by_key = {s.key: s for s in self.scenes}
        self.instance_by_key = {i.key: i for i in self.instances}

    @property
    def verbosity_instances(self) -> list[Instance]:
        return [i for i in self.instances if i.has_verbosity]

    @property
    def edit_types(self) -> list[str]:
        return sorted({i.edit_type for i in self.instances})

    def image_paths(self) -> set[str]:
        """Every file the app may serve: base, foil and mask paths named by the items."""
        paths = {p for i in self.instances for p in (i.image_base, i.image_foil, i.mask) if p}
        return paths

    def digest(self, phase_key: str, key: str) -> str:
        """The content hash a decision of ``phase_key`` on ``key`` is bound to."""
        unit = (self.scene_by_key if phase_key == "base" else self.instance_by_key).get(key)
        return unit.digest if unit is not None else ""

    def keys(self, phase_key: str) -> list[str]:
        if phase_key == "base":
            return [s.key for s in self.scenes]
        if phase_key == "instance":
            return [i.key for i in self.instances]
        if phase_key == "verbosity":
            return [i.key for i in self.verbosity_instances]
        raise ReviewError(f"unknown review phase {phase_key!r}")


def _text(value) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value)
    return text if text else None


def _instance_key(row: pd.Series, has_foil_id: bool) -> str:
    if has_foil_id and _text(row["foil_id"]):
        return str(row["foil_id"])
    return f"{row['image_base']}|{row['image_foil']}"


def _check_mask(bench: Benchmark, item_id: str, column: str, rel: str | None) -> str | None:
    if rel is None:
        return None
    root = bench.root.resolve()
    path = (root / rel).resolve()
    if Path(rel).is_absolute() or not path.is_relative_to(root):
        raise ReviewError(f"item {item_id!r}: {column} {rel!r} is absolute or escapes the "
                          f"benchmark folder {root}")
    if not path.is_file():
        raise ReviewError(f"item {item_id!r}: {column} file not found: {path}")
    return rel


class _FileHashes:
    """SHA-256 of each benchmark file, read once (a base image is shared by many units)."""

    def __init__(self, root: Path) -> None:
        self.root, self.seen = root, {}

    def __call__(self, rel: str | None) -> str | None:
        if not rel:
            return None
        if rel not in self.seen:
            path = self.root / rel
            self.seen[rel] = sha256_file(path) if path.is_file() else "missing"
        return self.seen[rel]


def _digest(**parts) -> str:
    return sha256_text(json.dumps(parts, sort_keys=True))


def _checks(row: pd.Series) -> dict[str, str]:
    """The automatic checks' verdicts an item carries (composet: pixel_drift, count_check)."""
    out = {}
    if "pixel_drift" in row.index:
        drift = row["pixel_drift"]
        out["pixel drift"] = ("not checked" if drift is None or drift != drift
                              else f"{100 * float(drift):.2f}% outside the edit region")
    if "count_check" in row.index:
        out["count check"] = _text(row["count_check"]) or "not checked"
    return out


def _tier_order(tier: str) -> int:
    order = (SHORT, *LONGER_TIERS)
    return order.index(tier) if tier in order else len(order)


def build_units(bench: Benchmark) -> ReviewUnits:
    """Group a validated pair benchmark into review scenes and instances (see module doc)."""
    if not bench.item_kind.is_edit_pair:
        raise ReviewError(f"{bench.root}: the review app needs a pair benchmark (base and foil "
                          f"images); this one is of kind {bench.kind!r}")
    items = bench.items
    if items.empty:
        raise ReviewError(f"{bench.root}: the benchmark has no items to review")
    has_foil_id = "foil_id" in items.columns
    mask_col = next((c for c in MASK_COLUMNS if c in items.columns), None)
    meta_cols = [c for c in ("category", "operation", "condition", "n_objects")
                 if c in items.columns]
    file_hash = _FileHashes(bench.root)
    groups: dict[str, list[pd.Series]] = {}
    for _, row in items.iterrows():
        groups.setdefault(_instance_key(row, has_foil_id), []).append(row)
    instances, scene_rows = [], {}
    for key, rows in groups.items():
        first = rows[0]
        for r in rows[1:]:
            if (r["image_base"], r["image_foil"]) != (first["image_base"], first["image_foil"]):
                raise ReviewError(f"instance {key!r}: items {first['item_id']!r} and "
                                  f"{r['item_id']!r} share foil_id but not their images")
        scene = _text(first.get("scene_id")) or str(first["image_base"])
        captions: dict[str, tuple[str, str]] = {}
        for r in sorted(rows, key=lambda r: _tier_order(_text(r.get("tier")) or SHORT)):
            tier = _text(r.get("tier")) or SHORT
            if tier in captions:
                raise ReviewError(f"instance {key!r}: two items at tier {tier!r} "
                                  f"({r['item_id']!r} is the second)")
            captions[tier] = (str(r["caption_base"]), str(r["caption_foil"]))
        mask = _check_mask(bench, str(first["item_id"]), mask_col,
                           _text(first.get(mask_col))) if mask_col else None
        inst = Instance(
            key=key, scene=scene,
            edit_type=_text(first.get("edit_type")) or NO_EDIT_TYPE,
            image_base=str(first["image_base"]), image_foil=str(first["image_foil"]),
            mask=mask, item_ids=tuple(str(r["item_id"]) for r in rows), captions=captions,
            meta={c: str(first[c]) for c in meta_cols if _text(first[c]) is not None},
            checks=_checks(first),
            digest=_digest(base=file_hash(str(first["image_base"])),
                           foil=file_hash(str(first["image_foil"])), mask=file_hash(mask),
                           captions=captions))
        instances.append(inst)
        scene_rows.setdefault(scene, []).append((inst, first))
    scenes = []
    for key, members in scene_rows.items():
        own = [_text(r.get("scene_caption")) for _, r in members]
        caps = [c for c in own if c] or [next(iter(i.captions.values()))[0] for i, _ in members]
        images = tuple(dict.fromkeys(i.image_base for i, _ in members))
        captions_ = tuple(dict.fromkeys(caps))
        scenes.append(Scene(key=key, base_images=images, captions=captions_,
                            instance_keys=tuple(i.key for i, _ in members),
                            digest=_digest(images=[file_hash(p) for p in images],
                                           captions=list(captions_))))
    return ReviewUnits(bench=bench, scenes=scenes, instances=instances, mask_column=mask_col)
