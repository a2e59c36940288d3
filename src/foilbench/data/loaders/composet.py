"""CompoSET: same-scene single-edit base/foil pairs with three caption verbosity tiers.

Source: the CompoSET release folder (``variations.parquet``, ``scenes.parquet``,
``scene_captions.parquet`` and the images, paths relative to the folder). License: as stated
in the release (recorded as given in ``LICENSE`` beside it, else "see release").

Native format: ``variations.parquet`` has one row per instance ``{id, scene_id, edit_type,
image_base, image_var, captions}`` where ``captions`` is ``{short, medium, long}`` and each tier
is ``{base, var}``; ``scenes.parquet`` has one row per scene (80). The released taxonomy names
the count edit ``modify_cardinality`` while the paper says ``modify_count``: both are read as
``modify_count``.

Expected counts: 1,776 instances over 80 scenes (5,328 pair items, one per instance and tier).

foilbench form: kind ``pair`` (one item per (instance, tier), id ``<id>/<tier>``), scored by
Group, the protocol of CompoSET (Eq. 1-3) and of its Table 8. Metadata: ``scene_id``,
``edit_type``, ``category`` (a ``category`` column in the release, else the release's taxonomy
file, else a word map; see :mod:`~foilbench.data.loaders.composet_taxonomy`), ``tier``,
``operation`` (the edit type's verb).
Option ``?tiers=short,long`` keeps some tiers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    LoaderOptionError,
    check_counts,
    finish,
    loader_options,
    manifest_for,
    read_table,
    require_columns,
    require_dir,
    takes_options,
)
from foilbench.data.loaders.composet_taxonomy import (
    category_by_word,
    find_taxonomy,
    normalise_edit_type,
    read_taxonomy,
)
from foilbench.errors import BenchmarkError
from foilbench.table_records import table_records

NAME = "composet"
TIERS = ("short", "medium", "long")
EXPECTED_INSTANCES = 1776
EXPECTED_SCENES = 80
COLUMNS = ("id", "scene_id", "edit_type", "image_base", "image_var", "captions")
DOWNLOAD_NOTE = ("CompoSET: download the release folder (variations.parquet, scenes.parquet, "
                 "images) from the location given in the CompoSET paper")


def _tier_captions(captions: Any, where: str) -> dict[str, dict[str, str]]:
    if isinstance(captions, str):
        try:
            captions = json.loads(captions)
        except json.JSONDecodeError:
            raise BenchmarkError(f"{where}: column 'captions' is not a struct or JSON") from None
    if not isinstance(captions, dict):
        raise BenchmarkError(f"{where}: column 'captions' must be {{short, medium, long: "
                             f"{{base, var}}}}, got {type(captions).__name__}")
    return captions


def pair_items(variations: pd.DataFrame, tiers: tuple[str, ...], path: Path) -> pd.DataFrame:
    """One pair item per (variation, tier); a missing tier or caption names the row."""
    rows = []
    # table_records: what to_dict(orient="records") gives, built column by column
    for rec in table_records(variations):
        where = f"{path}, row id={rec['id']!r}"
        caps = _tier_captions(rec["captions"], where)
        for tier in tiers:
            entry = caps.get(tier)
            if not isinstance(entry, dict) or "base" not in entry or "var" not in entry:
                raise BenchmarkError(f"{where}: column 'captions' lacks {tier}.base/{tier}.var")
            rows.append({
                "item_id": f"{rec['id']}/{tier}",
                "image_base": rec["image_base"], "image_foil": rec["image_var"],
                "caption_base": entry["base"], "caption_foil": entry["var"],
                "scene_id": str(rec["scene_id"]), "edit_type": rec["edit_type"],
                "category": rec.get("category"), "tier": tier, "instance_id": str(rec["id"]),
            })
    return pd.DataFrame(rows)


def assign_categories(variations: pd.DataFrame, folder: Path, findings: Findings) -> str:
    """Fill ``category`` (release column > taxonomy file > target word); return the source."""
    if "category" in variations.columns:
        return "variations.parquet"
    taxonomy_file = find_taxonomy(folder)
    if taxonomy_file is not None:
        taxonomy = read_taxonomy(taxonomy_file)
        variations["category"] = variations["edit_type"].map(taxonomy)
        source = taxonomy_file.name
    else:
        variations["category"] = variations["edit_type"].map(category_by_word)
        source = "foilbench word map (no taxonomy file in the release)"
        findings.warn("no taxonomy file; categories come from foilbench's word map")
    unknown = sorted(variations.loc[variations["category"].isna(), "edit_type"].unique())
    if unknown:
        findings.warn(f"edit type(s) {', '.join(unknown)} have no category in {source}; "
                      f"kept as their own category")
        variations["category"] = variations["category"].fillna(variations["edit_type"])
    return source


def release_license(folder: Path) -> str:
    """The first non-empty line of the release's LICENSE file, else "see release"."""
    file = folder / "LICENSE"
    lines = [ln.strip() for ln in file.read_text().splitlines() if ln.strip()] \
        if file.is_file() else []
    return lines[0] if lines else "see release"


def _tiers(options: dict[str, str]) -> tuple[str, ...]:
    tiers = tuple(t for t in options.get("tiers", ",".join(TIERS)).split(",") if t)
    bad = [t for t in tiers if t not in TIERS]
    if bad:
        raise LoaderOptionError(f"{NAME}: unknown tier(s) {', '.join(bad)}; known: "
                                f"{', '.join(TIERS)}")
    return tiers


@takes_options("tiers", check=_tiers)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    """Read a CompoSET release folder (see the module docstring)."""
    folder, options = loader_options(path, load)
    require_dir(folder, NAME, "the CompoSET release with variations.parquet")
    tiers = _tiers(options)
    findings = Findings(NAME)
    vpath = folder / "variations.parquet"
    variations = read_table(vpath)
    require_columns(variations, COLUMNS, vpath)
    variations = variations.copy()
    variations["edit_type"] = variations["edit_type"].astype(str).map(normalise_edit_type)
    source = assign_categories(variations, folder, findings)
    spath = folder / "scenes.parquet"
    n_scenes_file = len(read_table(spath)) if spath.exists() else None
    if n_scenes_file is None:
        findings.warn("scenes.parquet not found (scene metadata unavailable)")
    check_counts(findings, "release", {"instances": len(variations)},
                 {"instances": EXPECTED_INSTANCES})
    n_scenes = variations["scene_id"].nunique()
    if n_scenes != EXPECTED_SCENES or n_scenes_file not in (None, EXPECTED_SCENES):
        findings.warn(f"{n_scenes} scenes in variations.parquet ({n_scenes_file} rows in "
                      f"scenes.parquet); the published release has {EXPECTED_SCENES}")
    items = pair_items(variations, tiers, vpath)
    items["operation"] = items["edit_type"].str.partition("_")[0]
    manifest = manifest_for(
        NAME, "group", license=release_license(folder),
        source=str(folder),
        description="CompoSET single-edit pairs, one item per instance and caption tier",
        extras={"tiers": list(tiers), "n_instances": int(len(variations)),
                "n_scenes": int(n_scenes), "expected_instances": EXPECTED_INSTANCES,
                "category_source": source,
                "expected_scenes": EXPECTED_SCENES},
    )
    return finish(manifest, items, folder, findings, on_invalid=on_invalid,
                  check_images=check_images)
