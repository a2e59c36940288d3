"""BiVLC (Miranda et al., NeurIPS 2024 D&B): bidirectional vision-language compositionality.

Source: huggingface.co/datasets/imirandam/BiVLC (MIT), Parquet shards ``data/test-*.parquet``
with images embedded as bytes; download them with ``huggingface-cli download imirandam/BiVLC
--repo-type dataset`` (see :data:`DOWNLOAD_NOTE`).

Native format: columns ``image`` (COCO 2017 val image), ``caption`` (its COCO caption),
``negative_caption`` (SugarCrepe's hard negative), ``negative_image`` (generated for the
negative caption), ``type`` (Replace/Swap/Add), ``subtype`` (Object/Attribute/Relation).

Expected counts: 2,933 test instances.

foilbench form: kind ``pair`` (base = image/caption, foil = negative_image/negative_caption),
scored by Group (CompoSET Table 8). Metadata: ``operation`` (type, lower case), ``category``
(subtype, lower case), ``edit_type`` (SugarCrepe-style ``replace_obj`` ...). Embedded images
are written once to ``?images=DIR`` (default ``<release>/_foilbench_images``); text-only
inspection writes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    check_counts,
    finish,
    loader_options,
    manifest_for,
    takes_options,
)
from foilbench.data.loaders.hf_parquet import embedded_paths, images_root, read_split

NAME = "bivlc"
EXPECTED_TOTAL = 2933
COLUMNS = ("image", "caption", "negative_caption", "negative_image", "type", "subtype")
DOWNLOAD_NOTE = "huggingface-cli download imirandam/BiVLC --repo-type dataset --local-dir DIR"


@takes_options("images")
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    files, table = read_split(folder, "test", NAME, COLUMNS)
    findings = Findings(NAME)
    check_counts(findings, "release", {"instances": len(table)}, {"instances": EXPECTED_TOTAL})
    root = images_root(folder, options)
    sources: dict = {}
    paths = embedded_paths(table, ("image", "negative_image"), root, "test", check_images,
                           sources)
    operation = table["type"].astype(str).str.lower()
    category = table["subtype"].astype(str).str.lower()
    items = pd.DataFrame({
        "item_id": [f"test/{i}" for i in range(len(table))],
        "image_base": paths["image"], "image_foil": paths["negative_image"],
        "caption_base": table["caption"], "caption_foil": table["negative_caption"],
        "operation": operation, "category": category,
        "edit_type": operation + "_" + category.str[:3],
    })
    manifest = manifest_for(
        NAME, "group", license="MIT", source="https://huggingface.co/datasets/imirandam/BiVLC",
        description="BiVLC: COCO image + generated negative image, caption + hard negative",
        extras={"expected_total": EXPECTED_TOTAL, "shards": [f.name for f in files]})
    return finish(manifest, items, root, findings, on_invalid=on_invalid,
                  check_images=check_images, image_hint=DOWNLOAD_NOTE, sources=sources)
