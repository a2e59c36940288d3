"""Shape registry: how each category is built from shaded parts, and how far it reaches.

A category registers one builder per state with :func:`shape`. A builder draws the object in
object units around its ground contact point (``y`` up) and returns its parts back to front.
The declared ``body`` box and ``shadow`` ellipse give the object's extent before drawing, so a
patch (and a sampler's non-overlap check) never needs to draw first; a test checks that nothing
is drawn outside the declared extent.
"""

from __future__ import annotations

from functools import lru_cache

from foilbench.world.shape_parts import _SHAPES, ShapeSpec
from foilbench.world.vocab import CATEGORIES, STATES, check_choice


def _load_builders() -> None:
    if not _SHAPES:
        from foilbench.world import (  # noqa: F401  (registers)
            shapes_agents,
            shapes_solids,
            shapes_things,
        )


def default_state(category: str) -> str | None:
    states = STATES.get(category)
    return states[0] if states else None


def get_shape(category: str, state: str | None = None) -> ShapeSpec:
    """The spec for a category in a state (``None`` means the category's default state)."""
    _load_builders()
    check_choice("category", category, CATEGORIES)
    if state is None:
        state = default_state(category)
    elif category not in STATES:
        raise ValueError(f"a {category} has no states; asked for state {state!r}")
    else:
        check_choice(f"state of a {category}", state, STATES[category])
    return _SHAPES[(category, state)]


def all_shapes() -> list[ShapeSpec]:
    """Every registered (category, state), in vocabulary order."""
    _load_builders()
    out = []
    for cat in CATEGORIES:
        for st in STATES.get(cat, (None,)):
            out.append(_SHAPES[(cat, st)])
    return out


@lru_cache(maxsize=1)
def max_extent() -> tuple[float, float, float, float]:
    """The union of every shape's extent: room that any category or state fits in."""
    exts = [s.extent for s in all_shapes()]
    return (
        min(e[0] for e in exts),
        max(e[1] for e in exts),
        min(e[2] for e in exts),
        max(e[3] for e in exts),
    )
