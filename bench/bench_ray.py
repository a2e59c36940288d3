"""Sweep of 4 tiny models x 3 benchmarks: sequential vs Ray with 2 workers, in one run.

Models: four tiny open_clip models built from JSON configs (random weights, each its own
seed, saved as safetensors), so every cell does real preprocessing and forward passes.
Benchmarks: three pair sets of drawn 64x64 scenes (a base and single-recolour foils per
scene; 3 caption tiers), each its own seed. Both sweeps start from a cold embedding cache.

Sequential: :func:`foilbench.runner.sweep` in this process (torch and BLAS with their default
threads, i.e. every core). Ray: the same call with ``ray=RayOptions(max_workers=2)`` on a
local Ray instance of ``--cpus`` CPUs started beforehand (its start-up is printed apart): 2
model workers of 1 CPU each. Prints both wall times, the ratio (target >= 1.6x on 2 cores),
the scheduling overhead per cell (each cell call's round trip minus the worker's own time:
dispatch, argument and result transfer), the driver's time per cell (rebuilding and writing
the cell), worker start-up (process, imports, model load), and checks that both sweeps
stored the same primary metrics.

    PYTHONPATH=src python bench/bench_ray.py [--scenes 12 --foils 6 --cpus 2]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw

from foilbench.data.format import Manifest, make_benchmark, write_benchmark

COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220),
           "yellow": (235, 200, 40), "purple": (140, 60, 170), "orange": (240, 140, 30)}
SHAPES = ("circle", "square", "triangle")
TIERS = ("short", "medium", "long")


def draw(objects, bg) -> Image.Image:
    im = Image.new("RGB", (64, 64), bg)
    d = ImageDraw.Draw(im)
    for shape, colour, (x, y) in objects:
        box = (x, y, x + 16, y + 16)
        if shape == "circle":
            d.ellipse(box, fill=COLOURS[colour])
        elif shape == "square":
            d.rectangle(box, fill=COLOURS[colour])
        else:
            d.polygon([(x + 8, y), (x + 16, y + 16), (x, y + 16)], fill=COLOURS[colour])
    return im


def caption(objects, tier: str) -> str:
    parts = [f"a {c} {s}" for s, c, _ in objects]
    return {"short": parts[0], "medium": " and ".join(parts[:2]),
            "long": "a scene with " + ", ".join(parts) + " on a plain background"}[tier]


def build_benchmark(root: Path, name: str, scenes: int, foils: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    names, rows = list(COLOURS), []
    for s in range(scenes):
        objs = [(SHAPES[rng.integers(3)], names[rng.integers(6)],
                 (int(rng.integers(0, 48)), int(rng.integers(0, 48)))) for _ in range(3)]
        bg = tuple(int(v) for v in rng.integers(90, 180, 3))
        (root / "img").mkdir(parents=True, exist_ok=True)
        draw(objs, bg).save(root / f"img/s{s}.png")
        for v in range(foils):
            k = v % 3
            shape, colour, pos = objs[k]
            foil = list(objs)
            foil[k] = (shape, [c for c in names if c != colour][v % 5], pos)
            draw(foil, bg).save(root / f"img/s{s}-{v}.png")
            order = [k] + [j for j in range(3) if j != k]
            for tier in TIERS:
                rows.append({"item_id": f"s{s}-{v}-{tier}", "image_base": f"img/s{s}.png",
                             "image_foil": f"img/s{s}-{v}.png",
                             "caption_base": caption([objs[j] for j in order], tier),
                             "caption_foil": caption([foil[j] for j in order], tier),
                             "scene_id": f"s{s}", "tier": tier})
    bench = make_benchmark(Manifest(name=name, kind="pair"), pd.DataFrame(rows), root)
    return write_benchmark(bench, root / "bench")


def build_model(folder: Path, seed: int) -> str:
    import open_clip
    import torch
    from safetensors.torch import save_file

    cfg = {"embed_dim": 64,
           "vision_cfg": {"image_size": 64, "layers": 3, "width": 128, "patch_size": 8,
                          "head_width": 64},
           "text_cfg": {"context_length": 32, "vocab_size": 49408, "width": 128, "heads": 2,
                        "layers": 3}}
    name = f"fb-bench-ray-{seed}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(folder / f"{name}.json")
    torch.manual_seed(seed)
    model = open_clip.create_model(name).eval()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(folder / "w.safetensors"))
    return f"openclip:{folder / f'{name}.json'}:{folder / 'w.safetensors'}"


def primary(db: Path) -> pd.DataFrame:
    from foilbench.store.db import ResultsStore

    with ResultsStore(db, read_only=True) as store:
        return store.con.execute(
            "SELECT r.model_spec, r.benchmark_name, m.value FROM runs r JOIN metrics m "
            "USING (run_id) WHERE m.metric = 'group' AND m.group_by = '' "
            "ORDER BY 1, 2").df()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=12)
    ap.add_argument("--foils", type=int, default=6)
    ap.add_argument("--cpus", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    warnings.filterwarnings("ignore")
    from foilbench.runner import RayOptions, sweep

    root = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    benches = [str(build_benchmark(root / f"b{k}", f"set{k}", args.scenes, args.foils, k))
               for k in range(3)]
    models = [build_model(root / f"m{k}", k) for k in range(4)]
    n_items = 3 * args.scenes * args.foils * len(TIERS)
    print(f"4 models x 3 benchmarks of {n_items // 3} items; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")

    t0 = time.perf_counter()
    sweep(models, benches, root / "seq", use_cache=False, n_boot=200, progress=False,
          log=lambda *a: None)
    seq = time.perf_counter() - t0

    import ray

    t0 = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    init = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = sweep(models, benches, root / "ray", use_cache=False, n_boot=200, progress=False,
                log=lambda *a: None, ray=RayOptions(max_workers=2))
    wall = time.perf_counter() - t0
    ray.shutdown()
    st = out.ray_stats
    same = primary(root / "seq" / "foilbench.duckdb").equals(primary(root / "ray" / "foilbench.duckdb"))
    print(f"sequential: {seq:.1f} s   ray (2 workers): {wall:.1f} s   ratio {seq / wall:.2f}x "
          f"(target >= 1.6x)   [ray.init {init:.1f} s, not counted]")
    print(f"scheduling overhead per cell: {st.overhead_per_work * 1000:.0f} ms "
          f"(round trip - worker time, over {st.works} calls); driver per cell "
          f"{st.driver_seconds / max(st.cells, 1) * 1000:.0f} ms (rebuild + store write)")
    print(f"worker start-up: {st.actors} actors, {st.model_loads} model loads described, "
          f"{st.startup_seconds:.1f} s of start-up (process, imports) in total; "
          f"failures: {st.failures or 'none'}; same group metrics as sequential: {same}")


if __name__ == "__main__":
    main()
