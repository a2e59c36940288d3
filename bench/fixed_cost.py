"""The issue's two ratios beside bench_peers' phase table: fixed cost and the forward floor.

- Fixed cost: everything outside the engine (start-up, imports, validation, notes, bootstrap,
  store, reference rows, report), *not counting* the interpreter's start and the torch /
  torchvision / open_clip imports, as a share of a single-model run's wall; the import share
  printed beside it. The imports are measured twice: inside the instrumented run (the rows
  that import torch and open_clip) and in a fresh process pinned to the same cores
  (``import torch, torchvision, open_clip``, median of 3). That plain import is what the
  peers pay: open_clip's own import pulls in ``transformers`` and ``timm``, which foilbench's
  import leaves out when the model needs neither (``models/openclip/importer.py``), so the
  in-run rows, not the fresh-process number, are what the share counts. The interpreter's
  start is the instrumented run's
  "interpreter start-up and exit" row (wall outside the in-process timers).
- Forward floor: one forward pass per distinct image and distinct text at the model's best
  batched throughput (``bench_forward_floor.py``'s JSON); foilbench's whole-run wall over it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

START = "interpreter start-up and exit"
IMPORT_CODE = ("import time; t = time.perf_counter(); import torch, torchvision, open_clip; "
               "print(time.perf_counter() - t)")


def fresh_import_seconds(cores: str, repeats: int = 3) -> float:
    """Median wall seconds of ``import torch, torchvision, open_clip`` in a fresh process on
    ``cores`` with one torch thread (the interpreter's own start not included)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", CUDA_VISIBLE_DEVICES="")
    times = []
    for _ in range(repeats):
        out = subprocess.run(["taskset", "-c", cores, sys.executable, "-c", IMPORT_CODE],
                             env=env, capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def fixed_cost_lines(rows: list[tuple[str, float, float | None]], wall: float,
                     engine_rows: tuple[str, ...], import_rows: tuple[str, ...],
                     fresh_imports: float | None) -> list[str]:
    """The restated fixed-cost target's lines from one instrumented run's phase rows."""
    by = {label: w for label, w, _ in rows}
    outside = wall - sum(by.get(k, 0.0) for k in engine_rows)
    start = by.get(START, 0.0)
    libs = sum(by.get(k, 0.0) for k in import_rows)
    rest = outside - start - libs
    lines = [f"fixed cost (target <= 20%): outside the engine {outside:.2f} s, less the "
             f"interpreter's start and exit {start:.2f} s and the torch/torchvision/open_clip "
             f"imports {libs:.2f} s = {rest:.2f} s = {100 * rest / wall:.1f}% of the run's "
             f"wall {wall:.2f} s; import share {100 * libs / wall:.1f}%"]
    if fresh_imports is not None:
        lines.append(f"  imports in a fresh process on the same cores: {fresh_imports:.2f} s "
                     f"= {100 * fresh_imports / wall:.1f}% of that wall (a plain import, with "
                     f"transformers and timm, as the peers pay it; foilbench's in-run rows, "
                     f"without them: {libs:.2f} s)")
    return lines


def floor_line(name: str, fb_wall: float, floor_file: Path, threads: int, n_images: int,
               n_texts: int) -> str:
    """foilbench's median whole-run wall over the forward floor (the rates measured with
    ``threads`` torch threads) for these input counts."""
    rates = json.loads(Path(floor_file).read_text())["by_threads"]
    if str(threads) not in rates:
        return f"forward floor: {floor_file} has no rates for {threads} thread(s)"
    floor = rates[str(threads)]
    seconds = n_images / floor["images_per_s"] + n_texts / floor["texts_per_s"]
    return (f"forward floor ({floor['arch']}, {floor['threads']} thread(s), best batches "
            f"{floor['image_batch']}/{floor['text_batch']}): {n_images:,} images at "
            f"{floor['images_per_s']:.1f}/s + {n_texts:,} texts at {floor['texts_per_s']:.1f}/s "
            f"= {seconds:.2f} s; foilbench's {name} run {fb_wall:.2f} s = "
            f"{fb_wall / seconds:.2f}x the floor (target <= 1.25x)")
