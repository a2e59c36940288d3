"""Which scenes and which single edits make up the world's pair benchmark (no rendering).

Scenes are drawn from their own seed stream, ``BENCHMARK_SEED_STREAM``: scene attempt ``k`` of
benchmark seed ``s`` uses ``numpy.random.default_rng([BENCHMARK_SEED_STREAM, s, k])``. Training
data must come from other streams; :func:`benchmark_scene_signatures` lists the signatures of
every benchmark scene (bases and, optionally, foils) so that disjointness can be checked.

Edits are spread over the edit types: each scene walks a seeded permutation of the types round
by round, keeping each new, distinct foil, until it holds enough. Scenes that cannot give enough
foils are skipped (the next attempt is drawn).

Edit types that need particular objects (a bottle for ``modify_pose``, a box, lamp or book for
``modify_state``, a solid for ``modify_shape``, an agent for ``modify_action``, two acting
agents for ``swap_role``) get them by casting (:mod:`foilbench.world.cast`): while such a type
lags behind ``TYPE_QUOTA`` kept foils pro rata of the scenes planned so far, the next scene is
cast with what it needs. CompoSET keeps 45 ``swap_role`` items per tier and 104
``modify_pose`` (Table 2); we oversample both so every type has at least 60 per tier.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from foilbench.world.cast import sample_cast_scene
from foilbench.world.edit_core import Edit, EditImpossible
from foilbench.world.edits import EDIT_TYPES, apply_edit
from foilbench.world.sample import sample_scene, scene_signature
from foilbench.world.scene import Scene
from foilbench.world.vocab import CONDITIONS

BENCHMARK_SEED_STREAM = 0xF011_BE4C  # first key of every benchmark scene generator
N_OBJECTS_RANGE = (3, 6)  # objects per benchmark scene (inclusive)
SPARE_EDITS = 4  # planned beyond the target, in case a render shows no visible change
MAX_ATTEMPTS_PER_SCENE = 20
MAX_ROUNDS = 8  # passes over the edit types per scene
TYPE_QUOTA = 64  # kept foils wanted per edit type (60 per tier, and a few spare)
# Cast scenes aim this far ahead of the quota's pace: with objects that overlap, a cast scene
# yields its rare edit less often than with the disjoint boxes of the first world (0.2.0).
CAST_AHEAD = 1.3
# What a scene must hold for a rare edit type, most demanding first.
CAST_FOR: dict[str, str] = {"swap_role": "acting pair", "modify_action": "agent",
                            "modify_pose": "bottle", "modify_state": "stateful",
                            "modify_shape": "solid"}


@dataclass(frozen=True)
class PlannedScene:
    scene: Scene
    edits: tuple[Edit, ...]
    attempt: int  # which draw of the stream gave this scene


def scene_rng(seed: int, attempt: int, purpose: int = 0) -> np.random.Generator:
    """The generator of one scene attempt (``purpose`` 0: the scene, 1: its edits)."""
    return np.random.default_rng([BENCHMARK_SEED_STREAM, seed, attempt, purpose])


def plan_edits(scene: Scene, rng: np.random.Generator, n_edits: int,
               counts: Counter | None = None, types=None) -> list[Edit]:
    """Up to ``n_edits`` distinct single edits of ``scene`` (distinct foil scenes and distinct
    phrase pairs), round-robin over the edit types. Each round tries the types used least so
    far first (``counts``, updated in place), so types that few scenes allow are not crowded
    out by those every scene allows. ``types`` narrows the edit types (default: all)."""
    counts = Counter() if counts is None else counts
    edits: list[Edit] = []
    seen: set = {scene_signature(scene)}
    open_types = list(EDIT_TYPES if types is None else types)
    for _ in range(MAX_ROUNDS):
        if not open_types or len(edits) >= n_edits:
            break
        tiebreak = dict(zip(open_types, rng.permutation(len(open_types)), strict=True))
        open_types.sort(key=lambda t: (counts[t], tiebreak[t]))
        still_open = []
        for name in open_types:
            if len(edits) >= n_edits:
                break
            try:
                edit = apply_edit(scene, name, rng)
            except EditImpossible:
                continue  # this type is done for this scene
            still_open.append(name)
            # a new foil scene *and* a new phrase pair: no two foils of a scene read the same
            keys = {scene_signature(edit.foil),
                    (edit.base_phrase.text(), edit.foil_phrase.text())}
            if not keys & seen:
                seen.update(keys)
                edits.append(edit)
                counts[name] += 1
        open_types = still_open
    return edits


def scene_cast(kept: Counter, due: float) -> tuple[str, ...]:
    """What the next scene is cast with: for each edit type of ``CAST_FOR`` that has kept fewer
    than ``due`` foils (its quota scaled to the scenes planned so far), what it needs; an acting
    pair also serves modify_action. Casting only what lags keeps most objects random."""
    lagging = [name for name in CAST_FOR if kept[name] < due]
    if "swap_role" in lagging:
        lagging = [n for n in lagging if n != "modify_action"]
    return tuple(CAST_FOR[name] for name in lagging)


def plan_benchmark(seed: int = 0, n_scenes: int = 80, foils_per_scene: int = 16,
                   spare: int = SPARE_EDITS) -> list[PlannedScene]:
    """``n_scenes`` scenes, alternating Minimal and Contextual, each with at least
    ``foils_per_scene + spare`` planned edits (the renderer later keeps the visible ones)."""
    lo, hi = N_OBJECTS_RANGE
    planned: list[PlannedScene] = []
    counts: Counter = Counter()
    kept: Counter = Counter()  # foils within the first foils_per_scene of each scene
    attempt = 0
    while len(planned) < n_scenes:
        if attempt >= MAX_ATTEMPTS_PER_SCENE * n_scenes:
            raise RuntimeError(f"only {len(planned)} of {n_scenes} scenes could take "
                               f"{foils_per_scene} foils in {attempt} attempts")
        rng = scene_rng(seed, attempt)
        condition = CONDITIONS[len(planned) % len(CONDITIONS)]
        n_objects = int(rng.integers(lo, hi + 1))
        cast = scene_cast(kept, CAST_AHEAD * TYPE_QUOTA * (len(planned) + 1) / n_scenes)
        attempt += 1
        if cast:
            scene = sample_cast_scene(rng, n_objects, condition, cast)
            if scene is None:
                continue
        else:
            scene = sample_scene(rng, n_objects, condition)
        trial = counts.copy()
        edits = plan_edits(scene, scene_rng(seed, attempt - 1, 1), foils_per_scene + spare,
                           trial)
        if len(edits) >= foils_per_scene + spare:
            planned.append(PlannedScene(scene, tuple(edits), attempt - 1))
            counts = trial
            kept.update(e.edit_type for e in edits[:foils_per_scene])
    return planned


@lru_cache(maxsize=8)
def benchmark_scene_signatures(seed: int = 0, n_scenes: int = 80, foils_per_scene: int = 16,
                               include_foils: bool = True) -> frozenset[str]:
    """Signatures (:func:`foilbench.world.sample.scene_signature`) of the benchmark's base
    scenes and, with ``include_foils``, of every planned foil scene. A training set is disjoint
    from the benchmark when none of its scene signatures is in this set.

    Planning the default benchmark takes seconds and one training run asks twice (the
    training scenes, then the twins), so the answer, which depends on the arguments alone, is
    kept; frozen, so no caller can change what the next one gets."""
    out = set()
    for p in plan_benchmark(seed, n_scenes, foils_per_scene):
        out.add(scene_signature(p.scene))
        if include_foils:
            out.update(scene_signature(e.foil) for e in p.edits)
    return frozenset(out)
