"""K hard negative captions per mention, by re-binding what the mention says about its objects.

The embedded models' fine-tunes follow Auto-Comp's matched design: "a Swap-only baseline using
K=3 Swap negatives per positive, and a Confusion variant using K=3 Confusion negatives"
(Auto-Comp §5); "we sample K=3 Confusion hard negatives stratified across the four error
families from Section 6 (Swap, attribute-shared / object-different, object-shared /
attribute-different)" (App. A.9). :mod:`foilbench.finetune.negatives` does the same for real
CLIP models from a benchmark's enumerated negatives; here the negatives of a training mention
are made by re-binding its objects:

* Swap (NegCLIP, Yuksekgonul et al. 2023, Sec. 4: swap attributes / swap objects): a mentioned
  object and another object of a different category exchange one attribute the caption says
  (colour, material, ... or the category itself, which swaps the objects); a relation or action
  mention swaps its two objects (a role swap). The candidate exchanges are enumerated and
  tried in a seeded random order until K distinct false negatives are found; where fewer exist
  (or ``MAX_SWAP_TRIES`` candidates gave fewer), the K draws repeat them uniformly, as
  :func:`foilbench.finetune.negatives.draw_negatives` repeats the single N = 2 Swap negative
  (that function draws with replacement even from a larger pool; here distinct texts come
  first, our choice: more distinct columns per image).
* Confusion (Auto-Comp): every mentioned object takes a category and each said attribute
  from the values present among the objects in play, with repetition (N^(2N) arrangements).
  Each candidate is classified into the error families of :data:`FAMILIES` (as
  :data:`foilbench.finetune.data.FAMILIES` and ``analysis.autocomp.classify_confusion``):
  ``swap`` (same multiset of categories and of said attribute values as the positive: a
  permutation), ``shared_objects`` (same categories), ``shared_attributes`` (same attribute
  values), ``other``. The arrangements are too many to enumerate for a six-object scene
  caption, so each family is aimed at ``ROUNDS`` times (categories and values permuted or
  drawn with repetition and redrawn while they are still a permutation, as the family needs;
  the result is classified by what it is), and
  a two-object mention leaves ``other`` out as App. A.9 does at N = 2 ("the fourth family is
  degenerate at N=2"; :func:`_families`); the K draws are stratified over the families found
  exactly as ``draw_negatives`` does: from
  a random starting family in :data:`FAMILIES` order, draw j goes to family (start + j) mod F,
  a uniform text within it.

Either way the caption is re-spoken from the re-bound objects with the mention's own template,
and kept only when it differs from the positive and is false of the scene. An empty list when
no such negative exists (e.g. a one-object scene), which the trainer masks out.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from foilbench.train.mentions import Mention, mention_is_true, mention_text
from foilbench.world.phrases import full_descriptors
from foilbench.world.scene import Obj, Scene

K_NEGATIVES = 3  # Auto-Comp's K, per arm
FAMILIES = ("swap", "shared_objects", "shared_attributes", "other")
MAX_SWAP_TRIES = 24  # swap candidates tried per mention at most
ROUNDS = 3  # confusion candidates aimed at each family per mention
REDRAWS = 4  # draws of a family's changed values until their multiset differs


def _said(m: Mention, objects: tuple[Obj, ...], k: int) -> tuple[str, ...]:
    """Attributes the mention states about its k-th object (besides its category)."""
    if m.names:  # noun, conj, nextto, world-phrase relation
        return tuple(n for n in m.names[k] if n != "location")
    if m.kind == "concept":
        return ("color",)
    if m.kind == "scene":
        return full_descriptors(objects[m.indices[k]])
    return ()


def _rebuild(objects: tuple[Obj, ...], index: int, **changes) -> tuple[Obj, ...] | None:
    try:
        new = objects[index].with_(**changes)
    except ValueError:  # e.g. a state the new category does not have
        return None
    return objects[:index] + (new,) + objects[index + 1:]


def _accept(m, scene, objects, positive, describe_scene) -> str | None:
    if objects is None:
        return None
    text = mention_text(m, scene, objects, describe_scene)
    if text == positive or mention_is_true(m, scene, objects):
        return None
    return text


def _repeat_to(pool: list[str], k: int, rng: np.random.Generator) -> list[str]:
    """``pool`` (distinct texts) filled up to ``k`` by uniform draws from it; [] if empty."""
    if not pool:
        return []
    return pool[:k] + [pool[int(i)] for i in rng.integers(len(pool), size=max(k - len(pool), 0))]


def swap_candidates(m: Mention, objs: tuple[Obj, ...]) -> list[tuple[int, int, str]]:
    """Every (object i, partner j, attribute) exchange of a non-role swap, in a fixed order."""
    partners = m.indices if m.kind != "noun" else tuple(range(len(objs)))
    out = []
    for k, i in enumerate(m.indices):
        for j in partners:
            if objs[j].category == objs[i].category:
                continue
            out.extend((i, j, a) for a in ("category",) + _said(m, objs, k)
                       if getattr(objs[i], a) != getattr(objs[j], a))
    return out


def swap_negatives(m: Mention, scene: Scene, rng: np.random.Generator, describe_scene,
                   positive: str, k: int = K_NEGATIVES) -> list[str]:
    """``k`` Swap negatives of ``m``: distinct where that many exist, else repeated."""
    objs = scene.objects
    if m.kind in ("relation", "action"):  # who is where / who does what to whom, reversed
        reversed_ = Mention(m.kind, m.indices[::-1], m.names[::-1], m.relation)
        text = _accept(reversed_, scene, objs, positive, describe_scene)
        return [] if text is None else [text] * k
    candidates = swap_candidates(m, objs)
    found: list[str] = []
    for c in rng.permutation(len(candidates))[:MAX_SWAP_TRIES]:
        i, j, attr = candidates[int(c)]
        swapped = _rebuild(objs, i, **{attr: getattr(objs[j], attr)})
        if swapped is not None:
            swapped = _rebuild(swapped, j, **{attr: getattr(objs[i], attr)})
        text = _accept(m, scene, swapped, positive, describe_scene)
        if text is not None and text not in found:
            found.append(text)
            if len(found) == k:
                break
    return _repeat_to(found, k, rng)


def confusion_family(m: Mention, objs: tuple[Obj, ...], new: tuple[Obj, ...]) -> str:
    """The error family of the re-bound objects ``new`` against the positive's ``objs``."""
    def cats(o):
        return Counter(o[i].category for i in m.indices)

    def values(o):
        return Counter((a, getattr(o[i], a)) for k, i in enumerate(m.indices)
                       for a in _said(m, objs, k))

    same_objects, same_values = cats(new) == cats(objs), values(new) == values(objs)
    if same_objects and same_values:
        return "swap"
    if same_objects:
        return "shared_objects"
    return "shared_attributes" if same_values else "other"


def _plan(m: Mention, objs: tuple[Obj, ...]) -> list[tuple[str, list[int], list]]:
    """Per re-bound attribute (category first): the slots that say it and their values."""
    said = [_said(m, objs, k) for k in range(len(m.indices))]
    out = []
    for a in ["category"] + sorted({a for names in said for a in names}):
        where = [k for k in range(len(said)) if a == "category" or a in said[k]]
        out.append((a, where, [getattr(objs[m.indices[k]], a) for k in where]))
    return out


def _as_multiset(values) -> list:
    return sorted(values, key=repr)


def _arrangement(m: Mention, objs: tuple[Obj, ...], pool: tuple[int, ...], plan: list,
                 family: str, rng: np.random.Generator) -> tuple[Obj, ...] | None:
    """One re-binding aimed at ``family``: categories (and each said attribute's values)
    permuted among the mentioned objects where the family keeps them, else drawn from the
    objects in ``pool`` with repetition, redrawn while they are still a permutation."""
    width = len(m.indices)
    u = rng.random((REDRAWS, len(plan), width)).tolist()  # one call: the per-call cost dominates
    changes: list[dict] = [{} for _ in range(width)]
    for row, (a, where, vals) in enumerate(plan):
        kept = family in (("swap", "shared_objects") if a == "category"
                          else ("swap", "shared_attributes"))
        if kept:
            order = sorted(range(len(where)), key=u[0][row].__getitem__)
            picked = [vals[p] for p in order]
        else:
            target = _as_multiset(vals)
            for r in range(REDRAWS):
                picked = [getattr(objs[pool[int(x * len(pool))]], a)
                          for x in u[r][row][:len(where)]]
                if _as_multiset(picked) != target:
                    break
        for k, v in zip(where, picked, strict=True):
            changes[k][a] = v
    new: tuple[Obj, ...] | None = objs
    for k, i in enumerate(m.indices):
        new = _rebuild(new, i, **changes[k]) if new is not None else None
    return new


def _families(n_objects: int) -> tuple[str, ...]:
    """The families a mention of ``n_objects`` objects draws from: no ``swap`` for one object
    (its only permutation is itself), no ``other`` for two ("the fourth family is degenerate at
    N=2", App. A.9: it can only repeat one object and one value; as finetune/data.py)."""
    if n_objects == 1:
        return tuple(f for f in FAMILIES if f != "swap")
    if n_objects == 2:
        return tuple(f for f in FAMILIES if f != "other")
    return FAMILIES


def confusion_pools(m: Mention, scene: Scene, rng: np.random.Generator, describe_scene,
                    positive: str) -> dict[str, list[str]]:
    """Distinct false Confusion negatives found per family (``ROUNDS`` aims at each)."""
    objs = scene.objects
    pool = m.indices if m.kind != "noun" else tuple(range(len(objs)))
    found: dict[str, list[str]] = {f: [] for f in FAMILIES}
    if len(pool) < 2:
        return found
    plan = _plan(m, objs)
    families = _families(len(m.indices))
    seen: set[str] = set()
    for _ in range(ROUNDS):
        for family in FAMILIES:
            if family not in families:
                continue
            new = _arrangement(m, objs, pool, plan, family, rng)
            text = _accept(m, scene, new, positive, describe_scene)
            if text is not None and text not in seen:
                seen.add(text)
                label = confusion_family(m, objs, new)
                if label in families:
                    found[label].append(text)
    return found


def stratified(pools: dict[str, list[str]], k: int, rng: np.random.Generator) -> list[str]:
    """``k`` texts stratified over the non-empty families (``draw_negatives``' rule)."""
    families = [f for f in FAMILIES if pools.get(f)]
    if not families:
        return []
    start = int(rng.integers(len(families)))
    out = []
    for j in range(k):
        texts = pools[families[(start + j) % len(families)]]
        out.append(texts[int(rng.integers(len(texts)))])
    return out


def confusion_negatives(m: Mention, scene: Scene, rng: np.random.Generator, describe_scene,
                        positive: str, k: int = K_NEGATIVES) -> list[str]:
    """``k`` Confusion negatives of ``m``, stratified over the error families."""
    return stratified(confusion_pools(m, scene, rng, describe_scene, positive), k, rng)
