"""The restated fixed cost of one ``foilbench run``, without the peers' code.

Everything outside the engine, not counting the interpreter's start and the torch /
torchvision / open_clip imports, as a share of a single-model run's wall (target <= 20% for
the tiny model on the CompoSET-shaped release), the import share beside it (:mod:`fixed_cost`).
Each repeat is one instrumented run (:mod:`fb_phases`: the ``foilbench run`` CLI path with
timers around its steps) in a fresh process, fresh output folder, cache and
``$FOILBENCH_HOME``, pinned to ``--cores`` with one torch thread; the repeat with the median
wall is reported, with its phase table. ``bench_peers.py`` prints the same lines beside the
peers; this script needs no checkout of theirs.

    PYTHONPATH=src python bench/bench_fixed_cost.py [--arch tiny] [--scale 1.0 | --subset N]
        [--benchmark composet|sugarcrepe] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402
import fixed_cost  # noqa: E402
import peer_data  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", choices=peer_data.ARCHS, default="tiny")
    ap.add_argument("--benchmark", choices=("composet", "sugarcrepe"), default="composet")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--subset", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cores", default="0")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    config, weights = peer_data.model_files(work, args.arch)
    if args.benchmark == "composet":
        data = peer_data.composet_release(work, args.scale, subset=args.subset)
        bench, folders = f"composet:{data}", (data,)
    else:
        data = peer_data.sugarcrepe_set(work, args.scale, args.subset)
        bench, folders = f"sugarcrepe:{data[0]}?images={data[1]}", data
    bench_peers.warm_files(*folders)
    runs = []
    for r in range(args.repeats):
        tag = work / "fixed-cost-runs" / f"{args.benchmark}-{r}"
        shutil.rmtree(tag, ignore_errors=True)
        tag.mkdir(parents=True)
        cmd = bench_peers.foilbench_cmd(f"openclip:{config}:{weights}", bench, tag / "out",
                                        driver=True)
        wall, cpu = bench_peers._timed(cmd, args.cores, tag / "home", tag / "log.txt",
                                       {"FB_PHASES_OUT": str(tag / "phases.json")})
        runs.append((wall, cpu, json.loads((tag / "phases.json").read_text())))
        print(f"  repeat {r + 1}: wall {wall:7.2f} s, CPU {cpu:7.2f} s (load "
              f"{os.getloadavg()[0]:.1f})", flush=True)
    mid = statistics.median_low(w for w, _, _ in runs)
    wall, cpu, phases = next(run for run in runs if run[0] == mid)
    rows = bench_peers.phase_table(phases, phases["eval_stats"], wall, cpu)
    print(f"\n== {args.arch} on {args.benchmark} (median-wall repeat) ==")
    for label, w, c in rows:
        if label.strip().startswith("of which"):
            print(f"  {label:58s} {w:8.2f} / {c:.2f}")
            continue
        print(f"  {label:58s} {w:8.2f} {100 * w / wall:6.1f}%")
    for line in fixed_cost.fixed_cost_lines(
            rows, wall, ("engine (scoring/engine.evaluate)", bench_peers.ENGINE_EARLY),
            bench_peers.IMPORTS, fixed_cost.fresh_import_seconds(args.cores)):
        print(line)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
