"""Scene description: plain frozen dataclasses, the contract between sampling, editing,
rendering and captioning. Positions are normalised: ``x`` in [0, 1] left to right, ``y`` in
[0, 1] back to front (larger ``y`` is nearer the viewer and lower in the image).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from foilbench.world.vocab import (
    CATEGORIES,
    COLORS,
    CONDITIONS,
    MATERIALS,
    MAX_OBJECTS,
    PATTERNS,
    SIZES,
    STATES,
    TRANSPARENCIES,
    check_choice,
)


@dataclass(frozen=True)
class Obj:
    category: str
    color: str
    material: str = "matte"
    pattern: str = "plain"
    transparency: str = "opaque"
    size: str = "medium"
    x: float = 0.5
    y: float = 0.5
    state: str | None = None  # one of STATES[category] where the category has states

    def __post_init__(self) -> None:
        check_choice("category", self.category, CATEGORIES)
        check_choice("colour", self.color, tuple(COLORS))
        check_choice("material", self.material, MATERIALS)
        check_choice("pattern", self.pattern, PATTERNS)
        check_choice("transparency", self.transparency, TRANSPARENCIES)
        check_choice("size", self.size, tuple(SIZES))
        if self.state is not None:
            check_choice(f"state of a {self.category}", self.state, STATES.get(self.category, ()))
        if not (0.0 <= self.x <= 1.0 and 0.0 <= self.y <= 1.0):
            raise ValueError(f"object position must lie in [0, 1]^2, got ({self.x}, {self.y})")

    def with_(self, **changes) -> Obj:
        return replace(self, **changes)


@dataclass(frozen=True)
class Scene:
    objects: tuple[Obj, ...]
    condition: str = "minimal"
    background_seed: int = 0  # drives the contextual backdrop and distractors only
    scene_id: str = ""
    extras: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        check_choice("condition", self.condition, CONDITIONS)
        if not 1 <= len(self.objects) <= MAX_OBJECTS:
            raise ValueError(f"a scene holds 1 to {MAX_OBJECTS} objects, got {len(self.objects)}")

    def with_objects(self, objects) -> Scene:
        return replace(self, objects=tuple(objects))
