"""Scene graphs in Visual Genome's JSON format, and the procedural world's graphs.

Visual Genome (Krishna et al., 2017) ``scene_graphs.json`` is a list of images, each
``{"image_id", "objects": [{"object_id", "names": [...], "attributes": [...], ...}],
"relationships": [{"relationship_id", "subject_id", "predicate", "object_id"}]}``. The reader
also accepts ``"name"`` for ``"names"`` and nested ``"subject"``/``"object"`` dicts (the
``relationships.json`` layout), lower-cases and strips words, and keeps unknown keys out.

A graph may declare ``closed_world``: every true relation among its predicate vocabulary is
listed (the world's graphs do; human-annotated VG graphs do not). COMPASS's hard negatives use
it to decide whether an unlisted relation is false (see ``compass_negatives``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilbench.errors import FoilbenchError
from foilbench.jsonio import write_json


class SceneGraphError(FoilbenchError, ValueError):
    """A scene-graph file or record is malformed; the message names the image and field."""


@dataclass(frozen=True)
class SGObject:
    object_id: int
    name: str
    attributes: tuple[str, ...] = ()
    box: tuple[float, float, float, float] | None = None  # x, y, w, h (pixels), when known


@dataclass(frozen=True)
class SGRelation:
    relationship_id: int
    subject_id: int
    predicate: str
    object_id: int


@dataclass(frozen=True)
class SceneGraph:
    image_id: str
    objects: tuple[SGObject, ...]
    relationships: tuple[SGRelation, ...] = ()
    image: str | None = None  # image file name, when the source names it
    closed_world: bool = False
    extras: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        ids = [o.object_id for o in self.objects]
        if len(set(ids)) != len(ids):
            raise SceneGraphError(f"image {self.image_id}: duplicate object ids {sorted(ids)}")
        known = set(ids)
        for r in self.relationships:
            for role, oid in (("subject_id", r.subject_id), ("object_id", r.object_id)):
                if oid not in known:
                    raise SceneGraphError(
                        f"image {self.image_id}: relationship {r.relationship_id} has "
                        f"{role} {oid}, which is not an object of the image"
                    )

    def object(self, object_id: int) -> SGObject:
        for o in self.objects:
            if o.object_id == object_id:
                return o
        raise KeyError(object_id)

    def names(self) -> set[str]:
        return {o.name for o in self.objects}

    def attribute_words(self) -> set[str]:
        return {a for o in self.objects for a in o.attributes}

    def predicates(self) -> set[str]:
        return {r.predicate for r in self.relationships}

    def name_triples(self) -> set[tuple[str, str, str]]:
        """(subject name, predicate, object name): what a caption can say about a relation."""
        by_id = {o.object_id: o.name for o in self.objects}
        return {(by_id[r.subject_id], r.predicate, by_id[r.object_id])
                for r in self.relationships}


def _word(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SceneGraphError(f"{where}: expected a non-empty string, got {value!r}")
    return " ".join(value.strip().lower().split())


def _object_from_dict(d: dict, where: str) -> SGObject:
    if "object_id" not in d:
        raise SceneGraphError(f"{where}: object without 'object_id'")
    names = d.get("names") or ([d["name"]] if "name" in d else [])
    if not names:
        raise SceneGraphError(f"{where}: object {d['object_id']} has no 'names'")
    attrs = tuple(dict.fromkeys(_word(a, f"{where} attributes") for a in d.get("attributes") or []))
    box = None
    if all(k in d for k in ("x", "y", "w", "h")):
        box = (float(d["x"]), float(d["y"]), float(d["w"]), float(d["h"]))
    return SGObject(int(d["object_id"]), _word(names[0], f"{where} names"), attrs, box)


def _relation_from_dict(d: dict, k: int, where: str) -> SGRelation:
    def end(key: str) -> int:
        if f"{key}_id" in d:
            return int(d[f"{key}_id"])
        if isinstance(d.get(key), dict) and "object_id" in d[key]:
            return int(d[key]["object_id"])
        raise SceneGraphError(f"{where}: relationship {k} has no {key}_id")

    if "predicate" not in d:
        raise SceneGraphError(f"{where}: relationship {k} has no 'predicate'")
    return SGRelation(int(d.get("relationship_id", k)), end("subject"),
                      _word(d["predicate"], f"{where} predicate"), end("object"))


def scene_graph_from_dict(d: dict) -> SceneGraph:
    """One VG image record -> SceneGraph (clear errors naming the image and field)."""
    if not isinstance(d, dict) or "image_id" not in d:
        raise SceneGraphError(f"scene graph record without 'image_id': {str(d)[:80]}")
    where = f"image {d['image_id']}"
    objects = tuple(_object_from_dict(o, where) for o in d.get("objects") or [])
    rels = tuple(_relation_from_dict(r, k, where) for k, r in enumerate(d.get("relationships") or []))
    # Nested relationships.json layout: endpoint objects may appear only inside relations.
    present = {o.object_id for o in objects}
    extra = []
    for r in d.get("relationships") or []:
        for key in ("subject", "object"):
            sub = r.get(key)
            if isinstance(sub, dict) and int(sub.get("object_id", -1)) not in present:
                extra.append(_object_from_dict(sub, where))
                present.add(int(sub["object_id"]))
    image = d.get("image") or d.get("file_name")
    return SceneGraph(str(d["image_id"]), objects + tuple(extra), rels, image,
                      bool(d.get("closed_world", False)))


def scene_graph_to_dict(g: SceneGraph) -> dict:
    """SceneGraph -> VG record (``names`` as a one-element list, as VG writes it)."""
    objects = []
    for o in g.objects:
        rec: dict[str, Any] = {"object_id": o.object_id, "names": [o.name],
                               "attributes": list(o.attributes)}
        if o.box is not None:
            rec.update(zip(("x", "y", "w", "h"), o.box, strict=True))
        objects.append(rec)
    out: dict[str, Any] = {
        "image_id": g.image_id,
        "objects": objects,
        "relationships": [{"relationship_id": r.relationship_id, "subject_id": r.subject_id,
                           "predicate": r.predicate, "object_id": r.object_id}
                          for r in g.relationships],
    }
    if g.image is not None:
        out["image"] = g.image
    if g.closed_world:
        out["closed_world"] = True
    return out


def read_scene_graphs(path: str | Path) -> list[SceneGraph]:
    """Read a VG ``scene_graphs.json`` (a list of records, or one record)."""
    p = Path(path)
    if not p.is_file():
        raise SceneGraphError(f"scene-graph file not found: {p}")
    try:
        data = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise SceneGraphError(f"{p}: not valid JSON ({e})") from None
    records = data if isinstance(data, list) else [data]
    return [scene_graph_from_dict(r) for r in records]


def write_scene_graphs(graphs: Iterable[SceneGraph], path: str | Path) -> Path:
    return write_json(path, [scene_graph_to_dict(g) for g in graphs], indent=1)


def scene_graph_from_world(scene, image: str | None = None) -> SceneGraph:
    """The closed-world VG-format graph of a ``foilbench.world.scene.Scene``.

    Implemented in :mod:`foilbench.construct.world_graph` (which knows the world's vocabulary);
    imported lazily so reading VG files does not load the world.
    """
    from foilbench.construct.world_graph import graph_from_world

    return graph_from_world(scene, image)
