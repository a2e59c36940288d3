"""Auto-Comp concepts in the world: which words a task draws from, and the scene that makes a
concept's positive caption true.

A concept is ``(task, objects, values)`` as in :class:`foilbench.negatives.Concept` (this
module only reads those three fields, so it stays below ``construct`` in the layers):

- ``color``: everyday objects, one colour each;
- ``shape_color``: geometric solids, one colour each;
- ``position``: objects chained by in-image relations (``values[i]`` relates object i to
  object i+1: "a cube left of a sphere" puts the cube's body entirely left of the sphere's,
  overlapping it vertically; "above" puts it entirely higher in the image, overlapping it
  horizontally);
- ``relative_size``: objects chained by "bigger than" / "smaller than", realised with the
  world's discrete sizes (no perspective scaling, so drawn size is the size).

Every other attribute is plain (matte, opaque, no pattern, default state), and the scene holds
exactly the concept's N objects; the Contextual condition adds only backdrop props.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from foilbench.world.layout import GROUND_Y, STAGE_X, body_box, unit_fraction
from foilbench.world.sample import (
    N_BACKDROPS,
    PLACEMENT_MARGIN,
    place_object,
    place_objects,
    scene_with_id,
)
from foilbench.world.scene import Obj, Scene
from foilbench.world.shapes import default_state, get_shape
from foilbench.world.vocab import (
    COLORS,
    RELATIONS,
    SCENE_CATEGORIES,
    SIZE_RELATIONS,
    SIZES,
    check_choice,
)

SOLIDS = ("cube", "sphere", "cylinder", "cone", "pyramid")
EVERYDAY = tuple(c for c in SCENE_CATEGORIES if c not in SOLIDS)  # agents are not concepts
# Similar drawn heights (0.97 to 1.24 units), smaller than one size step (x1.43), so
# "bigger than" is decided by size and not by what the object is.
SIZE_COMPARABLE = ("cube", "sphere", "cylinder", "cone", "pyramid", "mug", "box")

TASK_OBJECTS: dict[str, tuple[str, ...]] = {
    "color": EVERYDAY,
    "shape_color": SOLIDS,
    "position": SCENE_CATEGORIES,
    "relative_size": SIZE_COMPARABLE,
}
TASK_VALUES: dict[str, tuple[str, ...]] = {
    "color": tuple(COLORS),
    "shape_color": tuple(COLORS),
    "position": RELATIONS,
    "relative_size": SIZE_RELATIONS,
}
RELATIONAL = ("position", "relative_size")
SIZE_LEVELS = tuple(SIZES)  # small < medium < large


def check_task(task: str) -> None:
    check_choice("Auto-Comp task", task, tuple(TASK_OBJECTS))


def sample_concept_words(
    rng: np.random.Generator, task: str, n: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Distinct objects (and distinct colours) for a concept of ``n`` objects; relations are
    drawn with repetition. Returns ``(objects, values)``."""
    check_task(task)
    pool = TASK_OBJECTS[task]
    if not 1 <= n <= len(pool):
        raise ValueError(f"n={n} out of range for task {task!r}; possible: 1 to {len(pool)}")
    objects = tuple(str(pool[i]) for i in rng.choice(len(pool), size=n, replace=False))
    values_pool = TASK_VALUES[task]
    if task in RELATIONAL:
        values = tuple(str(values_pool[i]) for i in rng.integers(len(values_pool), size=n - 1))
    else:
        values = tuple(str(values_pool[i]) for i in rng.choice(len(values_pool), n, False))
    return objects, values


def relation_holds(a: Obj, b: Obj, relation: str) -> bool:
    """Whether "a <relation> b" is true of the drawn objects (in-image relations)."""
    if relation in SIZE_RELATIONS:
        bigger = SIZES[a.size] > SIZES[b.size]
        smaller = SIZES[a.size] < SIZES[b.size]
        return bigger if relation == "bigger than" else smaller
    check_choice("relation", relation, RELATIONS + SIZE_RELATIONS)
    ax0, ay0, ax1, ay1 = body_box(a)
    bx0, by0, bx1, by1 = body_box(b)
    rows_overlap = ay0 < by1 and by0 < ay1
    cols_overlap = ax0 < bx1 and bx0 < ax1
    if relation == "left of":
        return ax1 < bx0 and rows_overlap
    if relation == "right of":
        return bx1 < ax0 and rows_overlap
    if relation == "above":
        return ay1 < by0 and cols_overlap
    return by1 < ay0 and cols_overlap  # below


def chain_holds(objects: Sequence[Obj], relations: Sequence[str]) -> bool:
    return all(relation_holds(objects[i], objects[i + 1], r) for i, r in enumerate(relations))


def size_levels(rng: np.random.Generator, relations: Sequence[str]) -> tuple[str, ...]:
    """Sizes realising a chain of size relations: among all assignments that satisfy it, those
    with the largest smallest step between neighbours (clearest), one drawn at random."""
    n = len(relations) + 1
    best, best_gap = [], -1
    for levels in itertools.product(range(len(SIZE_LEVELS)), repeat=n):
        steps = []
        for i, rel in enumerate(relations):
            step = levels[i] - levels[i + 1]
            steps.append(step if rel == "bigger than" else -step)
        if any(s <= 0 for s in steps):
            continue
        gap = min(steps, default=0)
        if gap > best_gap:
            best, best_gap = [levels], gap
        elif gap == best_gap:
            best.append(levels)
    if not best:
        raise ValueError(f"size relations {list(relations)} need more than "
                         f"{len(SIZE_LEVELS)} sizes")
    chosen = best[int(rng.integers(len(best)))]
    return tuple(SIZE_LEVELS[i] for i in chosen)


def _plain(category: str, color: str, size: str = "medium") -> Obj:
    return Obj(category, color, size=size, state=default_state(category))


def _steps(prev: Obj, obj: Obj, apart: bool = True) -> tuple[float, float]:
    """Smallest moves (object coordinates) that put ``obj``'s footprint box (body and shadow;
    without ``apart`` its body, which is what :func:`relation_holds` judges) entirely right of
    / in front of ``prev``'s. Concept objects are never reshaped, so their own outlines, not the
    reserved boxes of any shape, must stay apart."""
    def box(o: Obj):
        spec = get_shape(o.category, o.state)
        return spec.extent if apart else spec.body

    _, p_right, p_bottom, _ = box(prev)
    o_left, _, _, o_top = box(obj)
    up, uo = unit_fraction(prev), unit_fraction(obj)
    dx = (p_right * up - o_left * uo + PLACEMENT_MARGIN) / (STAGE_X[1] - STAGE_X[0])
    dy = (o_top * uo - p_bottom * up + PLACEMENT_MARGIN) / (GROUND_Y[1] - GROUND_Y[0])
    return dx, dy


# relation of prev to obj -> direction obj moves from prev (x, y); "prev above obj" puts obj
# lower in the image, i.e. nearer the viewer.
_DIRECTION = {"left of": (1, 0), "right of": (-1, 0), "above": (0, 1), "below": (0, -1)}


def _window(prev: Obj, obj: Obj, relation: str | None, apart: bool = True):
    """Where ``obj`` may go so that ``prev <relation> obj`` can hold and their footprint boxes
    stay apart: ((x_lo, x_hi), (y_lo, y_hi)) in object coordinates, or ``None`` (anywhere)."""
    if relation not in _DIRECTION:
        return None
    dx, dy = _steps(prev, obj, apart)
    mx, my = _DIRECTION[relation]
    near_x, near_y = (prev.x - 0.04, prev.x + 0.04), (prev.y - 0.06, prev.y + 0.06)
    x_win = near_x if mx == 0 else ((prev.x + dx, 1.0) if mx > 0 else (0.0, prev.x - dx))
    y_win = near_y if my == 0 else ((prev.y + dy, 1.0) if my > 0 else (0.0, prev.y - dy))
    return x_win, y_win


def _first_window(objs: list[Obj], relations: Sequence[str | None], apart: bool = True):
    """Where the first object may go so that the whole chain of moves fits the stage."""
    xs, ys = [0.0], [0.0]
    for prev, obj, rel in zip(objs, objs[1:], relations, strict=False):
        dx, dy = _steps(prev, obj, apart)
        mx, my = _DIRECTION.get(rel, (0, 0))
        xs.append(xs[-1] + mx * dx)
        ys.append(ys[-1] + my * dy)
    return (-min(xs), 1.0 - max(xs)), (-min(ys), 1.0 - max(ys))


def _place_chain(rng, objs: list[Obj], relations: Sequence[str | None],
                 tries: int, apart: bool = True) -> list[Obj] | None:
    """Place objects one after another so each relation to the previous object holds; with
    ``apart`` no two footprints overlap, else the world's occlusion rule applies."""
    first = place_object(rng, objs[0], [], tries=tries,
                         within=_first_window(objs, relations, apart), apart=apart,
                         reserve=False)
    if first is None:
        return None
    placed = [first]
    for obj, rel in zip(objs[1:], relations, strict=True):
        prev = placed[-1]
        accept = None if rel not in RELATIONS else (
            lambda cand, prev=prev, rel=rel: relation_holds(prev, cand, rel))
        spot = place_object(rng, obj, placed, tries=tries, accept=accept, apart=apart,
                            reserve=False, within=_window(prev, obj, rel, apart))
        if spot is None:
            return None
        placed.append(spot)
    return placed


def concept_objects(
    rng: np.random.Generator, task: str, objects: Sequence[str], values: Sequence[str],
    restarts: int = 40,
) -> tuple[Obj, ...]:
    """The N placed objects that make the concept's positive caption true."""
    check_task(task)
    for cat in objects:
        check_choice(f"object for task {task!r}", cat, TASK_OBJECTS[task])
    if task in ("color", "shape_color"):
        if len(values) != len(objects):
            raise ValueError(f"{task}: {len(objects)} objects need {len(objects)} colours, "
                             f"got {len(values)}")
        objs = [_plain(cat, col) for cat, col in zip(objects, values, strict=True)]
        for _ in range(restarts):
            placed = place_objects(rng, objs, apart=True, reserve=False)
            if placed is not None and all(o.size == "medium" for o in placed):
                return tuple(placed)
        raise RuntimeError(f"could not place {list(objects)} at medium size")
    if len(values) != len(objects) - 1:
        raise ValueError(f"{task}: {len(objects)} objects need {len(objects) - 1} relations, "
                         f"got {len(values)}")
    # colours are not part of a relational caption: distinct random ones keep objects visible
    colors = [str(c) for c in rng.choice(list(COLORS), size=len(objects), replace=False)]
    if task == "relative_size":
        sizes = size_levels(rng, values)
        objs = [_plain(cat, col, s) for cat, col, s in zip(objects, colors, sizes, strict=True)]
        return _placed_or_raise(rng, objs, [None] * len(values), objects, values, restarts)
    # medium objects where the chain fits the stage (three in one column need small ones)
    medium = [_plain(cat, col, "medium") for cat, col in zip(objects, colors, strict=True)]
    for _ in range(restarts // 4):
        placed = _place_chain(rng, medium, values, tries=60)
        if placed is not None:
            return tuple(placed)
    small = [o.with_(size="small") for o in medium]
    return _placed_or_raise(rng, small, values, objects, values, restarts)


def _placed_or_raise(rng, objs, relations, objects, values, restarts) -> tuple[Obj, ...]:
    """Objects apart if they can be (most concepts); else overlapping, each mostly in view (a
    large, a small and a large object side by side do not fit the frame at the world's scale)."""
    for k in range(restarts):
        placed = _place_chain(rng, objs, relations, tries=60, apart=k < restarts // 2)
        if placed is not None:
            return tuple(placed)
    raise RuntimeError(f"could not realise {list(objects)} with {list(values)} in "
                       f"{restarts} attempts")


def concept_scene(
    rng: np.random.Generator, task: str, objects: Sequence[str], values: Sequence[str],
    scene_id_prefix: str = "ac-",
) -> Scene:
    """The concept's Minimal scene; ``with_condition(scene, "contextual")`` pairs it."""
    placed = concept_objects(rng, task, objects, values)
    background_seed = int(rng.integers(N_BACKDROPS))
    return scene_with_id(Scene(placed, "minimal", background_seed), scene_id_prefix)


# What each condition's backdrop shows (world.backdrop), in words a caption writer may use.
CONTEXT_DESCRIPTIONS: dict[str, str] = {
    "minimal": "the objects alone on a plain white background",
    "contextual": "an indoor room: a textured wall with pictures, windows or a clock, a wooden "
                  "or tiled floor, sometimes a rug and potted plants",
}


def condition_context(scene: Scene, condition: str) -> tuple[str, int]:
    """``(description, variant)`` of the scene's surroundings under ``condition``: the words
    above and the backdrop seed (which picks a template frame), for the caption realiser."""
    check_choice("condition", condition, tuple(CONTEXT_DESCRIPTIONS))
    return CONTEXT_DESCRIPTIONS[condition], int(scene.background_seed)
