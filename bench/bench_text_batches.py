"""Trimmed text batches: the text forward time at 1x and 2x an open_clip adapter's batch.

A text-trimming adapter (``trims_text``: CLIP's causal tower pooled at the end-of-text token)
runs each batch at its longest caption's length, and the engine sorts captions by length, so
a batch of short captions is a small call. :data:`foilbench.models.batched.TRIMMED_TEXT_FACTOR`
lets such an adapter take twice its ``batch_size`` texts per call. This bench times
``embed_texts`` on the SugarCrepe-shaped captions (11,844 unique, from ``peer_data``) with the
tiny open_clip model of ``bench_peers.py`` at several texts-per-call sizes, interleaved in one
process (thread CPU seconds, median over repeats), and prints each size's ratio against the
adapter's plain ``batch_size``. Features are compared too: batching changes calls, not
results (largest difference printed).

    PYTHONPATH=src taskset -c 0 python bench/bench_text_batches.py --sizes 32,64,128
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peer_data  # noqa: E402


def captions(jdir: Path) -> list[str]:
    """The set's unique captions, shortest first (the order the engine batches them in)."""
    seen: dict[str, None] = {}
    for f in sorted(jdir.glob("*.json")):
        for row in json.loads(f.read_text()).values():
            seen.update(dict.fromkeys((row["caption"], row["negative_caption"])))
    return sorted(seen, key=len)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32,64,128", help="texts per call to time")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    from foilbench.models.registry import resolve_model

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    config, weights = peer_data.model_files(work)
    jdir, _ = peer_data.sugarcrepe_set(work, args.scale)
    texts = captions(jdir)
    adapter = resolve_model(f"openclip:{config}:{weights}", device="cpu")
    base = int(adapter.batch_size)
    sizes = [int(s) for s in args.sizes.split(",")]
    adapter.embed_texts(texts)  # tokens remembered, allocator warm
    seconds: dict[int, list[float]] = {s: [] for s in sizes}
    features: dict[int, np.ndarray] = {}
    for _ in range(args.repeats):
        for size in sizes:
            t0 = time.thread_time()
            features[size] = adapter._embed(texts, adapter.text_features, size)
            seconds[size].append(time.thread_time() - t0)
    print(f"{len(texts):,} unique captions, adapter batch_size {base}, trims_text "
          f"{adapter.trims_text}, {args.repeats} interleaved repeats, thread CPU seconds")
    ref = statistics.median(seconds[base]) if base in seconds else None
    for size in sizes:
        med = statistics.median(seconds[size])
        ratio = f"  {ref / med:.2f}x the speed of {base} per call" if ref else ""
        diff = float(np.abs(features[size] - features[sizes[0]]).max())
        print(f"  {size:4d} texts per call: median {med:6.3f} s{ratio}  "
              f"(largest feature difference vs {sizes[0]}: {diff:.1e})")


if __name__ == "__main__":
    main()
