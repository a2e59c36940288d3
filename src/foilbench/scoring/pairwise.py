"""Pairwise scorers: each unique (image, text) pair is scored once, grouped by image.

Grouping lets an adapter encode an image (or a VLM's image prefix) once for all of that image's
captions. Scores are cached per (model fingerprint, image hash, text hash) when the cache offers
``get_pair_scores`` / ``put_pair_scores``.
"""

from __future__ import annotations

import time

import numpy as np

from foilbench.errors import ModelError
from foilbench.scoring.progress import stage


def score_unique_pairs(adapter, bench, layout, image_hashes, text_hashes, *, cache, batch_size,
                       timer, progress, load):
    """Flat slot scores for ``layout`` plus counters (pairs scored, cache hits)."""
    fp = adapter.info.fingerprint
    img_h = np.asarray(image_hashes, dtype=object)[layout.image_idx]
    txt_h = np.asarray(text_hashes, dtype=object)[layout.text_idx]
    keys = list(zip(img_h.tolist(), txt_h.tolist(), strict=True))
    unique = list(dict.fromkeys(keys))
    score_of: dict[tuple[str, str], float] = {}
    use_cache = cache is not None and hasattr(cache, "get_pair_scores")
    if use_cache and unique:
        t0 = time.perf_counter()
        score_of.update(cache.get_pair_scores(fp, unique))
        timer.add("cache", time.perf_counter() - t0)
    hits = len(score_of)
    todo = [k for k in unique if k not in score_of]
    by_image: dict[str, list[str]] = {}
    for ih, th in todo:
        by_image.setdefault(ih, []).append(th)
    # one ref and one text string per hash, for loading
    ref_of = dict(zip(image_hashes, bench.unique_images(), strict=True))
    text_of = dict(zip(text_hashes, bench.unique_texts(), strict=True))
    groups = list(by_image.items())
    bar = stage(progress, f"{adapter.info.spec}: pairs", len(todo), unit="pair")
    try:
        for start in range(0, len(groups), batch_size):
            batch = groups[start : start + batch_size]
            t0 = time.perf_counter()
            images = [load(bench.image_path(ref_of[ih])) for ih, _ in batch]
            captions = [[text_of[th] for th in ths] for _, ths in batch]
            t1 = time.perf_counter()
            got = adapter.score_pairs(images, captions)
            t2 = time.perf_counter()
            timer.add("load", t1 - t0)
            timer.add("forward", t2 - t1)
            done_keys, done_scores = [], []
            for (ih, ths), row in zip(batch, got, strict=True):
                row = np.asarray(row, dtype=np.float64).reshape(-1)
                if len(row) != len(ths):
                    raise ModelError(f"score_pairs returned {len(row)} scores for "
                                     f"{len(ths)} captions of one image")
                for th, s in zip(ths, row, strict=True):
                    score_of[(ih, th)] = float(s)
                    done_keys.append((ih, th))
                    done_scores.append(float(s))
            if use_cache:
                cache.put_pair_scores(fp, done_keys, np.asarray(done_scores))
                timer.add("cache", time.perf_counter() - t2)
            bar.update(len(done_keys))
    finally:
        bar.close()
    flat = np.fromiter((score_of[k] for k in keys), dtype=np.float64, count=len(keys))
    counts = {"pairs_unique": len(unique), "pairs_scored": len(todo), "pair_cache_hits": hits,
              "images_encoded": len(groups), "texts_encoded": 0,
              "image_cache_hits": 0, "text_cache_hits": 0}
    return flat, counts
