"""A tiny pair benchmark for the review tests: 3 scenes, 10 instances, 3 caption tiers each,
edit masks in ``mask_path`` (the construction pipelines' column). Written with PIL only.

Each foil recolours one square of its scene's base image; its mask covers that square. One
instance (``s2-f02``) also shifts a pixel outside its mask, so the drift view has something to
flag, and one (``s1-f02``) has a medium caption that rewords the edit phrase.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from foilbench.data.format import Manifest, make_benchmark, write_benchmark

SIZE = 48
COLOURS = {"red": (220, 40, 40), "blue": (40, 70, 220), "green": (40, 170, 60),
           "yellow": (230, 210, 40), "purple": (140, 50, 170)}
EDIT_TYPES = ("modify_color", "modify_presence", "swap_material")
# scene -> number of instances (3 + 4 + 3 = 10)
SCENES = {"s0": 3, "s1": 4, "s2": 3}


def _square(arr: np.ndarray, k: int, rgb) -> None:
    x = 4 + 14 * k
    arr[8 + (k % 2) * 16: 20 + (k % 2) * 16, x: x + 10] = rgb


def write_review_bench(root: Path, name: str = "review-fixture") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    names = list(COLOURS)
    rows = []
    for s, (sid, n) in enumerate(SCENES.items()):
        base = np.full((SIZE, SIZE, 3), 245, np.uint8)
        for k in range(n):
            _square(base, k, COLOURS[names[(k + s) % 5]])
        (root / "images" / sid).mkdir(parents=True, exist_ok=True)
        (root / "masks" / sid).mkdir(parents=True, exist_ok=True)
        Image.fromarray(base).save(root / "images" / sid / "base.png")
        for k in range(n):
            was, now = names[(k + s) % 5], names[(k + s + 2) % 5]
            foil = base.copy()
            _square(foil, k, COLOURS[now])
            mask = np.zeros((SIZE, SIZE), np.uint8)
            _square(mask[..., None], k, 255)
            fid = f"{sid}-f{k:02d}"
            if fid == "s2-f02":
                foil[1, 1] = (0, 0, 0)  # drift outside the mask
            Image.fromarray(foil).save(root / "images" / sid / f"foil_{k:02d}.png")
            Image.fromarray(mask, "L").save(root / "masks" / sid / f"foil_{k:02d}.png")
            short = (f"a {was} square", f"a {now} square")
            medium = (f"{short[0]} next to a grey frame", f"{short[1]} next to a grey frame")
            if fid == "s1-f02":
                medium = ("a crimson square next to a grey frame", medium[1])
            long = (f"{medium[0]} on a white background", f"{medium[1]} on a white background")
            for tier, (cb, cf) in zip(("short", "medium", "long"), (short, medium, long), strict=True):
                rows.append({"item_id": f"{fid}-{tier}", "image_base": f"images/{sid}/base.png",
                             "image_foil": f"images/{sid}/foil_{k:02d}.png",
                             "mask_path": f"masks/{sid}/foil_{k:02d}.png",
                             "caption_base": cb, "caption_foil": cf, "scene_id": sid,
                             "edit_type": EDIT_TYPES[(k + s) % 3], "tier": tier,
                             "foil_id": fid})
    bench = make_benchmark(Manifest(name=name, kind="pair", license="MIT"),
                           pd.DataFrame(rows), root)
    write_benchmark(bench, root)
    return root
