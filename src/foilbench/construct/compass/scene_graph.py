"""Scene graphs in Visual Genome's JSON format, and the procedural world's graphs.

Visual Genome (Krishna et al., 2017) ``scene_graphs.json`` is a list of images, each
``{"image_id", "objects": [{"object_id", "names": [...], "attributes": [...], ...}],
"relationships": [{"relationship_id", "subject_id", "predicate", "object_id"}]}``. The reader
also accepts ``"name"`` for ``"names"`` and nested ``"subject"``/``"object"`` dicts (the
``relationships.json`` layout), lower-cases and strips words, and keeps unknown keys out.
Which VG files can be read, and what each can yield, is :mod:`foilbench.construct.compass.vg`.

Real VG records are not clean, and the reader follows the VG authors' own reader
(``visual_genome/local.py``, ``parse_graph_local``) rather than refusing a whole file:

* a relationship whose subject or object is not among the image's objects is skipped and
  counted ("Skip this relationship if we don't have the subject and object in the object_map
  for this scene graph. Some data is missing in this way."); its predicate is kept in
  ``SceneGraph.mentioned`` so it is never used as a replacement for that image;
* an empty (blank) name, attribute or predicate is skipped and counted; an object left without
  any name is skipped (relations to it then dangle);
* an object may have several names (``"names": ["mug", "cup"]``): the first is the one
  captions use, the others are kept in ``SGObject.other_names``.

Counts of what was skipped go to ``SceneGraph.extras["skipped"]`` (only non-zero counts).

A graph may declare ``closed_world``: every true relation among its predicate vocabulary is
listed (the world's graphs do; human-annotated VG graphs do not). COMPASS's hard negatives use
it to decide whether an unlisted relation is false (see ``compass_negatives``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from foilbench.errors import FoilbenchError
from foilbench.jsonio import write_json

MENTIONED_KEY = "mentioned_words"  # foilbench's own key: words of skipped record parts


class SceneGraphError(FoilbenchError, ValueError):
    """A scene-graph file or record is malformed; the message names the image and field."""


@dataclass(frozen=True)
class SGObject:
    object_id: int
    name: str
    attributes: tuple[str, ...] = ()
    box: tuple[float, float, float, float] | None = None  # x, y, w, h (pixels), when known
    other_names: tuple[str, ...] = ()  # VG ``names[1:]``: true of the object, never replaced in
    synsets: tuple[str, ...] = ()  # VG ``synsets`` ("sofa.n.01"): the category lookup's key

    @property
    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.other_names)


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
    # Words the source record states about the image that the graph could not keep (the
    # predicate of a dangling relation): part of "the image's entire scene graph".
    mentioned: frozenset[str] = frozenset()

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
        """Every name of every object (all of VG's ``names``, not only the first)."""
        return {n for o in self.objects for n in o.all_names}

    def attribute_words(self) -> set[str]:
        return {a for o in self.objects for a in o.attributes}

    def predicates(self) -> set[str]:
        return {r.predicate for r in self.relationships}

    def vocabulary(self) -> set[str]:
        """Every word the image's scene graph states: all names, attributes, predicates, and
        the mentioned words of skipped relations (COMPASS's "entire scene graph")."""
        return self.names() | self.attribute_words() | self.predicates() | set(self.mentioned)

    def name_triples(self) -> set[tuple[str, str, str]]:
        """(subject name, predicate, object name): what a caption can say about a relation."""
        by_id = {o.object_id: o.name for o in self.objects}
        return {(by_id[r.subject_id], r.predicate, by_id[r.object_id])
                for r in self.relationships}


def _word(value: Any, where: str) -> str:
    """A normalised non-empty word; blank strings are the caller's to skip (see ``_words``)."""
    if not isinstance(value, str) or not value.strip():
        raise SceneGraphError(f"{where}: expected a non-empty string, got {value!r}")
    return " ".join(value.strip().lower().split())


def _words(values: Any, where: str, skipped: Counter, counter: str) -> list[str]:
    """Normalised words of a list, blank strings skipped and counted under ``counter``;
    anything but a list of strings is an error naming ``where``."""
    if values is None:
        return []
    if not isinstance(values, list):
        raise SceneGraphError(f"{where}: expected a list of strings, got {values!r}")
    out = []
    for v in values:
        if isinstance(v, str) and not v.strip():
            skipped[counter] += 1
            continue
        out.append(_word(v, where))
    return list(dict.fromkeys(out))


def _object_from_dict(d: dict, where: str, skipped: Counter) -> SGObject | None:
    """One object, or None when every name it has is blank (the caller counts it)."""
    if not isinstance(d, dict) or "object_id" not in d:
        raise SceneGraphError(f"{where}: object without 'object_id'")
    oid = int(d["object_id"])
    if "names" in d:
        raw = d["names"]
    elif "name" in d:
        raw = [d["name"]]
    else:
        raise SceneGraphError(f"{where}: object {oid} has no 'names'")
    names = _words(raw, f"{where} object {oid} names", skipped, "empty_names")
    if not names:
        if raw:  # names given, all blank: skip the object, not the file
            return None
        raise SceneGraphError(f"{where}: object {oid} has no 'names'")
    attrs = tuple(_words(d.get("attributes"), f"{where} object {oid} attributes", skipped,
                         "empty_attributes"))
    box = None
    if all(k in d for k in ("x", "y", "w", "h")):
        box = (float(d["x"]), float(d["y"]), float(d["w"]), float(d["h"]))
    synsets = d.get("synsets") or ()
    if not isinstance(synsets, list | tuple) or not all(isinstance(x, str) for x in synsets):
        raise SceneGraphError(f"{where}: object {oid} synsets must be a list of strings, "
                              f"got {synsets!r}")
    return SGObject(oid, names[0], attrs, box, tuple(names[1:]),
                    tuple(x.strip().lower() for x in synsets if x.strip()))


def _merge_names(a: SGObject, b: SGObject) -> SGObject:
    """``a`` with ``b``'s names and attributes added (one object seen twice in a record)."""
    extra = tuple(n for n in b.all_names if n not in a.all_names)
    attrs = tuple(dict.fromkeys(a.attributes + b.attributes))
    return replace(a, other_names=a.other_names + extra, attributes=attrs)


def _endpoint(rel: dict, key: str, k: int, where: str) -> tuple[int, dict | None]:
    """(object id, nested object dict or None) of a relationship's subject or object."""
    if f"{key}_id" in rel:
        return int(rel[f"{key}_id"]), None
    sub = rel.get(key)
    if isinstance(sub, dict) and "object_id" in sub:
        return int(sub["object_id"]), sub
    raise SceneGraphError(f"{where}: relationship {k} has no {key}_id")


def scene_graph_from_dict(d: dict) -> SceneGraph:
    """One VG image record -> SceneGraph (clear errors naming the image and field; dangling
    relations and blank words skipped and counted, see the module docstring)."""
    if not isinstance(d, dict) or "image_id" not in d:
        raise SceneGraphError(f"scene graph record without 'image_id': {str(d)[:80]}")
    where = f"image {d['image_id']}"
    skipped: Counter = Counter()
    raw_objects = d.get("objects") or []
    listed = [_object_from_dict(o, where, skipped) for o in raw_objects]
    unnamed = {int(r["object_id"]) for r, o in zip(raw_objects, listed, strict=True) if o is None}
    kept = [o for o in listed if o is not None]
    ids = [o.object_id for o in kept]
    if len(set(ids)) != len(ids):
        raise SceneGraphError(f"{where}: duplicate object ids {sorted(ids)}")
    objects: dict[int, SGObject] = {o.object_id: o for o in kept}
    rels: list[SGRelation] = []
    mentioned: set[str] = set(d.get(MENTIONED_KEY) or [])
    for k, r in enumerate(d.get("relationships") or []):
        if not isinstance(r, dict) or "predicate" not in r:
            raise SceneGraphError(f"{where}: relationship {k} has no 'predicate'")
        ends = [_endpoint(r, key, k, where) for key in ("subject", "object")]
        for oid, nested in ends:  # relationships.json: endpoint objects live in the relation
            if nested is not None and ("names" in nested or "name" in nested):
                obj = _object_from_dict(nested, where, skipped)
                if obj is None:
                    unnamed.add(oid)
                else:
                    objects[oid] = _merge_names(objects[oid], obj) if oid in objects else obj
        if isinstance(r["predicate"], str) and not r["predicate"].strip():
            skipped["empty_predicates"] += 1
            continue
        predicate = _word(r["predicate"], f"{where} relationship {k} predicate")
        (s, _), (o, _) = ends
        if s not in objects or o not in objects:
            skipped["dangling_relations"] += 1
            mentioned.add(predicate)
            continue
        rels.append(SGRelation(int(r.get("relationship_id", k)), s, predicate, o))
    if unnamed - objects.keys():
        skipped["unnamed_objects"] = len(unnamed - objects.keys())
    image = d.get("image") or d.get("file_name")
    return SceneGraph(str(d["image_id"]), tuple(objects.values()), tuple(rels), image,
                      bool(d.get("closed_world", False)),
                      extras={"skipped": dict(skipped)} if skipped else {},
                      mentioned=frozenset(mentioned))


def scene_graph_to_dict(g: SceneGraph) -> dict:
    """SceneGraph -> VG record (``names`` as a list, the caption's name first)."""
    objects = []
    for o in g.objects:
        rec: dict[str, Any] = {"object_id": o.object_id, "names": list(o.all_names),
                               "attributes": list(o.attributes)}
        if o.box is not None:
            rec.update(zip(("x", "y", "w", "h"), o.box, strict=True))
        if o.synsets:
            rec["synsets"] = list(o.synsets)
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
    if g.mentioned:
        out[MENTIONED_KEY] = sorted(g.mentioned)
    return out


def write_scene_graphs(graphs: Iterable[SceneGraph], path: str | Path) -> Path:
    return write_json(path, [scene_graph_to_dict(g) for g in graphs], indent=1)
