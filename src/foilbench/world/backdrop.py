"""Backdrops: Minimal is plain white; Contextual is a room (textured wall and floor) with clutter.

The contextual backdrop depends only on ``(background_seed, size)``, never on the objects, so an
edit to an object cannot change a backdrop pixel. Its props come from a set disjoint from the
object categories (pictures, windows, clocks, rugs, potted plants) and sit only in zones the
objects never reach (the wall band above the tallest object, the side strips of the floor, and
rugs flat under the stage), so a prop is neither hidden by nor confusable with a target.
Backdrops are cached per (seed, size).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from foilbench.world.layout import DECOR_BAND, HORIZON, SIDE_STRIPS

SUPERSAMPLE = 2
WALL_TONES = [(232, 224, 205), (205, 220, 205), (210, 218, 228), (236, 214, 196), (220, 212, 226)]
FLOOR_TONES = [(150, 112, 78), (178, 150, 118), (172, 168, 160), (196, 186, 168)]
RUG_TONES = [(150, 60, 60), (70, 90, 130), (160, 140, 90), (90, 120, 100)]
LEAF_TONES = [(46, 120, 52), (70, 140, 60), (34, 98, 64)]


def backdrop(condition: str, seed: int, size: int) -> np.ndarray:
    """Read-only float32 (size, size, 3) backdrop in [0, 1]."""
    if condition == "minimal":
        return _white(size)
    if condition == "contextual":
        return _room(int(seed), int(size))
    raise ValueError(f"unknown condition {condition!r}; possible: minimal, contextual")


@lru_cache(maxsize=8)
def _white(size: int) -> np.ndarray:
    arr = np.ones((size, size, 3), dtype=np.float32)
    arr.setflags(write=False)
    return arr


@lru_cache(maxsize=64)
def _room(seed: int, size: int) -> np.ndarray:
    rng = np.random.default_rng([seed, 7919])
    s = size * SUPERSAMPLE
    img = Image.new("RGB", (s, s))
    draw = ImageDraw.Draw(img)
    horizon = int(HORIZON * s)
    wall = WALL_TONES[rng.integers(len(WALL_TONES))]
    floor = FLOOR_TONES[rng.integers(len(FLOOR_TONES))]
    draw.rectangle([0, 0, s, horizon], fill=wall)
    draw.rectangle([0, horizon, s, s], fill=floor)
    _wall_texture(draw, rng, wall, s, horizon)
    _floor_texture(draw, rng, floor, s, horizon)
    draw.rectangle([0, horizon - s // 60, s, horizon], fill=(240, 238, 230))
    if rng.random() < 0.7:
        _rug(draw, rng, s)
    _wall_props(draw, rng, s)
    for strip in SIDE_STRIPS:
        if rng.random() < 0.6:
            _plant(draw, rng, s, strip)
    img = img.filter(ImageFilter.GaussianBlur(0.6)).resize((size, size), Image.Resampling.BOX)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    arr = arr * _vignette(size, rng)[..., None]
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    arr.setflags(write=False)
    return arr


def _shade(rgb, factor):
    return tuple(int(max(0, min(255, c * factor))) for c in rgb)


def _wall_texture(draw, rng, wall, s, horizon) -> None:
    kind = rng.integers(3)
    if kind == 0:  # wallpaper stripes
        step = max(4, s // int(rng.integers(14, 26)))
        for x in range(0, s, step * 2):
            draw.rectangle([x, 0, x + step - 1, horizon], fill=_shade(wall, 0.95))
    elif kind == 1:  # small diamond print
        step = max(6, s // 20)
        for y in range(step // 2, horizon, step):
            for x in range((y // step % 2) * step // 2, s, step):
                r = max(1, step // 8)
                draw.polygon([(x, y - r), (x + r, y), (x, y + r), (x - r, y)],
                             fill=_shade(wall, 0.9))
    else:  # wainscot panel
        y0 = int(horizon * 0.62)
        draw.rectangle([0, y0, s, horizon], fill=_shade(wall, 0.92))
        draw.line([0, y0, s, y0], fill=_shade(wall, 0.75), width=max(1, s // 150))


def _floor_texture(draw, rng, floor, s, horizon) -> None:
    if rng.random() < 0.5:  # planks
        step = max(4, s // int(rng.integers(10, 16)))
        for i, y in enumerate(range(horizon, s, step)):
            draw.rectangle([0, y, s, y + step], fill=_shade(floor, 0.92 + 0.12 * rng.random()))
            draw.line([0, y, s, y], fill=_shade(floor, 0.7), width=max(1, s // 200))
            x = int(rng.integers(0, s)) + (i % 2) * s // 3
            draw.line([x % s, y, x % s, y + step], fill=_shade(floor, 0.7), width=max(1, s // 200))
    else:  # tiles converging a little towards the horizon
        step = max(6, s // 8)
        for y in range(horizon, s, step):
            draw.line([0, y, s, y], fill=_shade(floor, 0.8), width=max(1, s // 160))
        for x in range(-s, 2 * s, step):
            draw.line([s / 2 + (x - s / 2) * 0.6, horizon, x, s], fill=_shade(floor, 0.8),
                      width=max(1, s // 160))


def _rug(draw, rng, s) -> None:
    tone = RUG_TONES[rng.integers(len(RUG_TONES))]
    cx = s * (0.5 + 0.15 * (rng.random() - 0.5))
    cy = s * (0.72 + 0.1 * (rng.random() - 0.5))
    rx, ry = s * (0.3 + 0.08 * rng.random()), s * (0.12 + 0.05 * rng.random())
    if rng.random() < 0.5:
        draw.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], fill=_shade(tone, 0.85))
        draw.ellipse([cx - rx * 0.85, cy - ry * 0.8, cx + rx * 0.85, cy + ry * 0.8], fill=tone)
    else:
        draw.rectangle([cx - rx, cy - ry, cx + rx, cy + ry], fill=_shade(tone, 0.85))
        draw.rectangle([cx - rx * 0.9, cy - ry * 0.8, cx + rx * 0.9, cy + ry * 0.8], fill=tone)


def _wall_props(draw, rng, s) -> None:
    """One to three props in the wall band, left to right without overlap."""
    y0, y1 = DECOR_BAND[0] * s, DECOR_BAND[1] * s
    n = int(rng.integers(1, 4))
    slots = np.linspace(0.05, 0.95, n + 1) * s
    for i in range(n):
        w = min((slots[i + 1] - slots[i]) * (0.45 + 0.3 * rng.random()), 0.22 * s)
        x0 = slots[i] + (slots[i + 1] - slots[i] - w) * rng.random()
        kind = rng.integers(3)
        if kind == 0:
            _picture(draw, rng, x0, y0, x0 + w, y1)
        elif kind == 1:
            _window(draw, x0, y0, x0 + w, y1)
        else:
            _clock(draw, x0, y0, x0 + w, y1)


def _picture(draw, rng, x0, y0, x1, y1) -> None:
    b = max(2, (x1 - x0) * 0.08)
    draw.rectangle([x0, y0, x1, y1], fill=(92, 64, 40))
    ix0, iy0, ix1, iy1 = x0 + b, y0 + b, x1 - b, y1 - b
    draw.rectangle([ix0, iy0, ix1, iy1], fill=(150 + int(60 * rng.random()), 190, 220))
    hill = (90, 130 + int(40 * rng.random()), 80)
    xs = np.linspace(ix0, ix1, 12)
    phase = rng.random() * 6.28
    tops = iy0 + (iy1 - iy0) * (0.55 + 0.2 * np.sin(phase + (xs - ix0) / (ix1 - ix0) * 4.0))
    draw.polygon([(ix0, iy1), *zip(xs.tolist(), tops.tolist(), strict=True), (ix1, iy1)], fill=hill)


def _window(draw, x0, y0, x1, y1) -> None:
    b = max(2, (x1 - x0) * 0.07)
    draw.rectangle([x0, y0, x1, y1], fill=(245, 245, 240))
    draw.rectangle([x0 + b, y0 + b, x1 - b, y1 - b], fill=(176, 212, 236))
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    draw.rectangle([cx - b / 2, y0, cx + b / 2, y1], fill=(245, 245, 240))
    draw.rectangle([x0, cy - b / 2, x1, cy + b / 2], fill=(245, 245, 240))


def _clock(draw, x0, y0, x1, y1) -> None:
    r = min(x1 - x0, y1 - y0) / 2
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(60, 60, 60))
    draw.ellipse([cx - r * 0.85, cy - r * 0.85, cx + r * 0.85, cy + r * 0.85], fill=(250, 250, 245))
    w = max(1, int(r * 0.1))
    draw.line([cx, cy, cx, cy - r * 0.65], fill=(30, 30, 30), width=w)
    draw.line([cx, cy, cx + r * 0.45, cy + r * 0.1], fill=(30, 30, 30), width=w)


def _plant(draw, rng, s, strip) -> None:
    """A potted plant standing on the floor inside a side strip."""
    x0, x1 = strip[0] * s, strip[1] * s
    cx, w = (x0 + x1) / 2, (x1 - x0) * 0.8
    base = s * (0.58 + 0.12 * rng.random())
    pot_top = base - w * 0.75
    draw.polygon([(cx - w * 0.4, pot_top), (cx + w * 0.4, pot_top), (cx + w * 0.28, base),
                  (cx - w * 0.28, base)], fill=(176, 96, 60))
    leaf = LEAF_TONES[rng.integers(len(LEAF_TONES))]
    for _ in range(7):
        lx = cx + (rng.random() - 0.5) * w * 0.7
        ly = pot_top - rng.random() * w * 1.1
        lw, lh = w * (0.15 + 0.12 * rng.random()), w * (0.35 + 0.2 * rng.random())
        draw.ellipse([lx - lw, ly - lh, lx + lw, ly + lh * 0.4], fill=_shade(leaf, 0.8 + 0.4 * rng.random()))


def _vignette(size: int, rng) -> np.ndarray:
    """Gentle lighting fall-off from a randomly placed room light."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    lx = 0.3 + 0.4 * rng.random()
    r2 = (xx - lx) ** 2 + (yy - 0.2) ** 2
    return (1.05 - 0.35 * np.clip(r2, 0, 1)).astype(np.float32)

