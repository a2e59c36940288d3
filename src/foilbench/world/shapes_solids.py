"""Geometric solids: cube, sphere, cylinder, cone, pyramid, and the ball (a sphere with seams,
so that "ball" and "sphere" stay visually distinct)."""

from __future__ import annotations

import numpy as np

from foilbench.world import geometry as G
from foilbench.world.shape_parts import DEPTH, Part, shape

FRONT = G.flat_normal(-0.1, 0.05, 1.0)
TOP = G.flat_normal(0.0, 1.0, 0.2)
SIDE = G.flat_normal(1.0, 0.05, 0.25)
SEAM = (0.96, 0.95, 0.9)


def box_faces(g: G.Grid, left, right, height, depth):
    """Front, top and right faces of an axis-aligned cuboid standing on y = 0."""
    dx, dy = DEPTH[0] * depth, DEPTH[1] * depth
    front = G.rect(g, left, 0.0, right, height)
    top = G.polygon(
        g, [(left, height), (right, height), (right + dx, height + dy), (left + dx, height + dy)]
    )
    side = G.polygon(g, [(right, 0.0), (right + dx, dy), (right + dx, height + dy), (right, height)])
    return front, top, side


@shape("cube", body=(-0.5, 0.8, 0.0, 1.24), shadow=(0.3, 0.12, 0.75, 0.2))
def cube(g: G.Grid) -> list[Part]:
    front, top, side = box_faces(g, -0.5, 0.5, 1.0, 1.0)
    return [Part(side, SIDE), Part(top, TOP), Part(front, FRONT)]


@shape("sphere", body=(-0.55, 0.55, 0.0, 1.1), shadow=(0.14, 0.04, 0.6, 0.16))
def sphere(g: G.Grid) -> list[Part]:
    return [Part(G.ellipse(g, 0.0, 0.55, 0.55, 0.55), G.sphere_normal(g, 0.0, 0.55, 0.55))]


@shape("ball", body=(-0.42, 0.42, 0.0, 0.84), shadow=(0.1, 0.03, 0.48, 0.13))
def ball(g: G.Grid) -> list[Part]:
    r, cy = 0.42, 0.42
    d = G.ellipse(g, 0.0, cy, r, r)
    normal = G.sphere_normal(g, 0.0, cy, r)
    half_width = 0.035 * g.unit
    seams = [
        half_width - np.abs(G.ellipse(g, -0.62, cy, 0.47, 0.47)),
        half_width - np.abs(G.ellipse(g, 0.62, cy, 0.47, 0.47)),
    ]
    seam = G.intersect(d, G.union(*seams))
    return [Part(d, normal), Part(seam, normal, tint=SEAM, patterned=False)]


@shape("cylinder", body=(-0.4, 0.4, 0.0, 1.16), shadow=(0.16, 0.12, 0.6, 0.2))
def cylinder(g: G.Grid) -> list[Part]:
    rx, ry, h = 0.4, 0.14, 1.02
    body = G.union(G.rect(g, -rx, ry, rx, h), G.ellipse(g, 0.0, ry, rx, ry))
    top = G.ellipse(g, 0.0, h, rx, ry)
    return [Part(body, G.cylinder_normal(g, 0.0, rx)), Part(top, TOP, tint=("body", 1.05))]


@shape("cone", body=(-0.45, 0.45, 0.0, 1.22), shadow=(0.16, 0.12, 0.6, 0.2))
def cone(g: G.Grid) -> list[Part]:
    rx, ry, apex = 0.45, 0.14, 1.22
    body = G.union(
        G.polygon(g, [(-rx, ry), (rx, ry), (0.0, apex)]), G.ellipse(g, 0.0, ry, rx, ry)
    )
    radius = np.maximum(rx * (apex - g.Y) / (apex - ry), 0.02)
    t = np.clip(g.X / radius, -1.0, 1.0)
    nz = np.sqrt(1.0 - t * t)
    norm = np.sqrt(t * t + 0.45**2 + nz * nz)
    return [Part(body, (t / norm, 0.45 / norm, nz / norm))]


@shape("pyramid", body=(-0.55, 0.8, 0.0, 1.1), shadow=(0.2, 0.12, 0.75, 0.2))
def pyramid(g: G.Grid) -> list[Part]:
    apex = (0.12, 1.1)
    front = G.polygon(g, [(-0.55, 0.0), (0.45, 0.0), apex])
    right = G.polygon(g, [(0.45, 0.0), (0.8, 0.28), apex])
    return [
        Part(right, G.flat_normal(1.0, 0.4, 0.35)),
        Part(front, G.flat_normal(-0.15, 0.45, 1.0)),
    ]
