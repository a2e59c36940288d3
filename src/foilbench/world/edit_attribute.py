"""Edits of one object's appearance or identity, and swaps of an attribute between two objects.

CompoSET "Identity & Appearance" (colour, pattern, material, shape, transparency, object identity)
and "Activity & State" (state, pose). Every function takes the base scene and a seeded
``numpy.random.Generator``; optional ``target``/``targets`` and ``value`` pin the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from foilbench.world.edit_core import (
    Edit,
    disambiguate,
    disambiguate_two,
    impossible,
    shuffled,
)
from foilbench.world.phrases import Conjunction, describe, effective_state
from foilbench.world.sample import edit_fits
from foilbench.world.scene import Obj, Scene
from foilbench.world.vocab import (
    AGENTS,
    COLORS,
    MATERIALS,
    PATTERNS,
    SCENE_CATEGORIES,
    STATES,
    TRANSPARENCIES,
    check_choice,
)

# Geometric solids change *shape*; everyday objects change *identity* (CompoSET's boundary
# between modify_shape and modify_object). Upright/tipped-over is CompoSET's *pose*.
SHAPE_CATEGORIES: tuple[str, ...] = ("cube", "sphere", "cylinder", "cone", "pyramid")
OBJECT_CATEGORIES: tuple[str, ...] = tuple(c for c in SCENE_CATEGORIES
                                           if c not in SHAPE_CATEGORIES)  # agents act instead
POSE_CATEGORIES: tuple[str, ...] = ("bottle",)
RESHAPING = ("category", "state")  # attributes whose change changes the object's outline
STATE_CATEGORIES: tuple[str, ...] = tuple(c for c in STATES
                                          if c not in POSE_CATEGORIES and c not in AGENTS)


def _check_target(edit_type: str, scene: Scene, target: int | None) -> list[int] | None:
    if target is None:
        return None
    if not 0 <= target < len(scene.objects):
        raise impossible(edit_type, f"target {target} is not an object index",
                         f"the scene has objects 0..{len(scene.objects) - 1}")
    return [target]


def modify_with(edit_type: str, category: str, operation: str, attribute: str,
            options: Callable[[Obj], Sequence[str]], allowed_desc: str,
            scene: Scene, rng: np.random.Generator, target: int | None, value: str | None,
            required: tuple[str, ...], asks: tuple[str, Sequence[str]] | None = None) -> Edit:
    """Change ``attribute`` of one object to another allowed value, with contrasting phrases.
    ``asks``: what an asked ``value`` is called and the values that may be asked for, checked
    first (an unknown one is a clear error, not "no object can change")."""
    if value is not None and asks is not None:
        check_choice(asks[0], value, asks[1])
    indices = _check_target(edit_type, scene, target) or shuffled(rng, range(len(scene.objects)))
    for i in indices:
        obj = scene.objects[i]
        current = effective_state(obj) if attribute == "state" else getattr(obj, attribute)
        values = [v for v in options(obj) if v != current]
        if value is not None:
            values = [value] if value in values else []
        for v in shuffled(rng, values):
            changes = {attribute: v}
            if attribute == "category":  # a new category starts in its default state
                changes["state"] = None
            new = obj.with_(**changes)
            foil = scene.with_objects(scene.objects[:i] + (new,) + scene.objects[i + 1:])
            if attribute in RESHAPING and not edit_fits(foil.objects, (i,)):
                continue  # the new shape would hide, or be hidden, past the occlusion rule

            def make(names, obj=obj, new=new):
                return describe(obj, names), describe(new, names)

            found = disambiguate(scene, foil, make, required)
            if found is not None:
                return Edit(edit_type, category, operation, scene, foil, (i,), (i,), *found,
                            params={"attribute": attribute, "from": current, "to": v})
    asked = f" to {value!r}" if value is not None else ""
    raise impossible(edit_type, f"no object{'' if target is None else f' {target}'} can change "
                     f"its {attribute}{asked} with a caption that tells base from foil",
                     f"possible: {allowed_desc}")


def _swap(edit_type: str, attribute: str, scene: Scene, rng: np.random.Generator,
          targets: tuple[int, int] | None, required: tuple[str, ...]) -> Edit:
    """Exchange ``attribute`` between two objects that differ in it (tests binding)."""
    n = len(scene.objects)
    values = [getattr(o, attribute) for o in scene.objects]
    if targets is not None:
        for t in targets:
            _check_target(edit_type, scene, t)
        pairs = [tuple(targets)]
    else:
        pairs = shuffled(rng, [(i, j) for i in range(n) for j in range(i + 1, n)])
    pairs = [(i, j) for i, j in pairs if i != j and values[i] != values[j]]
    for i, j in pairs:
        a, b = scene.objects[i], scene.objects[j]
        new_a = a.with_(**{attribute: values[j]})
        new_b = b.with_(**{attribute: values[i]})
        objs = list(scene.objects)
        objs[i], objs[j] = new_a, new_b
        foil = scene.with_objects(objs)

        def make(names_a, names_b, a=a, b=b, new_a=new_a, new_b=new_b):
            return (Conjunction((describe(a, names_a), describe(b, names_b))),
                    Conjunction((describe(new_a, names_a), describe(new_b, names_b))))

        found = disambiguate_two(scene, foil, make, required)
        if found is not None:
            return Edit(edit_type, "identity_appearance", "swap", scene, foil, (i, j), (i, j),
                        *found, params={"attribute": attribute,
                                        "values": [values[i], values[j]]})
    have = ", ".join(f"{o.category}: {v}" for o, v in zip(scene.objects, values, strict=True))
    raise impossible(edit_type, f"needs two objects with different {attribute}s whose swap a "
                     f"caption can tell apart; the scene has {n} object(s) ({have})",
                     "use a scene with at least two objects that differ in " + attribute)


def modify_color(scene, rng, target=None, value=None):
    return modify_with("modify_color", "identity_appearance", "modify", "color",
                   lambda o: tuple(COLORS), "any colour of " + ", ".join(COLORS),
                   scene, rng, target, value, ("color",),
                   asks=("colour", tuple(COLORS)))


def modify_pattern(scene, rng, target=None, value=None):
    return modify_with("modify_pattern", "identity_appearance", "modify", "pattern",
                   lambda o: PATTERNS, "patterns " + ", ".join(PATTERNS),
                   scene, rng, target, value, ("pattern", "color"),
                   asks=("pattern", PATTERNS))


def modify_material(scene, rng, target=None, value=None):
    return modify_with("modify_material", "identity_appearance", "modify", "material",
                   lambda o: MATERIALS, "materials " + ", ".join(MATERIALS),
                   scene, rng, target, value, ("material", "color"),
                   asks=("material", MATERIALS))


def modify_transparency(scene, rng, target=None, value=None):
    return modify_with("modify_transparency", "identity_appearance", "modify", "transparency",
                   lambda o: TRANSPARENCIES, "transparencies " + ", ".join(TRANSPARENCIES),
                   scene, rng, target, value, ("transparency", "color"),
                   asks=("transparency", TRANSPARENCIES))


def modify_shape(scene, rng, target=None, value=None):
    return modify_with("modify_shape", "identity_appearance", "modify", "category",
                   lambda o: SHAPE_CATEGORIES if o.category in SHAPE_CATEGORIES else (),
                   "a geometric solid (" + ", ".join(SHAPE_CATEGORIES) + ") changing shape",
                   scene, rng, target, value, ("color",),
                   asks=("shape", SHAPE_CATEGORIES))


def modify_object(scene, rng, target=None, value=None):
    return modify_with("modify_object", "identity_appearance", "replace", "category",
                   lambda o: OBJECT_CATEGORIES if o.category in OBJECT_CATEGORIES else (),
                   "an everyday object (" + ", ".join(OBJECT_CATEGORIES) + ") replaced by "
                   "another", scene, rng, target, value, ("color",),
                   asks=("object", OBJECT_CATEGORIES))


def _states_of(categories):
    return lambda o: STATES[o.category] if o.category in categories else ()


def modify_state(scene, rng, target=None, value=None):
    return modify_with("modify_state", "activity_state", "modify", "state",
                   _states_of(STATE_CATEGORIES),
                   "; ".join(f"{c}: {'/'.join(STATES[c])}" for c in STATE_CATEGORIES),
                   scene, rng, target, value, ("state", "color"))


def modify_pose(scene, rng, target=None, value=None):
    return modify_with("modify_pose", "activity_state", "modify", "state",
                   _states_of(POSE_CATEGORIES),
                   "; ".join(f"{c}: {'/'.join(STATES[c])}" for c in POSE_CATEGORIES),
                   scene, rng, target, value, ("state", "color"))


def swap_color(scene, rng, targets=None):
    return _swap("swap_color", "color", scene, rng, targets, ("color",))


def swap_material(scene, rng, targets=None):
    return _swap("swap_material", "material", scene, rng, targets, ("material", "color"))
