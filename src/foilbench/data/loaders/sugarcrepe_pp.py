"""SugarCrepe++ (Dumpala et al., NeurIPS 2024 D&B): two positives and one hard negative.

Source: github.com/Sri-Harsha/scpp, folder ``data/`` (also huggingface.co/datasets/Aman-J/
SugarCrepe_pp); license MIT (see the repository); images are COCO val2017, as for SugarCrepe.

Native format: one JSON file per type (``replace_att``, ``replace_obj``, ``replace_rel``,
``swap_att``, ``swap_obj``), each a list of ``{"id", "filename", "caption", "caption2",
"negative_caption"}``: two lexically different positives and SugarCrepe's negative.

Expected counts: 4,757 instances; replace_att 788, replace_obj 1652, replace_rel 1406,
swap_att 666, swap_obj 245.

foilbench form: kind ``choice``, two items per instance, ``<type>/<id>/p1`` = [caption,
negative] and ``<type>/<id>/p2`` = [caption2, negative], each scored by I2T R@1 (the paper's
"Image-P1-Neg" / "Image-P2-Neg"). Metadata: ``edit_type``, ``operation``, ``category``,
``positive`` (p1/p2), ``instance_id``.

Counting (``?unit=``). ``instance`` (default): the manifest's ``score_unit`` is
``instance_id``, so every metric counts one result per instance, right only when both items
are (:func:`foilbench.scoring.aggregate.unit_outcomes`): the paper's ITT, "both positives must
beat the negative", ``s(I, P1) > s(I, N) and s(I, P2) > s(I, N)``, and CompoSET Table 8's
count: its SugarCrepe++ interval for CLIP B/32, 65.5 [64.1, 66.8], is the Wilson interval of
n = 4,757 instances ([64.1, 66.8]), not of the 9,514 items ([64.5, 66.5]). The chance of the
negative falling below both positives is 1/3 (Table 8 prints 50.0 in its chance row).
``item``: every item counts (two per instance, chance 1/2).

Spec: ``sugarcrepe_pp:DIR?images=COCO_VAL2017_DIR`` (or ``$FOILBENCH_COCO_VAL2017``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    LoaderOptionError,
    check_counts,
    finish,
    image_root,
    loader_options,
    manifest_for,
    read_json,
    require_dir,
    require_fields,
    takes_options,
)
from foilbench.data.loaders.sugarcrepe import CATEGORIES, IMAGES_ENV
from foilbench.errors import BenchmarkError

NAME = "sugarcrepe_pp"
EXPECTED_COUNTS = {"replace_att": 788, "replace_obj": 1652, "replace_rel": 1406,
                   "swap_att": 666, "swap_obj": 245}
DOWNLOAD_NOTE = ("SugarCrepe++: the JSON files are at https://github.com/Sri-Harsha/scpp/tree/"
                 "main/data; images are COCO val2017 "
                 "(http://images.cocodataset.org/zips/val2017.zip)")
FIELDS = ("id", "filename", "caption", "caption2", "negative_caption")
UNITS = ("instance", "item")
ITT_CHANCE = 1 / 3  # P(the negative scores below both positives) under exchangeable scores


def read_type(file: Path) -> list[dict]:
    data = read_json(file)
    if not isinstance(data, list):
        raise BenchmarkError(f"{file}: expected a list of {{{', '.join(FIELDS)}}}")
    edit_type = file.stem
    operation, _, target = edit_type.partition("_")
    rows = []
    for n, rec in enumerate(data):
        require_fields(rec, FIELDS, f"{file}, entry {n}")
        for tag, positive in (("p1", rec["caption"]), ("p2", rec["caption2"])):
            rows.append({"item_id": f"{edit_type}/{rec['id']}/{tag}", "image": rec["filename"],
                         "captions": [positive, rec["negative_caption"]],
                         "edit_type": edit_type, "operation": operation,
                         "category": CATEGORIES.get(target, target), "positive": tag,
                         "instance_id": f"{edit_type}/{rec['id']}"})
    return rows


def _unit(options: dict[str, str]) -> str:
    unit = options.get("unit", "instance")
    if unit not in UNITS:
        raise LoaderOptionError(f"{NAME}: unknown unit={unit!r}; known: {', '.join(UNITS)}")
    return unit


@takes_options("images", "unit", check=_unit)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    unit = _unit(options)
    require_dir(folder, NAME, "the SugarCrepe++ data folder of <type>.json files")
    findings = Findings(NAME)
    files = sorted(folder.glob("*.json"))
    if not files:
        raise BenchmarkError(f"{NAME}: no *.json files in {folder}")
    absent = [t for t in EXPECTED_COUNTS if not (folder / f"{t}.json").exists()]
    if absent:
        findings.missing_part(f"{folder} lacks {', '.join(t + '.json' for t in absent)}",
                              on_invalid)
    items = pd.DataFrame([r for f in files for r in read_type(f)])
    instances = Counter(items.drop_duplicates("instance_id")["edit_type"])
    check_counts(findings, "edit_type", dict(instances), EXPECTED_COUNTS)
    manifest = manifest_for(
        NAME, "i2t", license="MIT (annotations); images: COCO val2017 terms",
        source="https://github.com/Sri-Harsha/scpp (data/*.json)",
        description="SugarCrepe++: two positives per negative, one choice item per positive; "
                    + ("one result per instance (ITT, CompoSET Table 8)" if unit == "instance"
                       else "one result per item"),
        extras={"expected_counts": EXPECTED_COUNTS, "files": [f.name for f in files],
                "unit": unit,
                **({"score_unit": "instance_id", "unit_chance": ITT_CHANCE}
                   if unit == "instance" else {})})
    return finish(manifest, items, image_root(options, IMAGES_ENV, folder), findings,
                  on_invalid=on_invalid, check_images=check_images,
                  image_hint=f"pass ?images=COCO_VAL2017_DIR or set {IMAGES_ENV}")
