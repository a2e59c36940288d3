"""The context check's memo, side by side: ``past_context_problems`` on a CompoSET-shaped
release with each text's visible CLIP tokens remembered (as the run does, memo cleared before
each call) against the same check encoding every text at every comparison (the code before
the memo: ``visible_tokens`` unwrapped), alternating, pinned to ``--cores``, median of
``--repeats``. Both must find the same items.

    PYTHONPATH=src python bench/bench_context_check.py --cores 1 [--scenes 80]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peer_data  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="1")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scenes", type=int, default=80)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    os.sched_setaffinity(0, [int(c) for c in args.cores.split(",")])
    from foilbench.data.context_check import past_context_problems
    from foilbench.data.registry import resolve_benchmark
    from foilbench.data.validate import Problem
    from foilbench.world import token_budget as tb

    root = peer_data.composet_release(Path(args.work), 1.0, subset=args.scenes * 66)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = resolve_benchmark(f"composet:{root}")
    remembered = tb.visible_tokens
    tb._bpe_tokenizer()  # built once, outside the timings
    times: dict[str, list[float]] = {"before (no memo)": [], "memo": []}
    found: dict[str, list] = {}
    for r in range(args.repeats):
        order = list(times) if r % 2 == 0 else list(times)[::-1]
        for who in order:
            tb.visible_tokens = remembered.__wrapped__ if who.startswith("before") \
                else remembered
            remembered.cache_clear()
            t0 = time.perf_counter()
            found[who] = past_context_problems(bench, Problem)
            times[who].append(time.perf_counter() - t0)
            tb.visible_tokens = remembered
            print(f"  repeat {r + 1}: {who:17s} {times[who][-1]:6.2f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    before, memo = (statistics.median(v) for v in times.values())
    same = found["memo"] == found["before (no memo)"]
    print(f"context check on {len(bench)} items ({root.name}), cores {args.cores}: before "
          f"{before:.2f} s, memo {memo:.2f} s -> {before / memo:.2f}x; saves "
          f"{before - memo:.2f} s per run; same items found: {same} "
          f"({len(found['memo'])} items)")


if __name__ == "__main__":
    main()
