"""Which Auto-Comp negatives are true: captions that mean what the positive means.

Auto-Comp §3 builds the Confusion set from "all possible combinations of objects and attributes
from the original concept, with replacement" and the Swap set by "permuting the N objects
themselves" (relational tasks). Some of those captions state exactly the concept's facts in
another order, so they are true of every image of the concept:

* attribute tasks, the object-order paraphrases: "a blue sphere and a red cube" for "a red cube
  and a blue sphere" (the N! - 1 other orders of the same bindings: 1 at N = 2, 5 at N = 3,
  all inside the Confusion set, none in Swap, which keeps the objects in place);
* relational tasks, equivalent chains: "a sphere bigger than a cube, and the cube smaller than
  a pyramid" for "a pyramid bigger than a cube, and the cube smaller than a sphere" (both say
  {pyramid > cube, sphere > cube}); these occur in Swap as well as in Confusion.

The paper scores the positive against all of them ("accuracy is reported as the rate at which
the positive caption is selected", §3), so a model that judges truth perfectly and scores two
true captions equally fails under strict ``>``. foilbench keeps that number (``r1``) and adds
``r1_valid``, scored against the false negatives only (:mod:`foilbench.kinds.valid`).

Meaning, not string match. A caption is read as entities (one per object mention; a template
relational chain introduces entity i+1 with "a", and "the" refers back to entity i) and facts:

* attribute tasks: the multiset of (object, attribute) bindings;
* relational tasks: the set of (entity, relation, entity) facts with each converse relation
  written one way ("b right of a" is "a left of b"; "below" is "above" reversed; "smaller than"
  is "bigger than" reversed), compared up to renaming entities that carry the same object word.
  Auto-Comp §4's own words are synonyms first ("to the left of" is "left of", "under" is
  "below", "larger than" is "bigger than": :func:`~foilbench.construct.autocomp.vocab.
  canonical_relation`), so "a cup under a table" and "a table above a cup" are one fact.

No transitivity is assumed (the world's "left of" also asks the two bodies to overlap
vertically, so it is not transitive). For chains of at most three objects this loses nothing:
two chains of N - 1 facts over N entities with equal transitive closures have equal facts (a
chain's covering pairs cannot be derived from its other facts).

The arrangements are :mod:`foilbench.construct.autocomp.negatives`' own
(:func:`swap_arrangements`, :func:`confusion_arrangements`) with the same first-text-wins
deduplication, so index k of :func:`negative_arrangements` is negative k of
``negatives_with_report``; a test pins the alignment.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

from foilbench.construct.autocomp.negatives import (
    Arrangement,
    Concept,
    caption,
    confusion_arrangements,
    render_attribute,
    render_relation,
    swap_arrangements,
    task_spec,
)
from foilbench.construct.autocomp.vocab import canonical_relation

NEGATIVE_SETS = ("swap", "confusion")
# relation -> (canonical relation, whether its subject and object are exchanged)
CONVERSE: dict[str, tuple[str, bool]] = {
    "left of": ("left of", False), "right of": ("left of", True),
    "above": ("above", False), "below": ("above", True),
    "bigger than": ("bigger than", False), "smaller than": ("bigger than", True),
}


def _facts(objects: Sequence[str], relations: Sequence[str]) -> set[tuple[int, str, int]]:
    out = set()
    for i, rel in enumerate(relations):
        word = canonical_relation(rel)  # "to the left of", "under", "larger than" (§4)
        canon, flip = CONVERSE.get(word, (word, False))  # an unknown relation: no converse
        out.add((i + 1, canon, i) if flip else (i, canon, i + 1))
    return out


def same_meaning(task: str, a: Arrangement, b: Arrangement) -> bool:
    """Whether two arrangements of a task's words state the same facts (module docstring)."""
    (oa, va), (ob, vb) = a, b
    if task_spec(task).binds == "attribute":
        return Counter(zip(oa, va, strict=True)) == Counter(zip(ob, vb, strict=True))
    if Counter(oa) != Counter(ob):
        return False
    fa, fb = _facts(oa, va), _facts(ob, vb)
    for perm in itertools.permutations(range(len(ob))):  # entity k of b -> entity perm[k] of a
        if any(ob[k] != oa[perm[k]] for k in range(len(ob))):
            continue
        if {(perm[s], r, perm[t]) for s, r, t in fb} == fa:
            return True
    return False


def _render(concept: Concept, objects: Sequence[str], values: Sequence[str]) -> str:
    if concept.spec.binds == "attribute":
        return render_attribute(objects, values)
    return render_relation(objects, values)


def _candidates(concept: Concept, negative_set: str) -> list[Arrangement]:
    """Every arrangement of one set before deduplication, in autocomp_negatives' order."""
    if negative_set == "swap":
        return swap_arrangements(concept)
    return confusion_arrangements(concept)


def _check_set(negative_set: str) -> None:
    if negative_set not in NEGATIVE_SETS:
        raise ValueError(f"unknown negative set {negative_set!r}; possible: "
                         f"{', '.join(NEGATIVE_SETS)}")


def negative_arrangements(concept: Concept, negative_set: str) -> list[Arrangement]:
    """The arrangement behind each negative of ``negative_set`` ("swap" or "confusion"),
    aligned with ``negatives_with_report(concept).<set>`` (equal texts dropped, first kept)."""
    _check_set(negative_set)
    seen = {caption(concept)}
    out = []
    for arrangement in _candidates(concept, negative_set):
        text = _render(concept, *arrangement)
        if text not in seen:
            seen.add(text)
            out.append(arrangement)
    return out


def equivalent_positions(concept: Concept, arrangements: Sequence[Arrangement]) -> list[int]:
    """Caption indices (1-based: ``captions = [positive, *negatives]``) of the negatives, given
    by their arrangements however they were worded, that mean what the positive means."""
    own = (concept.objects, concept.values)
    return [k + 1 for k, arr in enumerate(arrangements) if same_meaning(concept.task, own, arr)]


def equivalent_indices(concept: Concept, negative_set: str) -> list[int]:
    """Caption indices (1-based: ``captions = [positive, *negatives]``) of the negatives of
    ``negative_set`` that mean what the positive means."""
    return equivalent_positions(concept, negative_arrangements(concept, negative_set))


def true_negatives(concept: Concept, negative_set: str | None = None) -> list[str]:
    """The negatives (template texts) that are true of ``concept``: semantic equivalents of
    its positive caption, from ``negative_set`` or, when None, from Swap then Confusion
    (each text once).

    >>> from foilbench.negatives import Concept
    >>> true_negatives(Concept("color", ["cube", "sphere"], ["red", "blue"]))
    ['a blue sphere and a red cube']
    >>> true_negatives(Concept("relative_size", ["pyramid", "cube", "sphere"],
    ...                        ["bigger than", "smaller than"]), "swap")
    ['a sphere bigger than a cube, and the cube smaller than a pyramid']
    """
    sets = NEGATIVE_SETS if negative_set is None else (negative_set,)
    out: list[str] = []
    for name in sets:
        arrangements = negative_arrangements(concept, name)
        for k in equivalent_indices(concept, name):
            text = _render(concept, *arrangements[k - 1])
            if text not in out:
                out.append(text)
    return out
