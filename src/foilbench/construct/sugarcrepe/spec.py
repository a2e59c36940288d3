"""What a SugarCrepe construction is made of: the seven hard-negative types (SugarCrepe §4,
App. D.2), the run's options, the caption file it reads, and the packaged prompt of each step
and type. The pipeline (:mod:`.pipeline`) and its spend plan (:mod:`.plan`) share them."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from foilbench.construct.engine.replies import clean_sentence
from foilbench.construct.engine.stages import ConstructError

TYPES: dict[str, tuple[str, str, str]] = {
    # type: (form, concept located in step 1, concept generated in step 2)
    "replace_obj": ("replace", "object", "object"),
    "replace_att": ("replace", "attribute", "attribute"),
    "replace_rel": ("replace", "relation", "relation"),
    "swap_obj": ("swap", "object", "object"),
    "swap_att": ("swap", "attribute", "attribute"),
    "add_obj": ("add", "object", "object"),
    "add_att": ("add", "object", "attribute"),
}


@dataclass(frozen=True)
class SugarcrepeConfig:
    captions: Path = Path("captions.json")
    images: Path | None = None
    types: tuple[str, ...] = tuple(TYPES)
    captions_per_image: int = 1
    limit: int | None = None
    refine: bool = True
    scorers: tuple[str, str] = ("length", "ngram")
    grid: int | None = None  # None: auto (the paper's 100 x 100 when it fills; refine.py)
    zero_bin: bool = False  # True: foilbench's extra bin for exact-zero gaps
    folds: int = 5
    seed: int = 0

    def options(self) -> dict:
        out = asdict(self)
        out["captions"], out["images"] = str(self.captions), str(self.images or "")
        return out


def read_captions(config: SugarcrepeConfig) -> list[dict]:
    """``[{"image": file name, "caption": text, "key": id}]`` from a COCO annotation file
    (``images`` + ``annotations``) or a list of ``{"image"|"file_name"|"filename", "caption"
    | "captions"}`` records."""
    path = Path(config.captions)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ConstructError(f"{path}: cannot read a caption JSON ({e})") from None
    records: list[tuple[str, list[str]]] = []
    if isinstance(data, dict) and "annotations" in data and "images" in data:
        files = {im["id"]: im["file_name"] for im in data["images"]}
        by_image: dict = {}
        for a in data["annotations"]:
            if a.get("image_id") not in files:
                raise ConstructError(f"{path}: annotation {a.get('id')} names image_id "
                                     f"{a.get('image_id')} missing from 'images'")
            by_image.setdefault(a["image_id"], []).append(str(a["caption"]))
        records = [(files[i], caps) for i, caps in by_image.items()]
    elif isinstance(data, list):
        for k, r in enumerate(data):
            image = r.get("image") or r.get("file_name") or r.get("filename")
            caps = r.get("captions") or ([r["caption"]] if "caption" in r else [])
            if not image or not caps:
                raise ConstructError(f"{path}: record {k} needs an image file name and a caption")
            records.append((str(image), [str(c) for c in caps]))
    else:
        raise ConstructError(f"{path}: expected COCO annotations ({{'images', 'annotations'}}) "
                             "or a list of {'image', 'caption'} records")
    out = []
    taken: dict[str, int] = {}  # captions numbered per image stem, so two records on one
    for image, caps in records:  # image (or two images with one stem) never share a key
        for cap in caps[: config.captions_per_image]:
            stem = Path(image).stem
            j = taken[stem] = taken.get(stem, -1) + 1
            out.append({"image": image, "caption": clean_sentence(cap), "key": f"{stem}/{j}"})
    return out[: config.limit] if config.limit else out


def prompt_name(step: str, edit_type: str) -> str:
    """The packaged prompt of ``step`` for ``edit_type``: one template per fine-grained type
    for the steps where the types differ (App. D.2: "Each template consists of task instruction
    for generating the corresponding type of hard negatives and several (7 or more) few-shot
    demonstrations"): step (2), the new concept, of Replace and Add, and the one Swap step;
    locating (1) and composing (3) share a template parameterised by the concept kind."""
    return f"sugarcrepe.{step}.{edit_type}" if step in ("new_concept", "swap") \
        else f"sugarcrepe.{step}"
