"""Pilot of the world's object scale (issue 28): the same short training budget at several
values of ``foilbench.world.layout.UNIT``, each scored on an embedded suite rendered at that
scale.

For each unit, in its own process (the unit is set before anything renders): render a small
training set (``--scenes`` ordinary scenes + ``--twins`` edited twin pairs, 128 px), pretrain
the shipped architecture with the plain recipe for ``--steps`` steps (one torch thread, seed 0),
build the pairs, autocomp and autocomp-n1 suite parts at that unit, and score them with the
engine ``foilbench run`` uses (strict ``>``). Prints one table; ``--json`` writes the rows (the
model card reads them: ``foilbench train --card --pilot FILE``).

    PYTHONPATH=src python bench/pilot_scale.py --units 0.10 0.15 0.20 --parallel 2 \
        --json src/foilbench/weights/pilot-scale.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TARGET_TYPES = ("modify_color", "modify_shape", "modify_object", "modify_material")


def one(unit: float, scenes: int, twins: int, steps: int, work: Path) -> dict:
    import numpy as np
    import torch

    from foilbench.world import layout

    layout.UNIT = unit
    from dataclasses import replace

    from foilbench.construct.suite import build_suite, load_suite
    from foilbench.models.embedded import EmbeddedDualEncoder, save_model
    from foilbench.scoring.engine import evaluate
    from foilbench.train.dataset import DataConfig, build_training_data
    from foilbench.train.loop import train_model
    from foilbench.train.pipeline import MAX_LEN, SHIPPED_ARCH, SHIPPED_TRAIN, build_tokenizer
    from foilbench.train.world_source import load_world

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    data = build_training_data(load_world("procedural"),
                               DataConfig(n_scenes=scenes, n_twins=twins, image_size=128,
                                          max_objects=6, contextual=0.5), progress=False)
    t_data = time.perf_counter() - t0
    tok = build_tokenizer(data)
    arch = replace(SHIPPED_ARCH, vocab_size=tok.vocab_size, max_len=MAX_LEN, image_size=128)
    cfg = replace(SHIPPED_TRAIN, steps=steps, warmup=min(SHIPPED_TRAIN.warmup, steps // 10),
                  finetune_steps=0, recipe="plain")
    net, log = train_model(data, tok, arch, cfg, False)
    suite_dir = work / f"suite-{unit}"
    build_suite(suite_dir, seed=0, parts=("pairs", "autocomp", "autocomp-n1"), progress=False)
    path = save_model(net, tok, {"recipe": "plain", "pilot_unit": unit}, work,
                      f"pilot-unit-{unit}")
    model = EmbeddedDualEncoder(path, device="cpu")
    row = {"unit": unit, "scenes": scenes, "twin_pairs": twins, "steps": steps,
           "final_loss": round(log["final_loss"], 3), "train_seconds": log["seconds"],
           "data_seconds": round(t_data, 1)}
    for bench in load_suite(suite_dir):
        result = evaluate(model, bench, cache=None, progress=False)
        items = bench.items
        if bench.item_kind.is_edit_pair:
            group = np.asarray(result.outcomes["group"], dtype=float)
            short = (items["tier"] == "short").to_numpy()
            row["pairs_group"] = round(100 * float(group.mean()), 1)
            row["pairs_group_short"] = round(100 * float(group[short].mean()), 1)
            for t in TARGET_TYPES:
                m = short & (items["edit_type"] == t).to_numpy()
                row[f"{t}_short_group"] = round(100 * float(group[m].mean()), 1)
        else:
            r1 = np.asarray(result.outcomes["r1"], dtype=float)
            row[f"{bench.name}_r1"] = round(100 * float(r1.mean()), 1)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=float, nargs="+", default=[0.10, 0.15, 0.20])
    ap.add_argument("--scenes", type=int, default=3000)
    ap.add_argument("--twins", type=int, default=1500)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--work", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--one", type=float, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="fb_pilot_"))
    if args.one is not None:
        print(json.dumps(one(args.one, args.scenes, args.twins, args.steps, work)), flush=True)
        return

    def launch(unit: float) -> dict:
        cmd = [sys.executable, __file__, "--one", str(unit), "--scenes", str(args.scenes),
               "--twins", str(args.twins), "--steps", str(args.steps), "--work", str(work)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                             env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
        return json.loads(out.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(args.parallel) as pool:
        rows = list(pool.map(launch, args.units))
    keys = [k for k in rows[0] if k not in ("scenes", "twin_pairs", "steps")]
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(str(r.get(k, "")) for k in keys))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "command": " ".join(sys.argv)},
                                              indent=1) + "\n")


if __name__ == "__main__":
    main()
