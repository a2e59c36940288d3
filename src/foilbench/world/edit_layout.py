"""Edits of how many objects there are and where they stand.

CompoSET "Quantity" (modify_count, alias modify_cardinality; modify_presence) and "Spatial
Relations" (modify_spatial: one object moves to the other side of a fixed anchor; swap_spatial:
two objects exchange places). Added or moved objects go to free spots found by seeded sampling.
"""

from __future__ import annotations

import numpy as np

from foilbench.world.edit_core import (
    Edit,
    disambiguate,
    disambiguate_two,
    free_spot,
    impossible,
    shuffled,
)
from foilbench.world.phrases import Relation, describe, with_determiner
from foilbench.world.sample import edit_fits
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import COLORS, MAX_OBJECTS, SCENE_CATEGORIES, STATES

MIN_DX = 0.2  # a left/right relation is only stated when the centres are this far apart
DIRECTIONS = ("add", "remove")


def _check_direction(edit_type: str, direction: str | None) -> list[str]:
    if direction is None:
        return list(DIRECTIONS)
    if direction not in DIRECTIONS:
        raise impossible(edit_type, f"unknown direction {direction!r}",
                         f"possible: {', '.join(DIRECTIONS)}")
    return [direction]


def _counted(names, obj: Obj, base: Scene, foil: Scene):
    """Count phrases for the objects like ``obj``: exact counts in base and foil, both >= 1."""
    np_ = describe(obj, names)
    kb = sum(np_.matches(o) for o in base.objects)
    kf = sum(np_.matches(o) for o in foil.objects)
    if kb < 1 or kf < 1 or kb == kf:
        return None
    return with_determiner(np_, kb), with_determiner(np_, kf)


def modify_count(scene: Scene, rng: np.random.Generator, target: int | None = None,
                 direction: str | None = None) -> Edit:
    """Add or remove one object of a kind (category and colour) so that its count changes."""
    objs = scene.objects
    n = len(objs)
    members = list(range(n)) if target is None else [target]
    if target is not None and not 0 <= target < n:
        raise impossible("modify_count", f"target {target} is not an object index",
                         f"the scene has objects 0..{n - 1}")
    for direction_ in shuffled(rng, _check_direction("modify_count", direction)):
        for i in shuffled(rng, members):
            obj = objs[i]
            kind = [j for j, o in enumerate(objs)
                    if (o.category, o.color) == (obj.category, obj.color)]
            if direction_ == "add":
                if n >= MAX_OBJECTS:
                    continue
                copy = free_spot(rng, objs, obj)
                if copy is None:
                    continue
                foil = scene.with_objects(objs + (copy,))
                changed_base, changed_foil = (), (n,)
            else:
                if len(kind) < 2:
                    continue
                foil = scene.with_objects(objs[:i] + objs[i + 1:])
                changed_base, changed_foil = (i,), ()
            def make(names, obj=obj, foil=foil):
                return _counted(names, obj, scene, foil)

            found = disambiguate(scene, foil, make, ("color",), exclude=("location",))
            if found is not None:
                return Edit("modify_count", "quantity", "modify", scene, foil, changed_base,
                            changed_foil, *found, params={"direction": direction_})
    raise impossible("modify_count", f"no kind of object can gain or lose one member here "
                     f"(direction={direction!r}, {n} objects, at most {MAX_OBJECTS})",
                     "add needs room for one more object; remove needs a kind with at least two "
                     "members (removing the last one is modify_presence)")


def _random_new_object(rng: np.random.Generator, scene: Scene) -> Obj | None:
    """A new plain object of a (category, colour) kind the scene does not have, at a free spot."""
    present = {(o.category, o.color) for o in scene.objects}
    kinds = [(c, k) for c in SCENE_CATEGORIES for k in COLORS if (c, k) not in present]
    category, color = kinds[int(rng.integers(len(kinds)))]
    state = STATES[category][0] if category in STATES else None
    return free_spot(rng, scene.objects, Obj(category=category, color=color, state=state))


def modify_presence(scene: Scene, rng: np.random.Generator, target: int | None = None,
                    direction: str | None = None) -> Edit:
    """Remove one object (foil: "no red cube") or add a new one (base: "no red cube")."""
    objs = scene.objects
    n = len(objs)
    directions = _check_direction("modify_presence", direction)
    if direction == "remove" and n == 1:
        raise impossible("modify_presence", "removal of the only object in the scene is "
                         "impossible (a scene holds at least one object)",
                         "possible here: direction='add'")
    if target is not None and not 0 <= target < n:
        raise impossible("modify_presence", f"target {target} is not an object index",
                         f"the scene has objects 0..{n - 1}")
    for direction_ in shuffled(rng, directions):
        if direction_ == "remove" and n > 1:
            for i in ([target] if target is not None else shuffled(rng, range(n))):
                foil = scene.with_objects(objs[:i] + objs[i + 1:])

                def make(names, obj=objs[i]):
                    np_ = describe(obj, names)
                    return np_, with_determiner(np_, "no")

                found = disambiguate(scene, foil, make, ("color",), exclude=("location",))
                if found is not None:
                    return Edit("modify_presence", "quantity", "remove", scene, foil, (i,), (),
                                *found, params={"direction": "remove"})
        elif direction_ == "add" and n < MAX_OBJECTS:
            new = _random_new_object(rng, scene)
            if new is None:
                continue
            foil = scene.with_objects(objs + (new,))

            def make(names, obj=new):
                np_ = describe(obj, names)
                return with_determiner(np_, "no"), np_

            found = disambiguate(scene, foil, make, ("color",), exclude=("location",))
            if found is not None:
                return Edit("modify_presence", "quantity", "add", scene, foil, (), (n,),
                            *found, params={"direction": "add"})
    raise impossible("modify_presence", f"no object can be added or removed here "
                     f"(direction={direction!r}, {n} objects)",
                     f"remove needs at least two objects; add needs fewer than {MAX_OBJECTS} "
                     "and room for one more")


def _relation(a: Obj, b: Obj) -> str:
    return "left" if a.x < b.x else "right"


def _pairs(scene: Scene, rng, targets) -> list[tuple[int, int]]:
    n = len(scene.objects)
    if targets is not None:
        for t in targets:
            if not 0 <= t < n:
                raise impossible("spatial edit", f"target {t} is not an object index",
                                 f"the scene has objects 0..{n - 1}")
        return [tuple(targets)]
    return shuffled(rng, [(i, j) for i in range(n) for j in range(n) if i != j])


def modify_spatial(scene: Scene, rng: np.random.Generator,
                   targets: tuple[int, int] | None = None) -> Edit:
    """Move object ``i`` to the other side of anchor ``j`` ("left of" becomes "right of")."""
    objs = scene.objects
    for i, j in _pairs(scene, rng, targets):
        a, b = objs[i], objs[j]
        if i == j or abs(a.x - b.x) < MIN_DX:
            continue
        x_range = (b.x + MIN_DX, 1.0) if a.x < b.x else (0.0, b.x - MIN_DX)
        moved = free_spot(rng, objs[:i] + objs[i + 1:], a, x_range)
        if moved is None:
            continue
        foil = scene.with_objects(objs[:i] + (moved,) + objs[i + 1:])

        def make(names_a, names_b, a=a, b=b, moved=moved):
            sa, sb = describe(a, names_a), describe(b, names_b)
            return Relation(sa, _relation(a, b), sb), Relation(sa, _relation(moved, b), sb)

        found = disambiguate_two(scene, foil, make, ("color",), exclude=("location",))
        if found is not None:
            return Edit("modify_spatial", "spatial_relations", "modify", scene, foil, (i,), (i,),
                        *found, params={"moved": i, "anchor": j})
    raise impossible("modify_spatial", "no object can move to the other side of another with "
                     f"a caption that tells base from foil ({len(objs)} objects)",
                     f"needs two objects at least {MIN_DX} apart in x and room on the far side")


def swap_spatial(scene: Scene, rng: np.random.Generator,
                 targets: tuple[int, int] | None = None) -> Edit:
    """Exchange the places of two objects that a caption can tell apart."""
    objs = scene.objects
    for i, j in _pairs(scene, rng, targets):
        if i == j or abs(objs[i].x - objs[j].x) < MIN_DX:
            continue
        a, b = objs[i], objs[j]
        new_a, new_b = a.with_(x=b.x, y=b.y), b.with_(x=a.x, y=a.y)
        swapped = list(objs)
        swapped[i], swapped[j] = new_a, new_b
        if not edit_fits(swapped, (i, j), moved=True):  # each at the other's depth now
            continue
        foil = scene.with_objects(swapped)

        def make(names_a, names_b, a=a, b=b, new_a=new_a, new_b=new_b):
            da, db = describe(a, names_a), describe(b, names_b)
            left_b, right_b = (da, db) if a.x < b.x else (db, da)
            left_f, right_f = (da, db) if new_a.x < new_b.x else (db, da)
            return Relation(left_b, "left", right_b), Relation(left_f, "left", right_f)

        found = disambiguate_two(scene, foil, make, ("color",), exclude=("location",))
        if found is not None:
            return Edit("swap_spatial", "spatial_relations", "swap", scene, foil, (i, j), (i, j),
                        *found, params={"swapped": [i, j]})
    raise impossible("swap_spatial", "no two objects can exchange places with a caption that "
                     f"tells base from foil ({len(objs)} objects)",
                     f"needs two distinguishable objects at least {MIN_DX} apart in x")
