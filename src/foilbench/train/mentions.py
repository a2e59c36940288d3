"""Training captions as *mentions*: which objects of a scene a caption speaks about, and how.

A mention is rendered to text from a tuple of objects, so a hard negative is simply the same
mention rendered from re-bound objects (see :mod:`foilbench.train.hard_negatives`), and the
same structure says whether a text is true of the scene (a "negative" that is true is
dropped). Kinds, chosen so the model meets every phrasing of the embedded suite:

``scene``     the world's whole-scene caption, ``describe_scene``
``noun``      one object, e.g. "a red cube" or "a small red metal cube on the left"
``conj``      two objects, "a red cube and a blue sphere" (world phrases)
``nextto``    the benchmark's medium tier, "a red cube next to a blue cone on a white background"
``concept``   all objects of a 1-3 object scene as an Auto-Comp colour concept (its template)
``relation``  "a cube above a sphere" (Auto-Comp position / relative-size concept: any relation
              of the world's that holds; no ``names``) or "a red cube to the left of a blue
              cone" (world phrase, x order; ``names`` per object)
``action``    "a red robot pointing at a blue robot" (the suite's swap_role phrase), in scenes
              where an agent points at something; it takes the relation's place
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

import numpy as np

from foilbench.negatives import Concept, caption
from foilbench.world.autocomp import relation_holds
from foilbench.world.captions import BACKGROUND_WORDS
from foilbench.world.phrases import (
    Action,
    Conjunction,
    NounPhrase,
    Relation,
    acted_on,
    describe,
    full_descriptors,
    holds,
)
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import RELATIONS, SIZE_RELATIONS

KINDS = ("scene", "noun", "conj", "nextto", "concept", "relation", "action")
MAX_CONCEPT_OBJECTS = 3


@dataclass(frozen=True)
class Mention:
    kind: str
    indices: tuple[int, ...]  # mentioned objects, in caption order
    names: tuple[tuple[str, ...], ...] = ()  # descriptors said per object (noun, conj)
    relation: str = "left of"  # concept-form relation mentions only

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown mention kind {self.kind!r}; possible: {', '.join(KINDS)}")


def _phrase(m: Mention, objects: tuple[Obj, ...]):
    """The world phrase of a noun / conj / concept mention (concept: colour + category)."""
    if m.kind == "concept":
        return Conjunction(tuple(NounPhrase(objects[i].category, color=objects[i].color)
                                 for i in m.indices))
    parts = tuple(describe(objects[i], names) for i, names in zip(m.indices, m.names, strict=True))
    if m.kind == "relation":
        return Relation(parts[0], "left", parts[1])
    if m.kind == "action":
        return Action(parts[0], parts[1])
    return parts[0] if m.kind == "noun" else Conjunction(parts)


def mention_text(m: Mention, scene: Scene, objects: tuple[Obj, ...], describe_scene) -> str:
    """The caption of ``m`` spoken about ``objects`` (the scene's own objects or re-bound)."""
    if m.kind == "scene":
        return describe_scene(scene.with_objects(objects))
    if m.kind == "concept":
        picked = [objects[i] for i in m.indices]
        return caption(Concept("color", [o.category for o in picked], [o.color for o in picked]))
    if m.kind == "relation" and not m.names:
        a, b = (objects[i].category for i in m.indices)
        task = "relative_size" if m.relation in SIZE_RELATIONS else "position"
        return caption(Concept(task, [a, b], [m.relation]))
    if m.kind == "nextto":
        a, b = (describe(objects[i], n).text() for i, n in zip(m.indices, m.names, strict=True))
        return f"{a} next to {b} {BACKGROUND_WORDS[scene.condition]}"
    return _phrase(m, objects).text()


def binding_key(obj: Obj) -> tuple:
    """What a whole-scene caption says about one object (position aside)."""
    return (obj.category,) + tuple(getattr(obj, n) for n in full_descriptors(obj))


def mention_is_true(m: Mention, scene: Scene, objects: tuple[Obj, ...]) -> bool:
    """Whether the mention spoken about ``objects`` still describes ``scene`` truly."""
    if m.kind == "scene":
        return Counter(map(binding_key, objects)) == Counter(map(binding_key, scene.objects))
    if m.kind == "nextto":  # "next to" read as "two distinct objects" (nearness not checked)
        return holds(_phrase(replace(m, kind="conj"), objects), scene)
    if m.kind == "relation" and not m.names:
        a, b = (objects[i].category for i in m.indices)
        return any(p.category == a and q.category == b and relation_holds(p, q, m.relation)
                   for p in scene.objects for q in scene.objects if p is not q)
    return holds(_phrase(m, objects), scene)


def _noun_names(obj: Obj, rng: np.random.Generator, full: bool) -> tuple[str, ...]:
    """Colour alone half the time; otherwise a random subset of the object's descriptors."""
    names = list(full_descriptors(obj))
    if not full and rng.random() < 0.5:
        names = ["color"]
    elif not full:
        names = [n for n in names if n == "color" or rng.random() < 0.5]
    if rng.random() < 0.15:
        names.append("location")
    return tuple(names)


def sample_mentions(scene: Scene, rng: np.random.Generator) -> list[Mention]:
    """Seven mentions per scene: scene, two nouns, nextto, conj, concept, relation or (where an
    agent points at something) action (a noun stands in where a scene is too small or too
    large for a kind)."""
    objs = scene.objects
    n = len(objs)

    def noun() -> Mention:
        i = int(rng.integers(n))
        return Mention("noun", (i,), (_noun_names(objs[i], rng, full=False),))

    out = [Mention("scene", tuple(range(n))), noun(), noun()]
    for kind in ("nextto", "conj"):
        if n >= 2:
            i, j = (int(v) for v in rng.choice(n, 2, replace=False))
            full = rng.random() < 0.5
            names = tuple(_noun_names(objs[k], rng, full) for k in (i, j))
            out.append(Mention(kind, (i, j), names))
        else:
            out.append(noun())
    if n <= MAX_CONCEPT_OBJECTS:
        out.append(Mention("concept", tuple(int(v) for v in rng.permutation(n))))
    else:
        out.append(noun())
    acting = [(i, j) for i in range(n) if (j := acted_on(scene, i)) is not None]
    if acting:
        out.append(_action(objs, acting, rng))
    else:
        out.append(_relation(objs, rng) or noun())
    return out


def _action(objs: tuple[Obj, ...], acting: list[tuple[int, int]],
            rng: np.random.Generator) -> Mention:
    """An agent pointing at an object; the action itself is the role, never a descriptor."""
    i, j = acting[int(rng.integers(len(acting)))]
    names = tuple(tuple(w for w in _noun_names(objs[k], rng, False)
                        if w not in ("location", "state")) for k in (i, j))
    return Mention("action", (i, j), names)


def _relation(objs: tuple[Obj, ...], rng: np.random.Generator) -> Mention | None:
    """A true relation between two objects of different categories, in either phrasing."""
    n = len(objs)
    pairs = [(i, j) for i in range(n) for j in range(n) if objs[i].category != objs[j].category]
    if rng.random() < 0.5:
        pairs = [(i, j) for i, j in pairs if objs[i].x < objs[j].x]
        if not pairs:
            return None
        i, j = pairs[int(rng.integers(len(pairs)))]
        names = tuple(tuple(w for w in _noun_names(objs[k], rng, False) if w != "location")
                      for k in (i, j))
        return Mention("relation", (i, j), names)
    true = [(i, j, r) for i, j in pairs for r in RELATIONS + SIZE_RELATIONS
            if relation_holds(objs[i], objs[j], r)]
    if not true:
        return None
    i, j, r = true[int(rng.integers(len(true)))]
    return Mention("relation", (i, j), relation=r)
