"""The procedural world's scenes as Visual-Genome-format scene graphs.

Objects are named by category; their attributes are the words a caption would use (size when
not medium, state where the category has one, transparency when not opaque, colour, pattern
when not plain, material), in the world's descriptor order. Relations come from positions and
sizes, both directions listed, so the graph is *closed-world*: every true relation of
``RELATION_GROUPS`` is present and an absent one whose group is decided for the pair is false.

Geometry (see ``foilbench.world.scene``): ``x`` grows to the right and ``y`` towards the viewer,
so a larger ``y`` is "in front of". A pair closer than ``AXIS_MARGIN`` along an axis gets no
relation on that axis (too close to call by eye); "next to" is centre distance < ``NEAR``.
"""

from __future__ import annotations

import math

from foilbench.construct.compass.negatives import PrimitivePools
from foilbench.construct.compass.scene_graph import SceneGraph, SGObject, SGRelation
from foilbench.world.phrases import DESCRIPTOR_ORDER, MATERIAL_WORDS, effective_state
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import (
    COLORS,
    PATTERNS,
    SCENE_CATEGORIES,
    SIZES,
    STATES,
    TRANSPARENCIES,
)

AXIS_MARGIN = 0.06
NEAR = 0.22

# predicate -> group; within a group, a listed predicate decides the others for that pair.
RELATION_GROUPS: dict[str, str] = {
    "left of": "horizontal", "right of": "horizontal",
    "in front of": "depth", "behind": "depth",
    "bigger than": "size", "smaller than": "size",
    "next to": "proximity",
}

# Attributes whose value is the unmarked default are not mentioned (as a person would not).
UNMARKED = {"size": "medium", "transparency": "opaque", "pattern": "plain"}


def attribute_groups() -> dict[str, str]:
    """Every attribute word the world can emit -> its kind (colour, material, ...)."""
    groups: dict[str, str] = {}
    groups.update(dict.fromkeys(COLORS, "color"))
    groups.update(dict.fromkeys(MATERIAL_WORDS.values(), "material"))
    groups.update(dict.fromkeys(PATTERNS, "pattern"))
    groups.update(dict.fromkeys(TRANSPARENCIES, "transparency"))
    groups.update(dict.fromkeys(SIZES, "size"))
    # states replace within their own set (open <-> closed); COMPASS scenes hold no agents
    for states in (STATES[c] for c in SCENE_CATEGORIES if c in STATES):
        groups.update(dict.fromkeys(states, "state:" + "/".join(states)))
    return groups


def world_pools() -> PrimitivePools:
    """Replacement vocabularies for hard negatives on world graphs.

    Unmarked defaults ("medium", "opaque", "plain") are never listed in a graph although they
    are often true, so they are left out of the pool: absence from the graph would not make
    them false. Candidates are of the replaced word's category (COMPASS §3.2, the shipped
    table :mod:`foilbench.construct.compass.categories`; every world word is in it), then
    filtered for near-synonyms (:mod:`foilbench.construct.compass.similarity`, the shipped
    world table: translucent/transparent is the one pair it removes)."""
    from foilbench.construct.compass.categories import CategoryTable
    from foilbench.construct.compass.similarity import SimilarityFilter

    unmarked = set(UNMARKED.values())
    attrs = {w: g for w, g in attribute_groups().items() if w not in unmarked}
    return PrimitivePools(objects=SCENE_CATEGORIES, attribute_groups=attrs,
                          relation_groups=dict(RELATION_GROUPS),
                          categories=CategoryTable.shipped(), policy="strict",
                          similarity=SimilarityFilter.world())


def object_attributes(obj: Obj) -> tuple[str, ...]:
    words = []
    for kind in DESCRIPTOR_ORDER:
        value = effective_state(obj) if kind == "state" else getattr(obj, kind)
        if value is None or UNMARKED.get(kind) == value:
            continue
        words.append(MATERIAL_WORDS[value] if kind == "material" else value)
    return tuple(words)


def pair_relations(a: Obj, b: Obj) -> list[str]:
    """Predicates p with "a p b" true, in RELATION_GROUPS order."""
    out = []
    if a.x < b.x - AXIS_MARGIN:
        out.append("left of")
    elif a.x > b.x + AXIS_MARGIN:
        out.append("right of")
    if a.y > b.y + AXIS_MARGIN:
        out.append("in front of")
    elif a.y < b.y - AXIS_MARGIN:
        out.append("behind")
    if SIZES[a.size] > SIZES[b.size]:
        out.append("bigger than")
    elif SIZES[a.size] < SIZES[b.size]:
        out.append("smaller than")
    if math.hypot(a.x - b.x, a.y - b.y) < NEAR:
        out.append("next to")
    return out


def scene_graph_from_world(scene: Scene, image: str | None = None) -> SceneGraph:
    """A closed-world VG-format graph of ``scene`` (object ids are object indices)."""
    objects = tuple(SGObject(i, o.category, object_attributes(o))
                    for i, o in enumerate(scene.objects))
    rels: list[SGRelation] = []
    n = len(scene.objects)
    for i in range(n):
        for j in range(i + 1, n):
            for s, o in ((i, j), (j, i)):
                for p in pair_relations(scene.objects[s], scene.objects[o]):
                    rels.append(SGRelation(len(rels), s, p, o))
    return SceneGraph(scene.scene_id or "scene", objects, tuple(rels), image, closed_world=True)
