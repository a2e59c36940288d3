"""Engine vs naive per-item loop on a CompoSET-shaped set, timed in one run.

The set: 80 scenes x 22 single-edit foils = 1,760 variations, each scored at 3 caption tiers
(5,280 pair items). Images are 224x224 PIL drawings (random shapes; the foil recolours one).
The base caption is shared by a scene's variations at a tier, as the base image is.

Naive loop (the way published evaluation scripts do it): for every item and tier, open and
encode both images and both captions, then compute the 2x2 similarities.
Engine: :func:`foilbench.scoring.engine.evaluate`, each unique image / text once, batched,
with a fresh embedding cache (cold, as `foilbench run` does); then a rerun on the warm cache.

Prints both wall times, the ratio, and the share of the engine's wall time spent inside the
model's embed calls (preprocessing + forward) on unique inputs. Targets: >= 4x, >= 80%.

    PYTHONPATH=src python bench/bench_engine.py [--scenes 80 --foils 22 --threads 1]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from PIL import Image, ImageDraw

from foilbench.data.format import Manifest, make_benchmark
from foilbench.models.base import to_rgb
from foilbench.scoring.engine import evaluate
from foilbench.scoring.protocols import pair_outcomes
from foilbench.store.cache import EmbeddingCache

TIERS = ("short", "medium", "long")
COLOURS = ["red", "green", "blue", "yellow", "purple", "orange", "white", "black"]
RGB = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220),
       "yellow": (235, 200, 40), "purple": (140, 60, 170), "orange": (240, 140, 30),
       "white": (245, 245, 245), "black": (20, 20, 20)}
SHAPES = ["circle", "square", "triangle"]
TINY_CFG = {
    "embed_dim": 64,
    "vision_cfg": {"image_size": 224, "layers": 2, "width": 128, "patch_size": 32,
                   "head_width": 64},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 128, "heads": 2,
                 "layers": 2},
}


def draw(objects: list[tuple[str, str, tuple[int, int]]], bg: tuple[int, int, int]) -> Image.Image:
    im = Image.new("RGB", (224, 224), bg)
    d = ImageDraw.Draw(im)
    for shape, colour, (x, y) in objects:
        box = (x, y, x + 48, y + 48)
        if shape == "circle":
            d.ellipse(box, fill=RGB[colour])
        elif shape == "square":
            d.rectangle(box, fill=RGB[colour])
        else:
            d.polygon([(x + 24, y), (x + 48, y + 48), (x, y + 48)], fill=RGB[colour])
    return im


def phrase(objects, tier: str) -> str:
    parts = [f"a {c} {s}" for s, c, _ in objects]
    if tier == "short":
        return parts[0]
    if tier == "medium":
        return " and ".join(parts[:2])
    return "a scene with " + ", ".join(parts) + " on a plain background"


def build_set(root: Path, n_scenes: int, n_foils: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_scenes):
        objects = [(SHAPES[rng.integers(3)], COLOURS[rng.integers(8)],
                    (int(rng.integers(0, 170)), int(rng.integers(0, 170)))) for _ in range(3)]
        bg = tuple(int(v) for v in rng.integers(90, 180, 3))
        base_rel = f"s{s:03d}/base.png"
        (root / f"s{s:03d}").mkdir(parents=True, exist_ok=True)
        draw(objects, bg).save(root / base_rel)
        for v in range(n_foils):
            k = v % 3
            shape, colour, pos = objects[k]
            others = [c for c in COLOURS if c != colour]
            if v // 3 < len(others):  # recolour object k
                edit, new_obj = "modify_color", (shape, others[v // 3], pos)
            else:  # every other colour used: change its shape instead
                new_shape = SHAPES[(SHAPES.index(shape) + 1 + v // 3) % 3]
                edit, new_obj = "modify_shape", (new_shape, colour, pos)
            foil = list(objects)
            foil[k] = new_obj
            # the edited object leads the caption so every tier mentions the edit
            order = [k] + [j for j in range(3) if j != k]
            foil_rel = f"s{s:03d}/v{v:02d}.png"
            draw(foil, bg).save(root / foil_rel)
            for tier in TIERS:
                rows.append({
                    "item_id": f"s{s:03d}-v{v:02d}-{tier}", "image_base": base_rel,
                    "image_foil": foil_rel,
                    "caption_base": phrase([objects[j] for j in order], tier),
                    "caption_foil": phrase([foil[j] for j in order], tier),
                    "scene_id": f"s{s:03d}", "edit_type": edit, "tier": tier})
    manifest = Manifest(name="composet-shaped", kind="pair")
    return make_benchmark(manifest, pd.DataFrame(rows), root)


class _MinimalOpenClip:
    """Used only when foilbench.models.openclip.adapter is not installed."""

    family = "dual"

    def __init__(self):
        import open_clip

        from foilbench.models.base import ModelInfo, cosine_pair_scores

        self.model = open_clip.CLIP(**TINY_CFG).eval()
        cfg = self.model.visual.preprocess_cfg if hasattr(self.model.visual, "preprocess_cfg") \
            else {}
        self.preprocess = open_clip.image_transform(224, is_train=False,
                                                    mean=cfg.get("mean"), std=cfg.get("std"))
        self.tokenizer = open_clip.get_tokenizer("ViT-B-32")
        self.info = ModelInfo("bench-minimal", "bench-minimal", "dual", "cosine")
        self._cos = cosine_pair_scores

    def embed_images(self, images):
        with torch.no_grad():
            x = torch.stack([self.preprocess(im) for im in images])
            return torch.nn.functional.normalize(self.model.encode_image(x), dim=-1).numpy()

    def embed_texts(self, texts):
        with torch.no_grad():
            emb = self.model.encode_text(self.tokenizer(list(texts)))
            return torch.nn.functional.normalize(emb, dim=-1).numpy()

    def pair_scores(self, a, b):
        return self._cos(a, b)


def build_model(folder: Path):
    torch.manual_seed(0)
    try:
        from foilbench.models.openclip.adapter import from_spec
    except ImportError:
        return _MinimalOpenClip(), "local minimal open_clip wrapper"
    cfg = folder / "fbbench_tiny.json"
    cfg.write_text(json.dumps(TINY_CFG))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return from_spec(str(cfg), device="cpu"), "foilbench.models.openclip.adapter"


def naive_loop(adapter, bench) -> dict[str, np.ndarray]:
    """Per item: open and encode both images and both captions, score the 2x2."""
    sims = np.empty((len(bench), 2, 2))
    for n, row in enumerate(bench.items.itertuples(index=False)):
        images = []
        for rel in (row.image_base, row.image_foil):
            with Image.open(bench.image_path(rel)) as im:
                im.load()
                images.append(to_rgb(im))
        img = adapter.embed_images(images)
        txt = adapter.embed_texts([row.caption_base, row.caption_foil])
        for c in range(2):
            sims[n, c] = adapter.pair_scores(img, np.repeat(txt[c : c + 1], 2, axis=0))
    return pair_outcomes(sims)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=int, default=80)
    ap.add_argument("--foils", type=int, default=22)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        bench = build_set(tmp / "set", args.scenes, args.foils)
        print(f"set: {args.scenes} scenes x {args.foils} foils x {len(TIERS)} tiers = "
              f"{len(bench)} pair items; {len(bench.unique_images())} unique images, "
              f"{len(bench.unique_texts())} unique texts (built in {time.perf_counter() - t0:.1f} s)")
        adapter, which = build_model(tmp)
        print(f"model: tiny random open_clip ViT (224px, patch 32, width 128, 2+2 layers) via "
              f"{which}; torch threads = {args.threads}")
        adapter.embed_images([draw([], (0, 0, 0))] * 2)  # warm-up, not timed
        adapter.embed_texts(["warm up", "warm up"])

        cache = EmbeddingCache(tmp / "cache")  # as `foilbench run` does by default
        t0 = time.perf_counter()
        result = evaluate(adapter, bench, cache=cache, batch_size=args.batch_size,
                          progress=False)
        t_engine = time.perf_counter() - t0
        t0 = time.perf_counter()
        naive = naive_loop(adapter, bench)
        t_naive = time.perf_counter() - t0
        t0 = time.perf_counter()
        warm = evaluate(adapter, bench, cache=EmbeddingCache(tmp / "cache"),
                        batch_size=args.batch_size, progress=False)
        t_warm = time.perf_counter() - t0

    st = result.stats
    same = all(np.array_equal(result.outcomes[m].astype(bool), naive[m]) for m in naive)
    print(f"naive per-item loop : {t_naive:8.2f} s  ({2 * len(bench)} image + "
          f"{2 * len(bench)} text encodings, batches of 2)")
    print(f"foilbench engine    : {t_engine:8.2f} s  ({st['images_encoded']} image + "
          f"{st['texts_encoded']} text encodings, batches of {args.batch_size})")
    print(f"speed-up            : {t_naive / t_engine:8.2f}x   (target >= 4x)")
    print(f"engine time in model embed calls on unique inputs: {st['forward_seconds']:.2f} s of "
          f"{st['total_seconds']:.2f} s = {100 * st['forward_share']:.1f}%   (target >= 80%)")
    print(f"  rest: image decode {st['load_seconds']:.2f} s, hashing {st['hash_seconds']:.2f} s, "
          f"cache writes {st['cache_seconds']:.2f} s, scoring {st['score_seconds']:.3f} s")
    ws = warm.stats
    print(f"rerun on a warm cache: {t_warm:.3f} s, {ws['images_encoded']} image + "
          f"{ws['texts_encoded']} text encodings ({ws['image_cache_hits']} + "
          f"{ws['text_cache_hits']} cache hits)")
    print(f"outcomes identical to the naive loop (I2T, T2I, Group): {same}")


if __name__ == "__main__":
    main()
