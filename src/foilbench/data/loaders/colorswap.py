"""ColorSwap (Burapacheep et al., 2024): colour-word order, Winoground-style pairs.

Source: huggingface.co/datasets/stanfordnlp/colorswap (MIT; gated: accept the terms on the
Hub, then ``huggingface-cli download stanfordnlp/colorswap --repo-type dataset``). Parquet
shards ``data/{train,test}-*.parquet`` with images embedded as bytes.

Native format, two layouts of the same fields ``id``, ``image_1``, ``image_2``, ``caption_1``,
``caption_2`` (``caption_k`` describes ``image_k``; the two captions hold the same words with
the colour words swapped), plus ``image_source`` and ``caption_source``:

* the Hub's Parquet shards, images embedded as bytes (written once to ``?images=DIR``,
  default ``<release>/_foilbench_images``);
* the GitHub form (github.com/Top34051/colorswap, README "Usage": "We include the captions and
  images in ``data/{train, test}.json`` and ``data/images.zip``"): each JSON file a list of
  ``{"id": 0, "caption_1": ..., "caption_2": ..., "image_1": "images/img_0_1.png",
  "image_2": "images/img_0_2.png", "image_source": "midjourney", "caption_source": "human"}``,
  image paths relative to ``data/`` where ``images.zip`` unpacks. Read when ``<split>.json``
  is in the folder or its ``data/``; it wins over Parquet shards.

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
    LoaderOptionError,
    check_counts,
    finish,
    loader_options,
    manifest_for,
    read_json,
    require_fields,
    takes_options,
)
from foilbench.data.loaders.hf_parquet import embedded_paths, images_root, read_split
from foilbench.errors import BenchmarkError

NAME = "colorswap"
EXPECTED = {"train": 700, "test": 300}
COLUMNS = ("id", "image_1", "image_2", "caption_1", "caption_2")
DOWNLOAD_NOTE = ("accept the terms at https://huggingface.co/datasets/stanfordnlp/colorswap, "
                 "then huggingface-cli download stanfordnlp/colorswap --repo-type dataset")


def json_root(folder: Path, splits: list[str]) -> Path | None:
    """The folder holding the GitHub form's ``<split>.json`` files, or None."""
    for root in (folder, folder / "data"):
        if all((root / f"{name}.json").is_file() for name in splits):
            return root
    return None


def read_json_split(root: Path, name: str) -> pd.DataFrame:
    file = root / f"{name}.json"
    data = read_json(file)
    if not isinstance(data, list):
        raise BenchmarkError(f"{file}: expected a list of {{{', '.join(COLUMNS)}}}")
    for n, rec in enumerate(data):
        require_fields(rec, COLUMNS, f"{file}, entry {n}")
    return pd.DataFrame(data)


def _items(table: pd.DataFrame, name: str, image_1: list[str], image_2: list[str]):
    return pd.DataFrame({
        "item_id": [f"{name}/{i}" for i in table["id"]],
        "image_base": image_1, "image_foil": image_2,
        "caption_base": table["caption_1"], "caption_foil": table["caption_2"],
        "category": "attribute", "edit_type": "swap_color", "split": name,
        "image_source": table.get("image_source"),
    })


def _split(options: dict[str, str]) -> str:
    split = options.get("split", "test")
    if split not in (*EXPECTED, "all"):
        raise LoaderOptionError(f"{NAME}: unknown split {split!r}; known: train, test, all")
    return split


@takes_options("images", "split", check=_split)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    split = _split(options)
    findings = Findings(NAME)
    splits = list(EXPECTED) if split == "all" else [split]
    root = json_root(folder, splits)
    tables: list = []
    sources: dict = {}
    for name in splits:
        if root is not None:
            table = read_json_split(root, name)
            tables.append(_items(table, name, [str(p) for p in table["image_1"]],
                                 [str(p) for p in table["image_2"]]))
        else:
            _, table = read_split(folder, name, NAME, COLUMNS)
            paths = embedded_paths(table, ("image_1", "image_2"), images_root(folder, options),
                                   name, check_images, sources)
            tables.append(_items(table, name, paths["image_1"], paths["image_2"]))
        check_counts(findings, "split", {name: len(table)}, {name: EXPECTED[name]})
    items = pd.concat(tables, ignore_index=True)
    manifest = manifest_for(
        NAME, "group", license="MIT",
        source="https://huggingface.co/datasets/stanfordnlp/colorswap",
        description="ColorSwap: colour words swapped between two objects",
        extras={"expected_counts": EXPECTED, "splits": splits,
                "layout": "data/<split>.json + images/" if root is not None else "Parquet"})
    return finish(manifest, items, root if root is not None else images_root(folder, options),
                  findings, on_invalid=on_invalid, check_images=check_images,
                  image_hint=DOWNLOAD_NOTE, sources=sources)
