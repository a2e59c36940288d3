"""Everyday objects drawn in 2.5-D: mug, bottle, box, book, lamp, chair, with their states
(box open/closed, bottle upright/tipped over, book open/closed, lamp lit/unlit)."""

from __future__ import annotations

import numpy as np

from foilbench.world import geometry as G
from foilbench.world.shape_parts import DEPTH, Part, shape
from foilbench.world.shapes_solids import FRONT, SIDE, TOP, box_faces

PAGES = (0.96, 0.94, 0.86)
INK = (0.55, 0.55, 0.58)
WARM_LIGHT = (1.0, 0.93, 0.62)


@shape("mug", body=(-0.36, 0.64, 0.0, 0.97), shadow=(0.16, 0.1, 0.6, 0.18))
def mug(g: G.Grid) -> list[Part]:
    handle = G.subtract(G.ellipse(g, 0.4, 0.5, 0.24, 0.26), G.ellipse(g, 0.4, 0.5, 0.13, 0.15))
    body = G.union(G.rect(g, -0.36, 0.12, 0.36, 0.85), G.ellipse(g, 0.0, 0.12, 0.36, 0.12))
    rim = G.ellipse(g, 0.0, 0.85, 0.36, 0.12)
    inside = G.ellipse(g, 0.0, 0.845, 0.3, 0.085)
    return [
        Part(handle, G.flat_normal(0.6, 0.1, 1.0), tint=("body", 0.9)),
        Part(body, G.cylinder_normal(g, 0.0, 0.36)),
        Part(rim, TOP, tint=("body", 1.05)),
        Part(inside, TOP, tint=("body", 0.35), patterned=False),
    ]


@shape("bottle", body=(-0.24, 0.24, 0.0, 1.56), shadow=(0.12, 0.06, 0.4, 0.12), state="upright")
def bottle_upright(g: G.Grid) -> list[Part]:
    body = G.union(G.rect(g, -0.24, 0.08, 0.24, 0.86), G.ellipse(g, 0.0, 0.08, 0.24, 0.08))
    shoulder = G.polygon(g, [(-0.24, 0.85), (0.24, 0.85), (0.09, 1.12), (-0.09, 1.12)])
    neck = G.rect(g, -0.09, 1.1, 0.09, 1.43)
    cap = G.rect(g, -0.11, 1.42, 0.11, 1.56)
    wide, thin = G.cylinder_normal(g, 0.0, 0.24), G.cylinder_normal(g, 0.0, 0.1)
    return [
        Part(G.union(body, shoulder), wide),
        Part(neck, thin),
        Part(cap, thin, tint=("body", 0.55), patterned=False),
    ]


@shape(
    "bottle", body=(-0.88, 0.76, 0.0, 0.48), shadow=(-0.04, 0.04, 0.9, 0.13), state="tipped over"
)
def bottle_tipped(g: G.Grid) -> list[Part]:
    axis = 0.24
    body = G.union(G.rect(g, -0.8, 0.0, 0.05, 0.48), G.ellipse(g, -0.8, axis, 0.08, 0.24))
    shoulder = G.polygon(g, [(0.04, 0.0), (0.04, 0.48), (0.31, 0.33), (0.31, 0.15)])
    neck = G.rect(g, 0.29, 0.15, 0.62, 0.33)
    cap = G.rect(g, 0.61, 0.13, 0.76, 0.35)
    wide = G.cylinder_normal(g, axis, 0.24, axis="x")
    thin = G.cylinder_normal(g, axis, 0.1, axis="x")
    return [
        Part(G.union(body, shoulder), wide),
        Part(neck, thin),
        Part(cap, thin, tint=("body", 0.55), patterned=False),
    ]


BOX_W, BOX_H, BOX_D = 0.65, 0.8, 1.0


@shape("box", body=(-0.65, 0.95, 0.0, 1.04), shadow=(0.26, 0.12, 0.95, 0.22), state="closed")
def box_closed(g: G.Grid) -> list[Part]:
    front, top, side = box_faces(g, -BOX_W, BOX_W, BOX_H, BOX_D)
    dx, dy = DEPTH
    seam_y = BOX_H + dy / 2
    seam = G.polygon(
        g,
        [
            (-BOX_W + dx / 2, seam_y - 0.015),
            (BOX_W + dx / 2, seam_y - 0.015),
            (BOX_W + dx / 2, seam_y + 0.015),
            (-BOX_W + dx / 2, seam_y + 0.015),
        ],
    )
    return [
        Part(side, SIDE),
        Part(top, TOP),
        Part(seam, TOP, tint=("body", 0.5), patterned=False),
        Part(front, FRONT),
    ]


@shape("box", body=(-0.9, 1.18, 0.0, 1.45), shadow=(0.26, 0.12, 0.95, 0.22), state="open")
def box_open(g: G.Grid) -> list[Part]:
    front, top, side = box_faces(g, -BOX_W, BOX_W, BOX_H, BOX_D)
    dx, dy = DEPTH
    h = BOX_H
    back_flap = G.rect(g, -BOX_W + dx, h + dy, BOX_W + dx, h + dy + 0.41)
    left_flap = G.polygon(g, [(-BOX_W, h), (-BOX_W + dx, h + dy), (-0.6, 1.2), (-0.9, 0.96)])
    right_flap = G.polygon(g, [(BOX_W, h), (BOX_W + dx, h + dy), (1.18, 1.2), (0.88, 0.96)])
    return [
        Part(back_flap, G.flat_normal(0.0, 0.2, 1.0), tint=("body", 0.85)),
        Part(side, SIDE),
        Part(top, TOP, tint=("body", 0.28), patterned=False),
        Part(left_flap, G.flat_normal(-0.6, 0.5, 0.6)),
        Part(right_flap, G.flat_normal(0.7, 0.4, 0.6)),
        Part(front, FRONT),
    ]


@shape("book", body=(-0.7, 0.98, 0.0, 0.52), shadow=(0.15, 0.12, 0.88, 0.2), state="closed")
def book_closed(g: G.Grid) -> list[Part]:
    left, right, h = -0.7, 0.68, 0.3
    front, cover, pages = box_faces(g, left, right, h, 0.92)
    page_lines = G.intersect(
        pages, 0.02 * g.unit - np.abs(((g.Y - 0.5 * g.X) % 0.06 - 0.03) * g.unit)
    )
    bands = G.union(G.rect(g, left + 0.12, 0.0, left + 0.17, h), G.rect(g, right - 0.17, 0.0,
                                                                          right - 0.12, h))
    return [
        Part(pages, SIDE, tint=PAGES, patterned=False),
        Part(page_lines, SIDE, tint=INK, patterned=False),
        Part(cover, TOP),
        Part(front, FRONT, tint=("body", 0.85)),
        Part(G.intersect(front, bands), FRONT, tint=("body", 0.55), patterned=False),
    ]


@shape("book", body=(-0.76, 1.0, 0.0, 0.47), shadow=(0.12, 0.14, 0.95, 0.24), state="open")
def book_open(g: G.Grid) -> list[Part]:
    cover = G.polygon(g, [(-0.76, 0.0), (0.74, 0.0), (1.0, 0.4), (-0.5, 0.4)])
    left_page = G.polygon(g, [(-0.7, 0.05), (-0.01, 0.1), (0.24, 0.46), (-0.46, 0.43)])
    right_page = G.polygon(g, [(0.01, 0.1), (0.69, 0.05), (0.94, 0.43), (0.26, 0.46)])
    text = 0.018 * g.unit - np.abs(((g.Y - 0.06 * g.X) % 0.075 - 0.0375) * g.unit)
    inner = G.union(
        G.polygon(g, [(-0.6, 0.12), (-0.08, 0.16), (0.12, 0.4), (-0.4, 0.37)]),
        G.polygon(g, [(0.08, 0.16), (0.6, 0.12), (0.82, 0.37), (0.3, 0.4)]),
    )
    return [
        Part(cover, G.flat_normal(0.0, 1.0, 0.35)),
        Part(left_page, G.flat_normal(-0.25, 1.0, 0.35), tint=PAGES, patterned=False),
        Part(right_page, G.flat_normal(0.25, 1.0, 0.35), tint=PAGES, patterned=False),
        Part(G.intersect(text, inner), TOP, tint=INK, patterned=False),
    ]


def _lamp(g: G.Grid, lit: bool) -> list[Part]:
    base = G.union(
        G.ellipse(g, 0.0, 0.07, 0.32, 0.07),
        G.rect(g, -0.32, 0.07, 0.32, 0.13),
        G.ellipse(g, 0.0, 0.13, 0.32, 0.07),
    )
    stem = G.rect(g, -0.045, 0.13, 0.045, 1.25)
    shade = G.union(
        G.polygon(g, [(-0.5, 1.2), (0.5, 1.2), (0.3, 1.85), (-0.3, 1.85)]),
        G.ellipse(g, 0.0, 1.2, 0.5, 0.09),
    )
    opening = G.ellipse(g, 0.0, 1.2, 0.42, 0.06)
    parts = []
    if lit:
        r = np.sqrt(g.X**2 + (g.Y - 1.45) ** 2) / 0.7
        parts.append(Part(None, TOP, WARM_LIGHT, False, alpha=0.85 * np.clip(1.0 - r, 0, 1) ** 1.5))
    parts += [
        Part(base, G.cylinder_normal(g, 0.0, 0.32), tint=("body", 0.7), patterned=False),
        Part(stem, G.cylinder_normal(g, 0.0, 0.05), tint=("body", 0.7), patterned=False),
        Part(shade, G.cylinder_normal(g, 0.0, 0.5, tilt=0.3), emissive=0.8 if lit else 0.0),
    ]
    if lit:
        parts.append(Part(opening, TOP, tint=(1.0, 0.98, 0.85), patterned=False, emissive=1.0))
    else:
        parts.append(Part(opening, TOP, tint=("body", 0.3), patterned=False))
    return parts


@shape("lamp", body=(-0.5, 0.5, 0.0, 1.85), shadow=(0.12, 0.04, 0.45, 0.12), state="unlit")
def lamp_unlit(g: G.Grid) -> list[Part]:
    return _lamp(g, lit=False)


@shape("lamp", body=(-0.7, 0.7, 0.0, 2.15), shadow=(0.12, 0.04, 0.45, 0.12), state="lit")
def lamp_lit(g: G.Grid) -> list[Part]:
    return _lamp(g, lit=True)


@shape("chair", body=(-0.5, 0.78, 0.0, 1.75), shadow=(0.2, 0.12, 0.75, 0.22))
def chair(g: G.Grid) -> list[Part]:
    dx, dy = 0.28, 0.22
    seat_y, seat_t = 0.78, 0.08
    legs_back = G.union(
        G.rect(g, -0.5 + dx, dy, -0.43 + dx, 1.75), G.rect(g, 0.43 + dx, dy, 0.5 + dx, 1.75)
    )
    backrest = G.rect(g, -0.5 + dx, 1.1, 0.5 + dx, 1.7)
    seat_top = G.polygon(
        g, [(-0.5, seat_y), (0.5, seat_y), (0.5 + dx, seat_y + dy), (-0.5 + dx, seat_y + dy)]
    )
    seat_front = G.rect(g, -0.5, seat_y - seat_t, 0.5, seat_y)
    seat_side = G.polygon(
        g, [(0.5, seat_y - seat_t), (0.5 + dx, seat_y - seat_t + dy), (0.5 + dx, seat_y + dy),
            (0.5, seat_y)]
    )
    legs_front = G.union(
        G.rect(g, -0.5, 0.0, -0.43, seat_y - seat_t), G.rect(g, 0.43, 0.0, 0.5, seat_y - seat_t)
    )
    return [
        Part(legs_back, FRONT, tint=("body", 0.75), patterned=False),
        Part(backrest, G.flat_normal(0.0, 0.15, 1.0)),
        Part(seat_top, TOP),
        Part(seat_side, SIDE),
        Part(seat_front, FRONT, tint=("body", 0.9)),
        Part(legs_front, FRONT, tint=("body", 0.85), patterned=False),
    ]
