"""Winoground (Thrush et al., CVPR 2022): two images, two captions with the same words.

Source: huggingface.co/datasets/facebook/winoground (gated; research-only license agreement
shipped with the data). Not redistributable, so no download helper: accept the terms on the
Hub and download ``data/examples.jsonl`` and ``data/images.zip`` yourself.

Native format, two layouts of the same 400 examples:

* ``examples.jsonl``, one JSON object per line ``{id, caption_0, caption_1, image_0, image_1,
  tag, secondary_tag, num_main_preds, collapsed_tag}``; ``image_0`` and ``image_1`` are names
  without extension of files in ``images/`` (``images/ex_0_img_0.png``), from ``images.zip``.
* the current Hub layout, Parquet shards ``data/test-*.parquet`` with the same fields, where
  ``image_0`` and ``image_1`` are embedded images (``{"bytes", "path"}``), the form
  ``load_dataset("facebook/winoground", split="test")`` returns (``example["image_0"]`` is a
  PIL image there). The embedded images are written once to ``?images=DIR`` (default
  ``<release>/_foilbench_images``); text-only inspection writes nothing.

Caption ``caption_k`` describes ``image_k``.

Expected counts: 400 examples; tag Object 141, Relation 233, Both 26 (collapsed_tag).

foilbench form: kind ``pair`` (base = image_0/caption_0, foil = image_1/caption_1), scored by
Group (the paper's group score; CompoSET Table 8). Metadata: ``category`` (collapsed_tag),
``edit_type`` (tag), ``secondary_tag``, ``num_main_preds``.

Spec: ``winoground:DIR`` where DIR holds ``examples.jsonl`` (or ``data/examples.jsonl``) and
the unzipped ``images/`` folder, or the Parquet shards (``data/test-*.parquet``); the JSON
lines win when both are present.
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
    loader_options,
    manifest_for,
    read_jsonl,
    require_dir,
    require_fields,
    takes_options,
)
from foilbench.data.loaders.hf_parquet import (
    IMAGES_DIRNAME,
    embedded_paths,
    images_root,
    read_split,
)
from foilbench.errors import BenchmarkError

NAME = "winoground"
EXPECTED_TOTAL = 400
EXPECTED_COLLAPSED = {"Object": 141, "Relation": 233, "Both": 26}
DOWNLOAD_NOTE = ("Winoground is gated: accept the license at https://huggingface.co/datasets/"
                 "facebook/winoground, then download data/examples.jsonl and data/images.zip")
FIELDS = ("id", "caption_0", "caption_1", "image_0", "image_1")


def find_release_root(folder: Path) -> Path | None:
    """The folder holding ``examples.jsonl``, or None (then the Parquet layout is read)."""
    for root in (folder, folder / "data"):
        if (root / "examples.jsonl").is_file():
            return root
    return None


def image_rel(root: Path, name: str) -> str:
    """``ex_0_img_0`` -> ``images/ex_0_img_0.png`` (another extension if that is on disk)."""
    if Path(name).suffix:
        return f"images/{name}"
    for ext in (".png", ".jpg", ".jpeg"):
        if (root / "images" / f"{name}{ext}").exists():
            return f"images/{name}{ext}"
    return f"images/{name}.png"


def _row(rec: dict, image_0: str, image_1: str) -> dict:
    return {"item_id": str(rec["id"]), "image_base": image_0, "image_foil": image_1,
            "caption_base": rec["caption_0"], "caption_foil": rec["caption_1"],
            "category": rec.get("collapsed_tag"), "edit_type": rec.get("tag"),
            "secondary_tag": rec.get("secondary_tag"),
            "num_main_preds": rec.get("num_main_preds")}


def read_jsonl_layout(root: Path) -> pd.DataFrame:
    file = root / "examples.jsonl"
    rows = []
    for n, rec in enumerate(read_jsonl(file), 1):
        require_fields(rec, FIELDS, f"{file}, line {n}")
        rows.append(_row(rec, image_rel(root, rec["image_0"]), image_rel(root, rec["image_1"])))
    return pd.DataFrame(rows)


def read_parquet_layout(folder: Path, root: Path, check_images: bool,
                        sources: dict) -> pd.DataFrame:
    """``data/test-*.parquet`` with embedded ``image_0``/``image_1`` (the current Hub form)."""
    if not any(p for p in folder.rglob("*.parquet") if IMAGES_DIRNAME not in p.parts):
        raise BenchmarkError(f"{NAME}: no examples.jsonl in {folder} or {folder / 'data'}, and "
                             f"no Parquet shards (data/test-*.parquet)")
    _, table = read_split(folder, "test", NAME, FIELDS)
    paths = embedded_paths(table, ("image_0", "image_1"), root, "test", check_images, sources)
    rows = [_row(rec, paths["image_0"][r], paths["image_1"][r])
            for r, rec in enumerate(table.to_dict(orient="records"))]
    return pd.DataFrame(rows)


@takes_options("images")
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    root = find_release_root(require_dir(folder, NAME, "the Winoground data folder"))
    findings = Findings(NAME)
    sources: dict = {}
    if root is not None:
        items, layout = read_jsonl_layout(root), "examples.jsonl + images/"
    else:
        root = images_root(folder, options)
        items = read_parquet_layout(folder, root, check_images, sources)
        layout = "data/test-*.parquet"
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
        extras={"expected_total": EXPECTED_TOTAL, "layout": layout},
    )
    return finish(manifest, items, root, findings, on_invalid=on_invalid,
                  check_images=check_images, sources=sources)
