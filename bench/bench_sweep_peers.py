"""A ``foilbench sweep`` of 5 tiny open_clip models against the peers' own code run per model.

The field's real workload is a sweep (CompoSET Table 8: many dual encoders on many
benchmarks). Here 5 tiny random open_clip models share one architecture config, so one
preprocessing (:func:`peer_data.more_weights`), and are evaluated on the same two sets as
``bench_peers.py`` (:mod:`peer_data`):

- CompoSET-shaped release (80 scenes x 22 foils x 3 tiers): ``foilbench sweep`` against
  CompoSET's own ``python -m eval.run --models k1 ... k5`` (one process; their loop runs the
  models one after another; driver :mod:`peer_composet`).
- SugarCrepe-shaped set (7,511 items, 1,560 COCO-sized JPEGs): ``foilbench sweep`` against
  SugarCrepe's own ``main_eval`` run once per model (their ``__main__`` takes one model per
  process; driver :mod:`peer_sugarcrepe`); the peer's time is the sum of its 5 processes.

Every foilbench sweep is a fresh process with a fresh output folder, embedding cache and
``$FOILBENCH_HOME`` (so the prepared-image cache starts cold), pinned with ``taskset`` to the
same cores as the peer, one torch thread (``OMP_NUM_THREADS=1``). foilbench and the peer
alternate order within each repeat; ratios are of medians. The peers take minutes per repeat,
so ``--peer-repeats`` may be set lower than ``--repeats`` (the closing line says so).

After the timed runs, per benchmark: the forward passes' share of the sweep's wall time (from
the stored cells' engine stats), the images decoded (the sweep's own last line), and every
model's stored outcomes against the peer's, item by item.

    PYTHONPATH=src python bench/bench_sweep_peers.py --composet-repo /tmp/peers/CompoSET \\
        --sugarcrepe-repo /tmp/peers/sugar-crepe [--scale 0.25 --repeats 1]

The real-size variant: ``--arch ViT-B-32 --models 3 --subset N`` (three seeds of that
architecture with random weights, no download; about N pair items per set, stratified;
:mod:`peer_data`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402
import fixed_cost  # noqa: E402
import peer_composet  # noqa: E402
import peer_data  # noqa: E402

N_MODELS = 5


def sweep_cmd(specs: list[str], bench: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "foilbench", "sweep", *(a for s in specs for a in
                                                           ("--model", s)),
            "--benchmark", bench, "--out", str(out), "--cache", str(out / "cache"), "--quiet"]


def peer_runs(name: str, repo: str, config: Path, weights: list[Path], data, out: Path
              ) -> list[tuple[list[str], Path]]:
    """(command, output file) per peer process: one for CompoSET, one per model for
    SugarCrepe."""
    if name == "composet":
        cmd = [sys.executable, str(HERE / "peer_composet.py"), repo, str(config),
               ",".join(map(str, weights)), str(data), str(out)]
        return [(cmd, out)]
    return [([sys.executable, str(HERE / "peer_sugarcrepe.py"), repo, str(config), str(w),
              str(data[0]), str(data[1]), str(out / f"model{k}.json")], out / f"model{k}.json")
            for k, w in enumerate(weights)]


def stored_cells(db: Path) -> list[tuple[str, str, dict]]:
    """(model spec, run id, engine stats) of every stored run."""
    from foilbench.store.db import ResultsStore

    with ResultsStore(db, read_only=True) as store:
        runs = store.list_runs()
        return [(r.model_spec, r.run_id, store.get_run(r.run_id)["eval_stats"])
                for r in runs.itertuples()]


def compare(name: str, db: Path, specs: list[str], peer_out: Path) -> dict:
    """Every model's stored scores and outcomes against the peer's, item by item."""
    from foilbench.store.db import ResultsStore

    worst, agree, n = 0.0, {}, 0
    with ResultsStore(db, read_only=True) as store:
        runs = store.list_runs().set_index("model_spec")["run_id"]
        for k, spec in enumerate(specs):
            items = store.load_item_results(runs[spec])
            mine = np.stack(items["scores"].to_numpy())
            if name == "composet":
                import pandas as pd

                peer = pd.read_csv(peer_out / f"{peer_composet.keys(len(specs))[k]}.csv")
                peer["item_id"] = peer["variation_id"] + "/" + peer["tier"]
                peer = peer.set_index("item_id").loc[items["item_id"]]
                theirs = peer[["sim_base_cb", "sim_var_cb", "sim_base_cv",
                               "sim_var_cv"]].to_numpy()
                for m in ("i2t", "t2i", "group"):
                    agree[m] = agree.get(m, 0) + int(
                        (items[m].to_numpy().astype(int) == peer[f"{m}_score"]).sum())
            else:
                peer = json.loads((peer_out / f"model{k}.json").read_text())["items"]
                theirs = np.array([peer[i] for i in items["item_id"]])
                agree["r1"] = agree.get("r1", 0) + int(
                    (items["r1"].to_numpy().astype(int)
                     == (theirs[:, 0] > theirs[:, 1]).astype(int)).sum())
            worst = max(worst, float(np.abs(mine - theirs).max()))
            n += len(items)
    return {"n": n, "agree": agree, "max_abs_diff": worst}


def run_bench(name: str, bench: str, repo: str, config: Path, weights: list[Path], data,
              args, runs: Path) -> dict:
    specs = [f"openclip:{config}:{w}" for w in weights]
    times: dict[str, list[tuple[float, float]]] = {"foilbench": [], "peer": []}
    for r in range(args.repeats):
        order = ["foilbench", "peer"] if r % 2 == 0 else ["peer", "foilbench"]
        for who in order:
            if who == "peer" and len(times["peer"]) >= args.peer_repeats:
                continue
            tag = runs / f"{name}-{who}-{r}"
            shutil.rmtree(tag, ignore_errors=True)
            tag.mkdir(parents=True)
            if who == "foilbench":
                wall, cpu = bench_peers._timed(sweep_cmd(specs, bench, tag / "out"),
                                               args.cores, tag / "home", tag / "log.txt")
                last = tag
            else:
                wall = cpu = 0.0
                for k, (cmd, _) in enumerate(peer_runs(name, repo, config, weights, data,
                                                       tag)):
                    w, c = bench_peers._timed(cmd, args.cores, tag / "home",
                                              tag / f"log{k}.txt")
                    wall, cpu = wall + w, cpu + c
                peer_tag = tag
            times[who].append((wall, cpu))
            print(f"  {name} repeat {r + 1}: {who:9s} wall {wall:7.2f} s, CPU {cpu:7.2f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    cells = stored_cells(last / "out" / "foilbench.duckdb")
    log = " ".join((last / "log.txt").read_text().split())  # the CLI wraps at its width
    decoded = re.search(r"images: [\d,]+ decoded once for .*? prepared-image cache", log)
    return {"times": times, "cells": cells,
            "decoded": decoded.group(0) if decoded else "no images line in the sweep's output",
            "outcomes": compare(name, last / "out" / "foilbench.duckdb", specs, peer_tag)}


def report(name: str, res: dict, n_models: int, floor=None) -> None:
    fb_w, fb_c = bench_peers._medians(res["times"]["foilbench"])
    peer_w, peer_c = bench_peers._medians(res["times"]["peer"])
    fwd = sum(s.get("forward_seconds", 0.0) for _, _, s in res["cells"])
    fwd_cpu = sum(s.get("forward_cpu_seconds", 0.0) for _, _, s in res["cells"])
    print(f"\n== {name}: {n_models} models ==")
    print(f"peer own code, once per model : median wall {peer_w:8.2f} s, CPU {peer_c:8.2f} s  "
          f"(repeats: {len(res['times']['peer'])})")
    print(f"foilbench sweep, one process  : median wall {fb_w:8.2f} s, CPU {fb_c:8.2f} s  "
          f"(repeats: {len(res['times']['foilbench'])})")
    print(f"ratio peer / foilbench, one core each: wall {peer_w / fb_w:.2f}x, CPU "
          f"{peer_c / fb_c:.2f}x")
    print(f"forward passes (last sweep's cells): wall {fwd:.2f} s = {100 * fwd / fb_w:.1f}% of "
          f"the median sweep wall; CPU {fwd_cpu:.2f} s = {100 * fwd_cpu / fb_c:.1f}% of its CPU")
    print(f"per model: foilbench {fb_w / n_models:.2f} s wall, peer {peer_w / n_models:.2f} s")
    if floor is not None:  # (file, distinct images, distinct texts) of one model
        print(fixed_cost.floor_line(f"{n_models}-model sweep", fb_w, floor[0], 1,
                                    n_models * floor[1], n_models * floor[2]))
    print(f"{res['decoded']}")
    settled = sum(s.get("near_ties_settled", 0) for _, _, s in res["cells"])
    changed = sum(sum((s.get("near_ties_changed") or {}).values()) for _, _, s in res["cells"])
    settle_s = sum(s.get("settle_seconds", 0.0) for _, _, s in res["cells"])
    print(f"near ties (last sweep): {settled} item(s) rescored in float64 in {settle_s:.2f} s, "
          f"{changed} outcome(s) changed by it")
    out = res["outcomes"]
    print(f"outcomes: {out['n']} item results over {n_models} models; agreeing per metric "
          f"{out['agree']}; largest score difference {out['max_abs_diff']:.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3, help="foilbench sweeps per benchmark")
    ap.add_argument("--peer-repeats", type=int, default=None,
                    help="peer loops per benchmark (default: --repeats)")
    ap.add_argument("--models", type=int, default=N_MODELS)
    ap.add_argument("--arch", choices=peer_data.ARCHS, default="tiny",
                    help="the tiny model, or ViT-B-32 with seeded random weights")
    ap.add_argument("--subset", type=int, default=None,
                    help="about this many pair items per set, stratified (instead of --scale)")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"),
                    help="data and model files, shared with bench_peers.py")
    ap.add_argument("--cores", default="0", help="taskset core list of every timed process")
    ap.add_argument("--only", choices=("composet", "sugarcrepe"), default=None)
    ap.add_argument("--floor", default=None,
                    help="rates from bench_forward_floor.py --json: the sweep's wall over "
                         "the floor (one pass per distinct input per model)")
    ap.add_argument("--composet-repo", default=None)
    ap.add_argument("--sugarcrepe-repo", default=None)
    args = ap.parse_args()
    args.peer_repeats = args.repeats if args.peer_repeats is None else args.peer_repeats
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    config, _ = peer_data.model_files(work, args.arch)
    weights = peer_data.more_weights(work, args.models, args.arch)
    todo = []
    for name, repo in bench_peers.usable_repos(args).items():
        if repo is None:
            continue
        if name == "composet":
            root = peer_data.composet_release(work, args.scale, subset=args.subset)
            bench_peers.warm_files(root)
            todo.append((name, f"composet:{root}", str(Path(repo).resolve()), root))
        else:
            jdir, images = peer_data.sugarcrepe_set(work, args.scale, args.subset)
            bench_peers.warm_files(jdir, images)
            todo.append((name, f"sugarcrepe:{jdir}?images={images}",
                         str(Path(repo).resolve()), (jdir, images)))
    print(f"data ready in {time.perf_counter() - t0:.1f} s ({args.arch}; scale {args.scale}, "
          f"subset {args.subset}); {args.models} models sharing one preprocessing; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; timed runs on cores "
          f"{args.cores}, OMP_NUM_THREADS=1", flush=True)
    size = f"sub{args.subset}" if args.subset else args.scale
    runs = work / "sweep-runs" / f"{args.arch}-{args.models}-{size}"
    runs.mkdir(parents=True, exist_ok=True)
    results = {name: run_bench(name, bench, repo, config, weights, data, args, runs)
               for name, bench, repo, data in todo}
    data_of = {name: data for name, _, _, data in todo}
    for name, res in results.items():
        floor = None
        if args.floor:
            floor = (Path(args.floor), *peer_data.unique_inputs(name, data_of[name]))
        report(name, res, args.models, floor)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    if args.repeats != args.peer_repeats:
        print(f"(peer loops timed {args.peer_repeats} time(s), foilbench {args.repeats})")


if __name__ == "__main__":
    main()
