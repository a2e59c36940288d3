"""Rendering speed of the procedural world: images per second on one core at 256x256.

Scenes are sampled with 1 to 8 objects (uniform). Reports, measured in one run: render only,
render + PNG encoding, per condition (contextual backdrops are cached per seed, so the cold
column also times building a new backdrop each image). Target (issue 3): >= 50 images/s/core.

    PYTHONPATH=src python bench/bench_render.py [--n 300] [--size 256]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from foilbench.world import backdrop as backdrop_module  # noqa: E402
from foilbench.world.render import png_bytes, render  # noqa: E402
from foilbench.world.sample import sample_scene  # noqa: E402

TARGET = 50


def rate(fn, scenes) -> float:
    start = time.perf_counter()
    for scene in scenes:
        fn(scene)
    return len(scenes) / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="scenes per measurement")
    ap.add_argument("--size", type=int, default=256, help="image side in pixels")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    scenes = {
        cond: [sample_scene(rng, int(rng.integers(1, 9)), cond) for _ in range(args.n)]
        for cond in ("minimal", "contextual")
    }
    size = args.size
    for cond in scenes:  # warm caches (backdrops, shape registry)
        for scene in scenes[cond][:80]:
            render(scene, size)
    print(f"render speed at {size}x{size}, one process, {args.n} scenes of 1-8 objects each")
    print(f"{'condition':<12}{'render img/s':>14}{'x target':>10}{'+PNG img/s':>12}"
          f"{'cold backdrop img/s':>21}")
    for cond, items in scenes.items():
        r = rate(lambda s: render(s, size), items)
        p = rate(lambda s: png_bytes(render(s, size)), items)

        def cold(s):
            backdrop_module._room.cache_clear()
            render(s, size)

        c = rate(cold, items[: max(20, args.n // 5)])
        print(f"{cond:<12}{r:>14.1f}{r / TARGET:>10.2f}{p:>12.1f}{c:>21.1f}")
    print(f"target: >= {TARGET} images/s per core (render only)")


if __name__ == "__main__":
    main()
