"""What's Up (Kamath et al., EMNLP 2023): spatial relations on controlled photographs.

Source: github.com/amitakamath/whatsup_vlms (code MIT; the data is linked from its README as
Google-Drive files: ``controlled_images_dataset.json`` + ``controlled_images.tar.gz``
(Controlled A) and ``controlled_clevr_dataset.json`` + ``controlled_clevr.tar.gz``
(Controlled B)). See :data:`DOWNLOAD_NOTE`; nothing is downloaded here.

Native format: each JSON file is a list of ``{"image_path": "data/controlled_images/
mug_left_of_plate.jpeg", "caption_options": [4 captions, the first true]}``. The file name is
``<object>_<preposition>_<object>``; prepositions are left_of, right_of, on, under (A) and
left_of, right_of, in-front_of, behind (B). Images live in ``controlled_images/`` and
``controlled_clevr/`` beside the JSON files (the JSON's leading folders are ignored).

Expected counts: Controlled A 412 images in 103 sets, Controlled B 408 images in 102 sets; a
set is the four images of one object pair (A: left_of, right_of, on, under; B: left_of,
right_of, in-front_of, behind), keyed as the authors' ``Controlled_Images.evaluate_scores``
keys it (``(name.split('_')[0], name.split('_')[-1][:-5])``, the two objects).

Two foilbench forms:

* ``whatsup:DIR`` -> kind ``choice`` (the image, its 4 captions), scored by I2T R@1: the What's
  Up paper's own protocol ("Individual accuracy" in ``evaluate_scores``), not Table 8's.
  ``edit_type`` = preposition, ``split`` = A/B.
* ``whatsup_pairs:DIR`` -> kind ``pair``, scored by Group, CompoSET Table 8's What's Up column
  ("Metric per benchmark: Group for Winoground-style 2x2 (CompoSET, Winoground, BiVLC, What's
  Up, ColorSwap, MMVP)"). ``?pairs=all`` (default): every one of the six image pairs of each
  4-image set, each image with its own true caption (``edit_type`` = ``<prep>_vs_<prep>``,
  ``axis`` = the shared axis or ``cross``): 6 x (103 + 102) = 1,230 items, the n that
  reproduces Table 8's interval for CLIP B/32 (2.2 [1.5, 3.2]; 410 per-axis pairs would give
  [1.2, 4.1]). ``?pairs=axis``: only the two opposite pairs per set (left/right, on/under,
  front/behind), the per-axis bidirectional Group of CompoSET App. E ("Group is full
  bidirectional Winoground Group ... over the (prep_a, prep_b) pair"); ``edit_type`` = axis.
  A set with fewer than four images is warned about; its present images still pair.

Option ``?subset=A`` or ``?subset=B`` keeps one subset (default both).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import combinations
from pathlib import Path, PurePosixPath

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    LoaderOptionError,
    check_counts,
    finish,
    loader_options,
    manifest_for,
    present_parts,
    read_json,
    require_dir,
    require_fields,
    takes_options,
)
from foilbench.errors import BenchmarkError

SUBSETS = {  # subset -> (annotation file, image folder)
    "A": ("controlled_images_dataset.json", "controlled_images"),
    "B": ("controlled_clevr_dataset.json", "controlled_clevr"),
}
EXPECTED = {"A": 412, "B": 408}
EXPECTED_SETS = {"A": 103, "B": 102}
PREPOSITIONS = ("left_of", "right_of", "in-front_of", "behind", "on", "under")
ORDER = ("left_of", "right_of", "on", "under", "in-front_of", "behind")  # base before foil
PAIR_MODES = ("all", "axis")
AXES = {"left_of": ("left_right", 0), "right_of": ("left_right", 1),
        "on": ("on_under", 0), "under": ("on_under", 1),
        "in-front_of": ("front_behind", 0), "behind": ("front_behind", 1)}
DOWNLOAD_NOTE = ("What's Up data: follow the links in https://github.com/amitakamath/"
                 "whatsup_vlms#datasets (controlled_images_dataset.json, "
                 "controlled_clevr_dataset.json, controlled_images.tar.gz, "
                 "controlled_clevr.tar.gz) and unpack them into one folder")


def parse_name(stem: str) -> tuple[str, str, str] | None:
    """``mug_left_of_plate`` -> ``("mug", "left_of", "plate")``; None if no preposition."""
    for prep in PREPOSITIONS:
        marker = f"_{prep}_"
        if marker in stem:
            first, _, second = stem.partition(marker)
            return first, prep, second
    return None


def read_subset(folder: Path, subset: str, findings: Findings) -> pd.DataFrame:
    ann_name, image_dir = SUBSETS[subset]
    file = folder / ann_name
    data = read_json(file)
    if not isinstance(data, list):
        raise BenchmarkError(f"{file}: expected a list of {{image_path, caption_options}}")
    rows = []
    for n, rec in enumerate(data):
        require_fields(rec, ("image_path", "caption_options"), f"{file}, entry {n}")
        name = PurePosixPath(str(rec["image_path"]).replace("\\", "/")).name
        stem = PurePosixPath(name).stem
        parsed = parse_name(stem)
        if parsed is None:
            findings.warn(f"{file.name} entry {n}: no preposition in file name {name!r}")
        first, prep, second = parsed or (None, None, None)
        rows.append({"item_id": f"{subset}/{stem}", "image": f"{image_dir}/{name}",
                     "captions": list(rec["caption_options"]), "edit_type": prep,
                     "category": "spatial", "split": subset, "object_1": first,
                     "object_2": second})
    check_counts(findings, f"Controlled {subset}", {"images": len(rows)},
                 {"images": EXPECTED[subset]})
    sets = {(r["object_1"], r["object_2"]) for r in rows if r["edit_type"]}
    if len(sets) != EXPECTED_SETS[subset]:
        findings.warn(f"Controlled {subset}: {len(sets)} sets (object pairs), the published "
                      f"release has {EXPECTED_SETS[subset]}")
    return pd.DataFrame(rows)


def _subsets(options: dict[str, str]) -> list[str]:
    wanted = options.get("subset", "A,B").upper().split(",")
    unknown = [s for s in wanted if s not in SUBSETS]
    if unknown:
        raise LoaderOptionError(f"whatsup: unknown subset(s) {', '.join(unknown)}; known: A, B")
    return wanted


def _pairs(options: dict[str, str]) -> str:
    _subsets(options)
    mode = options.get("pairs", "all")
    if mode not in PAIR_MODES:
        raise LoaderOptionError(f"whatsup_pairs: unknown pairs={mode!r}; known: "
                                f"{', '.join(PAIR_MODES)}")
    return mode


def read_release(path: str | Path, on_invalid: str, load: Callable
                 ) -> tuple[Path, pd.DataFrame, Findings, dict[str, str]]:
    folder, options = loader_options(path, load)
    require_dir(folder, "whatsup", "the folder with controlled_*_dataset.json")
    wanted = _subsets(options)
    findings = Findings("whatsup")
    present = present_parts(folder, wanted, {s: f for s, (f, _) in SUBSETS.items()}, findings,
                            on_invalid, DOWNLOAD_NOTE, hint=" (or pass ?subset=)")
    items = pd.concat([read_subset(folder, s, findings) for s in present], ignore_index=True)
    return folder, items, findings, options


def _pair_row(subset: str, first: str, second: str, base: dict, foil: dict, edit: str,
              axis: str) -> dict:
    return {"item_id": f"{subset}/{first}_{second}/{edit}",
            "image_base": base["image"], "image_foil": foil["image"],
            "caption_base": base["captions"][0], "caption_foil": foil["captions"][0],
            "edit_type": edit, "axis": axis, "category": "spatial", "split": subset,
            "scene_id": f"{subset}/{first}_{second}"}


def set_pairs(items: pd.DataFrame, findings: Findings) -> pd.DataFrame:
    """Per 4-image set: all six image pairs, each image with its own true caption (Table 8)."""
    rows = []
    keyed = items.dropna(subset=["edit_type"])
    for (subset, first, second), group in keyed.groupby(["split", "object_1", "object_2"]):
        by_prep = {r["edit_type"]: r for r in group.to_dict(orient="records")}
        if len(by_prep) != 4:
            findings.warn(f"{subset} {first}/{second}: {len(by_prep)} images in the set, not 4 "
                          f"({', '.join(sorted(by_prep))})")
        preps = sorted(by_prep, key=ORDER.index)
        for a, b in combinations(preps, 2):
            axis = AXES[a][0] if AXES[a][0] == AXES[b][0] else "cross"
            rows.append(_pair_row(subset, first, second, by_prep[a], by_prep[b],
                                  f"{a}_vs_{b}", axis))
    return pd.DataFrame(rows)


def opposite_pairs(items: pd.DataFrame, findings: Findings) -> pd.DataFrame:
    """Per (subset, object pair, axis): the two opposite images as one 2x2 pair item."""
    rows = []
    keyed = items.dropna(subset=["edit_type"])
    for (subset, first, second), group in keyed.groupby(["split", "object_1", "object_2"]):
        by_prep = {r["edit_type"]: r for r in group.to_dict(orient="records")}
        for axis in dict.fromkeys(AXES[p][0] for p in by_prep):
            ends = [p for p in by_prep if AXES[p][0] == axis]
            ends.sort(key=lambda p: AXES[p][1])
            if len(ends) != 2:
                findings.warn(f"{subset} {first}/{second}: only {ends[0]} on axis {axis}; "
                              f"no pair item")
                continue
            rows.append(_pair_row(subset, first, second, by_prep[ends[0]], by_prep[ends[1]],
                                  axis, axis))
    return pd.DataFrame(rows)


def _manifest(name: str, metric: str, items: pd.DataFrame, description: str):
    return manifest_for(
        name, metric, license="MIT (code); images: see the What's Up release",
        source="https://github.com/amitakamath/whatsup_vlms", description=description,
        extras={"expected_counts": EXPECTED,
                "subsets": sorted(Counter(items["split"]).items()) if len(items) else []})


@takes_options("subset", check=_subsets)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    """Controlled A/B as 1-of-4 caption choice (I2T R@1, the What's Up paper's protocol)."""
    folder, items, findings, _ = read_release(path, on_invalid, load)
    manifest = _manifest("whatsup", "i2t", items, "What's Up Controlled A/B, 4 captions")
    manifest.extras["table8_metric"] = None  # Table 8 scores What's Up as pairs: see below
    manifest.extras["table8_form"] = "whatsup_pairs:DIR (Group over the 6 image pairs per set)"
    return finish(manifest, items, folder, findings, on_invalid=on_invalid,
                  check_images=check_images, image_hint=DOWNLOAD_NOTE)


@takes_options("subset", "pairs", check=_pairs)
def load_pairs(path: str | Path, on_invalid: str = "raise",
               check_images: bool = True) -> Benchmark:
    """Controlled A/B as image pairs scored by Group: all six pairs per set (``?pairs=all``,
    CompoSET Table 8, the default) or the two opposite pairs (``?pairs=axis``, App. E)."""
    folder, items, findings, options = read_release(path, on_invalid, load_pairs)
    mode = _pairs(options)
    if mode == "all":
        pairs = set_pairs(items, findings)
        what = "What's Up image pairs, all six per 4-image set (CompoSET Table 8)"
    else:
        pairs = opposite_pairs(items, findings)
        what = "What's Up per-axis bidirectional pairs (CompoSET App. E)"
    manifest = _manifest("whatsup_pairs", "group", items, what)
    per_set = 6 if mode == "all" else 2
    manifest.extras["pairs"] = mode
    manifest.extras["expected_pairs"] = {s: n * per_set for s, n in EXPECTED_SETS.items()}
    return finish(manifest, pairs, folder, findings, on_invalid=on_invalid,
                  check_images=check_images, image_hint=DOWNLOAD_NOTE)
