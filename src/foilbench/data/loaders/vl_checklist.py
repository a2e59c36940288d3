"""VL-CheckList (Zhao et al., 2022): objects, attributes and relations, one test per entry.

Source: github.com/om-ai-lab/VL-CheckList: annotations in ``data/``, one corpus config per
(type, corpus) in ``corpus/v1/<Type>/<corpus>.yaml`` (``ANNO_PATH``, ``IMG_ROOT``, ``TYPE``).
Images come from the source corpora, downloaded separately into one folder with three roots,
as the release's ``DATASETS.md`` lays them out: ``vg/`` (Visual Genome; VAW's images are VG
images: "As the images in the VAW dataset come from the Visual Genome dataset, we only need
three picture folders"), ``hake/`` and ``swig/``. Give that folder with ``?images=DIR``.

Native format: ``data/<Object|Attribute|Relation>/.../<name>.json``, each a list of
``[image_path, {"POS": [captions], "NEG": [captions]}]``; ``image_path`` is relative to the
corpus's ``IMG_ROOT`` (``vl_checklist/data_loader.py``: ``path = os.path.join(
config["IMG_ROOT"], path)``), e.g. ``VG_100K/2376832.jpg`` under ``vg/``, ``openimages/...``
under ``hake/``, ``calling_164.jpg`` under ``swig/``. The image root of each JSON file comes
from the corpus yaml that names it; without the yaml files (a copy of ``data/`` alone) it is
read from the file's path (``vg``/``vaw`` -> ``vg/``, ``hake`` -> ``hake/``, ``swig`` ->
``swig/``).

Protocol (the authors' ``vl_checklist/evaluate.py``, task ``itc``): one test per JSON entry,
the *first* positive against the *first* negative,
``texts_pos = [z["texts_pos"][0] for z in batch]``, ``texts_neg = [z["texts_neg"][0] ...]``,
correct when ``result_tmp[i][0] > result_tmp[i][1]`` (strict). SWiG entries carry three
captions on each side; the later ones are not scored (counted in
``manifest.extras["unscored_captions"]``). Pairing every ``POS[k]`` with ``NEG[k]`` instead
made 439,950 items where the authors score 372,274 entries.
Where we differ: the authors' loader skips an entry whose image file is absent
(``if os.path.exists(path)``); here a missing image refuses the benchmark unless
``--allow-partial`` drops it and marks the benchmark partial.

Expected counts: no single published total (the checklist is a tree of many files); counts
are reported per top-level category in ``manifest.extras["counts"]``. Items whose positive text
equals its negative (present in the release, e.g. Attribute/vg/color.json) are kept, counted
and warned about: they are ties by construction and score as failures.

foilbench form: kind ``choice`` (the image, [POS[0], NEG[0]]), scored by I2T R@1. Metadata:
``category`` (Object/Attribute/Relation), ``edit_type`` (the path below the category, e.g.
``vg/color``), ``checklist_type`` (the yaml's type, e.g. ``Attribute/color``, when known),
``split`` (the corpus as the yaml names it: ``vg``, ``vaw``, ``swig_agent``, ...), ``corpus``
(the image root: ``vg``, ``hake``, ``swig``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path, PurePosixPath

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.data.loaders.common import (
    Findings,
    finish,
    loader_options,
    manifest_for,
    read_json,
    require_dir,
    takes_options,
)
from foilbench.errors import BenchmarkError

NAME = "vl_checklist"
DOWNLOAD_NOTE = ("VL-CheckList: annotations in https://github.com/om-ai-lab/VL-CheckList/tree/"
                 "main/data; images from Visual Genome, SWiG and HAKE into vg/, swig/, hake/ "
                 "(see its DATASETS.md)")
CATEGORIES = ("Object", "Attribute", "Relation")
# corpus token in a data path -> image root (DATASETS.md: VAW images are Visual Genome images)
ROOT_OF_TOKEN = {"vaw": "vg", "vg": "vg", "hake": "hake", "swig": "swig"}
YAML_LINE = re.compile(r'^\s*([A-Z_]+)\s*:\s*"?([^"#]*?)"?\s*$')


class CorpusEntry:
    """What one corpus yaml says about one annotation file."""

    def __init__(self, root: str, checklist_type: str | None, corpus: str | None) -> None:
        self.root, self.checklist_type, self.corpus = root, checklist_type, corpus


def data_root(folder: Path) -> Path:
    for root in (folder / "data", folder):
        if any((root / c).is_dir() for c in CATEGORIES):
            return root
    raise BenchmarkError(f"{NAME}: no {'/'.join(CATEGORIES)} folders in {folder} or "
                         f"{folder / 'data'}")


def read_corpus_yaml(path: Path) -> dict[str, str]:
    """``KEY: "value"`` lines of a corpus config (the only YAML these files use)."""
    fields = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = YAML_LINE.match(line)
        if match:
            fields[match.group(1)] = match.group(2).strip()
    return fields


def corpus_map(folder: Path) -> dict[str, CorpusEntry]:
    """annotation path below ``data/`` -> its image root, from every corpus yaml in the release.

    ``ANNO_PATH`` is written ``data/...`` (``corpus/v1``) or ``vl-checklist/data/...`` (older
    commits): the part after the ``data`` folder is the key.
    """
    found: dict[str, CorpusEntry] = {}
    for base in (folder / "corpus", folder / "vl_checklist" / "corpus"):
        for path in sorted(base.rglob("*.yaml")) if base.is_dir() else []:
            fields = read_corpus_yaml(path)
            parts = PurePosixPath(fields.get("ANNO_PATH", "")).parts
            if "data" not in parts or not fields.get("IMG_ROOT"):
                continue
            key = "/".join(parts[parts.index("data") + 1:])
            rel = path.relative_to(base).with_suffix("").parts
            rel = rel[1:] if rel and re.fullmatch(r"v\d+", rel[0]) else rel
            found.setdefault(key, CorpusEntry(fields["IMG_ROOT"].strip("/"),
                                              "/".join(rel[:-1]) or None, rel[-1]))
    return found


def inferred_entry(rel: PurePosixPath, file: Path) -> CorpusEntry:
    """The image root read from the file's path, for a copy of ``data/`` without yamls."""
    for part in rel.parts[1:]:
        for token, root in ROOT_OF_TOKEN.items():
            if part == token or part.startswith(f"{token}_"):
                return CorpusEntry(root, None, token)
    raise BenchmarkError(f"{file}: no corpus yaml names this file and its path names no corpus "
                         f"({', '.join(ROOT_OF_TOKEN)}); keep the release's corpus/ folder")


def read_file(file: Path, root: Path, entry: CorpusEntry, counts: Counter) -> list[dict]:
    """One item per JSON entry: the first positive against the first negative."""
    data = read_json(file)
    rel = PurePosixPath(file.relative_to(root).with_suffix("").as_posix())
    category, sub = rel.parts[0], "/".join(rel.parts[1:])
    if not isinstance(data, list):
        raise BenchmarkError(f"{file}: expected a list of [image_path, {{POS, NEG}}]")
    rows = []
    for n, item in enumerate(data):
        ok = isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict)
        if not ok or "POS" not in item[1] or "NEG" not in item[1]:
            raise BenchmarkError(f"{file}, entry {n}: expected [image_path, {{\"POS\": [...], "
                                 f"\"NEG\": [...]}}]")
        pos, neg = list(item[1]["POS"]), list(item[1]["NEG"])
        if not pos or not neg:
            counts["empty_side"] += 1
            continue
        counts["unscored_captions"] += len(pos) - 1 + len(neg) - 1
        rows.append({"item_id": f"{rel.as_posix()}/{n}",
                     "image": f"{entry.root}/{str(item[0]).lstrip('/')}",
                     "captions": [pos[0], neg[0]], "category": category, "edit_type": sub,
                     "checklist_type": entry.checklist_type, "split": entry.corpus,
                     "corpus": entry.root})
    return rows


@takes_options("images")
def load(path: str | Path, on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    folder, options = loader_options(path, load)
    root = data_root(require_dir(folder, NAME, "the VL-CheckList repository or its data/"))
    findings = Findings(NAME)
    files = sorted(root.glob("*/**/*.json"))
    files = [f for f in files if f.relative_to(root).parts[0] in CATEGORIES]
    if not files:
        raise BenchmarkError(f"{NAME}: no JSON files under {root}/{{{','.join(CATEGORIES)}}}")
    configs = corpus_map(root.parent if root.name == "data" else root)
    counts: Counter = Counter()
    rows = []
    for file in files:
        key = file.relative_to(root).as_posix()
        entry = configs.get(key) or inferred_entry(PurePosixPath(key), file)
        rows += read_file(file, root, entry, counts)
    if counts["empty_side"]:
        findings.warn(f"{counts['empty_side']} entries have an empty POS or NEG list and give "
                      f"no test")
    items = pd.DataFrame(rows)
    same = int(sum(a == b for a, b in items["captions"])) if len(items) else 0
    if same:
        findings.warn(f"{same} item(s) have a negative identical to the positive (ties by "
                      f"construction; they score as failures)")
    images = Path(options["images"]).expanduser() if options.get("images") else folder
    manifest = manifest_for(
        NAME, "i2t", license="see github.com/om-ai-lab/VL-CheckList; images: source corpora",
        source="https://github.com/om-ai-lab/VL-CheckList (data/, corpus/)",
        description="VL-CheckList object/attribute/relation checks, first positive vs first "
                    "negative of each entry (the authors' evaluate.py)",
        extras={"counts": dict(Counter(items["category"])) if len(items) else {},
                "identical_pairs": same, "files": len(files),
                "unscored_captions": counts["unscored_captions"],
                "roots_from": "corpus yaml" if configs else "file paths",
                "corpus_roots": sorted(set(items["corpus"])) if len(items) else []})
    return finish(manifest, items, images, findings, on_invalid=on_invalid,
                  check_images=check_images,
                  image_hint="pass ?images=DIR, the folder holding vg/, hake/ and swig/ "
                             "(VL-CheckList DATASETS.md)")
