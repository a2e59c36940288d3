"""Which scenes and which single edits make up the world's pair benchmark (no rendering).

Scenes are drawn from their own seed stream, ``BENCHMARK_SEED_STREAM``: scene attempt ``k`` of
benchmark seed ``s`` uses ``numpy.random.default_rng([BENCHMARK_SEED_STREAM, s, k])``. Training
data must come from other streams; :func:`benchmark_scene_signatures` lists the signatures of
every benchmark scene (bases and, optionally, foils) so that disjointness can be checked.

Edits are spread over the edit types: each scene walks a seeded permutation of the types round
by round, keeping each new, distinct foil, until it holds enough. Scenes that cannot give enough
foils are skipped (the next attempt is drawn).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

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


@dataclass(frozen=True)
class PlannedScene:
    scene: Scene
    edits: tuple[Edit, ...]
    attempt: int  # which draw of the stream gave this scene


def scene_rng(seed: int, attempt: int, purpose: int = 0) -> np.random.Generator:
    """The generator of one scene attempt (``purpose`` 0: the scene, 1: its edits)."""
    return np.random.default_rng([BENCHMARK_SEED_STREAM, seed, attempt, purpose])


def plan_edits(scene: Scene, rng: np.random.Generator, n_edits: int,
               counts: Counter | None = None) -> list[Edit]:
    """Up to ``n_edits`` distinct single edits of ``scene`` (distinct foil scenes and distinct
    phrase pairs), round-robin over the edit types. Each round tries the types used least so
    far first (``counts``, updated in place), so types that few scenes allow are not crowded
    out by those every scene allows."""
    counts = Counter() if counts is None else counts
    edits: list[Edit] = []
    seen: set = {scene_signature(scene)}
    open_types = list(EDIT_TYPES)
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


def plan_benchmark(seed: int = 0, n_scenes: int = 80, foils_per_scene: int = 16,
                   spare: int = SPARE_EDITS) -> list[PlannedScene]:
    """``n_scenes`` scenes, alternating Minimal and Contextual, each with at least
    ``foils_per_scene + spare`` planned edits (the renderer later keeps the visible ones)."""
    lo, hi = N_OBJECTS_RANGE
    planned: list[PlannedScene] = []
    counts: Counter = Counter()
    attempt = 0
    while len(planned) < n_scenes:
        if attempt >= MAX_ATTEMPTS_PER_SCENE * n_scenes:
            raise RuntimeError(f"only {len(planned)} of {n_scenes} scenes could take "
                               f"{foils_per_scene} foils in {attempt} attempts")
        rng = scene_rng(seed, attempt)
        condition = CONDITIONS[len(planned) % len(CONDITIONS)]
        scene = sample_scene(rng, int(rng.integers(lo, hi + 1)), condition)
        trial = counts.copy()
        edits = plan_edits(scene, scene_rng(seed, attempt, 1), foils_per_scene + spare, trial)
        if len(edits) >= foils_per_scene + spare:
            planned.append(PlannedScene(scene, tuple(edits), attempt))
            counts = trial
        attempt += 1
    return planned


def benchmark_scene_signatures(seed: int = 0, n_scenes: int = 80, foils_per_scene: int = 16,
                               include_foils: bool = True) -> set[str]:
    """Signatures (:func:`foilbench.world.sample.scene_signature`) of the benchmark's base
    scenes and, with ``include_foils``, of every planned foil scene. A training set is disjoint
    from the benchmark when none of its scene signatures is in this set."""
    out = set()
    for p in plan_benchmark(seed, n_scenes, foils_per_scene):
        out.add(scene_signature(p.scene))
        if include_foils:
            out.update(scene_signature(e.foil) for e in p.edits)
    return out
