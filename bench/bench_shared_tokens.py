"""The context check with the adapters' shared token memory, side by side:
``past_context_problems`` on a CompoSET-shaped release after a model's forward passes have
encoded every caption (an open_clip tokenizer with ``share_encode``, as the adapter has),
its tokenizer built inside the timing, with open_clip's plain ``get_tokenizer("ViT-B-32")``
(before: its own tables, every text encoded again) against ``shared_tokenizer("ViT-B-32")``
(after: the shared memory), alternating, pinned to ``--cores``, median of ``--repeats``.
Both must find the same items.

    PYTHONPATH=src python bench/bench_shared_tokens.py --cores 1 [--scenes 80]
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
    import open_clip

    from foilbench.data.context_check import past_context_problems
    from foilbench.data.registry import resolve_benchmark
    from foilbench.data.validate import Problem
    from foilbench.models.openclip import tokens
    from foilbench.world import token_budget as tb

    root = peer_data.composet_release(Path(args.work), 1.0, subset=args.scenes * 66)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = resolve_benchmark(f"composet:{root}")
    texts = set()
    for c in bench.spec.text_columns:
        texts.update(bench.items[c])
    for c in bench.spec.text_list_columns:
        for value in bench.items[c]:
            texts.update(value)
    forward = open_clip.get_tokenizer("ViT-B-32")  # the adapter's tokenizer
    tokens.share_encode(forward)
    forward([t for t in texts if isinstance(t, str)])  # the forward passes' encodes
    makers = {"before (own tokenizer)": lambda: open_clip.get_tokenizer("ViT-B-32"),
              "shared memory": lambda: tokens.shared_tokenizer("ViT-B-32")}
    times: dict[str, list[float]] = {k: [] for k in makers}
    found: dict[str, list] = {}
    real = tb._bpe_tokenizer
    try:
        for r in range(args.repeats):
            order = list(makers) if r % 2 == 0 else list(makers)[::-1]
            for who in order:
                tokens._TOKENIZERS.clear()
                tb.visible_tokens.cache_clear()
                t0 = time.perf_counter()
                tok = makers[who]()
                tb._bpe_tokenizer = lambda tok=tok: tok
                found[who] = past_context_problems(bench, Problem)
                times[who].append(time.perf_counter() - t0)
                print(f"  repeat {r + 1}: {who:22s} {times[who][-1]:6.2f} s "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        tb._bpe_tokenizer = real
    before, after = (statistics.median(v) for v in times.values())
    same = found["shared memory"] == found["before (own tokenizer)"]
    print(f"context check on {len(bench)} items ({root.name}), {len(texts)} texts, cores "
          f"{args.cores}: before {before:.2f} s, shared {after:.2f} s -> "
          f"{before / after:.2f}x; saves {before - after:.2f} s per run; same items found: "
          f"{same} ({len(found['shared memory'])} items)")


if __name__ == "__main__":
    main()
