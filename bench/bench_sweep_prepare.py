"""A sweep of tiny open_clip models sharing one preprocessing: decode once, or once per model.

Five tiny random open_clip models (one architecture config, five weight files, seeds 0-4:
the same 224 px transform) swept over the SugarCrepe-shaped set (:mod:`peer_data`: the real
item files, synthetic 640x480 COCO-sized JPEGs; ``--scale`` keeps the first fraction of each
type file). Three sweeps, each a fresh process (``foilbench.runner.sweep``, the same path as
``foilbench sweep``), pinned with ``taskset`` to the same cores, one torch thread:

``today``   5 models, ``share_preparation=False``: every model decodes and resizes every image
``shared``  5 models, prepared once (fresh ``$FOILBENCH_HOME``: the prepared-image cache cold)
``+1 warm`` the same home and store plus a sixth model: the 5 finished cells are reused, the
            new model reads every prepared image from the disk cache

Per sweep: images decoded, decode/prepare seconds (the prefetch threads' wall and CPU time,
summed over computed cells, plus, when shared, validation's decode-and-prepare CPU time: the
one decode of a shared run happens there, with its wall counted as its CPU), forward seconds, and the whole process's wall and CPU seconds
(user + system of it and its threads); "rest" is the sweep's CPU outside decode/prepare and
forward passes (start-up, imports, hashing, texts' tokenising, bootstrap, store, reference
rows, matrix). Ratios are of sweeps run side by side in this one
invocation; on a machine shared with others compare CPU beside wall.

    PYTHONPATH=src python bench/bench_sweep_prepare.py --scale 0.1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peer_data  # noqa: E402

SRC = HERE.parent / "src"
N_MODELS = 5


def model_specs(work: Path, n: int) -> list[str]:
    """``openclip:CONFIG:WEIGHTS`` of ``n`` tiny models sharing the config (and transform)."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    cfg = work / "fbsweep_tiny.json"
    cfg.write_text(json.dumps(peer_data.TINY_CFG))
    specs = []
    for seed in range(n):
        weights = work / f"fbsweep_tiny_{seed}.safetensors"
        if not weights.exists():
            torch.manual_seed(seed)
            model = open_clip.CLIP(**peer_data.TINY_CFG)
            save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(weights))
        specs.append(f"openclip:{cfg}:{weights}")
    return specs


def child(args: argparse.Namespace) -> None:
    """One sweep in this process; its computed cells' stats as JSON to ``args.result``."""
    from foilbench import runner
    from foilbench.store.shared import SharedStore

    out = runner.sweep(args.models, [args.bench], args.out, n_boot=args.n_boot,
                       progress=False, share_preparation=args.mode != "today")
    store = SharedStore(out.db_path)
    stats = [store.get_run(r)["eval_stats"]
             for r, reused in zip(out.cells["run_id"], out.cells["reused"], strict=True)
             if not reused]
    outcomes = {m: store.load_item_results(r)["r1"].astype(int).tolist()
                for m, r in zip(out.cells["model"], out.cells["run_id"], strict=True)}
    Path(args.result).write_text(json.dumps({"stats": stats, "outcomes": outcomes,
                                             "reused": out.reused,
                                             "preparation": out.preparation}))


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed_sweep(mode: str, models: list[str], bench: str, home: Path, out: Path,
                cores: str, n_boot: int, log: Path) -> dict:
    result = out.parent / f"{out.name}-{mode}.json"
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", FOILBENCH_HOME=str(home),
               PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               HF_HUB_OFFLINE="1")
    cmd = ["taskset", "-c", cores, sys.executable, str(Path(__file__).resolve()), "--child",
           "--mode", mode, "--bench", bench, "--out", str(out), "--result", str(result),
           "--n-boot", str(n_boot), "--models", *models]
    c0, t0 = _children_cpu(), time.perf_counter()
    with log.open("w") as fh:
        proc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode:
        raise SystemExit(f"{mode} sweep failed ({proc.returncode}):\n{log.read_text()[-3000:]}")
    data = json.loads(result.read_text())
    stats = data["stats"]

    def total(key: str) -> float:
        return sum(s.get(key, 0.0) for s in stats)

    # shared: the one decode is validation's (the run's preparation), plus any the cells did
    prep = data.get("preparation") or {}
    decoded = prep.get("decoded", 0) + total("prepare_decoded") if mode != "today" \
        else total("images_encoded")
    early = prep.get("check_cpu_seconds", 0.0)
    return {"mode": mode, "wall": wall, "cpu": cpu, "cells": len(stats),
            "decoded": int(decoded), "prep_wall": total("prefetch_seconds") + early,
            "prep_cpu": total("prefetch_cpu_seconds") + early,
            "forward": total("forward_seconds"),
            "forward_cpu": total("forward_cpu_seconds"), "outcomes": data["outcomes"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1,
                    help="fraction of the SugarCrepe items (1.0: 7,511 items, 1,560 images)")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_sweep"))
    ap.add_argument("--cores", default="0", help="taskset core list of every sweep")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="shared", help=argparse.SUPPRESS)
    ap.add_argument("--bench", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--models", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    jdir, images = peer_data.sugarcrepe_set(work, args.scale)
    bench = f"sugarcrepe:{jdir}?images={images}"
    models = model_specs(work, N_MODELS + 1)
    for p in images.iterdir():  # no timed sweep pays the first disk read
        p.read_bytes()
    runs = work / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    runs.mkdir()
    rows = [
        timed_sweep("today", models[:N_MODELS], bench, runs / "home-today", runs / "today",
                    args.cores, args.n_boot, runs / "today.log"),
        timed_sweep("shared", models[:N_MODELS], bench, runs / "home-shared", runs / "shared",
                    args.cores, args.n_boot, runs / "shared.log"),
        timed_sweep("+1 warm", models, bench, runs / "home-shared", runs / "shared",
                    args.cores, args.n_boot, runs / "warm.log"),
    ]
    same = all(rows[0]["outcomes"][m] == rows[1]["outcomes"][m] for m in rows[0]["outcomes"])
    n_images = len(list(images.iterdir()))
    print(f"SugarCrepe-shaped set at scale {args.scale:g} ({n_images} JPEGs in the image "
          f"folder), {N_MODELS} tiny open_clip models, cores {args.cores}, n_boot {args.n_boot}")
    print("| sweep | cells computed | images decoded | decode+prepare wall s | "
          "decode+prepare CPU s | forward wall s | forward CPU s | rest CPU s | sweep wall s "
          "| sweep CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rest = r["cpu"] - r["prep_cpu"] - r["forward_cpu"]
        print(f"| {r['mode']} | {r['cells']} | {r['decoded']} | {r['prep_wall']:.2f} | "
              f"{r['prep_cpu']:.2f} | {r['forward']:.2f} | {r['forward_cpu']:.2f} | "
              f"{rest:.1f} | {r['wall']:.1f} | {r['cpu']:.1f} |")
    a, b, c = rows
    print(f"today / shared: whole sweep wall {a['wall'] / b['wall']:.2f}x, CPU "
          f"{a['cpu'] / b['cpu']:.2f}x; decode+prepare CPU {a['prep_cpu'] / b['prep_cpu']:.2f}x")
    print(f"+1 warm: {c['decoded']} images decoded, decode+prepare CPU {c['prep_cpu']:.2f} s "
          f"for the new model (vs {a['prep_cpu'] / N_MODELS:.2f} s per model today)")
    print(f"outcomes identical today vs shared (every model, every item): {same}")


if __name__ == "__main__":
    main()
