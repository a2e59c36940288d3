"""Where training scenes come from, and the guarantee that none is a benchmark scene.

Training draws scenes from its own seed stream (``TRAIN_STREAM``, mixed with the user's seed
through ``numpy.random.SeedSequence``), so it never replays the benchmark's seeds; on top of
that every sampled scene's ``scene_signature`` is looked up in the set of benchmark scene
signatures and a scene found there is dropped and counted (belt and braces: the two streams
could in principle produce an identical scene by chance).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from foilbench.errors import FoilbenchError

# Spawn key of the training seed stream; the benchmark uses its own (construct.pair_plan).
TRAIN_STREAM = 0x7A1_2EED


@dataclass(frozen=True)
class WorldSource:
    """The world functions training needs, gathered so a test can pass a smaller world."""

    name: str
    sample_scene: Callable  # (rng, n_objects=None, condition=...) -> Scene
    render: Callable  # (scene, size) -> PIL.Image
    describe_scene: Callable  # (scene) -> str
    scene_signature: Callable  # (scene) -> str
    benchmark_signatures: Callable  # () -> a set (or frozenset) of str
    make_twin: Callable  # (scene, rng, counts) -> (foil, edit type, [(base, foil) texts]) | None


_WORLDS = {
    "procedural": {
        "sample_scene": "foilbench.world.cast:sample_training_scene",
        "render": "foilbench.world.render:render",
        "describe_scene": "foilbench.world.captions:describe_scene",
        "scene_signature": "foilbench.world.sample:scene_signature",
        "benchmark_signatures": "foilbench.construct.composet.pair_plan:benchmark_scene_signatures",
        "make_twin": "foilbench.train.twins:make_twin",
    },
    "standin": {
        name: f"foilbench.train.standin_world:{name}"
        for name in ("sample_scene", "render", "describe_scene", "scene_signature", "make_twin")
    } | {"benchmark_signatures": "foilbench.train.standin_world:benchmark_scene_signatures"},
}
WORLD_NAMES = tuple(_WORLDS)


def load_world(name: str = "procedural") -> WorldSource:
    """Import the named world's functions; a missing piece is named in the error."""
    if name not in _WORLDS:
        raise FoilbenchError(f"unknown training world {name!r}; possible: {', '.join(_WORLDS)}")
    funcs = {}
    for role, target in _WORLDS[name].items():
        module, _, attr = target.partition(":")
        try:
            funcs[role] = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise FoilbenchError(f"training world {name!r} needs {target} ({role}): {e}") from e
    return WorldSource(name=name, **funcs)


def training_rng(seed: int) -> np.random.Generator:
    """The training stream for ``seed``: independent of any benchmark seed by construction."""
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(TRAIN_STREAM,)))


def sample_training_scenes(world: WorldSource, n_scenes: int, seed: int,
                           max_objects: int = 4, contextual: float = 0.0) -> tuple[list, dict]:
    """``n_scenes`` scenes, none whose signature is a benchmark scene's.

    Object counts are uniform on 1..max_objects; each scene is Contextual with probability
    ``contextual`` (else Minimal). Returns the scenes and the disjointness statistics (how many
    benchmark signatures were checked, how many draws collided).
    """
    rng = training_rng(seed)
    banned = set(world.benchmark_signatures())
    scenes, seen, collisions, duplicates = [], set(), 0, 0
    while len(scenes) < n_scenes:
        n_objects = int(rng.integers(1, max_objects + 1))
        condition = "contextual" if rng.random() < contextual else "minimal"
        scene = world.sample_scene(rng, n_objects=n_objects, condition=condition)
        signature = world.scene_signature(scene)
        if signature in banned:
            collisions += 1
            continue
        if signature in seen:
            duplicates += 1
            continue
        seen.add(signature)
        scenes.append(scene)
    stats = {"n_benchmark_signatures": len(banned), "benchmark_collisions_dropped": collisions,
             "duplicate_training_scenes_dropped": duplicates}
    return scenes, stats
