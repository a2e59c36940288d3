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

Same category and lemmas (issue 25). §3.2: "propose candidate primitives of the same semantic
category (e.g., replacing "sofa" with "chair")": when the pools carry a category source
(:mod:`foilbench.construct.compass.categories`: the shipped table offline, or a text backend's
proposals), the candidates of a primitive are its category-mates, not the whole pool (policy
"strict": a word of no known category gets none; "any": the whole pool, counted). "Does not
already appear in the image's entire scene graph" compares lemmas ("cups" is excluded when
"cup" is in the graph, and the reverse). In an open-world graph, candidates that name the
original's thing or a broader or narrower one (man -> person, red -> crimson, dark brown ->
brown) are removed (:mod:`foilbench.construct.compass.lexicon`, counted per reason). Then the
Sentence-Transformer filter (:mod:`foilbench.construct.compass.similarity`) drops candidates
too close to the original.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.compass.scene_graph import SceneGraph
from foilbench.construct.compass.spans import lemma

K_SKILL_NEGATIVES = 4


@dataclass(frozen=True)
class PrimitivePools:
    """Replacement vocabularies. Keys of the group maps are the pools; values their kinds."""

    objects: tuple[str, ...]
    attribute_groups: dict[str, str] = field(default_factory=dict)
    relation_groups: dict[str, str] = field(default_factory=dict)
    # same-category source (CategoryTable / ProposedCategories); None: any pool word
    categories: Any = field(default=None, compare=False)
    policy: str = "strict"  # a word of no known category: "strict" no candidate, "any" pool
    similarity: Any = field(default=None, compare=False)  # SimilarityFilter or None
    synsets: dict[str, str] = field(default_factory=dict, compare=False)  # word -> VG synset
    # how often "any" was used for a word of no known category (mutable counter)
    uncategorised: dict[str, int] = field(default_factory=dict, compare=False)
    lexicon: Any = field(default=None, compare=False)  # lexicon.Lexicon or None (off)
    # candidates removed as true-of-the-image names, per reason (mutable counter)
    excluded: dict[str, int] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.policy not in ("strict", "any"):
            raise ValueError(f"category policy must be 'strict' or 'any', got {self.policy!r}")

    def with_rules(self, categories=None, policy: str = "strict",
                   similarity=None, lexicon=None) -> PrimitivePools:
        """These pools with a category source, a similarity filter and lexical exclusions
        (:mod:`foilbench.construct.compass.lexicon`)."""
        return replace(self, categories=categories, policy=policy, similarity=similarity,
                       lexicon=lexicon, uncategorised={}, excluded={})

    def lexically_filtered(self, old: str, candidates: list[str], kind: str,
                           closed_world: bool) -> list[str]:
        """Open world: ``candidates`` less those naming ``old``'s thing or a broader or
        narrower one (:mod:`foilbench.construct.compass.lexicon`), counted per reason in
        ``excluded``; objects WordNet is silent on go to the caption-level filter."""
        if self.lexicon is None or closed_world or kind not in ("object", "attribute"):
            return candidates
        from foilbench.construct.compass.lexicon import reason_group

        kept, silent = [], []
        for c in candidates:
            why = self.lexicon.reason(kind, old, c)
            if why is not None:
                key = reason_group(why)
                self.excluded[key] = self.excluded.get(key, 0) + 1
            elif kind == "object" and self.lexicon.silent(kind, old, c):
                silent.append(c)
            else:
                kept.append(c)
        if silent and self.similarity is not None:
            passed = set(self.similarity.caption_keep(old, silent))
            dropped = len(silent) - len(passed)
            if dropped:
                self.excluded["caption similarity"] = (
                    self.excluded.get("caption similarity", 0) + dropped)
            silent = [c for c in silent if c in passed]
        return [c for c in candidates if c in set(kept) | set(silent)]

    def same_category(self, kind: str, value: str, pool: list[str],
                      closed_world: bool = False) -> list[str]:
        """The candidates allowed for ``value`` (module docstring). Open world (VG): the
        category's words as proposed (the paper samples from the proposals, not from the
        dataset's vocabulary). Closed world: only those of ``pool``, whose truth the graph
        decides."""
        if self.categories is None:
            return pool
        got = self.categories.candidates(kind, value, self.synsets.get(value))
        if got is None:
            if self.policy == "any":
                self.uncategorised[kind] = self.uncategorised.get(kind, 0) + 1
                return pool
            return []
        if not closed_world:
            return got
        mates = {lemma(c) for c in got}
        return [c for c in pool if lemma(c) in mates]

    def similar_filtered(self, old: str, candidates: list[str], kind: str) -> list[str]:
        from foilbench.construct.compass.similarity import KINDS

        if self.similarity is None or kind not in KINDS:
            return candidates
        return self.similarity.keep(old, candidates)

    @classmethod
    def from_graphs(cls, graphs: Iterable[SceneGraph]) -> PrimitivePools:
        """Pools of a whole dataset (every word seen anywhere, every name of every object);
        kinds unknown; each object name's first VG synset kept for the category lookup."""
        graphs = list(graphs)
        objects = sorted({n for g in graphs for n in g.names()})
        attrs = sorted({a for g in graphs for a in g.attribute_words()})
        preds = sorted({p for g in graphs for p in g.predicates()})
        synsets: dict[str, str] = {}
        for g in graphs:
            for o in g.objects:
                if o.synsets:
                    for n in o.all_names:
                        synsets.setdefault(n, o.synsets[0])
        return cls(tuple(objects), dict.fromkeys(attrs, "attribute"), {p: p for p in preds},
                   synsets=synsets)


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


def _absent_words(pools: PrimitivePools, graph: SceneGraph, kind: str, value: str,
                  candidates: list[str], present: set[str]) -> list[str]:
    """The words of ``kind`` that may replace ``value``: of its category, absent from the
    scene (by lemma), then past the lexical and the similarity filter; one path for objects
    and attributes alike."""
    pool = pools.same_category(kind, value, candidates, graph.closed_world)
    absent = pools.lexically_filtered(value, [w for w in pool if lemma(w) not in present],
                                      kind, graph.closed_world)
    return pools.similar_filtered(value, absent, kind)


def replacement_tiers(graph: SceneGraph, spec: CaptionSpec, index: int,
                      pools: PrimitivePools) -> list[list[str]]:
    """Valid replacement values for primitive ``index``, preferred tier first."""
    prim = spec.primitives[index]
    present = {lemma(w) for w in graph.vocabulary()}
    if prim.kind == "object":
        return [_absent_words(pools, graph, "object", prim.value, list(pools.objects),
                              present)]
    if prim.kind == "attribute":
        absent = _absent_words(pools, graph, "attribute", prim.value,
                               list(pools.attribute_groups), present)
        return _tiered(absent, pools.attribute_groups, prim.value)
    assert prim.target_id is not None
    subject, target = spec.name_of(prim.object_id), spec.name_of(prim.target_id)
    groups = pools.relation_groups
    pool = pools.same_category("relation", prim.value, list(groups), graph.closed_world)
    if graph.closed_world:
        absent = [p for p in pool if p != prim.value
                  and _false_for_every_pair(graph, subject, p, target, groups)]
    else:
        absent = [p for p in pool if lemma(p) not in present]
    return _tiered(pools.similar_filtered(prim.value, absent, "relation"), groups, prim.value)


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
        return lemma(p.new) in {lemma(w) for w in graph.vocabulary()}
    prim = spec.primitives[p.index]
    assert prim.target_id is not None
    if graph.closed_world:
        triple = (spec.name_of(prim.object_id), p.new, spec.name_of(prim.target_id))
        return triple in graph.name_triples()
    return lemma(p.new) in {lemma(w) for w in graph.vocabulary()}


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
