"""Seeded scene sampling with occlusion-aware placement, and scene signatures.

Every object gets a *reserved box*: the room that any category or state at its size would need
(:func:`foilbench.world.layout.reserved_box`). Reserved boxes stay inside the stage, so an edit
of category or state never leaves the frame. Objects may overlap as in a photograph, under two
rules (:func:`layout_ok`): objects whose bodies overlap stand at clearly different depths (their
ground lines at least ``DEPTH_GAP`` apart, so one is in front rather than inside the other), and
every object keeps ``MIN_VISIBLE`` of its body in view. The renderer draws each object into its
own footprint back to front, so a single edit of one object still changes pixels only inside
that object's footprints (where an object in front is opaque, not even there).

The random stream drawn does not depend on ``condition``: the same generator state gives the
same objects in the Minimal and the Contextual condition.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, replace

import numpy as np

from foilbench.hashing import sha256_text
from foilbench.world.layout import (
    DECOR_BAND,
    DEPTH_GAP,
    GROUND_Y,
    STAGE_X,
    anchor_fraction,
    body_box,
    boxes_overlap,
    inside_stage,
    object_box,
    reserved_box,
    unit_fraction,
    visibility_ok,
)
from foilbench.world.scene import Obj, Scene
from foilbench.world.shapes import get_shape, max_extent
from foilbench.world.vocab import (
    ACTIONS,
    AGENTS,
    CATEGORIES,
    COLORS,
    CONDITIONS,
    MAX_OBJECTS,
    SCENE_CATEGORIES,
    SIZES,
    STATES,
    check_choice,
)

# Attribute frequencies: mostly plain, opaque, matte objects, so that every attribute value
# stays salient when it does occur (and edits to it are visible).
MATERIAL_P = {"matte": 0.55, "metal": 0.15, "glass": 0.15, "wood": 0.15}
PATTERN_P = {"plain": 0.55, "striped": 0.15, "dotted": 0.15, "checkered": 0.15}
TRANSPARENCY_P = {"opaque": 0.7, "translucent": 0.15, "transparent": 0.15}
PLACEMENT_MARGIN = 0.01  # image fraction between boxes that must stay apart (Auto-Comp chains)
ROUND_GUARD = 0.003  # image fraction
N_BACKDROPS = 64  # contextual backdrops are drawn from this many seeds (all cached)
SIZE_ORDER = tuple(SIZES)  # small -> large


def _pick(rng: np.random.Generator, probs: dict[str, float]) -> str:
    keys = list(probs)
    p = np.asarray([probs[k] for k in keys], dtype=float)
    return keys[int(rng.choice(len(keys), p=p / p.sum()))]


def random_object(
    rng: np.random.Generator,
    categories: Sequence[str] = SCENE_CATEGORIES,
    colors: Sequence[str] = tuple(COLORS),
) -> Obj:
    """An object with random attributes, placed at the stage centre (placement comes later)."""
    category = str(categories[int(rng.integers(len(categories)))])
    color = str(colors[int(rng.integers(len(colors)))])
    material = _pick(rng, MATERIAL_P)
    pattern = _pick(rng, PATTERN_P)
    transparency = _pick(rng, TRANSPARENCY_P)
    size = SIZE_ORDER[int(rng.integers(len(SIZE_ORDER)))]
    # an agent is drawn doing one of its own actions; directed ones are cast (world.cast)
    states = ACTIONS if category in AGENTS else STATES.get(category)
    state = str(states[int(rng.integers(len(states)))]) if states else None
    return Obj(category, color, material, pattern, transparency, size, 0.5, 0.5, state)


def position_range(obj: Obj, reserve: bool = True,
                   ) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The (x, y) ranges in which the object's reserved box (with ``reserve=False`` its own
    footprint box) fits the stage, or ``None``."""
    left, right, bottom, top = (max_extent() if reserve
                                else get_shape(obj.category, obj.state).extent)
    u = unit_fraction(obj)
    ax_lo, ax_hi = STAGE_X[0] - left * u, STAGE_X[1] - right * u
    ay_lo = max(GROUND_Y[0], DECOR_BAND[1] + top * u)
    ay_hi = min(GROUND_Y[1], 1.0 + bottom * u)
    if ax_hi < ax_lo or ay_hi < ay_lo:
        return None
    sx, sy = STAGE_X[1] - STAGE_X[0], GROUND_Y[1] - GROUND_Y[0]
    x_rng = ((ax_lo - STAGE_X[0]) / sx, (ax_hi - STAGE_X[0]) / sx)
    y_rng = ((ay_lo - GROUND_Y[0]) / sy, (ay_hi - GROUND_Y[0]) / sy)
    # shrink by one rounding step so rounded positions stay inside
    return (x_rng[0] + 1e-3, x_rng[1] - 1e-3), (y_rng[0] + 1e-3, y_rng[1] - 1e-3)


def _depth_clear(a: Obj, b: Obj) -> bool:
    """Objects whose bodies overlap must stand at clearly different depths."""
    if not boxes_overlap(body_box(a), body_box(b)):
        return True
    return abs(anchor_fraction(a)[1] - anchor_fraction(b)[1]) >= DEPTH_GAP


def fits(obj: Obj, others: Sequence[Obj], reserve: bool = True) -> bool:
    """True when ``obj`` (painted after any of ``others`` at its depth) can join ``others``: its
    reserved box (with ``reserve=False``, for objects never reshaped: its own footprint box)
    inside the stage, clear depths with the objects it overlaps, and itself and every object
    it overlaps still ``MIN_VISIBLE`` in view. Checks only what ``obj`` changes, so it assumes
    ``others`` already satisfy :func:`layout_ok`."""
    if not inside_stage(reserved_box(obj) if reserve else object_box(obj)):
        return False
    body = body_box(obj)
    near = [k for k, o in enumerate(others) if boxes_overlap(body, body_box(o))]
    if not all(_depth_clear(obj, others[k]) for k in near):
        return False
    return visibility_ok([*others, obj], [*near, len(others)])


def layout_ok(objects: Sequence[Obj]) -> bool:
    """The placement rules for a whole scene."""
    if not all(inside_stage(reserved_box(o)) for o in objects):
        return False
    if not all(_depth_clear(objects[i], objects[j]) for i in range(len(objects))
               for j in range(i + 1, len(objects))):
        return False
    return visibility_ok(objects)


def edit_fits(objects: Sequence[Obj], changed: Sequence[int], moved: bool = False) -> bool:
    """The placement rules for what an edit changed: each object in ``changed`` (reshaped, or
    ``moved``) and every object it overlaps keep ``MIN_VISIBLE`` in view, and overlapping pairs
    with a changed object stand at clear depths; a moved object's footprint stays on the stage
    (its own: a foil is not edited again, so it needs no room for other shapes). Objects the
    edit did not touch are not re-judged, so a hand-made scene is judged by its edit alone."""
    if moved and not all(inside_stage(object_box(objects[i])) for i in changed):
        return False
    near = set(changed)
    for i in changed:
        body = body_box(objects[i])
        for k, o in enumerate(objects):
            if k != i and boxes_overlap(body, body_box(o)):
                if not _depth_clear(objects[i], o):
                    return False
                near.add(k)
    return visibility_ok(objects, sorted(near))


def place_object(
    rng: np.random.Generator,
    obj: Obj,
    others: Sequence[Obj],
    tries: int = 40,
    accept: Callable[[Obj], bool] | None = None,
    within: tuple[tuple[float, float], tuple[float, float]] | None = None,
    apart: bool = False,
    reserve: bool = True,
) -> Obj | None:
    """``obj`` moved to a random free spot among ``others`` (positions rounded to 0.001)
    where ``accept(candidate)`` holds (if given), or ``None`` after ``tries`` attempts.
    ``within`` = ((x_lo, x_hi), (y_lo, y_hi)) narrows where candidates are drawn; ``apart``
    keeps the object's footprint box (body and shadow) clear of every other's: no overlap;
    ``reserve`` as in :func:`fits`."""
    ranges = position_range(obj, reserve)
    if ranges is None:
        return None
    (x0, x1), (y0, y1) = ranges
    if within is not None:
        (wx0, wx1), (wy0, wy1) = within
        x0, x1, y0, y1 = max(x0, wx0), min(x1, wx1), max(y0, wy0), min(y1, wy1)
        if x1 < x0 or y1 < y0:
            return None
    for _ in range(tries):
        x = round(float(rng.uniform(x0, x1)), 3)
        y = round(float(rng.uniform(y0, y1)), 3)
        cand = obj.with_(x=x, y=y)
        if (fits(cand, others, reserve) and (not apart or _clear_of(cand, others))
                and (accept is None or accept(cand))):
            return cand
    return None


def _clear_of(obj: Obj, others: Sequence[Obj]) -> bool:
    box = object_box(obj)
    return not any(boxes_overlap(box, object_box(o), PLACEMENT_MARGIN) for o in others)


def place_objects(rng: np.random.Generator, objects: Sequence[Obj],
                  apart: bool = False, reserve: bool = True) -> list[Obj] | None:
    """Place all objects by :func:`fits` (and without any overlap when ``apart``), shrinking
    one that does not fit (large -> medium -> small); ``None`` when even that fails."""
    placed: list[Obj] = []
    for obj in objects:
        spot = None
        for size in SIZE_ORDER[: SIZE_ORDER.index(obj.size) + 1][::-1]:
            spot = place_object(rng, obj.with_(size=size), placed, apart=apart,
                                reserve=reserve)
            if spot is not None:
                break
        if spot is None:
            return None
        placed.append(spot)
    return placed


def grid_place(rng: np.random.Generator, objects: Sequence[Obj]) -> list[Obj] | None:
    """Dense placement: shrink every object to the largest size whose reserved boxes tile the
    stage in at least ``len(objects)`` cells, put the objects in random cells and jitter each
    inside its cell's slack. ``None`` when even small objects do not tile."""
    left, right, bottom, top = max_extent()
    n = len(objects)
    for size in SIZE_ORDER[::-1]:
        u = unit_fraction(objects[0].with_(size=size))
        # ROUND_GUARD keeps boxes apart after positions are rounded to 0.001
        cell_w = (right - left) * u + PLACEMENT_MARGIN + ROUND_GUARD
        cell_h = (top - bottom) * u + PLACEMENT_MARGIN + ROUND_GUARD
        stage_w = STAGE_X[1] - STAGE_X[0]
        ay_lo = max(GROUND_Y[0], DECOR_BAND[1] + top * u)
        ay_hi = min(GROUND_Y[1], 1.0 + bottom * u)
        n_cols = int(stage_w // cell_w)
        usable_y = ay_hi - ay_lo - ROUND_GUARD  # range of the first row's anchor
        n_rows = int(usable_y // cell_h) + 1 if usable_y >= 0 else 0
        if n_cols * n_rows < n:
            continue
        pitch_x = stage_w / n_cols
        pitch_y = (usable_y + cell_h) / n_rows
        cells = rng.permutation(n_cols * n_rows)[:n]
        placed = []
        for obj, cell in zip(objects, cells, strict=True):
            row, col = divmod(int(cell), n_cols)
            ax = (STAGE_X[0] + col * pitch_x - left * u + ROUND_GUARD / 2
                  + rng.uniform(0, pitch_x - cell_w))
            ay = ay_lo + ROUND_GUARD / 2 + row * pitch_y + rng.uniform(0, pitch_y - cell_h)
            x = (ax - STAGE_X[0]) / stage_w
            y = (ay - GROUND_Y[0]) / (GROUND_Y[1] - GROUND_Y[0])
            # round inwards within the cell's slack so the rounded box still fits
            placed.append(obj.with_(size=size, x=round(x, 3), y=round(y, 3)))
        if all(fits(o, placed[:i]) for i, o in enumerate(placed)):
            return placed
    return None


def _placed(rng: np.random.Generator, objects: Sequence[Obj], restarts: int
            ) -> list[Obj] | None:
    for _ in range(restarts):
        placed = place_objects(rng, objects)
        if placed is not None:
            return placed
    return None


def sample_scene(
    rng: np.random.Generator,
    n_objects: int | None = None,
    condition: str = "minimal",
    *,
    categories: Sequence[str] = SCENE_CATEGORIES,
    colors: Sequence[str] = tuple(COLORS),
    scene_id_prefix: str = "sc-",
    restarts: int = 8,
) -> Scene:
    """A random scene of ``n_objects`` (default: 1 to 6, uniform) non-overlapping objects.

    Objects are placed one by one at random free spots (shrinking one that does not fit);
    after ``restarts`` failed attempts they are all made small and placed again, and after
    ``restarts`` more tiled on a jittered grid.

    The scene id is ``scene_id_prefix`` + the first 12 hex digits of :func:`scene_signature`.
    """
    check_choice("condition", condition, CONDITIONS)
    for name, values, allowed in (("category", categories, CATEGORIES),
                                  ("colour", colors, tuple(COLORS))):
        for v in values:
            check_choice(name, v, allowed)
    if n_objects is None:
        n_objects = int(rng.integers(1, 7))
    if not 1 <= n_objects <= MAX_OBJECTS:
        raise ValueError(f"n_objects={n_objects} out of range; possible: 1 to {MAX_OBJECTS}")
    background_seed = int(rng.integers(N_BACKDROPS))
    objects = [random_object(rng, categories, colors) for _ in range(n_objects)]
    placed = _placed(rng, objects, restarts)
    if placed is None:  # rare: every object small, then the jittered grid
        placed = _placed(rng, [o.with_(size="small") for o in objects], restarts)
    if placed is None:
        placed = grid_place(rng, objects)
    if placed is not None:
        return scene_with_id(Scene(tuple(placed), condition, background_seed), scene_id_prefix)
    raise RuntimeError(f"could not place {n_objects} objects without overlap in {restarts} tries")


def scene_signature(scene_or_objects) -> str:
    """sha256 of the objects (all attributes and positions), independent of condition,
    backdrop and id: two scenes with the same objects are the same scene."""
    objects = scene_or_objects.objects if isinstance(scene_or_objects, Scene) else scene_or_objects
    payload = [asdict(o) for o in objects]
    for d in payload:
        d["x"], d["y"] = round(d["x"], 4), round(d["y"], 4)
    return sha256_text(json.dumps(payload, sort_keys=True))


def scene_with_id(scene: Scene, prefix: str = "sc-") -> Scene:
    return replace(scene, scene_id=prefix + scene_signature(scene)[:12])


def shared_signatures(scenes_a: Iterable[Scene], scenes_b: Iterable[Scene]) -> set[str]:
    """Signatures present in both collections (empty when they are disjoint)."""
    return {scene_signature(s) for s in scenes_a} & {scene_signature(s) for s in scenes_b}
