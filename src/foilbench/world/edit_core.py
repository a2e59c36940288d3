"""What every single edit shares: the result type, the error, the contrast check, free placement.

An edit is valid only when its two phrases *contrast*: the base phrase is true of the base scene
and false of the foil, and the foil phrase the other way round (:func:`check_contrast`). Edits
search descriptor sets from plain to specific (:func:`disambiguate`) so that, when two objects
could match, the phrase adds appearance or location until it picks out the edited object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from foilbench.errors import FoilbenchError
from foilbench.world.phrases import Phrase, holds
from foilbench.world.sample import fits, position_range
from foilbench.world.scene import Obj, Scene

# Descriptors tried, in this order, to tell an edited object apart from look-alikes.
EXTRA_DESCRIPTORS: tuple[str, ...] = (
    "material", "pattern", "transparency", "size", "state", "location",
)
MAX_EXTRAS = 2
# "on the left" / "in the middle" / "on the right" are only said when no object lies within this
# distance of a third of the frame, where a viewer could read either side.
LOCATION_MARGIN = 0.05
PLACEMENT_TRIES = 120  # seeded candidate positions tried when placing an added or moved object


class EditImpossible(FoilbenchError, ValueError):
    """The asked edit cannot be made on this scene; the message says what was asked and why."""


@dataclass(frozen=True)
class Edit:
    """One single edit: the foil scene, what changed, and the phrases that tell base from foil.

    ``base_indices`` index ``base.objects`` and ``foil_indices`` index ``foil.objects``; the edit
    mask is the union of those objects' footprints in the two renders.
    """

    edit_type: str
    category: str
    operation: str
    base: Scene
    foil: Scene
    base_indices: tuple[int, ...]
    foil_indices: tuple[int, ...]
    base_phrase: Phrase
    foil_phrase: Phrase
    params: dict = field(default_factory=dict, compare=False)


def check_contrast(base: Scene, foil: Scene, base_phrase: Phrase, foil_phrase: Phrase) -> bool:
    """True when each phrase holds of its own scene and fails on the other."""
    return (holds(base_phrase, base) and not holds(base_phrase, foil)
            and holds(foil_phrase, foil) and not holds(foil_phrase, base))


def location_is_clear(*scenes: Scene) -> bool:
    """True when every object is at least LOCATION_MARGIN from the 1/3 and 2/3 bin edges."""
    return all(abs(o.x - edge) >= LOCATION_MARGIN
               for scene in scenes for o in scene.objects for edge in (1 / 3, 2 / 3))


def descriptor_sets(required: Sequence[str], exclude: Iterable[str] = ()) -> list[tuple[str, ...]]:
    """``required`` plus 0, 1, then 2 extra descriptors, plainest first."""
    skip = set(required) | set(exclude)
    pool = [d for d in EXTRA_DESCRIPTORS if d not in skip]
    out = []
    for k in range(MAX_EXTRAS + 1):
        out.extend(tuple(required) + extra for extra in combinations(pool, k))
    return out


def disambiguate(base: Scene, foil: Scene, make: Callable[[tuple[str, ...]], tuple | None],
                 required: Sequence[str], exclude: Iterable[str] = ()):
    """First ``make(names) -> (base_phrase, foil_phrase)`` whose phrases contrast, else None.
    ``make`` may return None for a descriptor set it cannot phrase."""
    if not location_is_clear(base, foil):
        exclude = (*exclude, "location")
    for names in descriptor_sets(required, exclude):
        made = make(names)
        if made is not None and check_contrast(base, foil, *made):
            return made
    return None


def disambiguate_two(base: Scene, foil: Scene,
                     make: Callable[[tuple[str, ...], tuple[str, ...]], tuple | None],
                     required: Sequence[str], exclude: Iterable[str] = ()):
    """Like :func:`disambiguate` for phrases naming two objects: each noun phrase gets its own
    descriptor set, so only the object that needs telling apart is described further."""
    if not location_is_clear(base, foil):
        exclude = (*exclude, "location")
    sets = descriptor_sets(required, exclude)
    base_len = len(required)
    pairs = sorted(((a, b) for a in sets for b in sets
                    if len(a) + len(b) - 2 * base_len <= MAX_EXTRAS),
                   key=lambda ab: len(ab[0]) + len(ab[1]))
    for names_a, names_b in pairs:
        made = make(names_a, names_b)
        if made is not None and check_contrast(base, foil, *made):
            return made
    return None


def shuffled(rng: np.random.Generator, items: Sequence) -> list:
    """A seeded permutation of ``items`` (keeps the result deterministic for a seed)."""
    items = list(items)
    return [items[i] for i in rng.permutation(len(items))]


def free_spot(rng: np.random.Generator, others: Sequence[Obj], obj: Obj,
              x_range: tuple[float, float] = (0.0, 1.0),
              y_range: tuple[float, float] = (0.0, 1.0)) -> Obj | None:
    """``obj`` moved to a seeded free place inside the ranges, or None if none is found.
    Placement follows the sampler's rule (:func:`foilbench.world.sample.fits`); the object
    is taken to be painted after ``others`` at its depth (added objects go last)."""
    stage = position_range(obj)
    if stage is None:
        return None
    x_range = (max(x_range[0], stage[0][0]), min(x_range[1], stage[0][1]))
    y_range = (max(y_range[0], stage[1][0]), min(y_range[1], stage[1][1]))
    if x_range[1] <= x_range[0] or y_range[1] <= y_range[0]:
        return None
    xs = rng.uniform(*x_range, PLACEMENT_TRIES)
    ys = rng.uniform(*y_range, PLACEMENT_TRIES)
    for x, y in zip(xs, ys, strict=True):
        moved = obj.with_(x=round(float(x), 3), y=round(float(y), 3))
        if fits(moved, others):
            return moved
    return None


def impossible(edit_type: str, why: str, possible: str) -> EditImpossible:
    return EditImpossible(f"cannot apply {edit_type}: {why}; {possible}")
