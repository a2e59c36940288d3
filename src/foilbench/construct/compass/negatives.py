"""COMPASS hard negatives: replace one primitive with one of the same type that is absent.

Rule (COMPASS §3.2, Hard Negatives Generation): "We randomly sample a replacement that does
not already appear in the image's entire scene graph", so the negative is false of the image
rather than merely different. "Entire" is read literally: the replacement is none of the
graph's words (``SceneGraph.vocabulary``): every name of every object (VG lists several,
``["mug", "cup"]``: replacing "mug" by "cup" would give a true caption), every attribute,
every predicate, and the predicates of relations the reader had to skip. The paper is silent
on words shared between kinds (an attribute "orange" and an object "orange"); excluding them
across kinds only removes candidates.

* object: a name from the pool that the graph does not state;
* attribute: an attribute word the graph does not state, of the same kind (colour for
  colour) when the pool knows kinds and one is left;
* relation: in an open-world graph (human annotations, e.g. Visual Genome), a predicate that
  appears nowhere in the graph. A closed-world graph (the procedural world) lists every true
  relation, so nearly every predicate appears somewhere and the rule would leave nothing; there
  the stricter test is exact: for every pair of objects with the subject's and the object's
  names, the new predicate is unlisted while the pair is decided on that predicate's group by
  a listed relation (so "right of" is used only where "left of" is listed for every such pair,
  never for a pair too close to call).

Candidates are tried in a fixed order and drawn with the caller's generator (reproducible).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.compass.scene_graph import SceneGraph

K_SKILL_NEGATIVES = 4


@dataclass(frozen=True)
class PrimitivePools:
    """Replacement vocabularies. Keys of the group maps are the pools; values their kinds."""

    objects: tuple[str, ...]
    attribute_groups: dict[str, str] = field(default_factory=dict)
    relation_groups: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_graphs(cls, graphs: Iterable[SceneGraph]) -> PrimitivePools:
        """Pools of a whole dataset (every word seen anywhere, every name of every object);
        kinds unknown."""
        graphs = list(graphs)
        objects = sorted({n for g in graphs for n in g.names()})
        attrs = sorted({a for g in graphs for a in g.attribute_words()})
        preds = sorted({p for g in graphs for p in g.predicates()})
        return cls(tuple(objects), dict.fromkeys(attrs, "attribute"), {p: p for p in preds})


@dataclass(frozen=True)
class Perturbation:
    index: int  # primitive index in spec.primitives
    kind: str
    old: str
    new: str


def _tiered(candidates: list[str], group_of: dict[str, str], old: str) -> list[list[str]]:
    """Same-kind candidates first, then the rest (a tier is tried only if earlier are empty)."""
    group = group_of.get(old)
    same = [c for c in candidates if group is not None and group_of.get(c) == group]
    return [same, [c for c in candidates if c not in same]]


def replacement_tiers(graph: SceneGraph, spec: CaptionSpec, index: int,
                      pools: PrimitivePools) -> list[list[str]]:
    """Valid replacement values for primitive ``index``, preferred tier first."""
    prim = spec.primitives[index]
    present = graph.vocabulary()
    if prim.kind == "object":
        return [[n for n in pools.objects if n not in present]]
    if prim.kind == "attribute":
        absent = [a for a in pools.attribute_groups if a not in present]
        return _tiered(absent, pools.attribute_groups, prim.value)
    assert prim.target_id is not None
    subject, target = spec.name_of(prim.object_id), spec.name_of(prim.target_id)
    groups = pools.relation_groups
    if graph.closed_world:
        absent = [p for p in groups if p != prim.value
                  and _false_for_every_pair(graph, subject, p, target, groups)]
    else:
        absent = [p for p in groups if p not in present]
    return _tiered(absent, groups, prim.value)


def _false_for_every_pair(graph: SceneGraph, subject: str, predicate: str, target: str,
                          groups: dict[str, str]) -> bool:
    """Closed world: "a <subject> <predicate> a <target>" is false when, for every pair of
    distinct objects with those names, the predicate is unlisted while another predicate of
    its group is listed (the pair is decided on that axis, not merely too close to call)."""
    group = groups.get(predicate)
    ids = {o.object_id: o.name for o in graph.objects}
    listed: dict[tuple[int, int], set[str]] = {}
    for r in graph.relationships:
        listed.setdefault((r.subject_id, r.object_id), set()).add(r.predicate)
    pairs = [(s, o) for s in ids for o in ids
             if s != o and ids[s] == subject and ids[o] == target]
    if not pairs:
        return False
    for pair in pairs:
        preds = listed.get(pair, set())
        if predicate in preds or not any(groups.get(q) == group for q in preds):
            return False
    return True


def choose_perturbation(graph: SceneGraph, spec: CaptionSpec, index: int, pools: PrimitivePools,
                        rng: np.random.Generator, exclude: Iterable[str] = ()) -> Perturbation | None:
    """One random valid replacement for primitive ``index`` (none of ``exclude``), or None."""
    prim = spec.primitives[index]
    banned = set(exclude)
    for tier in replacement_tiers(graph, spec, index, pools):
        options = [c for c in tier if c not in banned]
        if options:
            new = options[int(rng.integers(len(options)))]
            return Perturbation(index, prim.kind, prim.value, new)
    return None


def primitive_present(graph: SceneGraph, spec: CaptionSpec, p: Perturbation) -> bool:
    """Whether the replacement of ``p`` is present in ``graph`` under the rule above (used by
    tests and audits: a valid negative always gives False)."""
    if p.kind in ("object", "attribute"):
        return p.new in graph.vocabulary()
    prim = spec.primitives[p.index]
    assert prim.target_id is not None
    if graph.closed_world:
        triple = (spec.name_of(prim.object_id), p.new, spec.name_of(prim.target_id))
        return triple in graph.name_triples()
    return p.new in graph.vocabulary()


def skill_targets(graph: SceneGraph, spec: CaptionSpec, kind: str, pools: PrimitivePools,
                  rng: np.random.Generator, render, positive: str,
                  k: int = K_SKILL_NEGATIVES, choose=None) -> list[tuple[Perturbation, str]]:
    """Up to ``k`` negatives of one primitive kind, no two texts identical.

    Primitives of ``kind`` are targeted in a random order, cycling when fewer than ``k``
    exist (a primitive may be targeted twice, each time with a different replacement).
    ``render(perturbation) -> str`` words the negative (a substitution into the positive's
    wording). ``choose`` draws a replacement (default :func:`choose_perturbation`, same
    signature). Fewer than ``k`` come back only when the valid replacements run out."""
    choose = choose or choose_perturbation
    indices = [i for i, p in enumerate(spec.primitives) if p.kind == kind]
    if not indices:
        return []
    order = [indices[int(i)] for i in rng.permutation(len(indices))]
    used: dict[int, set[str]] = {i: set() for i in order}
    exhausted: set[int] = set()
    texts = {positive}
    out: list[tuple[Perturbation, str]] = []
    step = 0
    while len(out) < k and len(exhausted) < len(order):
        index = order[step % len(order)]
        step += 1
        if index in exhausted:
            continue
        pert = choose(graph, spec, index, pools, rng, exclude=used[index])
        if pert is None:
            exhausted.add(index)
            continue
        used[index].add(pert.new)
        text = render(pert)
        if text not in texts:
            texts.add(text)
            out.append((pert, text))
    return out
