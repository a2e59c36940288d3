"""The closed vocabulary of the world: categories, colours, materials, patterns, states.

Colours include near shades (gold/yellow, navy/blue, crimson/red, teal/green) so that
fine-grained colour binding is testable. RGB values are the rendered base colour.
"""

from __future__ import annotations

CATEGORIES: tuple[str, ...] = (
    "cube", "sphere", "cylinder", "cone", "pyramid",
    "mug", "bottle", "box", "ball", "book", "lamp", "chair", "robot",
)
# Agents: figures whose *action* is visible (CompoSET's modify_action) and that can act on one
# another (swap_role). They are drawn only where a scene is cast with them
# (:mod:`foilbench.world.cast`), so scenes sampled with the default categories (Auto-Comp,
# COMPASS, the other pair scenes) keep the random streams they had before agents existed.
AGENTS: tuple[str, ...] = ("robot",)
SCENE_CATEGORIES: tuple[str, ...] = tuple(c for c in CATEGORIES if c not in AGENTS)

COLORS: dict[str, tuple[int, int, int]] = {
    "red": (205, 35, 35),
    "crimson": (140, 10, 40),
    "orange": (240, 130, 20),
    "yellow": (245, 220, 40),
    "gold": (200, 160, 30),
    "green": (40, 160, 60),
    "teal": (20, 130, 130),
    "blue": (40, 90, 220),
    "navy": (20, 30, 100),
    "purple": (130, 50, 170),
    "pink": (240, 130, 180),
    "brown": (120, 75, 35),
    "gray": (128, 128, 128),
    "black": (30, 30, 30),
}

MATERIALS: tuple[str, ...] = ("matte", "metal", "glass", "wood")
PATTERNS: tuple[str, ...] = ("plain", "striped", "dotted", "checkered")
TRANSPARENCIES: tuple[str, ...] = ("opaque", "translucent", "transparent")
SIZES: dict[str, float] = {"small": 0.7, "medium": 1.0, "large": 1.35}

# Renderable states per category (first listed is the default).
STATES: dict[str, tuple[str, ...]] = {
    "box": ("closed", "open"),
    "bottle": ("upright", "tipped over"),
    "lamp": ("unlit", "lit"),
    "book": ("closed", "open"),
    "robot": ("standing", "sitting", "waving", "jumping", "pointing left", "pointing right"),
}
# An agent's own actions (modify_action changes one into another) and the directed actions that
# need someone to act on (a robot "pointing at" the nearest object on that side; swap_role).
ACTIONS: tuple[str, ...] = ("standing", "sitting", "waving", "jumping")
DIRECTED_ACTIONS: dict[str, str] = {"pointing left": "left", "pointing right": "right"}

CONDITIONS: tuple[str, ...] = ("minimal", "contextual")

# Spatial relations used by captions and Auto-Comp relational concepts.
RELATIONS: tuple[str, ...] = ("left of", "right of", "above", "below")
SIZE_RELATIONS: tuple[str, ...] = ("bigger than", "smaller than")

MAX_OBJECTS = 8


def check_choice(kind: str, value: str, allowed) -> None:
    """Raise a clear ValueError naming what was asked and what is possible."""
    if value not in allowed:
        raise ValueError(f"unknown {kind} {value!r}; possible: {', '.join(allowed)}")
