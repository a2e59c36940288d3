"""What the side-by-side micro-benchmarks share: their options (cores, repeats, scenes, work
folder), the CompoSET-shaped release they read, and the alternating timing loop (each way run
once per repeat, the order flipped every other repeat, medians compared), so each script holds
only the two ways it compares."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import peer_data


def parse_args(doc: str, repeats: int) -> argparse.Namespace:
    """The shared options, parsed; the process is pinned to ``--cores`` before any timing."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--cores", default="1")
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--scenes", type=int, default=80)
    ap.add_argument("--arch", default="tiny")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    os.sched_setaffinity(0, [int(c) for c in args.cores.split(",")])
    return args


def composet_benchmark(args: argparse.Namespace, **resolve: Any) -> tuple[Path, Any]:
    """The CompoSET-shaped release of ``--scenes`` scenes (built once in ``--work``), loaded."""
    from foilbench.data.registry import resolve_benchmark

    root = peer_data.composet_release(Path(args.work), 1.0, subset=args.scenes * 66)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return root, resolve_benchmark(f"composet:{root}", **resolve)


def alternate(ways: dict[str, Callable[[], Any]], repeats: int,
              digits: int = 2) -> tuple[dict[str, float], dict[str, Any]]:
    """Run each way once per repeat, alternating the order; the median seconds of each way
    and what each returned last (for the caller's check that both ways agree)."""
    times: dict[str, list[float]] = {k: [] for k in ways}
    got: dict[str, Any] = {}
    width = max(map(len, ways))
    for r in range(repeats):
        order = list(ways) if r % 2 == 0 else list(ways)[::-1]
        for who in order:
            t0 = time.perf_counter()
            got[who] = ways[who]()
            times[who].append(time.perf_counter() - t0)
            print(f"  repeat {r + 1}: {who:{width}s} {times[who][-1]:6.{digits}f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    return {k: statistics.median(v) for k, v in times.items()}, got
