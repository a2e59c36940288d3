"""Where things go in the image: the stage the objects stand on, the zones kept for the
contextual backdrop's props, the object scale, and how much of an object others may hide.

Scale: CompoSET's edits change a median 4.8% of the image (§4, App. F.1). ``UNIT`` (a medium
object's unit, as a fraction of the image side) is set so that the single edits of the embedded
pair benchmark change a median share in that range (measured by ``foilbench build synth``, and in
the model card); at the first value, 0.10, they changed a median 1.1% and a model at 128 px saw
an edited object as about 14 x 14 pixels.

Occlusion: objects at this scale cannot keep disjoint boxes (six of them would not fit), so they
overlap as in a photograph: an object painted later (nearer the viewer) may hide part of one
behind it, but every object keeps at least ``MIN_VISIBLE`` of its body box in view
(:func:`visibility_ok`), so a caption about it stays answerable from the image.

All values are fractions of the (square) image side. An object's ``x`` in [0, 1] spans the
stage from left to right; its ``y`` in [0, 1] moves its ground contact point from the back of
the stage (higher in the image) to the front.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from foilbench.world.shapes import get_shape, max_extent
from foilbench.world.vocab import SIZES

STAGE_X = (0.06, 0.94)  # objects' footprints stay inside these columns
GROUND_Y = (0.32, 0.95)  # ground contact line, back to front (just below the horizon)
HORIZON = 0.30  # wall above, floor below (contextual condition)
DECOR_BAND = (0.02, 0.13)  # wall props; above the tallest object's top
SIDE_STRIPS = ((0.0, 0.12), (0.88, 1.0))  # floor props (plants)
UNIT = 0.2  # object unit in image fractions for a "medium" object (0.1 until 0.3.0)
MIN_VISIBLE = 0.6  # share of an object's body box that objects in front of it leave visible
DEPTH_GAP = 0.04  # image fraction between the ground lines of two objects that overlap
_COVER_GRID = 24  # cells per side when measuring how much of a body box is covered


def geometry() -> dict:
    """The constants that shape every render, read at call time (a cache key of rendered
    training data includes them, so a set rendered at another scale is never reused)."""
    return {"unit": UNIT, "stage_x": STAGE_X, "ground_y": GROUND_Y, "horizon": HORIZON,
            "min_visible": MIN_VISIBLE, "depth_gap": DEPTH_GAP}


def unit_fraction(obj) -> float:
    """One object unit as a fraction of the image side (object size applied)."""
    return UNIT * SIZES[obj.size]


def anchor_fraction(obj) -> tuple[float, float]:
    """The object's ground contact point in image fractions (x right, y down)."""
    ax = STAGE_X[0] + obj.x * (STAGE_X[1] - STAGE_X[0])
    ay = GROUND_Y[0] + obj.y * (GROUND_Y[1] - GROUND_Y[0])
    return ax, ay


def _box(obj, extent) -> tuple[float, float, float, float]:
    left, right, bottom, top = extent
    u = unit_fraction(obj)
    ax, ay = anchor_fraction(obj)
    return (ax + left * u, ay - top * u, ax + right * u, ay - bottom * u)


def object_box(obj) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) in image fractions that the object and its shadow can touch."""
    return _box(obj, get_shape(obj.category, obj.state).extent)


def body_box(obj) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) in image fractions of the object itself, without its shadow."""
    return _box(obj, get_shape(obj.category, obj.state).body)


def reserved_box(obj) -> tuple[float, float, float, float]:
    """The box any category or state at this object's size and place would need; keeping
    these disjoint lets an edit change category or state without touching a neighbour."""
    return _box(obj, max_extent())


def boxes_overlap(a, b, margin: float = 0.0) -> bool:
    return not (
        a[2] + margin <= b[0] or b[2] + margin <= a[0] or a[3] + margin <= b[1]
        or b[3] + margin <= a[1]
    )


def inside_stage(box) -> bool:
    """True when a box lies within the stage columns and below the wall props."""
    return (
        box[0] >= STAGE_X[0] and box[2] <= STAGE_X[1] and box[1] >= DECOR_BAND[1]
        and box[3] <= 1.0
    )


def covered_share(box, covers: Sequence) -> float:
    """The share of ``box``'s area under the union of the ``covers`` boxes, measured at the
    centres of a 24 x 24 grid of cells (exact enough for a 60% rule; no polygon clipping)."""
    if not covers:
        return 0.0
    x0, y0, x1, y1 = box
    steps = (np.arange(_COVER_GRID) + 0.5) / _COVER_GRID
    xs, ys = x0 + steps * (x1 - x0), y0 + steps * (y1 - y0)
    hit = np.zeros((_COVER_GRID, _COVER_GRID), dtype=bool)
    for c in covers:
        hit |= ((ys >= c[1]) & (ys < c[3]))[:, None] & ((xs >= c[0]) & (xs < c[2]))[None, :]
    return float(hit.mean())


def visible_fractions(objects: Sequence, indices: Iterable[int] | None = None) -> list[float]:
    """The share of each object's body box left visible by the objects painted after it
    (the renderer paints by ``y``, ties in scene order: :func:`foilbench.world.render.paint_order`)."""
    bodies = [body_box(o) for o in objects]
    keys = [(o.y, k) for k, o in enumerate(objects)]
    out = []
    for i in range(len(objects)) if indices is None else indices:
        covers = [bodies[j] for j in range(len(objects))
                  if keys[j] > keys[i] and boxes_overlap(bodies[i], bodies[j])]
        out.append(1.0 - covered_share(bodies[i], covers))
    return out


def visibility_ok(objects: Sequence, indices: Iterable[int] | None = None) -> bool:
    """True when every object (or every one of ``indices``) keeps ``MIN_VISIBLE`` in view."""
    return all(v >= MIN_VISIBLE for v in visible_fractions(objects, indices))
