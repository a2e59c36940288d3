"""ColorSwap (Burapacheep et al., 2024): colour-word order, Winoground-style pairs.

Source: huggingface.co/datasets/stanfordnlp/colorswap (MIT; gated: accept the terms on the
Hub, then ``huggingface-cli download stanfordnlp/colorswap --repo-type dataset``). Parquet
shards ``data/{train,test}-*.parquet`` with images embedded as bytes.

Native format: columns ``id``, ``image_1``, ``image_2``, ``caption_1``, ``caption_2``
(``caption_k`` describes ``image_k``; the two captions hold the same words with the colour
words swapped), plus ``image_source`` and ``caption_source``.

Expected counts: 1,000 examples (2,000 image-caption pairs): train 700, test 300. The paper
reports its evaluations on test; ``?split=test`` (default), ``train`` or ``all``.

foilbench form: kind ``pair`` (base = image_1/caption_1, foil = image_2/caption_2), scored by
Group (CompoSET Table 8). Metadata: ``category`` = attribute, ``edit_type`` = swap_color,
``split``, and ``image_source`` where present.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    check_counts,
    finish,
    manifest_for,
    require_columns,
    split_spec,
)
from foilbench.data.loaders.hf_parquet import (
    embedded_paths,
    images_root,
    read_shards,
    shard_files,
)

NAME = "colorswap"
EXPECTED = {"train": 700, "test": 300}
COLUMNS = ("id", "image_1", "image_2", "caption_1", "caption_2")
DOWNLOAD_NOTE = ("accept the terms at https://huggingface.co/datasets/stanfordnlp/colorswap, "
                 "then huggingface-cli download stanfordnlp/colorswap --repo-type dataset")


def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = split_spec(path, allowed=("images", "split"))
    split = options.get("split", "test")
    if split not in (*EXPECTED, "all"):
        raise ValueError(f"{NAME}: unknown split {split!r}; known: train, test, all")
    findings = Findings(NAME)
    splits = list(EXPECTED) if split == "all" else [split]
    tables = []
    for name in splits:
        files = shard_files(folder, name, NAME)
        table = read_shards(files)
        require_columns(table, COLUMNS, files[0])
        check_counts(findings, "split", {name: len(table)}, {name: EXPECTED[name]})
        paths = embedded_paths(table, ("image_1", "image_2"), images_root(folder, options),
                               name, check_images)
        tables.append(pd.DataFrame({
            "item_id": [f"{name}/{i}" for i in table["id"]],
            "image_base": paths["image_1"], "image_foil": paths["image_2"],
            "caption_base": table["caption_1"], "caption_foil": table["caption_2"],
            "category": "attribute", "edit_type": "swap_color", "split": name,
            "image_source": table.get("image_source"),
        }))
    items = pd.concat(tables, ignore_index=True)
    manifest = manifest_for(
        NAME, "group", license="MIT",
        source="https://huggingface.co/datasets/stanfordnlp/colorswap",
        description="ColorSwap: colour words swapped between two objects",
        extras={"expected_counts": EXPECTED, "splits": splits})
    return finish(manifest, items, images_root(folder, options), findings,
                  on_invalid=on_invalid, check_images=check_images, image_hint=DOWNLOAD_NOTE)
