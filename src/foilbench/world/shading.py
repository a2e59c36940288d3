"""Shading of an object's parts: colour, pattern, material, transparency -> premultiplied RGBA.

One directional light from the upper left (Blinn-Phong with an ambient term) makes the 2.5-D
parts read as solids. Materials differ in how they use it:

- matte: diffuse with a faint highlight;
- metal: lower diffuse, reflective banding (a mirrored environment) and highlights tinted by
  the metal's own colour (see :func:`metal_rgb`);
- glass: see-through tint whose opacity rises at the outline (Fresnel-like rim) with highlights;
- wood: the colour modulated by wavy grain.

Patterns live in object units, so they move and scale with the object.
"""

from __future__ import annotations

import math

import numpy as np

from foilbench.world.geometry import Grid, coverage
from foilbench.world.shape_parts import Part
from foilbench.world.vocab import COLORS

_L = np.array([-0.45, 0.65, 0.6])
LIGHT = _L / np.linalg.norm(_L)
_H = LIGHT + np.array([0.0, 0.0, 1.0])
HALF = _H / np.linalg.norm(_H)

TRANSPARENCY_ALPHA = {"opaque": 1.0, "translucent": 0.6, "transparent": 0.3}
GLASS_ALPHA = 0.55
WOOD_TONE = np.array([0.55, 0.36, 0.18], dtype=np.float32)
PATTERN_PERIOD = 0.42  # object units


def body_rgb(color: str) -> np.ndarray:
    return np.asarray(COLORS[color], dtype=np.float32) / 255.0


def secondary_rgb(base: np.ndarray) -> np.ndarray:
    """The pattern's second colour: a light tint of dark colours, a dark shade of light ones."""
    lum = float(base @ np.array([0.299, 0.587, 0.114], dtype=np.float32))
    return base * 0.35 if lum > 0.55 else base + (1.0 - base) * 0.72


def pattern_coverage(g: Grid, pattern: str) -> np.ndarray | None:
    """Anti-aliased coverage of the pattern's second colour; ``None`` for plain."""
    p = PATTERN_PERIOD
    if pattern == "plain":
        return None
    if pattern == "striped":
        t = (g.X + g.Y) / math.sqrt(2.0) / p
        d = (np.abs(t % 1.0 - 0.5) - 0.25) * p * g.unit
        return coverage(d)
    if pattern == "dotted":
        fx = (g.X / p) % 1.0 - 0.5
        fy = (g.Y / p) % 1.0 - 0.5
        d = (0.27 - np.sqrt(fx * fx + fy * fy)) * p * g.unit
        return coverage(d)
    if pattern == "checkered":
        dx = (np.abs((g.X / p) % 1.0 - 0.5) - 0.25) * p * g.unit
        dy = (np.abs((g.Y / p) % 1.0 - 0.5) - 0.25) * p * g.unit
        return coverage(np.sign(dx * dy) * np.minimum(np.abs(dx), np.abs(dy)))
    raise ValueError(f"unknown pattern {pattern!r}; possible: plain, striped, dotted, checkered")


def _dot(normal, v: np.ndarray):
    nx, ny, nz = normal
    return nx * v[0] + ny * v[1] + nz * v[2]


def _field(value, shape) -> np.ndarray:
    return np.broadcast_to(np.asarray(value, dtype=np.float32), shape)


def metal_rgb(base: np.ndarray, lam: np.ndarray, spec: np.ndarray, g: Grid) -> np.ndarray:
    """A metal's colour: darker diffuse, reflective bands and a *coloured* specular highlight.

    Metals reflect in their own colour, so the highlight is the tone brightened, with only a
    small white part at the sharp peak. An earlier white, broad highlight (``0.25 spec^6``)
    lay over whole flat faces, whose normal is constant, and with the bands washed gold out to
    near white at 160 px; the broad term is now tinted and the bands span a darker range, so a
    gold metal cube keeps gold's hue and stays apart from yellow.
    """
    grey = base.mean(axis=-1, keepdims=True)
    tone = 0.8 * base + 0.2 * grey
    band = 0.5 + 0.5 * np.sin(2 * math.pi * (1.1 * g.X + 0.45 * g.Y))
    rgb = tone * (0.18 + 0.45 * lam + 0.32 * band)[..., None]
    sharp = 0.85 * spec**40
    broad = 0.2 * spec**8
    return rgb + (broad + sharp)[..., None] * (0.3 + 0.7 * tone) + 0.25 * sharp[..., None]


def shade_part(part: Part, g: Grid, obj, pattern_cov) -> tuple[np.ndarray, np.ndarray]:
    """Straight (non-premultiplied) RGB (h, w, 3) and alpha (h, w) of one part."""
    shape2 = g.shape
    if part.alpha is not None:  # soft glow: a flat colour fading out
        return _field(part.tint, (*shape2, 3)), part.alpha.astype(np.float32)
    cov = coverage(part.d)
    if part.tint[0] == "body":
        base = body_rgb(obj.color) * np.float32(part.tint[1])
    else:
        base = np.asarray(part.tint, dtype=np.float32)
    base = _field(base, (*shape2, 3))
    if part.patterned and pattern_cov is not None:
        second = secondary_rgb(base[0, 0] if base.ndim == 3 else base)
        base = base + (second - base) * pattern_cov[..., None]
    lam = np.maximum(_field(_dot(part.normal, LIGHT), shape2), 0.0)
    spec = np.maximum(_field(_dot(part.normal, HALF), shape2), 0.0)
    rim = np.clip(1.0 - part.d / max(1.2, 0.09 * g.unit), 0.0, 1.0)
    material = obj.material
    highlight = np.zeros(shape2, dtype=np.float32)
    surface_alpha = np.ones(shape2, dtype=np.float32)
    if material == "matte":
        rgb = base * (0.42 + 0.68 * lam)[..., None]
        highlight = 0.08 * spec**12
    elif material == "metal":
        rgb = metal_rgb(base, lam, spec, g)
    elif material == "glass":
        rgb = base * (0.6 + 0.5 * lam)[..., None]
        surface_alpha = GLASS_ALPHA + (1.0 - GLASS_ALPHA) * rim
        highlight = 0.9 * spec**30 + 0.2 * rim
    elif material == "wood":
        tone = 0.7 * base + 0.3 * WOOD_TONE
        warp = 0.3 * np.sin(2 * math.pi * 0.9 * g.X) + 0.06 * np.sin(2 * math.pi * 5.3 * g.X)
        grain = 0.86 + 0.14 * np.sin(2 * math.pi * (3.4 * g.Y + warp))
        rgb = tone * (grain * (0.42 + 0.68 * lam))[..., None]
        highlight = 0.05 * spec**10
    else:
        raise ValueError(f"unknown material {material!r}; possible: matte, metal, glass, wood")
    if part.emissive:
        glow = np.float32(part.emissive)
        lit = np.clip(base * 1.5 + np.asarray((0.25, 0.23, 0.15), dtype=np.float32), 0.0, 1.0)
        rgb = rgb * (1 - glow) + lit * glow
    rgb = rgb + highlight[..., None]
    t = TRANSPARENCY_ALPHA[obj.transparency]
    alpha = surface_alpha * (t + (1.0 - t) * 0.75 * rim)
    alpha = np.maximum(alpha, np.minimum(highlight, 1.0)) * cov
    return np.clip(rgb, 0.0, 1.0), alpha.astype(np.float32)


def shade_object(parts: list[Part], g: Grid, obj) -> tuple[np.ndarray, np.ndarray]:
    """Composite an object's parts back to front: premultiplied RGB (h, w, 3) and alpha."""
    pattern_cov = pattern_coverage(g, obj.pattern)
    acc_rgb = np.zeros((*g.shape, 3), dtype=np.float32)
    acc_a = np.zeros(g.shape, dtype=np.float32)
    for part in parts:
        rgb, a = shade_part(part, g, obj, pattern_cov)
        keep = (1.0 - a)[..., None]
        acc_rgb = acc_rgb * keep + rgb * a[..., None]
        acc_a = acc_a * (1.0 - a) + a
    return acc_rgb, acc_a


def shadow_alpha(g: Grid, ellipse, strength: float) -> np.ndarray:
    """A soft ground shadow: ``strength * (1 - r^2)^2`` inside its ellipse, exactly 0 outside."""
    cx, cy, rx, ry = ellipse
    r2 = ((g.X - cx) / rx) ** 2 + ((g.Y - cy) / ry) ** 2
    return (strength * np.clip(1.0 - r2, 0.0, 1.0) ** 2).astype(np.float32)


def shadow_strength(obj) -> float:
    """See-through objects cast lighter shadows."""
    t = TRANSPARENCY_ALPHA[obj.transparency]
    if obj.material == "glass":
        t *= GLASS_ALPHA + 0.2
    return 0.5 * (0.35 + 0.65 * t)
