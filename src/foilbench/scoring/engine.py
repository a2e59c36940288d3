"""Evaluate one model on one benchmark: unique inputs once, vectorised scoring, strict ``>``.

The adapter's family (:func:`foilbench.models.base.family_of`, by class) picks the path.
Dual encoders: every unique image (sha256 of the file) and every unique text (sha256 of UTF-8)
is embedded once, in batches, through the cache; then all item slots (laid out by the
benchmark's kind, :mod:`foilbench.kinds`) are scored in one vectorised ``adapter.pair_scores``
call per chunk on the gathered embeddings. Pairwise scorers: each unique (image, text) pair is
scored once, grouped by image. API choice models are delegated to
:mod:`foilbench.scoring.api_protocol`.

Outcomes, ties and per-item chance come from the benchmark's kind (:mod:`foilbench.kinds`:
CompoSET Eq. 1-3 for pairs, R@1 for choices; chance 1/4, 1/4, 1/6 and 1/(K+1)); the kind may
add a metric its item table enables (choice items that list their true negatives also get
``r1_valid``, :mod:`foilbench.kinds.valid`). A log-likelihood scorer takes the normalisation
the benchmark's paper states (:mod:`foilbench.scoring.norms`). Decisions within float32 rounding
of a tie are counted (:mod:`foilbench.scoring.near_ties`) and, where the adapter can recompute
in float64, settled by the float64 scores (:mod:`foilbench.scoring.settle`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.errors import ModelError
from foilbench.kinds import ItemKind, kind_of
from foilbench.limits import decode_workers
from foilbench.models.base import ApiChoiceModel, DualEncoder, family_of
from foilbench.models.batched import BatchedDualEncoder, forward_batch_size
from foilbench.scoring import api_protocol, gpu, norms, prepared
from foilbench.scoring.encode import (
    Cache,
    Timer,
    encode_unique,
    hash_images,
    hash_texts,
    image_decoder,
    open_image,
    open_rgb,
)
from foilbench.scoring.layout import SlotLayout, build_layout
from foilbench.scoring.near_ties import near_tie_masks
from foilbench.scoring.pairwise import score_unique_pairs
from foilbench.scoring.result import EvalResult
from foilbench.scoring.settle import outcomes_changed_at, settle_near_ties

SCORE_CHUNK = 65_536  # slots scored per pair_scores call (bounds memory on huge benchmarks)


def evaluate(adapter: Any, benchmark: Benchmark, *, cache: Cache | None = None,
             batch_size: int = 64, progress: Any = True) -> EvalResult:
    """Score every item of ``benchmark`` with ``adapter`` and derive per-item outcomes.

    ``cache`` is any object with ``get_many``/``put_many`` (and, for pairwise models,
    ``get_pair_scores``/``put_pair_scores``), e.g. :class:`foilbench.store.cache.EmbeddingCache`;
    ``None`` disables caching. ``result.stats`` records how many inputs were actually encoded,
    cache hits, and the seconds spent in model forward calls versus in total.
    """
    family = family_of(adapter)
    if family is ApiChoiceModel:
        return api_protocol.evaluate(adapter, benchmark, progress=progress)
    if len(benchmark) == 0:
        raise ModelError(f"benchmark {benchmark.name!r} has no items to evaluate")
    adapter = norms.for_benchmark(adapter, benchmark)
    t_start = time.perf_counter()
    timer = Timer()
    images = benchmark.unique_images()
    texts = benchmark.unique_texts()
    layout = build_layout(benchmark, {r: k for k, r in enumerate(images)},
                          {t: k for k, t in enumerate(texts)})
    image_hashes = hash_images(benchmark.root, images, timer)
    text_hashes = hash_texts(texts, timer)
    name = adapter.info.spec
    if family is DualEncoder:
        # on CUDA the image batch is fitted to memory; trimmed texts cost less than images
        image_batch = gpu.size_to_memory(adapter, forward_batch_size(adapter, batch_size))
        text_batch = max(image_batch, forward_batch_size(adapter, batch_size, texts=True))
        flat, counts, inputs = _dual_scores(
            adapter, benchmark, layout, image_hashes, text_hashes, cache=cache,
            batch_size=image_batch, text_batch_size=text_batch, timer=timer,
            progress=progress, name=name)
    else:
        flat, counts = score_unique_pairs(
            adapter, benchmark, layout, image_hashes, text_hashes, cache=cache,
            batch_size=batch_size, timer=timer, progress=progress, load=open_rgb)
        inputs = None
    flat = np.asarray(flat, dtype=np.float64)
    if np.isnan(flat).any():
        raise ModelError(f"model {name!r} returned {int(np.isnan(flat).sum())} NaN score(s) on "
                         f"{benchmark.name!r}; check the dtype (try --dtype float32)")
    kind = benchmark.item_kind
    matrix = layout.to_matrix(flat)
    near = near_tie_masks(kind, matrix)  # of the float32 pass, before settling
    near_items = np.flatnonzero(np.logical_or.reduce(list(near.values()))) if near \
        else np.empty(0, dtype=np.int64)
    settled: np.ndarray = near_items[:0]
    changed: dict[str, int] = {}
    if inputs is not None and len(near_items):
        t0 = time.perf_counter()
        matrix_64, settled = settle_near_ties(adapter, near_items, matrix, layout, *inputs)
        if len(settled):
            before = kind.item_outcomes(benchmark.items, matrix, layout.n_slots,
                                        where=benchmark.name)[0]
            matrix = matrix_64
        timer.add("settle", time.perf_counter() - t0)
    outcomes, ties, chance = kind.item_outcomes(
        benchmark.items, matrix, layout.n_slots, where=benchmark.name)
    if len(settled):
        changed = outcomes_changed_at(before, outcomes, settled)
    total = time.perf_counter() - t_start
    stats = {
        "images_unique": len(set(image_hashes)),
        "texts_unique": len(set(text_hashes)),
        **counts,
        **norms.norm_stats(adapter),
        "slots_scored": int(len(flat)),
        "forward_seconds": timer.seconds.get("forward", 0.0),
        "forward_image_seconds": timer.seconds.get("forward_image", 0.0),
        "forward_text_seconds": timer.seconds.get("forward_text", 0.0),
        "load_seconds": timer.seconds.get("load", 0.0),
        "prefetch_seconds": timer.seconds.get("prefetch", 0.0),
        # thread CPU seconds: what the phases cost whatever else shares the cores
        "forward_cpu_seconds": timer.seconds.get("forward_cpu", 0.0),
        "load_cpu_seconds": timer.seconds.get("load_cpu", 0.0),
        "prefetch_cpu_seconds": timer.seconds.get("prefetch_cpu", 0.0),
        "hash_seconds": timer.seconds.get("hash", 0.0),
        "cache_seconds": timer.seconds.get("cache", 0.0),
        "score_seconds": timer.seconds.get("score", 0.0),
        "total_seconds": total,
        "near_ties": {metric: int(mask.sum()) for metric, mask in near.items()},
        "near_ties_settled": int(len(settled)),
        "near_ties_changed": changed,
        "settle_seconds": timer.seconds.get("settle", 0.0),
    }
    stats["forward_share"] = stats["forward_seconds"] / total if total > 0 else 0.0
    scores = [matrix[k, : int(m)] for k, m in enumerate(layout.n_slots)]
    return EvalResult(benchmark=benchmark, model=adapter.info, scores=scores,
                      outcomes=outcomes, ties=ties, chance=chance, stats=stats)


def item_outcomes(kind: str | ItemKind, matrix: np.ndarray, n_slots: np.ndarray):
    """(outcomes, ties, chance) per metric from the padded score matrix; outcomes as 0/1."""
    return kind_of(kind).outcomes(matrix, n_slots)


def _dual_scores(adapter, bench: Benchmark, layout: SlotLayout, image_hashes: list[str],
                 text_hashes: list[str], *, cache, batch_size, text_batch_size, timer,
                 progress, name):
    fp = adapter.info.fingerprint
    uniq_img, img_of_ref = _dedupe(image_hashes)
    uniq_txt, txt_of_ref = _dedupe(text_hashes)
    first_img_ref = _first_ref(img_of_ref, len(uniq_img))
    first_txt_ref = _first_ref(txt_of_ref, len(uniq_txt))
    images = bench.unique_images()
    texts = bench.unique_texts()

    batched = isinstance(adapter, BatchedDualEncoder)
    # inside a run/sweep's sharing block: pixels prepared once per preprocessing, shared
    # by every model with it (and kept on disk); read here, not on the prefetch threads
    bound = prepared.bind(adapter) if batched else None
    before = bound.counts() if bound is not None else {}

    decode = image_decoder(adapter)

    def load_image(p: int):
        path = bench.image_path(images[first_img_ref[p]])
        if bound is not None:  # shared by models of any kind: each preparer converts
            ready = bound.load(uniq_img[p], lambda: open_image(path))
            if ready is not None:
                return ready
        image = decode(path)
        return adapter.prepare_image(image, p) if batched else image

    def load_images(pos: list[int]):
        return [load_image(p) for p in pos]

    def load_texts(pos: list[int]):
        return [texts[first_txt_ref[p]] for p in pos]

    # prepared images (decoded, resized, as tensors) come from threads while the model runs;
    # texts are ordered by length where the adapter trims each batch to its longest text
    img_emb, img_enc, img_hits = encode_unique(
        uniq_img, load_images, adapter.embed_prepared if batched else adapter.embed_images,
        fingerprint=fp, cache=cache, batch_size=batch_size, timer=timer,
        label=f"{name}: images", progress=progress, load_one=load_image,
        workers=decode_workers(), phase="forward_image")
    text_order = [len(texts[first_txt_ref[p]]) for p in range(len(uniq_txt))] \
        if getattr(adapter, "trims_text", False) else None
    txt_emb, txt_enc, txt_hits = encode_unique(
        uniq_txt, load_texts, adapter.embed_texts, fingerprint=fp, cache=cache,
        batch_size=text_batch_size, timer=timer, label=f"{name}: texts", progress=progress,
        order=text_order, phase="forward_text")
    t0 = time.perf_counter()
    img_rows = img_of_ref[layout.image_idx]
    txt_rows = txt_of_ref[layout.text_idx]
    flat = np.empty(len(img_rows))
    for s in range(0, len(flat), SCORE_CHUNK):
        part = slice(s, s + SCORE_CHUNK)
        got = np.asarray(adapter.pair_scores(img_emb[img_rows[part]], txt_emb[txt_rows[part]]))
        flat[part] = got.reshape(-1)
    timer.add("score", time.perf_counter() - t0)
    counts = {"images_encoded": img_enc, "texts_encoded": txt_enc,
              "image_cache_hits": img_hits, "text_cache_hits": txt_hits}
    if bound is not None:
        after = bound.counts()
        counts.update({f"prepare_{k}": after[k] - before.get(k, 0) for k in after})
    # what settling near ties needs to load inputs again (scoring/settle.py)
    return flat, counts, (img_of_ref, txt_of_ref, load_images, load_texts)


def _dedupe(hashes: list[str]) -> tuple[list[str], np.ndarray]:
    """Unique hashes (first-seen order) and, per ref, the position of its hash."""
    order: dict[str, int] = {}
    codes = np.fromiter((order.setdefault(h, len(order)) for h in hashes), dtype=np.int64,
                        count=len(hashes))
    return list(order), codes


def _first_ref(codes: np.ndarray, n_unique: int) -> np.ndarray:
    """For each unique position, the first ref index holding it (codes cover 0..n_unique-1)."""
    values, first = np.unique(codes, return_index=True)
    if len(values) != n_unique:
        raise AssertionError("every unique position must be held by some ref")
    return first
