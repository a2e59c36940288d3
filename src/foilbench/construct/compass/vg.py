"""The Visual Genome release as it lies on disk: which JSON files COMPASS can read, what each
can yield, and where the images are.

COMPASS §3.1 builds from VG scene graphs ("we use scene graphs from Visual Genome ... where
each scene graph consists of objects (nodes), their attributes, and pairwise relations
(edges)"). The release ships several per-image JSON files; their record layouts, as VG's own
reader (``visual_genome/local.py``) and the Hugging Face ``visual_genome`` loading script read
them:

==================== ========================================================= ============
file                 record                                                    levels
==================== ========================================================= ============
scene_graphs.json    ``image_id``, ``objects`` (``names``, ``attributes``),    all four
                     ``relationships`` (``subject_id``/``object_id``)
objects.json         ``image_id``, ``objects`` (``names``; no attributes)      L1
relationships.json   ``image_id``, ``relationships`` with ``subject``/         L1, L2-OR
                     ``object`` nested (``name`` or ``names``; no attributes)
attributes.json      ``image_id``, ``attributes`` (objects with attributes)    refused
image_data.json      ``image_id``/``id``, ``url``, ``width``, ``height``       refused
==================== ========================================================= ============

Older releases name the image key ``id``; it is accepted for the three readable layouts. The
levels a file actually yields are computed from what it holds (a ``scene_graphs.json`` with
no attributes yields no L2-OA either) and stated by :func:`describe`.

Images unpack to ``VG_100K/`` and ``VG_100K_2/`` as ``<image_id>.jpg`` (only
``image_data.json``'s ``url`` says which folder); :class:`ImageIndex` looks in the folder
given and in both release folders under it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from foilbench.construct.compass.scene_graph import (
    SceneGraph,
    SceneGraphError,
    scene_graph_from_dict,
)

VG_IMAGE_FOLDERS = ("VG_100K", "VG_100K_2")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
EXPECTED = ("expected Visual Genome's scene_graphs.json (per image: objects with names and "
            "attributes, and relationships), or objects.json / relationships.json (fewer "
            "levels)")

# Records of other VG files, recognised by a key only they have -> what the file holds.
OTHER_FILES: tuple[tuple[str, str, str], ...] = (
    ("attributes", "attributes.json", "per-image objects with their attributes, no relations"),
    ("url", "image_data.json", "image metadata: url, width, height, coco_id, flickr_id"),
    ("regions", "region_descriptions.json", "region phrases"),
    ("qas", "question_answers.json", "question-answer pairs"),
    ("synset_name", "synsets.json", "WordNet synsets"),
)


@dataclass(frozen=True)
class VGFile:
    """Graphs read from one file, the layout they came in and what was skipped."""

    path: Path
    layout: str  # "scene_graphs.json" | "objects.json" | "relationships.json"
    graphs: list[SceneGraph]


def detect_layout(record: object, path: Path) -> str:
    """The VG layout of ``record`` (the file's first record), or an error naming the file and
    what it looks like."""
    if not isinstance(record, dict):
        raise SceneGraphError(f"{path}: records are {type(record).__name__}s, not objects; "
                              f"{EXPECTED}")
    keys = set(record)
    if "objects" in keys and "relationships" in keys:
        return "scene_graphs.json"
    if "relationships" in keys:
        return "relationships.json"
    if "objects" in keys:
        return "objects.json"
    for key, name, holds in OTHER_FILES:
        if key in keys:
            raise SceneGraphError(f"{path}: this looks like Visual Genome's {name} ({holds}; "
                                  f"record keys {sorted(keys)}), not scene graphs; {EXPECTED}")
    raise SceneGraphError(f"{path}: records have keys {sorted(keys)[:8]}, neither 'objects' nor "
                          f"'relationships'; {EXPECTED}")


def read_vg_file(path: str | Path) -> VGFile:
    """Read scene graphs from a VG file of a readable layout (see the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise SceneGraphError(f"scene-graph file not found: {p}")
    try:
        data = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise SceneGraphError(f"{p}: not valid JSON ({e})") from None
    records = data if isinstance(data, list) else [data]
    if not records:
        return VGFile(p, "scene_graphs.json", [])
    layout = detect_layout(records[0], p)
    graphs = []
    for r in records:
        if isinstance(r, dict) and "image_id" not in r and "id" in r:
            r = {**r, "image_id": r["id"]}  # older releases name the image key "id"
        graphs.append(scene_graph_from_dict(r))
    return VGFile(p, layout, graphs)


def levels_yielded(graphs: list[SceneGraph]) -> list[str]:
    """The structural levels the graphs can give: L2-OA needs attributes, L2-OR relations."""
    attrs = any(o.attributes for g in graphs for o in g.objects)
    rels = any(g.relationships for g in graphs)
    return ["L1"] + ["L2-OA"] * attrs + ["L2-OR"] * rels + ["L3-OAR"] * (attrs and rels)


def skip_counts(graphs: list[SceneGraph]) -> dict:
    """Totals of what the reader skipped, the per-image dangling-relation counts, and the
    objects with several names (whose other names are kept out of replacements)."""
    totals: Counter = Counter()
    dangling: dict[str, int] = {}
    for g in graphs:
        skipped = g.extras.get("skipped", {})
        totals.update(skipped)
        if skipped.get("dangling_relations"):
            dangling[g.image_id] = skipped["dangling_relations"]
    multi = [o for g in graphs for o in g.objects if o.other_names]
    return {"dangling_relations": int(totals["dangling_relations"]),
            "dangling_by_image": dangling,
            "empty_names": int(totals["empty_names"]),
            "empty_attributes": int(totals["empty_attributes"]),
            "empty_predicates": int(totals["empty_predicates"]),
            "unnamed_objects": int(totals["unnamed_objects"]),
            "multi_name_objects": len(multi),
            "other_names": sum(len(o.other_names) for o in multi)}


def describe(vg: VGFile, graphs: list[SceneGraph]) -> list[str]:
    """Lines telling the user what the file was read as, what it can yield, and what was
    skipped (``graphs``: the ones considered, e.g. after ``--limit``)."""
    levels = levels_yielded(graphs)
    missing = [lv for lv in ("L1", "L2-OA", "L2-OR", "L3-OAR") if lv not in levels]
    why = {"objects.json": "objects.json has no attributes and no relationships",
           "relationships.json": "relationships.json has no attributes"}.get(
        vg.layout, "the graphs have no " + " and no ".join(
            w for w, lv in (("attributes", "L2-OA"), ("relationships", "L2-OR"))
            if lv in missing))
    lines = [f"read {vg.path.name} as VG {vg.layout}: levels {', '.join(levels)}"
             + (f" (no {'/'.join(missing)}: {why})" if missing else "")]
    c = skip_counts(graphs)
    if c["dangling_relations"]:
        worst = sorted(c["dangling_by_image"].items(), key=lambda kv: -kv[1])[:3]
        lines.append(f"skipped relations (subject or object not among the image's objects): "
                     f"{c['dangling_relations']} in {len(c['dangling_by_image'])} image(s), e.g. "
                     + ", ".join(f"image {i}: {n}" for i, n in worst))
    blanks = {k: c[k] for k in ("empty_names", "empty_attributes", "empty_predicates",
                                "unnamed_objects") if c[k]}
    if blanks:
        lines.append("skipped blank strings: " + ", ".join(f"{k} {v}" for k, v in blanks.items()))
    if c["multi_name_objects"]:
        lines.append(f"objects with several names: {c['multi_name_objects']} (captions use the "
                     f"first; {c['other_names']} other name(s) kept out of replacements)")
    return lines


class ImageIndex:
    """Image files of a folder and of the VG release folders under it (``VG_100K``,
    ``VG_100K_2``), listed once: a 108K-image release is a few directory scans, not a stat
    per graph and suffix."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        subs = [""] + [f for f in VG_IMAGE_FOLDERS if (self.root / f).is_dir()]
        self.folders = [self.root / s for s in subs]
        self.files: dict[str, str] = {}
        for sub in subs:
            with os.scandir(self.root / sub) as it:
                for entry in it:
                    if entry.is_file():
                        self.files.setdefault(entry.name, f"{sub}/{entry.name}" if sub
                                              else entry.name)

    def find(self, graph: SceneGraph) -> str | None:
        """The image of ``graph`` relative to the root: its ``image`` field, else
        ``<image_id>`` with a common suffix in the root or a VG release folder."""
        if graph.image:
            return graph.image if (self.root / graph.image).is_file() else None
        for suffix in IMAGE_SUFFIXES:
            rel = self.files.get(graph.image_id + suffix)
            if rel is not None:
                return rel
        return None

    def hint(self) -> str | None:
        """Advice when the folder given is one VG image folder and its sibling exists."""
        if self.root.name in VG_IMAGE_FOLDERS:
            for other in VG_IMAGE_FOLDERS:
                if other != self.root.name and (self.root.parent / other).is_dir():
                    return (f"VG splits its images over {' and '.join(VG_IMAGE_FOLDERS)}: pass "
                            f"--images {self.root.parent} to use both")
        return None


def read_scene_graphs(path: str | Path) -> list[SceneGraph]:
    """Read a VG ``scene_graphs.json`` (a list of records, or one record); VG's
    ``objects.json`` and ``relationships.json`` are read too, other VG files are refused by
    name (see :func:`read_vg_file` for what each yields)."""
    return read_vg_file(path).graphs
