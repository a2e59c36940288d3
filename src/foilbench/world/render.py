"""Render a :class:`~foilbench.world.scene.Scene` to an image, deterministically.

Each object is drawn independently into its own patch (its shadow, then its shaded parts) and
composited over a backdrop that depends only on the condition and ``background_seed``.
Objects are painted back to front (by ``y``). A pixel outside an object's footprint is never
touched by that object, so changing object k changes pixels only inside k's old or new
footprint: the property single-edit pairs rely on. The same scene gives byte-identical images
(no randomness beyond the backdrop seed, float32 throughout).

>>> from foilbench.world.scene import Obj, Scene
>>> img = render(Scene((Obj("mug", "red", x=0.3), Obj("cube", "blue", x=0.7))), size=64)
>>> img.size
(64, 64)
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from PIL import Image

from foilbench.world.backdrop import backdrop
from foilbench.world.geometry import Grid
from foilbench.world.layout import anchor_fraction, unit_fraction
from foilbench.world.scene import Scene
from foilbench.world.shading import shade_object, shadow_alpha, shadow_strength
from foilbench.world.shapes import get_shape

MIN_SIZE, MAX_SIZE = 32, 2048


@dataclass
class Layers:
    """A rendered scene: the image and one boolean footprint mask per object (scene order).

    A footprint holds every pixel the object or its shadow (or glow) touches.
    """

    image: Image.Image
    masks: np.ndarray  # (n_objects, size, size) bool

    def union_mask(self, indices=None) -> np.ndarray:
        idx = range(len(self.masks)) if indices is None else indices
        out = np.zeros(self.masks.shape[1:], dtype=bool)
        for i in idx:
            out |= self.masks[i]
        return out


def _check_size(size) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise ValueError(f"image size must be an integer number of pixels, got {size!r}")
    if not MIN_SIZE <= int(size) <= MAX_SIZE:
        raise ValueError(f"image size {size} out of range; possible: {MIN_SIZE} to {MAX_SIZE}")
    return int(size)


def paint_order(scene: Scene) -> list[int]:
    """Object indices back to front (smaller ``y`` first; ties keep scene order)."""
    return sorted(range(len(scene.objects)), key=lambda i: (scene.objects[i].y, i))


def _draw_object(canvas: np.ndarray, obj, size: int) -> np.ndarray:
    """Composite one object (shadow, then body) onto ``canvas`` in place; return its footprint."""
    spec = get_shape(obj.category, obj.state)
    unit = unit_fraction(obj) * size
    ax, ay = anchor_fraction(obj)
    footprint = np.zeros(canvas.shape[:2], dtype=bool)
    g = Grid.for_extent(ax * size, ay * size, unit, spec.extent, size, size)
    if g is None:
        return footprint
    h, w = g.shape
    region = canvas[g.y0 : g.y0 + h, g.x0 : g.x0 + w]
    shadow = shadow_alpha(g, spec.shadow, shadow_strength(obj))
    rgb, alpha = shade_object(spec.build(g), g, obj)
    touched = (shadow > 0) | (alpha > 0)
    region *= (1.0 - shadow)[..., None]
    region *= (1.0 - alpha)[..., None]
    region += rgb
    footprint[g.y0 : g.y0 + h, g.x0 : g.x0 + w] = touched
    return footprint


def render_layers(scene: Scene, size: int = 256) -> Layers:
    """The image and per-object footprint masks (object + shadow), in scene object order."""
    if not isinstance(scene, Scene):
        raise TypeError(f"render expects a foilbench.world.scene.Scene, got {type(scene).__name__}")
    size = _check_size(size)
    canvas = backdrop(scene.condition, scene.background_seed, size).copy()
    masks = np.zeros((len(scene.objects), size, size), dtype=bool)
    for i in paint_order(scene):
        masks[i] = _draw_object(canvas, scene.objects[i], size)
    pixels = np.clip(canvas * 255.0 + 0.5, 0, 255).astype(np.uint8)
    return Layers(image=Image.fromarray(pixels, mode="RGB"), masks=masks)


def render(scene: Scene, size: int = 256) -> Image.Image:
    """Render ``scene`` as a ``size`` x ``size`` RGB image."""
    return render_layers(scene, size).image


def png_bytes(image: Image.Image) -> bytes:
    """Deterministic PNG encoding (no metadata, fixed compression level)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=6, optimize=False)
    return buf.getvalue()
