"""``foilbench run`` of two revisions of this repository, side by side on the same data.

A speed change is claimed against the code before it, measured in the same minutes on the same
core: machines here are noisy enough that a run timed an hour earlier says little. Each
revision is checked out into a git worktree (``--base`` and ``--head``, default ``HEAD``; the
working tree itself with ``--head .``), and every timed command is a fresh
``python -m foilbench run`` process with its ``src`` first on ``PYTHONPATH``, a fresh output
folder, embedding cache and ``$FOILBENCH_HOME``, pinned with ``taskset``, one torch thread,
alternating which revision goes first. Same data and tiny open_clip model as
``bench_peers.py`` (:mod:`peer_data`).

    PYTHONPATH=src python bench/bench_revisions.py --base e71d9f1 [--only sugarcrepe]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_peers  # noqa: E402
import peer_data  # noqa: E402

REPO = HERE.parent


def checkout(rev: str, work: Path) -> Path:
    """The ``src`` folder of ``rev`` (``.``: this working tree), in a worktree under ``work``."""
    if rev == ".":
        return REPO / "src"
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], check=True,
                         capture_output=True, text=True).stdout.strip()
    tree = work / f"rev-{sha}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), sha],
                       check=True, capture_output=True)
    return tree / "src"


def timed_run(src: Path, spec: str, bench: str, tag: Path, cores: str) -> tuple[float, float]:
    shutil.rmtree(tag, ignore_errors=True)
    tag.mkdir(parents=True)
    return bench_peers._timed(bench_peers.foilbench_cmd(spec, bench, tag / "out"), cores,
                              tag / "home", tag / "log.txt", src=src)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the revision before the change")
    ap.add_argument("--head", default="HEAD", help="the revision after it (.: working tree)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--cores", default="0")
    ap.add_argument("--only", choices=("composet", "sugarcrepe"), default=None)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    srcs = {"base": checkout(args.base, work), "head": checkout(args.head, work)}
    config, weights = peer_data.model_files(work)
    spec = f"openclip:{config}:{weights}"
    benches = {}
    if args.only in (None, "composet"):
        root = peer_data.composet_release(work, args.scale)
        bench_peers.warm_files(root)
        benches["composet"] = f"composet:{root}"
    if args.only in (None, "sugarcrepe"):
        jdir, images = peer_data.sugarcrepe_set(work, args.scale)
        bench_peers.warm_files(jdir, images)
        benches["sugarcrepe"] = f"sugarcrepe:{jdir}?images={images}"
    print(f"base {args.base} ({srcs['base']}), head {args.head} ({srcs['head']}); cores "
          f"{args.cores}, OMP_NUM_THREADS=1, load {os.getloadavg()[0]:.1f}", flush=True)
    for name, bench in benches.items():
        times: dict[str, list[tuple[float, float]]] = {"base": [], "head": []}
        for r in range(args.repeats):
            for who in (("base", "head") if r % 2 == 0 else ("head", "base")):
                wall, cpu = timed_run(srcs[who], spec, bench, work / "rev-runs" / f"{name}-{who}",
                                      args.cores)
                times[who].append((wall, cpu))
                print(f"  {name} repeat {r + 1}: {who} wall {wall:6.2f} s, CPU {cpu:6.2f} s",
                      flush=True)
        med = {who: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
               for who, t in times.items()}
        print(f"{name}: base median wall {med['base'][0]:.2f} s (CPU {med['base'][1]:.2f}), "
              f"head {med['head'][0]:.2f} s (CPU {med['head'][1]:.2f}); base / head: wall "
              f"{med['base'][0] / med['head'][0]:.2f}x, CPU {med['base'][1] / med['head'][1]:.2f}x",
              flush=True)


if __name__ == "__main__":
    main()
