"""Agents drawn in 2.5-D: a robot figure in each of its actions.

A robot's *action* is its state (:data:`foilbench.world.vocab.STATES`): standing (arms down),
sitting (on the floor, legs out to the sides), waving (one arm raised), jumping (lifted off its
shadow, arms and legs spread), and pointing left or right (one arm held out level towards the
side it points at; what it points at is the nearest object on that side, see
:class:`foilbench.world.phrases.Action`). Silhouettes differ in outline, not only in detail, so
an action stays legible at 96-160 px. Every extent lies inside the other categories' union
(:func:`foilbench.world.shapes.max_extent`), so adding agents moves no reserved box.
"""

from __future__ import annotations

import math

from foilbench.world import geometry as G
from foilbench.world.shape_parts import Part, shape
from foilbench.world.shapes_solids import FRONT, TOP

EYE = (0.95, 0.97, 1.0)
PANEL = (0.88, 0.88, 0.84)
ARM = 0.055  # half the width of a limb, object units
SHOULDER_Y = 1.08
ROBOT_SHADOW = (0.1, 0.05, 0.5, 0.13)


def limb(g: G.Grid, p0, p1, half_width: float = ARM):
    """Signed distance to a straight limb from ``p0`` to ``p1`` (a thin rectangle)."""
    (x0, y0), (x1, y1) = p0, p1
    n = math.hypot(x1 - x0, y1 - y0)
    ox, oy = -(y1 - y0) / n * half_width, (x1 - x0) / n * half_width
    return G.polygon(g, [(x0 + ox, y0 + oy), (x1 + ox, y1 + oy), (x1 - ox, y1 - oy),
                         (x0 - ox, y0 - oy)])


def _upper_body(g: G.Grid, lift: float, torso_bottom: float) -> list[Part]:
    """Torso (patterned), chest panel, neck, head with eyes, antenna; ``lift`` raises it all."""
    top = 1.15 + lift
    torso = G.rect(g, -0.32, torso_bottom + lift, 0.32, top)
    panel = G.rect(g, -0.14, top - 0.32, 0.14, top - 0.14)
    neck = G.rect(g, -0.06, top - 0.02, 0.06, top + 0.07)
    head = G.rect(g, -0.24, top + 0.05, 0.24, top + 0.4)
    eyes = G.union(G.ellipse(g, -0.1, top + 0.25, 0.055, 0.055),
                   G.ellipse(g, 0.1, top + 0.25, 0.055, 0.055))
    antenna = G.union(G.rect(g, -0.02, top + 0.39, 0.02, top + 0.56),
                      G.ellipse(g, 0.0, top + 0.6, 0.06, 0.06))
    return [
        Part(torso, FRONT),
        Part(panel, FRONT, tint=PANEL, patterned=False),
        Part(neck, FRONT, tint=("body", 0.6), patterned=False),
        Part(antenna, TOP, tint=("body", 0.7), patterned=False),
        Part(head, FRONT, tint=("body", 1.05), patterned=False),
        Part(eyes, FRONT, tint=EYE, patterned=False, emissive=0.6),
    ]


def _limbs(g: G.Grid, segments, radius: float = 0.07) -> Part:
    """Arms or legs as one part: limbs plus a round end (hand or foot) at each far point."""
    d = None
    for p0, p1 in segments:
        part = G.union(limb(g, p0, p1), G.ellipse(g, p1[0], p1[1], radius, radius))
        d = part if d is None else G.union(d, part)
    return Part(d, FRONT, tint=("body", 0.72), patterned=False)


def _standing_legs(g: G.Grid, lift: float = 0.0) -> Part:
    return _limbs(g, [((-0.15, 0.55 + lift), (-0.15, 0.07 + lift)),
                      ((0.15, 0.55 + lift), (0.15, 0.07 + lift))])


def _arm_down(side: int, lift: float = 0.0):
    return ((0.38 * side, SHOULDER_Y + lift), (0.42 * side, 0.62 + lift))


def _arm_up(side: int, lift: float = 0.0):
    return ((0.38 * side, SHOULDER_Y + lift), (0.62 * side, 1.55 + lift))


def _arm_out(side: int):
    return ((0.38 * side, SHOULDER_Y), (0.84 * side, SHOULDER_Y + 0.02))


@shape("robot", body=(-0.5, 0.5, 0.0, 1.82), shadow=ROBOT_SHADOW, state="standing")
def robot_standing(g: G.Grid) -> list[Part]:
    return [_standing_legs(g), *_upper_body(g, 0.0, 0.55),
            _limbs(g, [_arm_down(-1), _arm_down(1)])]


@shape("robot", body=(-0.5, 0.7, 0.0, 1.82), shadow=ROBOT_SHADOW, state="waving")
def robot_waving(g: G.Grid) -> list[Part]:
    return [_standing_legs(g), *_upper_body(g, 0.0, 0.55),
            _limbs(g, [_arm_down(-1), _arm_up(1)])]


@shape("robot", body=(-0.7, 0.7, 0.0, 2.12), shadow=(0.1, 0.04, 0.4, 0.1), state="jumping")
def robot_jumping(g: G.Grid) -> list[Part]:
    lift = 0.3
    legs = _limbs(g, [((-0.12, 0.55 + lift), (-0.36, 0.1 + lift)),
                      ((0.12, 0.55 + lift), (0.36, 0.1 + lift))])
    return [legs, *_upper_body(g, lift, 0.55), _limbs(g, [_arm_up(-1, lift), _arm_up(1, lift)])]


@shape("robot", body=(-0.7, 0.7, 0.0, 1.45), shadow=(0.08, 0.06, 0.68, 0.14), state="sitting")
def robot_sitting(g: G.Grid) -> list[Part]:
    drop = -0.37  # the upper body sits 0.37 units lower, on the floor
    legs = _limbs(g, [((-0.2, 0.1), (-0.6, 0.09)), ((0.2, 0.1), (0.6, 0.09))], radius=0.09)
    arms = _limbs(g, [((-0.38, SHOULDER_Y + drop), (-0.48, 0.3)),
                      ((0.38, SHOULDER_Y + drop), (0.48, 0.3))])
    return [legs, *_upper_body(g, drop, 0.55), arms]


@shape("robot", body=(-0.5, 0.93, 0.0, 1.82), shadow=ROBOT_SHADOW, state="pointing right")
def robot_pointing_right(g: G.Grid) -> list[Part]:
    return [_standing_legs(g), *_upper_body(g, 0.0, 0.55),
            _limbs(g, [_arm_down(-1), _arm_out(1)], radius=0.08)]


@shape("robot", body=(-0.93, 0.5, 0.0, 1.82), shadow=ROBOT_SHADOW, state="pointing left")
def robot_pointing_left(g: G.Grid) -> list[Part]:
    return [_standing_legs(g), *_upper_body(g, 0.0, 0.55),
            _limbs(g, [_arm_out(-1), _arm_down(1)], radius=0.08)]
