"""Winoground (Thrush et al., CVPR 2022): two images, two captions with the same words.

Source: huggingface.co/datasets/facebook/winoground (gated; research-only license agreement
shipped with the data). Not redistributable, so no download helper: accept the terms on the
Hub and download ``data/examples.jsonl`` and ``data/images.zip`` yourself.

Native format: ``examples.jsonl``, one JSON object per line ``{id, caption_0, caption_1,
image_0, image_1, tag, secondary_tag, num_main_preds, collapsed_tag}``; ``image_0`` and
``image_1`` are names without extension of files in ``images/`` (``images/ex_0_img_0.png``).
Caption ``caption_k`` describes ``image_k``.

Expected counts: 400 examples; tag Object 141, Relation 233, Both 26 (collapsed_tag).

foilbench form: kind ``pair`` (base = image_0/caption_0, foil = image_1/caption_1), scored by
Group (the paper's group score; CompoSET Table 8). Metadata: ``category`` (collapsed_tag),
``edit_type`` (tag), ``secondary_tag``, ``num_main_preds``.

Spec: ``winoground:DIR`` where DIR holds ``examples.jsonl`` (or ``data/examples.jsonl``) and
the unzipped ``images/`` folder.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    check_counts,
    finish,
    manifest_for,
    read_jsonl,
    require_dir,
    require_fields,
    split_spec,
)
from foilbench.errors import BenchmarkError

NAME = "winoground"
EXPECTED_TOTAL = 400
EXPECTED_COLLAPSED = {"Object": 141, "Relation": 233, "Both": 26}
DOWNLOAD_NOTE = ("Winoground is gated: accept the license at https://huggingface.co/datasets/"
                 "facebook/winoground, then download data/examples.jsonl and data/images.zip")
FIELDS = ("id", "caption_0", "caption_1", "image_0", "image_1")


def find_release_root(folder: Path) -> Path:
    for root in (folder, folder / "data"):
        if (root / "examples.jsonl").is_file():
            return root
    raise BenchmarkError(f"{NAME}: no examples.jsonl in {folder} or {folder / 'data'}")


def image_rel(root: Path, name: str) -> str:
    """``ex_0_img_0`` -> ``images/ex_0_img_0.png`` (another extension if that is on disk)."""
    if Path(name).suffix:
        return f"images/{name}"
    for ext in (".png", ".jpg", ".jpeg"):
        if (root / "images" / f"{name}{ext}").exists():
            return f"images/{name}{ext}"
    return f"images/{name}.png"


def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, _ = split_spec(path)
    root = find_release_root(require_dir(folder, NAME, "the Winoground data folder"))
    file = root / "examples.jsonl"
    findings = Findings(NAME)
    rows = []
    for n, rec in enumerate(read_jsonl(file), 1):
        require_fields(rec, FIELDS, f"{file}, line {n}")
        rows.append({
            "item_id": str(rec["id"]),
            "image_base": image_rel(root, rec["image_0"]),
            "image_foil": image_rel(root, rec["image_1"]),
            "caption_base": rec["caption_0"], "caption_foil": rec["caption_1"],
            "category": rec.get("collapsed_tag"), "edit_type": rec.get("tag"),
            "secondary_tag": rec.get("secondary_tag"),
            "num_main_preds": rec.get("num_main_preds"),
        })
    items = pd.DataFrame(rows)
    if len(items) and items["category"].notna().all():
        check_counts(findings, "collapsed_tag", dict(Counter(items["category"])),
                     EXPECTED_COLLAPSED)
    else:
        check_counts(findings, "release", {"examples": len(items)}, {"examples": EXPECTED_TOTAL})
    manifest = manifest_for(
        NAME, "group", version="facebook/winoground",
        license="Winoground license agreement (research use only; see the dataset files)",
        source="https://huggingface.co/datasets/facebook/winoground",
        description="Winoground: 2 images x 2 captions with identical words",
        extras={"expected_total": EXPECTED_TOTAL},
    )
    return finish(manifest, items, root, findings, on_invalid=on_invalid,
                  check_images=check_images)
