"""VSR, Visual Spatial Reasoning (Liu et al., TACL 2023), read as text-to-image choice.

Source: github.com/cambridgeltl/visual-spatial-reasoning (annotations CC BY 4.0; images are
COCO 2017 train/val, not shipped), e.g. ``data/splits/random/{train,dev,test}.jsonl`` or the
Hugging Face copies ``cambridgeltl/vsr_random`` / ``vsr_zeroshot``.

Native format: JSON lines ``{"image": COCO file name, "image_link", "caption", "label": 0|1,
"relation", "subj", "obj", ...}``: a caption stating a spatial relation and whether it is true
for the image. Annotators wrote each caption for an image pair so that it is true of one image
and false of the other, so most captions occur with both labels.

Expected counts: 66 spatial relations. Split sizes differ between the random and zero-shot
splits and versions, so only the relation set is checked.

foilbench form: kind ``image_choice``: for each caption that has at least one true and one
false image, one item per true image (caption, [true image, every false image]), scored by
T2I R@1 (the image-foil-only protocol of CompoSET Table 8). Captions with only one label are
counted in ``manifest.extras["unpaired_captions"]``. Metadata: ``edit_type`` = relation,
``category`` = spatial, ``split`` (file stem).

Spec: ``vsr:DIR?images=COCO2017_DIR&split=test&variant=random`` (``split`` = a file stem, or
``all``; default ``test``). Images are looked up directly under ``images`` (merge train2017
and val2017).

Which split is read. The repository's ``data/splits`` holds two variants with the same file
names, ``random/{train,dev,test}.jsonl`` and ``zeroshot/{train,dev,test}.jsonl`` (its
``data/README.md``); the Hub copies are ``cambridgeltl/vsr_random`` and ``vsr_zeroshot``. They
are never merged: ``?variant=random`` (the default when both are present) or
``?variant=zeroshot`` picks one, item ids and ``split`` carry it (``random/test/12``), and the
benchmark is named ``vsr_<variant>``. A folder of split files with no variant folders is read
as it is (named ``vsr``). Files outside the variant folders (``data_files/*.jsonl``, the
unsplit raw and validated data) are never read when variant folders exist.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    LoaderOptionError,
    finish,
    image_root,
    loader_options,
    manifest_for,
    read_jsonl,
    require_dir,
    require_fields,
    takes_options,
)
from foilbench.errors import BenchmarkError

NAME = "vsr"
IMAGES_ENV = "FOILBENCH_COCO2017"
EXPECTED_RELATIONS = 66
DOWNLOAD_NOTE = ("VSR: splits at https://github.com/cambridgeltl/visual-spatial-reasoning/"
                 "tree/master/data; images are COCO 2017 train and val")
FIELDS = ("image", "caption", "label", "relation")
VARIANTS = ("random", "zeroshot")


def variant_of(file: Path, folder: Path) -> str | None:
    """The variant folder a split file sits in (the given folder itself counts)."""
    parts = (folder.name, *file.relative_to(folder).parts[:-1])
    return next((p for p in reversed(parts) if p in VARIANTS), None)


def split_files(folder: Path, split: str, variant: str | None) -> tuple[list[Path], str | None]:
    """The files of one split of one variant, and that variant (None: no variant folders)."""
    files = sorted(folder.rglob("*.jsonl"))
    present = sorted({v for f in files if (v := variant_of(f, folder))})
    if variant is not None and variant not in present:
        raise BenchmarkError(f"{NAME}: no {variant}/ split folder under {folder} (have: "
                             f"{', '.join(present) or 'no variant folders'})")
    chosen = variant or ("random" if "random" in present else present[0] if present else None)
    if chosen is not None:
        files = [f for f in files if variant_of(f, folder) == chosen]
    if split != "all":
        files = [f for f in files if f.stem == split]
    if not files:
        raise BenchmarkError(f"{NAME}: no {split if split != 'all' else '*'}.jsonl under "
                             f"{folder}" + (f" ({chosen}/)" if chosen else ""))
    return files, chosen


def split_id(file: Path, folder: Path) -> str:
    """``random/test`` for ``.../splits/random/test.jsonl``; the stem without a variant."""
    variant = variant_of(file, folder)
    return f"{variant}/{file.stem}" if variant else file.stem


def choice_items(rows: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Per caption: each true image against all false images of the same caption."""
    items, unpaired = [], 0
    for (split, caption), group in rows.groupby(["split", "caption"], sort=False):
        true = group[group["label"] == 1]
        false = list(dict.fromkeys(group.loc[group["label"] == 0, "image"]))
        if true.empty or not false:
            unpaired += 1
            continue
        for rec in true.to_dict(orient="records"):
            items.append({"item_id": f"{split}/{rec['line']}", "caption": caption,
                          "images": [rec["image"], *false], "edit_type": rec["relation"],
                          "category": "spatial", "split": split})
    return pd.DataFrame(items), unpaired


def _check_variant(options: dict[str, str]) -> None:
    if options.get("variant") not in (None, *VARIANTS):
        raise LoaderOptionError(f"{NAME}: unknown variant {options['variant']!r}; known: "
                                f"{', '.join(VARIANTS)}")


@takes_options("images", "split", "variant", check=_check_variant)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    require_dir(folder, NAME, "a folder of VSR *.jsonl split files")
    files, variant = split_files(folder, options.get("split", "test"), options.get("variant"))
    findings = Findings(NAME)
    rows = []
    for file in files:
        for n, rec in enumerate(read_jsonl(file), 1):
            require_fields(rec, FIELDS, f"{file}, line {n}")
            rows.append({"image": rec["image"], "caption": rec["caption"],
                         "label": int(rec["label"]), "relation": rec["relation"],
                         "split": split_id(file, folder), "line": n})
    table = pd.DataFrame(rows)
    n_rel = table["relation"].nunique()
    if n_rel > EXPECTED_RELATIONS:
        findings.warn(f"{n_rel} relations; the published release has {EXPECTED_RELATIONS}")
    items, unpaired = choice_items(table)
    if unpaired:
        findings.warn(f"{unpaired} caption(s) occur with one label only and give no item")
    manifest = manifest_for(
        f"{NAME}_{variant}" if variant else NAME, "t2i", license="CC BY 4.0 (annotations); images: COCO terms",
        source="https://github.com/cambridgeltl/visual-spatial-reasoning",
        description=f"VSR {', '.join(sorted(set(table['split'])))}: captions as 1-of-K image "
                    f"choice (true image vs false images)",
        extras={"files": [f.relative_to(folder).as_posix() for f in files],
                "variant": variant, "unpaired_captions": unpaired,
                "n_relations": int(n_rel), "rows": len(table)})
    return finish(manifest, items, image_root(options, IMAGES_ENV, folder), findings,
                  on_invalid=on_invalid, check_images=check_images,
                  image_hint=f"pass ?images=COCO2017_DIR or set {IMAGES_ENV}")
