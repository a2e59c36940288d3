"""COMPASS caption structures: subgraph sampling and structural levels.

A caption is a set of primitives drawn from an image's scene graph: objects (O), attributes
of those objects (A) and relations between them (R). COMPASS samples a subgraph by a random
walk of up to ten steps from a random object over relation edges; an object reached by the
walk makes its attributes available. A caption at a structural level then uses:

    level    primitives   total N = n_o + n_a + n_r
    L1       O            1-10
    L2-OA    O, A         2-12   (n_a >= 1)
    L2-OR    O, R         3-12   (n_o >= 2, n_r >= n_o - 1: the walk's tree edges + more)
    L3-OAR   O, A, R      4-12

The objects are a prefix of the walk's visiting order, so any prefix is connected by the walk's
tree edges (the edge that first reached each object). A random number of further relations
among the included objects is added (at most one per object pair and relation group, so "a
cube left of a sphere" is never followed by "the sphere right of the cube"), and attributes
are a random subset of the included objects' attributes: n_r and n_a then vary independently
of n_o, which the skill-load regression needs (with tree edges only, n_r = n_o - 1 and b_O,
b_R could not be told apart).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from foilbench.construct.compass.scene_graph import SceneGraph, SGRelation

MAX_WALK_STEPS = 10
PRIMITIVE_KINDS: tuple[str, ...] = ("object", "attribute", "relation")
SKILL_OF_KIND: dict[str, str] = {"object": "O", "attribute": "A", "relation": "R"}


@dataclass(frozen=True)
class LevelSpec:
    name: str
    attributes: bool
    relations: bool
    n_min: int
    n_max: int


LEVELS: dict[str, LevelSpec] = {
    s.name: s
    for s in (
        LevelSpec("L1", False, False, 1, 10),
        LevelSpec("L2-OA", True, False, 2, 12),
        LevelSpec("L2-OR", False, True, 3, 12),
        LevelSpec("L3-OAR", True, True, 4, 12),
    )
}


@dataclass(frozen=True)
class Primitive:
    kind: str  # "object" | "attribute" | "relation"
    object_id: int  # the object itself, the attribute's object, or the relation's subject
    value: str  # object name, attribute word, or predicate
    target_id: int | None = None  # the relation's object


@dataclass(frozen=True)
class CaptionSpec:
    """What a caption says, independent of its wording. Names are per object id, so an
    object replacement renames every mention of that object and nothing else."""

    graph_id: str
    level: str
    objects: tuple[tuple[int, str], ...]  # (object id, name) in mention order
    attributes: tuple[tuple[int, str], ...] = ()  # (object id, attribute word)
    relations: tuple[tuple[int, str, int], ...] = ()  # (subject id, predicate, object id)

    @property
    def primitives(self) -> tuple[Primitive, ...]:
        """Objects, then attributes, then relations: the index i of c~_i and d_i."""
        return (
            *(Primitive("object", oid, name) for oid, name in self.objects),
            *(Primitive("attribute", oid, a) for oid, a in self.attributes),
            *(Primitive("relation", s, p, o) for s, p, o in self.relations),
        )

    @property
    def n_o(self) -> int:
        return len(self.objects)

    @property
    def n_a(self) -> int:
        return len(self.attributes)

    @property
    def n_r(self) -> int:
        return len(self.relations)

    @property
    def n_total(self) -> int:
        return self.n_o + self.n_a + self.n_r

    def name_of(self, object_id: int) -> str:
        return dict(self.objects)[object_id]

    def attributes_of(self, object_id: int) -> list[str]:
        return [a for oid, a in self.attributes if oid == object_id]

    def replaced(self, index: int, new_value: str) -> CaptionSpec:
        """This spec with primitive ``index`` given ``new_value`` (one primitive changes)."""
        n_o, n_a = self.n_o, self.n_a
        if not 0 <= index < self.n_total:
            raise IndexError(f"primitive index {index} outside 0..{self.n_total - 1}")
        if index < n_o:
            objs = list(self.objects)
            objs[index] = (objs[index][0], new_value)
            return replace(self, objects=tuple(objs))
        if index < n_o + n_a:
            attrs = list(self.attributes)
            oid, _ = attrs[index - n_o]
            attrs[index - n_o] = (oid, new_value)
            return replace(self, attributes=tuple(attrs))
        rels = list(self.relations)
        s, _, o = rels[index - n_o - n_a]
        rels[index - n_o - n_a] = (s, new_value, o)
        return replace(self, relations=tuple(rels))


@dataclass(frozen=True)
class Walk:
    order: list[int]  # objects in first-visit order
    tree: list[SGRelation]  # tree[m] is the edge that first reached order[m + 1]


def random_walk(graph: SceneGraph, rng: np.random.Generator,
                max_steps: int = MAX_WALK_STEPS) -> Walk:
    """A random walk of up to ``max_steps`` steps from a random object over relation edges
    (walked in either direction); it stops early at an isolated object."""
    if not graph.objects:
        raise ValueError(f"image {graph.image_id}: scene graph has no objects")
    adjacency: dict[int, list[SGRelation]] = {o.object_id: [] for o in graph.objects}
    for r in graph.relationships:
        if r.subject_id != r.object_id:
            adjacency[r.subject_id].append(r)
            adjacency[r.object_id].append(r)
    current = graph.objects[int(rng.integers(len(graph.objects)))].object_id
    walk = Walk([current], [])
    for _ in range(max_steps):
        edges = adjacency[current]
        if not edges:
            break
        edge = edges[int(rng.integers(len(edges)))]
        current = edge.object_id if edge.subject_id == current else edge.subject_id
        if current not in walk.order:
            walk.order.append(current)
            walk.tree.append(edge)
    return walk


def _extra_relations(graph: SceneGraph, objects: list[int], chosen: list[SGRelation],
                     group_of: dict[str, str]) -> list[SGRelation]:
    """Relations among ``objects`` whose (object pair, relation group) is not yet used."""
    inside = set(objects)

    def key(r: SGRelation) -> tuple[frozenset, str]:
        return frozenset((r.subject_id, r.object_id)), group_of.get(r.predicate, r.predicate)

    used = {key(r) for r in chosen}
    out = []
    for r in graph.relationships:
        if r.subject_id in inside and r.object_id in inside and r.subject_id != r.object_id:
            if key(r) not in used:
                used.add(key(r))
                out.append(r)
    return out


def sample_caption_spec(graph: SceneGraph, level: str, rng: np.random.Generator,
                        max_steps: int = MAX_WALK_STEPS,
                        relation_groups: dict[str, str] | None = None) -> CaptionSpec | None:
    """One caption structure at ``level``, or None when this walk cannot fill the level
    (too few objects reached, or no attributes); callers resample. ``relation_groups`` maps
    a predicate to its group (default: each predicate its own group)."""
    if level not in LEVELS:
        raise ValueError(f"unknown COMPASS level {level!r}; possible: {', '.join(LEVELS)}")
    spec = LEVELS[level]
    walk = random_walk(graph, rng, max_steps)
    k_min = 2 if spec.relations else 1
    # With relations, N >= 2k - 1 (+1 attribute at L3), which caps k.
    k_cap = (spec.n_max + 1 - int(spec.attributes)) // 2 if spec.relations else (
        spec.n_max - int(spec.attributes))
    k_max = min(len(walk.order), k_cap)
    if k_max < k_min:
        return None
    k = int(rng.integers(k_min, k_max + 1))
    objects = walk.order[:k]
    relations: list[SGRelation] = []
    if spec.relations:
        relations = walk.tree[: k - 1]
        extra = _extra_relations(graph, objects, relations, relation_groups or {})
        room = spec.n_max - (2 * k - 1) - int(spec.attributes)
        n_extra = int(rng.integers(0, min(room, len(extra)) + 1))
        picked = np.sort(rng.choice(len(extra), size=n_extra, replace=False)) if n_extra else []
        relations = relations + [extra[int(i)] for i in picked]
    attributes: list[tuple[int, str]] = []
    if spec.attributes:
        available = [(oid, a) for oid in objects for a in graph.object(oid).attributes]
        budget = spec.n_max - k - len(relations)
        if not available or budget < 1:
            return None
        n_a = int(rng.integers(1, min(budget, len(available)) + 1))
        picked = np.sort(rng.choice(len(available), size=n_a, replace=False))
        attributes = [available[int(i)] for i in picked]
    names = {o.object_id: o.name for o in graph.objects}
    out = CaptionSpec(
        graph_id=graph.image_id,
        level=level,
        objects=tuple((oid, names[oid]) for oid in objects),
        attributes=tuple(attributes),
        relations=tuple((r.subject_id, r.predicate, r.object_id) for r in relations),
    )
    assert spec.n_min <= out.n_total <= spec.n_max, f"{level}: N={out.n_total} out of range"
    return out
