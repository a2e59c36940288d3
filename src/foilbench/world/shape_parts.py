"""What a shape builder is made of: shaded parts, the declared extent, and registration.

Builders (``shapes_solids``, ``shapes_things``, ``shapes_agents``) register here with
:func:`shape`; :mod:`foilbench.world.shapes` looks them up. Kept apart so the builders and the
lookup do not import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from foilbench.world.geometry import Grid

# Oblique projection: one unit of depth moves up-right on screen by this much.
DEPTH = (0.3, 0.24)


@dataclass
class Part:
    """One shaded surface. ``d`` is its signed pixel distance (positive inside).

    ``tint`` is ``("body", factor)`` (the object's colour scaled) or a fixed RGB in [0, 1].
    ``alpha`` replaces coverage for soft parts (a lamp's glow), which are neither patterned
    nor shaded.
    """

    d: np.ndarray | None
    normal: tuple
    tint: tuple = ("body", 1.0)
    patterned: bool = True
    emissive: float = 0.0
    alpha: np.ndarray | None = None


Builder = Callable[[Grid], list[Part]]


@dataclass(frozen=True)
class ShapeSpec:
    category: str
    state: str | None
    build: Builder
    body: tuple[float, float, float, float]  # left, right, bottom, top (object units)
    shadow: tuple[float, float, float, float]  # cx, cy, rx, ry of the ground shadow

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """Everything the object can touch: its body and its shadow (left, right, bottom, top)."""
        cx, cy, rx, ry = self.shadow
        left, right, bottom, top = self.body
        return (min(left, cx - rx), max(right, cx + rx), min(bottom, cy - ry), max(top, cy + ry))


_SHAPES: dict[tuple[str, str | None], ShapeSpec] = {}


def shape(category: str, body, shadow, state: str | None = None):
    """Register the builder of ``category`` (in ``state``) with its declared extent."""

    def register(fn: Builder) -> Builder:
        key = (category, state)
        if key in _SHAPES:
            raise ValueError(f"shape {key} registered twice")
        _SHAPES[key] = ShapeSpec(category, state, fn, tuple(body), tuple(shadow))
        return fn

    return register
