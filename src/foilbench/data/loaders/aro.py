"""ARO (Yuksekgonul et al., ICLR 2023 "When and why VLMs behave like bags-of-words").

Source: github.com/mertyg/vision-language-models-are-bows (MIT). VG-Relation and
VG-Attribution are ``visual_genome_relation.json`` and ``visual_genome_attribution.json`` plus
the ``images/`` folder (Visual Genome, CC BY 4.0), linked from the repository as Google-Drive
files (see :data:`DOWNLOAD_NOTE`).

Native format: each JSON is a list of ``{"image_path", "bbox_x", "bbox_y", "bbox_w",
"bbox_h", "true_caption", "false_caption", ...}`` with ``relation_name`` (VG-R) or
``attributes`` (VG-A, two words). The authors crop each image to the box before scoring; this
loader writes those crops once to ``?crops=DIR`` (default ``<release>/_foilbench_crops``) and
only when images are checked (text-only inspection writes nothing).

Expected counts: VG-Relation 23,937; VG-Attribution 28,748.

foilbench form: kind ``choice`` (the crop, [true_caption, false_caption]), scored by I2T R@1
(macro-averaging over relations, as the paper also reports, is a breakdown on ``edit_type``).
``?subset=vg_relation`` or ``vg_attribution`` (default both; the name is ``aro`` for both,
``aro_<subset>`` for one). COCO-Order and Flickr30k-Order are built from caption files by
part-of-speech shuffles: see the ``aro_coco_order:`` and ``aro_flickr_order:`` loaders
(:mod:`foilbench.data.loaders.aro_order`).
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
    present_parts,
    read_json,
    require_dir,
    require_fields,
    takes_options,
)
from foilbench.data.loaders.sources import CropSource
from foilbench.errors import BenchmarkError

SUBSETS = {"vg_relation": "visual_genome_relation.json",
           "vg_attribution": "visual_genome_attribution.json"}
EXPECTED = {"vg_relation": 23937, "vg_attribution": 28748}
FIELDS = ("image_path", "bbox_x", "bbox_y", "bbox_w", "bbox_h", "true_caption",
          "false_caption")
CROPS_DIRNAME = "_foilbench_crops"
BOX = ("bbox_x", "bbox_y", "bbox_w", "bbox_h")
DOWNLOAD_NOTE = ("ARO data: see https://github.com/mertyg/vision-language-models-are-bows "
                 "(dataset_zoo/aro_datasets.py lists the annotation and vgr_vga_images.zip "
                 "links); unzip the images into DIR/images")


def crop_name(rec: dict) -> str:
    box = "_".join(str(int(round(float(rec[k])))) for k in ("bbox_x", "bbox_y", "bbox_w",
                                                             "bbox_h"))
    return f"{Path(str(rec['image_path'])).stem}_{box}.png"


def write_crop(src: Path, dst: Path, rec: dict) -> None:
    """Crop ``src`` to the record's box (x, y, x + w, y + h) and save it to ``dst``."""
    from PIL import Image

    x, y, w, h = (float(rec[k]) for k in ("bbox_x", "bbox_y", "bbox_w", "bbox_h"))
    dst.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(src) as im:
        im.convert("RGB").crop((x, y, x + w, y + h)).save(dst)


def read_subset(folder: Path, subset: str, crops: Path, write: bool,
                findings: Findings, sources: dict) -> pd.DataFrame:
    """One item per test case; ``sources`` receives each crop's source image and box."""
    file = folder / SUBSETS[subset]
    data = read_json(file)
    if not isinstance(data, list):
        raise BenchmarkError(f"{file}: expected a list of test cases")
    rows = []
    for n, rec in enumerate(data):
        require_fields(rec, FIELDS, f"{file}, entry {n}")
        name = crop_name(rec)
        src = folder / "images" / str(rec["image_path"])
        if write and not (crops / name).exists() and src.is_file():
            write_crop(src, crops / name, rec)
        x, y, w, h = (float(rec[k]) for k in BOX)
        sources[name] = CropSource(src, (x, y, w, h))
        label = rec.get("relation_name") if subset == "vg_relation" else \
            "_".join(map(str, rec.get("attributes") or []))
        rows.append({"item_id": f"{subset}/{n}", "image": name,
                     "captions": [rec["true_caption"], rec["false_caption"]],
                     "edit_type": label or None,
                     "category": "relation" if subset == "vg_relation" else "attribute",
                     "operation": "swap", "split": subset, "source_image": rec["image_path"]})
    check_counts(findings, subset, {"items": len(rows)}, {"items": EXPECTED[subset]})
    return pd.DataFrame(rows)


def _subsets(options: dict[str, str]) -> list[str]:
    wanted = options.get("subset", ",".join(SUBSETS)).split(",")
    unknown = [s for s in wanted if s not in SUBSETS]
    if unknown:
        raise LoaderOptionError(
            f"aro: unknown subset(s) {', '.join(unknown)}; known: {', '.join(SUBSETS)} "
            "(COCO-Order / Flickr-Order: use aro_coco_order:PATH / aro_flickr_order:PATH)")
    return wanted


@takes_options("subset", "crops", check=_subsets)
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    require_dir(folder, "aro", "the ARO folder with visual_genome_*.json and images/")
    wanted = _subsets(options)
    findings = Findings("aro")
    crops = Path(options["crops"]).expanduser() if options.get("crops") else \
        folder / CROPS_DIRNAME
    present = present_parts(folder, wanted, SUBSETS, findings, on_invalid, DOWNLOAD_NOTE)
    sources: dict = {}
    items = pd.concat([read_subset(folder, s, crops, check_images, findings, sources)
                       for s in present], ignore_index=True)
    name = "aro" if len(wanted) > 1 else f"aro_{wanted[0]}"
    manifest = manifest_for(
        name, "i2t", license="MIT (annotations); images: Visual Genome CC BY 4.0",
        source="https://github.com/mertyg/vision-language-models-are-bows",
        description="ARO VG-Relation / VG-Attribution on the authors' box crops",
        extras={"expected_counts": {s: EXPECTED[s] for s in wanted}, "subsets": present})
    return finish(manifest, items, crops, findings, on_invalid=on_invalid,
                  check_images=check_images,
                  image_hint=f"crops are cut from {folder / 'images'}; {DOWNLOAD_NOTE}",
                  sources=sources)
