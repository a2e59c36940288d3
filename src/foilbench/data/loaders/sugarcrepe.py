"""SugarCrepe (Hsieh et al., NeurIPS 2023 Datasets & Benchmarks): image-to-text 1-of-2 selection.

Source: github.com/RAIVNLab/sugar-crepe, folder ``data/``; license MIT (code and annotations);
images are COCO val2017 (CC BY 4.0 annotations, Flickr image terms), not shipped with it.

Native format: one JSON file per hard-negative type, named by the type
(``add_att.json``, ``add_obj.json``, ``replace_att.json``, ``replace_obj.json``,
``replace_rel.json``, ``swap_att.json``, ``swap_obj.json``). Each file is an object keyed by a
string index -> ``{"filename": COCO val2017 file name, "caption": positive,
"negative_caption": hard negative}``. The authors removed some items, so keys have gaps
(``swap_obj.json`` has no key ``"108"``).

Expected counts (published release): 7,511 items; add_att 692, add_obj 2062, replace_att 788,
replace_obj 1652, replace_rel 1406, swap_att 666, swap_obj 245. Other counts are warned about,
not refused: the same format also holds the authors' unrefined candidates, which this loader
reads too (any ``*.json`` in the folder is one type, named by its file stem).

Type subsets, without ``--allow-partial``: ``?types=replace_obj,swap_att`` names the types to
read, and ``?subset=table8`` the five replace/swap types CompoSET Table 8 scores (the
SugarCrepe++ types: replace_att, replace_obj, replace_rel, swap_att, swap_obj; 4,757 items).
Table 8 does not name the subset; its interval pins it: CLIP B/32's 78.6 [77.4, 79.7] is the
Wilson interval of n = 4,757 ([77.4, 79.7]), not of all 7,511 items ([77.7, 79.5]).
Only the named types must be present; their counts are checked against the published ones.

foilbench form: kind ``choice`` (the image, ``[caption, negative_caption]``), scored by I2T R@1,
the protocol of the paper and of CompoSET Table 8. Item ids are ``<type>/<key>``. Metadata:
``edit_type`` (the file stem), ``operation`` (add/replace/swap), ``category``
(object/attribute/relation, the part of the caption the negative changes).

Spec: ``sugarcrepe:JSON_DIR`` (or one JSON file), with the COCO val2017 image folder given as
``sugarcrepe:JSON_DIR?images=COCO_VAL2017_DIR`` or by the environment variable
``FOILBENCH_COCO_VAL2017``; without either, images are looked up beside the JSON files. Text-only
inspection (``check_images=False``) needs no images. Download: the JSON files are at
https://github.com/RAIVNLab/sugar-crepe/tree/main/data and the images at
http://images.cocodataset.org/zips/val2017.zip (see :data:`DOWNLOAD_URLS`).
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
    require_fields,
    takes_options,
)
from foilbench.errors import BenchmarkError

NAME = "sugarcrepe"
IMAGES_ENV = "FOILBENCH_COCO_VAL2017"
EXPECTED_COUNTS: dict[str, int] = {
    "add_att": 692,
    "add_obj": 2062,
    "replace_att": 788,
    "replace_obj": 1652,
    "replace_rel": 1406,
    "swap_att": 666,
    "swap_obj": 245,
}
TABLE8_TYPES = ("replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")
SUBSETS: dict[str, tuple[str, ...] | None] = {"all": None, "table8": TABLE8_TYPES}
OPERATIONS = ("add", "replace", "swap")
CATEGORIES = {"att": "attribute", "obj": "object", "rel": "relation"}
FIELDS = ("filename", "caption", "negative_caption")
DOWNLOAD_NOTE = ("SugarCrepe: the JSON files are at https://github.com/RAIVNLab/sugar-crepe/tree/"
                 "main/data; the images are COCO val2017: "
                 "http://images.cocodataset.org/zips/val2017.zip")
DOWNLOAD_URLS = {
    "annotations": "https://github.com/RAIVNLab/sugar-crepe/tree/main/data",
    "images": "http://images.cocodataset.org/zips/val2017.zip",
}


def type_files(path: Path) -> list[Path]:
    """The JSON files of a release folder (or the one file given)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise BenchmarkError(f"{NAME}: {path} not found (expected a folder of SugarCrepe JSON "
                             f"files such as {', '.join(EXPECTED_COUNTS)}.json)")
    files = sorted(path.glob("*.json"))
    if not files:
        raise BenchmarkError(f"{NAME}: no *.json files in {path} (expected "
                             f"{', '.join(f'{t}.json' for t in EXPECTED_COUNTS)})")
    return files


def read_type_file(file: Path) -> pd.DataFrame:
    """One type's items in file order; the schema is checked record by record."""
    data = read_json(file)
    if not isinstance(data, dict):
        raise BenchmarkError(f"{file}: expected an object keyed by item index, "
                             f"got {type(data).__name__}")
    edit_type = file.stem
    rows = []
    for key, record in data.items():
        require_fields(record, FIELDS, f"{file}, item {key!r}")
        rows.append({
            "item_id": f"{edit_type}/{key}",
            "image": record["filename"],
            "captions": [record["caption"], record["negative_caption"]],
            "source_key": str(key),
        })
    table = pd.DataFrame(rows, columns=["item_id", "image", "captions", "source_key"])
    operation, _, target = edit_type.partition("_")
    table["edit_type"] = edit_type
    table["operation"] = operation
    table["category"] = CATEGORIES.get(target, target)
    return table


def wanted_types(options: dict[str, str]) -> tuple[str, ...] | None:
    """The types ``?types=`` or ``?subset=`` names (None: every file in the folder)."""
    if "types" in options and "subset" in options:
        raise LoaderOptionError(f"{NAME}: give ?types= or ?subset=, not both")
    if "subset" in options:
        if options["subset"] not in SUBSETS:
            raise LoaderOptionError(f"{NAME}: unknown subset {options['subset']!r}; known: "
                                    f"{', '.join(SUBSETS)}")
        return SUBSETS[options["subset"]]
    if "types" in options:
        types = tuple(t.strip() for t in options["types"].split(",") if t.strip())
        if not types:
            raise LoaderOptionError(f"{NAME}: ?types= names no type")
        return types
    return None


@takes_options("images", "types", "subset", check=wanted_types)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    """Read a SugarCrepe release folder (see the module docstring for the spec)."""
    folder, options = loader_options(path, load)
    findings = Findings(NAME)
    files = type_files(folder)
    json_dir = folder if folder.is_dir() else folder.parent
    wanted = wanted_types(options)
    if wanted is not None:
        unknown = [t for t in wanted if t not in {f.stem for f in files}]
        if unknown:
            raise BenchmarkError(f"{NAME}: {json_dir} has no "
                                 f"{', '.join(t + '.json' for t in unknown)} "
                                 f"(have: {', '.join(f.name for f in files)})")
        files = [f for f in files if f.stem in wanted]
    for file in files:
        if file.stem.partition("_")[0] not in OPERATIONS:
            findings.warn(f"{file.name}: type {file.stem!r} is not <add|replace|swap>_<part>; "
                          f"operation left as {file.stem.partition('_')[0]!r}")
    present = {f.stem for f in files}
    if folder.is_dir() and wanted is None and present & set(EXPECTED_COUNTS):
        absent = [t for t in EXPECTED_COUNTS if t not in present]
        if absent:
            findings.missing_part(f"{json_dir} lacks {', '.join(f'{t}.json' for t in absent)} "
                                  f"(or name the types you mean: ?types=... / ?subset=table8)",
                                  on_invalid)
    items = pd.concat([read_type_file(f) for f in files], ignore_index=True)
    observed = Counter(items["edit_type"])
    expected = {t: n for t, n in EXPECTED_COUNTS.items()
                if wanted is None or t in wanted} if present & set(EXPECTED_COUNTS) else {}
    check_counts(findings, "edit_type", dict(observed), expected)
    root = image_root(options, IMAGES_ENV, json_dir)
    name = NAME if wanted is None else f"{NAME}_{options.get('subset') or '+'.join(wanted)}"
    subset = options.get("subset", "all") if "types" not in options else "types"
    manifest = manifest_for(
        name, "i2t",
        version="2023 (commit 0047054)",
        license="MIT (annotations); images: COCO val2017 terms",
        source="https://github.com/RAIVNLab/sugar-crepe (data/*.json)",
        description="SugarCrepe: 7 hard-negative types, 1 image vs positive/negative caption",
        extras={"files": [f.name for f in files], "expected_counts": expected,
                "json_dir": str(json_dir), "types": sorted(present),
                "subset": subset},
    )
    hint = (f"SugarCrepe images are COCO val2017 files: pass sugarcrepe:{json_dir}?images="
            f"COCO_VAL2017_DIR or set {IMAGES_ENV} (download: {DOWNLOAD_URLS['images']})")
    return finish(manifest, items, root, findings, on_invalid=on_invalid,
                  check_images=check_images, image_hint=hint)
