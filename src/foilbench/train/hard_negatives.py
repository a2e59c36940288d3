"""Hard negative captions by re-binding what a mention says about a scene's objects.

* Swap (NegCLIP, Yuksekgonul et al. 2023, Sec. 4: swap attributes / swap objects): pick an
  object the caption mentions and another object of a different category, exchange one
  attribute the caption says (colour, material, ... or the category itself, which swaps the
  objects); a relation or action mention swaps its two objects (a role swap).
* Confusion (Auto-Comp): every mentioned object takes a category and each said attribute drawn
  with repetition from the values present among the objects in play (N^(2N) arrangements).

Either way the caption is re-spoken from the re-bound objects with the mention's own template,
and kept only when it differs from the positive and is false of the scene. ``None`` when no
such negative exists (e.g. a one-object scene), which the trainer masks out.
"""

from __future__ import annotations

import numpy as np

from foilbench.train.mentions import Mention, mention_is_true, mention_text
from foilbench.world.phrases import full_descriptors
from foilbench.world.scene import Obj, Scene

MAX_TRIES = 12


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


def swap_negative(m: Mention, scene: Scene, rng: np.random.Generator, describe_scene,
                  positive: str) -> str | None:
    objs = scene.objects
    if m.kind in ("relation", "action"):  # who is where / who does what to whom, reversed
        reversed_ = Mention(m.kind, m.indices[::-1], m.names[::-1], m.relation)
        return _accept(reversed_, scene, objs, positive, describe_scene)
    for _ in range(MAX_TRIES):
        k = int(rng.integers(len(m.indices)))
        i = m.indices[k]
        partners = m.indices if m.kind != "noun" else tuple(range(len(objs)))
        partners = [j for j in partners if objs[j].category != objs[i].category]
        if not partners:
            return None
        j = partners[int(rng.integers(len(partners)))]
        attrs = [a for a in ("category",) + _said(m, objs, k) if getattr(objs[i], a) !=
                 getattr(objs[j], a)]
        if not attrs:
            continue
        attr = attrs[int(rng.integers(len(attrs)))]
        swapped = _rebuild(objs, i, **{attr: getattr(objs[j], attr)})
        if swapped is not None and j != i:
            swapped = _rebuild(swapped, j, **{attr: getattr(objs[i], attr)})
        text = _accept(m, scene, swapped, positive, describe_scene)
        if text is not None:
            return text
    return None


def confusion_negative(m: Mention, scene: Scene, rng: np.random.Generator, describe_scene,
                       positive: str) -> str | None:
    objs = scene.objects
    pool = m.indices if m.kind != "noun" else tuple(range(len(objs)))
    if len(pool) < 2:
        return None
    for _ in range(MAX_TRIES):
        new = objs
        for k, i in enumerate(m.indices):
            changes = {a: getattr(objs[pool[int(rng.integers(len(pool)))]], a)
                       for a in ("category",) + _said(m, objs, k)}
            new = _rebuild(new, i, **changes) if new is not None else None
        text = _accept(m, scene, new, positive, describe_scene)
        if text is not None:
            return text
    return None
