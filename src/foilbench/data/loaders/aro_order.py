"""ARO COCO-Order and Flickr30k-Order (Yuksekgonul et al., ICLR 2023, section 2.2).

Source: github.com/mertyg/vision-language-models-are-bows (MIT), ``COCO_Order`` and
``Flickr30k_Order`` in ``dataset_zoo/aro_datasets.py``. ARO ships no negatives for these two: it
builds them at run time from the Karpathy *test* split, as BLIP distributes it
(``coco_karpathy_test.json`` and ``flickr30k_test.json`` from
storage.googleapis.com/sfr-vision-language-research/datasets/). Images: COCO 2014 (the JSON's
``image`` is ``val2014/COCO_val2014_*.jpg`` under the COCO root; COCO terms of use) and
Flickr30k (``flickr30k-images/*.jpg``; Flickr terms, by request from the Flickr30k authors).

Native format: a JSON list of ``{"image": PATH, "caption": [str, ...], ...}``, one entry per
image. Every caption is one test case: the image with [caption, its four perturbations]
(:mod:`foilbench.data.loaders.aro_perturb`), scored by I2T R@1 over K = 4 negatives, as the
paper's "Precision@1". The per-negative perturbation names are ``manifest.extras
["negative_order"]``; ``n_identical_negatives`` counts negatives that equal the original after
normalisation (a caption with one noun and one adjective, say). Those tie with the positive and
count as failures here (ties are failures); the authors' argmax picked the original on a tie.

Expected counts (Karpathy test split sizes; not printed in the paper): COCO 5,000 images /
25,010 captions; Flickr30k 1,000 images / 5,000 captions.

Spec: ``aro_coco_order:DIR`` or ``aro_flickr_order:DIR``, where DIR holds the annotation JSON.
Options: ``images=ROOT`` (default DIR, or ``$FOILBENCH_COCO2014`` / ``$FOILBENCH_FLICKR30K``),
``seed=N`` (default 0), ``max_words=N`` (default 30), ``redraws=N`` (default 0 = the paper;
N > 0 re-draws a negative identical to the original up to N times, so fewer ties),
``perturbations=FILE`` (a JSONL written by :func:`write_perturbations`: no tagger needed). Without that file the negatives need spaCy's
``en_core_web_sm`` (:func:`~foilbench.data.loaders.aro_perturb.spacy_tagger`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from foilbench.data.format import Benchmark
from foilbench.data.loaders.aro_perturb import (
    DEFAULT_MAX_WORDS,
    PERTURBATIONS,
    Tagger,
    order_captions,
    spacy_tagger,
)
from foilbench.data.loaders.common import (
    Findings,
    LoaderOptionError,
    check_counts,
    finish,
    image_root,
    manifest_for,
    read_json,
    read_jsonl,
    require_dir,
    require_fields,
    split_spec,
    takes_options,
)
from foilbench.errors import BenchmarkError

OPTIONS = ("images", "seed", "max_words", "redraws", "perturbations")
BLIP_URL = "https://storage.googleapis.com/sfr-vision-language-research/datasets/"
DOWNLOAD_NOTE = (f"ARO Order: the captions are BLIP's Karpathy test files {BLIP_URL}"
                 f"coco_karpathy_test.json and {BLIP_URL}flickr30k_test.json; negatives need "
                 f"spaCy's en_core_web_sm (or ?perturbations=FILE)")


@dataclass(frozen=True)
class OrderSource:
    """What differs between COCO-Order and Flickr30k-Order."""

    subset: str
    annotation: str
    expected_images: int
    expected_captions: int
    images_env: str
    license: str
    image_note: str


SOURCES = {
    "coco_order": OrderSource(
        "coco_order", "coco_karpathy_test.json", 5000, 25010, "FOILBENCH_COCO2014",
        "MIT (ARO code); captions and images: COCO terms of use",
        "COCO 2014 images: ROOT/val2014/COCO_val2014_*.jpg "
        "(http://images.cocodataset.org/zips/val2014.zip)"),
    "flickr_order": OrderSource(
        "flickr_order", "flickr30k_test.json", 1000, 5000, "FOILBENCH_FLICKR30K",
        "MIT (ARO code); captions and images: Flickr30k terms (research use, by request)",
        "Flickr30k images: ROOT/flickr30k-images/*.jpg (request at "
        "https://shannon.cs.illinois.edu/DenotationGraph/)"),
}


def caption_rng(seed: int, image: str, caption_index: int) -> np.random.Generator:
    """A generator keyed by (seed, image, caption index): a caption's negatives do not depend on
    which other captions are loaded or in what order."""
    digest = hashlib.sha256(f"{image}\x00{caption_index}".encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def build_items(annotation: list, source: OrderSource, tagger: Tagger, seed: int,
                max_words: int, where: str, redraws: int = 0) -> pd.DataFrame:
    """One choice item per caption: ``[original, *four perturbations]``."""
    rows = []
    for n, entry in enumerate(tqdm(annotation, desc=f"aro {source.subset}", unit="image",
                                   leave=False)):
        require_fields(entry, ("image", "caption"), f"{where}, entry {n}")
        captions = entry["caption"]
        captions = [captions] if isinstance(captions, str) else list(captions)
        for c, caption in enumerate(captions):
            options = order_captions(str(caption), tagger, caption_rng(seed, entry["image"], c),
                                     max_words, redraws)
            rows.append(item_row(f"{source.subset}/{n}/{c}", source.subset, str(entry["image"]),
                                 options))
    return pd.DataFrame(rows)


def item_row(item_id: str, subset: str, image: str, captions: list[str]) -> dict:
    return {"item_id": item_id, "image": image,
            "captions": captions, "operation": "shuffle", "category": "order", "split": subset,
            "n_identical_negatives": sum(neg == captions[0] for neg in captions[1:])}


def read_perturbation_file(path: Path, subset: str) -> pd.DataFrame:
    """Items from a JSONL of ``{"item_id", "image", "captions"}`` (see write_perturbations)."""
    rows = []
    for n, rec in enumerate(read_jsonl(path), 1):
        require_fields(rec, ("item_id", "image", "captions"), f"{path}, line {n}")
        if len(rec["captions"]) != 1 + len(PERTURBATIONS):
            raise BenchmarkError(f"{path}, line {n}: expected {1 + len(PERTURBATIONS)} captions "
                                 f"(original first, then {', '.join(PERTURBATIONS)}), got "
                                 f"{len(rec['captions'])}")
        if not str(rec["item_id"]).startswith(f"{subset}/"):
            raise BenchmarkError(f"{path}, line {n}: item {rec['item_id']!r} is not a "
                                 f"{subset} item (ids start with '{subset}/')")
        rows.append(item_row(str(rec["item_id"]), subset, str(rec["image"]),
                             [str(c) for c in rec["captions"]]))
    if not rows:
        raise BenchmarkError(f"{path}: no items")
    return pd.DataFrame(rows)


def write_perturbations(bench: Benchmark, path: str | Path) -> Path:
    """Save a loaded Order benchmark's captions as JSONL so a machine without spaCy (or a later
    run) reuses exactly these negatives via ``?perturbations=FILE``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for rec in bench.items[["item_id", "image", "captions"]].itertuples(index=False):
            f.write(json.dumps({"item_id": rec.item_id, "image": rec.image,
                                "captions": list(rec.captions)}) + "\n")
    return path


def _int_option(options: dict[str, str], key: str, default: int,
                name: str = "aro order") -> int:
    try:
        return int(options.get(key, default))
    except ValueError:
        raise LoaderOptionError(f"{name}: ?{key}= must be an integer, got "
                                f"{options[key]!r}") from None


def _ints_of(name: str) -> Callable[[dict[str, str]], None]:
    """The check of ``name``'s integer options (its loader declares it)."""
    def check(options: dict[str, str]) -> None:
        for key in ("seed", "max_words", "redraws"):
            _int_option(options, key, 0, name)
    return check


def load_order(source: OrderSource, path: str | Path, on_invalid: str = "raise",
               check_images: bool = True, tagger: Tagger | None = None) -> Benchmark:
    """COCO-Order or Flickr30k-Order from the release folder (see the module docstring)."""
    name = f"aro_{source.subset}"
    folder, options = split_spec(path, allowed=OPTIONS)
    _ints_of(name)(options)
    require_dir(folder, name, f"the folder holding {source.annotation}")
    seed = _int_option(options, "seed", 0, name)
    max_words = _int_option(options, "max_words", DEFAULT_MAX_WORDS, name)
    redraws = _int_option(options, "redraws", 0, name)
    recipe: dict[str, int | None] = {"seed": seed, "max_words": max_words, "redraws": redraws}
    findings = Findings(name)
    if options.get("perturbations"):
        pfile = Path(options["perturbations"]).expanduser()
        items = read_perturbation_file(pfile, source.subset)
        generated = f"read from {pfile}"
        recipe = dict.fromkeys(recipe)  # whatever produced the file decided them
    else:
        file = folder / source.annotation
        if not file.is_file():
            raise BenchmarkError(f"{name}: {file} not found. {DOWNLOAD_NOTE}")
        annotation = read_json(file)
        if not isinstance(annotation, list):
            raise BenchmarkError(f"{file}: expected a list of {{\"image\", \"caption\"}} entries")
        items = build_items(annotation, source, tagger or spacy_tagger(), seed, max_words,
                            str(file), redraws)
        generated = f"generated with seed {seed}, max_words {max_words}, redraws {redraws}"
        check_counts(findings, "count", {"images": len(annotation)},
                     {"images": source.expected_images})
    check_counts(findings, "count", {"captions": len(items)},
                 {"captions": source.expected_captions})
    identical = int((items["n_identical_negatives"] > 0).sum())
    if identical:
        findings.warn(f"{identical} of {len(items)} captions have a negative identical to the "
                      f"original after normalisation (scored as ties, i.e. failures)")
    manifest = manifest_for(
        name, "i2t", license=source.license,
        source=f"https://github.com/mertyg/vision-language-models-are-bows; "
               f"{BLIP_URL}{source.annotation}",
        description=f"ARO {source.subset}: caption vs its four word-order shuffles ({generated})",
        extras={"negative_order": list(PERTURBATIONS), **recipe,
                "expected_counts": {"captions": source.expected_captions},
                "captions_with_identical_negative": identical})
    return finish(manifest, items, image_root(options, source.images_env, folder), findings,
                  on_invalid=on_invalid, check_images=check_images,
                  image_hint=f"pass ?images=ROOT or set {source.images_env}; "
                             f"{source.image_note}")


@takes_options(*OPTIONS, check=_ints_of("aro_coco_order"))
def load_coco(path: str | Path, on_invalid: str = "raise", check_images: bool = True,
              tagger: Tagger | None = None) -> Benchmark:
    """``aro_coco_order:DIR`` -- DIR holds ``coco_karpathy_test.json``."""
    return load_order(SOURCES["coco_order"], path, on_invalid, check_images, tagger)


@takes_options(*OPTIONS, check=_ints_of("aro_flickr_order"))
def load_flickr(path: str | Path, on_invalid: str = "raise", check_images: bool = True,
                tagger: Tagger | None = None) -> Benchmark:
    """``aro_flickr_order:DIR`` -- DIR holds ``flickr30k_test.json``."""
    return load_order(SOURCES["flickr_order"], path, on_invalid, check_images, tagger)
