"""The forward-pass floor: plain batched open_clip forward calls, no foilbench code.

The limit a whole ``foilbench run`` is held against: one forward pass per distinct image and
per distinct text, at the model's best batched throughput on this machine. This script builds
the model with open_clip alone (the same config and safetensors file ``bench_peers.py``
gives foilbench and the peers, :mod:`peer_data`), then times ``encode_image`` on batches of
already-preprocessed image tensors and ``encode_text`` on batches of tokenized texts under
``torch.inference_mode()``, for each batch size in ``--batches`` and each thread count in
``--threads`` (``torch.set_num_threads`` and the process pinned to that many of ``--cores``).
Each batch size gets one untimed warm-up call, then calls until ``--min-seconds`` have passed
(at least two). The best batch size's images/s and texts/s are the floor's rates.

Decode and preprocessing are not in the floor (they are work foilbench does and the floor
does not); an open_clip text tower runs its full context (77 tokens) whatever the text, so
the texts' content does not change the rate.

    PYTHONPATH=src python bench/bench_forward_floor.py --arch ViT-B-32 \\
        --benchmark composet --subset 1320 --json /tmp/fb_bench_peers/floor-vitb32.json

With ``--benchmark`` (and the same ``--scale`` / ``--subset`` / ``--work`` as the
bench_peers run) it counts that set's distinct images and texts and prints the floor seconds;
``--json`` keeps the rates for ``bench_peers.py --floor``, which prints foilbench's whole-run
wall over the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peer_data  # noqa: E402


def load_model(config: Path, weights: Path):
    """(model, tokenizer, image size) with open_clip only, in eval mode on the CPU."""
    import open_clip

    open_clip.add_model_config(config)
    model = open_clip.create_model(config.stem, pretrained=str(weights), device="cpu")
    model.eval()
    size = model.visual.image_size
    size = size[0] if isinstance(size, tuple | list) else size
    return model, open_clip.get_tokenizer(config.stem), int(size)


def rate(call, batch, n_items: int, min_seconds: float) -> float:
    """Items per second of ``call(batch)``: one warm-up, then calls for ``min_seconds``."""
    import torch

    with torch.inference_mode():
        call(batch)
        calls, t0 = 0, time.perf_counter()
        while calls < 2 or time.perf_counter() - t0 < min_seconds:
            call(batch)
            calls += 1
        return calls * n_items / (time.perf_counter() - t0)


def sweep(model, tokenizer, size: int, batches: list[int], min_seconds: float,
          texts: list[str]) -> dict:
    """Per batch size, images/s and texts/s; and the best of each."""
    import torch

    gen = torch.Generator().manual_seed(0)
    table = {}
    for b in batches:
        images = torch.randn(b, 3, size, size, generator=gen)
        tokens = tokenizer([texts[i % len(texts)] for i in range(b)])
        table[b] = (rate(model.encode_image, images, b, min_seconds),
                    rate(model.encode_text, tokens, b, min_seconds))
        print(f"    batch {b:4d}: {table[b][0]:9.1f} images/s  {table[b][1]:9.1f} texts/s",
              flush=True)
    ib = max(table, key=lambda k: table[k][0])
    tb = max(table, key=lambda k: table[k][1])
    return {"images_per_s": table[ib][0], "image_batch": ib, "texts_per_s": table[tb][1],
            "text_batch": tb, "by_batch": {str(k): v for k, v in table.items()}}


def set_texts(kind: str | None, data) -> list[str]:
    """A few of the set's own texts to tokenize (content does not change the rate)."""
    if kind == "composet":
        import pandas as pd

        caps = pd.read_parquet(Path(data) / "variations.parquet")["captions"]
        return [c[t][s] for c in caps[:50] for t in peer_data.TIERS for s in ("base", "var")]
    if kind == "sugarcrepe":
        path = sorted(Path(data[0]).glob("*.json"))[0]
        return [v["caption"] for v in list(json.loads(path.read_text()).values())[:200]]
    return ["a red metal ball on the left side of the table"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", choices=peer_data.ARCHS, default="tiny")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    ap.add_argument("--batches", default="1,8,32,64,128", help="batch sizes to try")
    ap.add_argument("--threads", default="1,2", help="torch thread counts to measure")
    ap.add_argument("--cores", default="0,1", help="cores to pin to (the first N for N threads)")
    ap.add_argument("--min-seconds", type=float, default=3.0)
    ap.add_argument("--benchmark", choices=("composet", "sugarcrepe"), default=None)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--subset", type=int, default=None)
    ap.add_argument("--json", default=None, help="write the rates here for bench_peers --floor")
    args = ap.parse_args()
    import torch

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    config, weights = peer_data.model_files(work, args.arch)
    data = None
    if args.benchmark == "composet":
        data = peer_data.composet_release(work, args.scale, subset=args.subset)
    elif args.benchmark == "sugarcrepe":
        data = peer_data.sugarcrepe_set(work, args.scale, args.subset)
    model, tokenizer, size = load_model(config, weights)
    cores = [int(c) for c in args.cores.split(",")]
    before_threads, before_cores = torch.get_num_threads(), os.sched_getaffinity(0)
    out = {"arch": args.arch, "by_threads": {}}
    try:
        for n in (int(t) for t in args.threads.split(",")):
            os.sched_setaffinity(0, cores[:n])
            torch.set_num_threads(n)
            print(f"{args.arch}, {n} thread(s) on cores {cores[:n]} (load "
                  f"{os.getloadavg()[0]:.1f}):", flush=True)
            res = sweep(model, tokenizer, size, [int(b) for b in args.batches.split(",")],
                        args.min_seconds, set_texts(args.benchmark, data))
            out["by_threads"][str(n)] = res | {"arch": args.arch, "threads": n}
            line = (f"  best: {res['images_per_s']:.1f} images/s (batch {res['image_batch']}), "
                    f"{res['texts_per_s']:.1f} texts/s (batch {res['text_batch']})")
            if data is not None:
                n_img, n_txt = peer_data.unique_inputs(args.benchmark, data)
                floor = n_img / res["images_per_s"] + n_txt / res["texts_per_s"]
                line += (f"; {args.benchmark}: {n_img:,} distinct images + {n_txt:,} distinct "
                         f"texts -> floor {floor:.2f} s")
            print(line, flush=True)
    finally:
        torch.set_num_threads(before_threads)
        os.sched_setaffinity(0, before_cores)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
        print(f"rates written to {args.json}")


if __name__ == "__main__":
    main()
