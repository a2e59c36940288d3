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

Expected counts: Controlled A 408 images, Controlled B 408 images.

Two foilbench forms:

* ``whatsup:DIR`` -> kind ``choice`` (the image, its 4 captions), scored by I2T R@1 as in the
  paper and CompoSET Table 8. ``edit_type`` = preposition, ``split`` = A/B.
* ``whatsup_pairs:DIR`` -> kind ``pair``: per object pair and axis (left/right, on/under,
  front/behind) the two opposite images and their true captions, scored by Group — the
  per-axis bidirectional Group of CompoSET App. E. ``edit_type`` = axis. An image whose
  opposite is absent is warned about and left out.

Option ``?subset=A`` or ``?subset=B`` keeps one subset (default both).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path, PurePosixPath

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    check_counts,
    finish,
    manifest_for,
    read_json,
    require_dir,
    require_fields,
    split_spec,
)
from foilbench.errors import BenchmarkError

SUBSETS = {  # subset -> (annotation file, image folder)
    "A": ("controlled_images_dataset.json", "controlled_images"),
    "B": ("controlled_clevr_dataset.json", "controlled_clevr"),
}
EXPECTED = {"A": 408, "B": 408}
PREPOSITIONS = ("left_of", "right_of", "in-front_of", "behind", "on", "under")
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
    return pd.DataFrame(rows)


def read_release(path: str | Path, on_invalid: str) -> tuple[Path, pd.DataFrame, Findings]:
    folder, options = split_spec(path, allowed=("subset",))
    require_dir(folder, "whatsup", "the folder with controlled_*_dataset.json")
    wanted = options.get("subset", "A,B").upper().split(",")
    unknown = [s for s in wanted if s not in SUBSETS]
    if unknown:
        raise ValueError(f"whatsup: unknown subset(s) {', '.join(unknown)}; known: A, B")
    findings = Findings("whatsup")
    present = [s for s in wanted if (folder / SUBSETS[s][0]).is_file()]
    if not present:
        raise BenchmarkError(f"whatsup: none of {', '.join(SUBSETS[s][0] for s in wanted)} in "
                             f"{folder}. {DOWNLOAD_NOTE}")
    if len(present) < len(wanted):
        absent = [SUBSETS[s][0] for s in wanted if s not in present]
        findings.missing_part(f"{folder} lacks {', '.join(absent)} (or pass ?subset=)",
                              on_invalid)
    items = pd.concat([read_subset(folder, s, findings) for s in present], ignore_index=True)
    return folder, items, findings


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
            base, foil = by_prep[ends[0]], by_prep[ends[1]]
            rows.append({"item_id": f"{subset}/{first}_{second}/{axis}",
                         "image_base": base["image"], "image_foil": foil["image"],
                         "caption_base": base["captions"][0],
                         "caption_foil": foil["captions"][0],
                         "edit_type": axis, "category": "spatial", "split": subset})
    return pd.DataFrame(rows)


def _manifest(name: str, metric: str, items: pd.DataFrame, description: str):
    return manifest_for(
        name, metric, license="MIT (code); images: see the What's Up release",
        source="https://github.com/amitakamath/whatsup_vlms", description=description,
        extras={"expected_counts": EXPECTED,
                "subsets": sorted(Counter(items["split"]).items()) if len(items) else []})


def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    """Controlled A/B as 1-of-4 caption choice (I2T R@1)."""
    folder, items, findings = read_release(path, on_invalid)
    manifest = _manifest("whatsup", "i2t", items, "What's Up Controlled A/B, 4 captions")
    return finish(manifest, items, folder, findings, on_invalid=on_invalid,
                  check_images=check_images, image_hint=DOWNLOAD_NOTE)


def load_pairs(path: str | Path, on_invalid: str = "raise",
               check_images: bool = True) -> Benchmark:
    """Controlled A/B as per-axis opposite-image pairs (Group; CompoSET App. E)."""
    folder, items, findings = read_release(path, on_invalid)
    pairs = opposite_pairs(items, findings)
    manifest = _manifest("whatsup_pairs", "group", items,
                         "What's Up per-axis bidirectional pairs (CompoSET App. E)")
    manifest.extras["expected_pairs"] = {s: n // 2 for s, n in EXPECTED.items()}
    return finish(manifest, pairs, folder, findings, on_invalid=on_invalid,
                  check_images=check_images, image_hint=DOWNLOAD_NOTE)
