"""Anti-aliased 2-D primitives over a pixel patch, as signed distances.

Shapes are described in object units ``U`` (one unit = ``U`` pixels) with ``y`` pointing up and
the object's ground contact point at the origin. A primitive returns its signed distance in
*pixels* (positive inside); coverage is ``clip(d + 0.5, 0, 1)``, which gives one pixel of
anti-aliasing without supersampling. Working in distances (not boolean masks) also gives the
shader its rim term (distance to the outline) for glass and see-through objects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Grid:
    """Pixel centres of one image-aligned patch, in object units relative to the anchor.

    ``x0, y0`` is the patch's top-left pixel in the image; ``X, Y`` are object-unit coordinates
    (``Y`` up) of every pixel centre.
    """

    x0: int
    y0: int
    X: np.ndarray
    Y: np.ndarray
    unit: float  # pixels per object unit

    @property
    def shape(self) -> tuple[int, int]:
        return self.X.shape

    @classmethod
    def for_extent(cls, anchor_x, anchor_y, unit, extent, width, height) -> Grid | None:
        """The patch covering ``extent`` = (left, right, bottom, top) in object units around
        the anchor pixel position, clipped to the image; ``None`` when nothing is visible."""
        left, right, bottom, top = extent
        x0 = max(0, math.floor(anchor_x + left * unit) - 1)
        x1 = min(width, math.ceil(anchor_x + right * unit) + 1)
        y0 = max(0, math.floor(anchor_y - top * unit) - 1)
        y1 = min(height, math.ceil(anchor_y - bottom * unit) + 1)
        if x1 <= x0 or y1 <= y0:
            return None
        xs = ((np.arange(x0, x1, dtype=np.float32) + 0.5) - anchor_x) / unit
        ys = (anchor_y - (np.arange(y0, y1, dtype=np.float32) + 0.5)) / unit
        X, Y = np.meshgrid(xs, ys)
        return cls(x0=x0, y0=y0, X=X, Y=Y, unit=float(unit))


def coverage(d: np.ndarray) -> np.ndarray:
    """Pixel coverage from a signed pixel distance (one pixel of anti-aliasing)."""
    return np.clip(d + 0.5, 0.0, 1.0)


def polygon(g: Grid, points) -> np.ndarray:
    """Signed pixel distance to a convex polygon given by its vertices (either winding)."""
    pts = [(float(px), float(py)) for px, py in points]
    area = sum(ax * by - bx * ay for (ax, ay), (bx, by) in zip(pts, pts[1:] + pts[:1], strict=True))
    if area < 0:
        pts = pts[::-1]
    d = None
    for (ax, ay), (bx, by) in zip(pts, pts[1:] + pts[:1], strict=True):
        ex, ey = bx - ax, by - ay
        n = math.hypot(ex, ey)
        if n == 0:
            continue
        # interior lies to the left of each edge of a counter-clockwise polygon
        e = ((g.X - ax) * (-ey) + (g.Y - ay) * ex) / n
        d = e if d is None else np.minimum(d, e)
    return d * g.unit


def rect(g: Grid, left, bottom, right, top) -> np.ndarray:
    """Signed pixel distance to an axis-aligned rectangle (object units)."""
    d = np.minimum(np.minimum(g.X - left, right - g.X), np.minimum(g.Y - bottom, top - g.Y))
    return d * g.unit


def ellipse(g: Grid, cx, cy, rx, ry) -> np.ndarray:
    """Approximate signed pixel distance to an axis-aligned ellipse (first-order, exact on
    circles and accurate near the outline, which is all anti-aliasing needs)."""
    dx = (g.X - cx) / rx
    dy = (g.Y - cy) / ry
    r = np.sqrt(dx * dx + dy * dy)
    grad = np.sqrt((dx / rx) ** 2 + (dy / ry) ** 2) / np.maximum(r, 1e-6)
    grad = np.maximum(grad, 1.0 / max(rx, ry))
    return (1.0 - r) / grad * g.unit


def intersect(*ds: np.ndarray) -> np.ndarray:
    out = ds[0]
    for d in ds[1:]:
        out = np.minimum(out, d)
    return out


def union(*ds: np.ndarray) -> np.ndarray:
    out = ds[0]
    for d in ds[1:]:
        out = np.maximum(out, d)
    return out


def subtract(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.minimum(a, -b)


# Normals (unit vectors, x right, y up, z towards the viewer) for the shader.


def flat_normal(nx: float, ny: float, nz: float):
    n = math.sqrt(nx * nx + ny * ny + nz * nz)
    return (nx / n, ny / n, nz / n)


def cylinder_normal(g: Grid, centre: float, radius: float, axis: str = "y", tilt: float = 0.0):
    """Normals of a cylinder whose axis runs along ``axis`` ("y" upright, "x" lying);
    ``tilt`` leans them along the axis (a cone's side faces slightly up)."""
    coord = g.X if axis == "y" else g.Y
    t = np.clip((coord - centre) / radius, -1.0, 1.0)
    nz = np.sqrt(1.0 - t * t)
    if axis == "y":
        nx, ny = t, np.full_like(t, tilt)
    else:
        nx, ny = np.full_like(t, tilt), t
    norm = np.sqrt(nx * nx + ny * ny + nz * nz)
    return (nx / norm, ny / norm, nz / norm)


def sphere_normal(g: Grid, cx: float, cy: float, r: float):
    nx = np.clip((g.X - cx) / r, -1.0, 1.0)
    ny = np.clip((g.Y - cy) / r, -1.0, 1.0)
    nz = np.sqrt(np.clip(1.0 - nx * nx - ny * ny, 0.0, 1.0))
    return (nx, ny, nz)
