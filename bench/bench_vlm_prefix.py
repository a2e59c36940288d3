"""Speed of shared-prefix VLM scoring vs scoring every candidate caption from scratch.

Builds a small random LLaVA model (and a tiny BLIP) locally, scores N images x K candidate
captions both ways in one run, checks the scores agree, and prints the ratio.

    PYTHONPATH=src python bench/bench_vlm_prefix.py [--images 4] [--captions 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tiny-model builders
from _models_tiny import save_tiny_blip, save_tiny_llava, save_tiny_qwen2vl, tiny_images  # noqa: E402
from foilbench.models.registry import resolve_model  # noqa: E402

CAPTIONS = ["a red cube left of a blue sphere", "a blue cube left of a red sphere",
            "two green cones", "three red spheres on the right", "a green cone and a red cube",
            "a blue sphere on the left", "two cubes", "a red cone right of a green sphere"]


def timed(fn, repeats: int):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def bench(name: str, folder: Path, score: str, images, captions, repeats: int) -> None:
    adapter = resolve_model(f"hf-vlm:{folder}?score={score}&batch={len(captions)}",
                            device="cpu")
    shared_t, shared = timed(lambda: [adapter.score_image(im, captions, share=True)
                                      for im in images], repeats)
    scratch_t, scratch = timed(lambda: [adapter.score_image(im, captions, share=False)
                                        for im in images], repeats)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(shared, scratch, strict=True))
    print(f"{name:<28} {score:<9} shared {shared_t * 1000:8.1f} ms   from-scratch "
          f"{scratch_t * 1000:8.1f} ms   speed-up x{scratch_t / shared_t:5.2f}   "
          f"max |diff| {diff:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--captions", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    captions = (CAPTIONS * (args.captions // len(CAPTIONS) + 1))[: args.captions]
    images = tiny_images(args.images, size=224)
    print(f"{args.images} images x {args.captions} candidate captions, CPU, 1 thread, "
          f"best of {args.repeats}")
    with tempfile.TemporaryDirectory() as tmp:
        small = save_tiny_llava(Path(tmp) / "llava-small", hidden=128, layers=4,
                                image_size=224, patch=14)  # 256 image tokens per prompt
        tiny_llava = save_tiny_llava(Path(tmp) / "llava-tiny")  # 16 image tokens
        blip = save_tiny_blip(Path(tmp) / "blip-tiny")
        qwen = save_tiny_qwen2vl(Path(tmp) / "qwen2vl-tiny")  # 4 merged image tokens
        for score in ("loglik", "vqascore"):
            bench("llava h128 L4 256 img tok", small, score, images, captions, args.repeats)
            bench("llava h32 L2 16 img tok", tiny_llava, score, images, captions, args.repeats)
            bench("qwen2-vl h32 L2", qwen, score, images, captions, args.repeats)
            bench("blip h32 L2", blip, score, images, captions, args.repeats)


if __name__ == "__main__":
    main()
