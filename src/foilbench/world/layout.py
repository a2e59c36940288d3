"""Where things go in the image: the stage the objects stand on, and the zones kept for the
contextual backdrop's props, so that props never sit over a scene object.

All values are fractions of the (square) image side. An object's ``x`` in [0, 1] spans the
stage from left to right; its ``y`` in [0, 1] moves its ground contact point from the back of
the stage (higher in the image) to the front.
"""

from __future__ import annotations

from foilbench.world.shapes import get_shape, max_extent
from foilbench.world.vocab import SIZES

STAGE_X = (0.13, 0.87)  # objects' footprints stay inside these columns
GROUND_Y = (0.44, 0.92)  # ground contact line, back to front
HORIZON = 0.30  # wall above, floor below (contextual condition)
DECOR_BAND = (0.02, 0.13)  # wall props; above the tallest object's top
SIDE_STRIPS = ((0.0, 0.12), (0.88, 1.0))  # floor props (plants)
UNIT = 0.1  # object unit in image fractions for a "medium" object


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
