"""VL-CheckList (Zhao et al., 2022): objects, attributes and relations, one negative each.

Source: github.com/om-ai-lab/VL-CheckList, folder ``data/`` (annotations; license as in the
repository). Images come from the source corpora (Visual Genome, SWiG, HAKE, VAW), each
downloaded separately; the image root is given with ``?images=DIR`` (paths in the JSON, such
as ``VG_100K/2376832.jpg``, are relative to it).

Native format: ``data/<Object|Attribute|Relation>/.../<name>.json``, each a list of
``[image_path, {"POS": [captions], "NEG": [captions]}]``. Every POS caption is paired with the
NEG caption at the same position (the authors' evaluation).

Expected counts: no single published total (the checklist is a tree of many files); counts are
reported per top-level category in ``manifest.extras["counts"]``. Items whose positive text
equals its negative (present in the release, e.g. Attribute/vg/color.json) are kept, counted
and warned about: they are ties by construction and score as failures.

foilbench form: kind ``choice`` (the image, [POS[k], NEG[k]]), scored by I2T R@1. Metadata:
``category`` (Object/Attribute/Relation), ``edit_type`` (the path below the category, e.g.
``vg/color``), ``split`` (the corpus folder when present).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    finish,
    manifest_for,
    read_json,
    require_dir,
    split_spec,
)
from foilbench.errors import BenchmarkError

NAME = "vl_checklist"
DOWNLOAD_NOTE = ("VL-CheckList: annotations in https://github.com/om-ai-lab/VL-CheckList/tree/"
                 "main/data; images from Visual Genome, SWiG, HAKE and VAW (see its README)")
CATEGORIES = ("Object", "Attribute", "Relation")


def data_root(folder: Path) -> Path:
    for root in (folder / "data", folder):
        if any((root / c).is_dir() for c in CATEGORIES):
            return root
    raise BenchmarkError(f"{NAME}: no {'/'.join(CATEGORIES)} folders in {folder} or "
                         f"{folder / 'data'}")


def read_file(file: Path, root: Path) -> list[dict]:
    data = read_json(file)
    rel = file.relative_to(root).with_suffix("")
    category, sub = rel.parts[0], "/".join(rel.parts[1:])
    if not isinstance(data, list):
        raise BenchmarkError(f"{file}: expected a list of [image_path, {{POS, NEG}}]")
    rows = []
    for n, entry in enumerate(data):
        ok = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict)
        if not ok or "POS" not in entry[1] or "NEG" not in entry[1]:
            raise BenchmarkError(f"{file}, entry {n}: expected [image_path, {{\"POS\": [...], "
                                 f"\"NEG\": [...]}}]")
        pos, neg = list(entry[1]["POS"]), list(entry[1]["NEG"])
        if len(pos) != len(neg):
            rows.append({"item_id": None, "mismatch": f"{file.name} entry {n}"})
        for k, (p, q) in enumerate(zip(pos, neg, strict=False)):
            rows.append({"item_id": f"{rel.as_posix()}/{n}/{k}", "image": str(entry[0]),
                         "captions": [p, q], "category": category, "edit_type": sub,
                         "split": rel.parts[1] if len(rel.parts) > 2 else None})
    return rows


def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = split_spec(path, allowed=("images",))
    root = data_root(require_dir(folder, NAME, "the VL-CheckList repository or its data/"))
    findings = Findings(NAME)
    files = sorted(root.glob("*/**/*.json"))
    files = [f for f in files if f.relative_to(root).parts[0] in CATEGORIES]
    if not files:
        raise BenchmarkError(f"{NAME}: no JSON files under {root}/{{{','.join(CATEGORIES)}}}")
    rows = [r for f in files for r in read_file(f, root)]
    mismatched = [r["mismatch"] for r in rows if r["item_id"] is None]
    if mismatched:
        findings.warn(f"{len(mismatched)} entries have POS and NEG lists of different "
                      f"lengths (extra captions unpaired), first: {mismatched[0]}")
    items = pd.DataFrame([r for r in rows if r["item_id"] is not None])
    same = int(sum(a == b for a, b in items["captions"]))
    if same:
        findings.warn(f"{same} item(s) have a negative identical to the positive (ties by "
                      f"construction; they score as failures)")
    images = Path(options["images"]).expanduser() if options.get("images") else folder
    manifest = manifest_for(
        NAME, "i2t", license="see github.com/om-ai-lab/VL-CheckList; images: source corpora",
        source="https://github.com/om-ai-lab/VL-CheckList (data/)",
        description="VL-CheckList object/attribute/relation checks, 1 positive vs 1 negative",
        extras={"counts": dict(Counter(items["category"])), "identical_pairs": same,
                "files": len(files)})
    return finish(manifest, items, images, findings, on_invalid=on_invalid,
                  check_images=check_images,
                  image_hint="pass ?images=DIR, the folder the JSON image paths start from")
