"""Dataset-control audit of any ``pair`` benchmark (CompoSET section 4 and App. F).

Three questions, each answered per item and summarised:
1. Is the visual change small and local? Pixel metrics per unique (base, foil) image pair
   (:mod:`foilbench.analysis.pixel_controls`).
2. Is the textual change small, and does it shrink as captions grow? Caption deviation per
   verbosity tier (:mod:`foilbench.analysis.text_controls`).
3. Are foils "near" their base for a model? The within-pair vs across-scene image similarity
   gap (:func:`similarity_gap`), given a dual-encoder adapter.

``audit_controls(bench)`` returns ``{"items": DataFrame, "summary": dict}``. The CLI command
``foilbench audit controls`` wraps it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from foilbench.analysis.pixel_controls import load_for_audit, pair_pixel_metrics
from foilbench.analysis.text_controls import text_deviation
from foilbench.errors import BenchmarkError
from foilbench.kinds import kinds_where
from foilbench.models.text_models import minilm_name

PIXEL_COLUMNS = ("mae", "l2", "linf", "fraction_affected", "ssim", "ms_ssim")


def _unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def similarity_gap(base_emb: np.ndarray, foil_emb: np.ndarray, scene_ids) -> dict[str, float]:
    """Within-pair minus across-scene image similarity.

    within = (1/n) sum_i cos(b_i, f_i);
    across = (1/n) sum_i (1/(S-1)) sum_{s != s_i} cos(b_i, u_s), where u_s is the embedding of
    scene s's base image (its first pair's base) and S the number of scenes;
    gap = within - across. A controlled benchmark has foils far closer to their base than other
    scenes are (a large gap); a small gap means a "foil" is as different as another scene.
    """
    b, f = _unit_rows(base_emb), _unit_rows(foil_emb)
    scenes = pd.Index(pd.unique(np.asarray(scene_ids)))
    if len(scenes) < 2:
        raise ValueError(f"the across-scene similarity needs at least two scenes, got "
                         f"{len(scenes)}")
    codes = scenes.get_indexer(np.asarray(scene_ids))
    first = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    sims = b @ b[first].T  # (n pairs, S scenes)
    own = sims[np.arange(len(codes)), codes]
    across = (sims.sum(axis=1) - own) / (len(scenes) - 1)
    within = np.einsum("nd,nd->n", b, f)
    return {"within": float(within.mean()), "across": float(across.mean()),
            "gap": float(within.mean() - across.mean()), "n_pairs": int(len(codes)),
            "n_scenes": int(len(scenes))}


def pixel_table(bench, side: int = 512, learned: dict | None = None) -> pd.DataFrame:
    """Pixel metrics for every unique (image_base, image_foil) pair of ``bench``, plus one
    column per ``learned`` distance (name -> callable on two 512 x 512 arrays in [0, 1];
    :mod:`foilbench.analysis.image_distances`)."""
    learned = learned or {}
    from tqdm.auto import tqdm

    pairs = bench.items[["image_base", "image_foil"]].drop_duplicates()
    cache: dict[str, np.ndarray] = {}

    def load(rel: str) -> np.ndarray:
        if rel not in cache:
            with Image.open(bench.image_path(rel)) as im:
                cache[rel] = load_for_audit(im, side)
        return cache[rel]

    rows = []
    for base, foil in tqdm(list(pairs.itertuples(index=False)), desc="pixel controls",
                           unit="pair", leave=False):
        a, b = load(base), load(foil)
        rows.append({"image_base": base, "image_foil": foil, **pair_pixel_metrics(a, b),
                     **{name: fn(a, b) for name, fn in learned.items()}})
        cache.pop(foil, None)  # foils are seldom shared; bases are
    return pd.DataFrame(rows, columns=["image_base", "image_foil", *PIXEL_COLUMNS, *learned])


def _embed_unique(model, bench, refs: list[str]) -> dict[str, np.ndarray]:
    unique = list(dict.fromkeys(refs))
    images = []
    for rel in unique:
        with Image.open(bench.image_path(rel)) as im:
            images.append(im.convert("RGB"))
    emb = np.asarray(model.embed_images(images), dtype=np.float64)
    return dict(zip(unique, emb, strict=True))


def _resolve(model):
    if isinstance(model, str):
        from foilbench.models.registry import resolve_model

        model = resolve_model(model)
    if not hasattr(model, "embed_images"):
        raise ValueError("the similarity-gap audit needs a dual encoder with embed_images; "
                         f"got {type(model).__name__}")
    return model


def learned_distances(lpips: str | None = None, lpips_net: str = "alex",
                      dinov2: str | None = None) -> dict:
    """name -> distance for the learned image metrics named with local weights (CompoSET
    App. F.1: LPIPS, DINOv2-base CLS cosine); errors name the missing file before any image
    is read."""
    from foilbench.analysis.image_distances import Dinov2Cosine, LpipsDistance

    out = {}
    if lpips is not None:
        d = LpipsDistance(lpips, lpips_net)
        out[d.name] = d
    if dinov2 is not None:
        d = Dinov2Cosine(dinov2)
        out[d.name] = d
    return out


def audit_controls(bench, model=None, minilm: bool = True, pixels: bool = True,
                   text_model=None, lpips: str | None = None, lpips_net: str = "alex",
                   dinov2: str | None = None) -> dict:
    """Per-item control metrics and their summary for a ``pair`` benchmark.

    ``model`` (an adapter or a model spec string) adds the similarity gap; ``text_model`` (a
    local all-mpnet-base-v2 directory, the paper's encoder) adds ``sentence_cosine``, else
    ``minilm`` adds the fallback MiniLM cosine; ``lpips`` (local backbone weights) and
    ``dinov2`` (a local model directory) add those image metrics; ``pixels=False`` skips image
    loading (text-only audit).
    """
    if not bench.item_kind.is_edit_pair:
        wanted = " or ".join(repr(k) for k in kinds_where(lambda kind: kind.is_edit_pair))
        raise BenchmarkError(f"audit controls needs a {wanted} benchmark; {bench.name!r} is "
                             f"{bench.kind!r}")
    learned = learned_distances(lpips, lpips_net, dinov2) if pixels else {}
    if not pixels and (lpips or dinov2):
        raise BenchmarkError("LPIPS and DINOv2 distances need the images (drop --no-pixels)")
    items = bench.items.copy()
    if "tier" not in items.columns:
        items["tier"] = "all"
    encoder = None
    if text_model is not None:
        from foilbench.analysis.text_encoders import SentenceEncoder

        encoder = (SentenceEncoder(text_model) if isinstance(text_model, (str, Path))
                   else text_model)
    text = text_deviation(items["caption_base"].tolist(), items["caption_foil"].tolist(),
                          minilm=minilm, text_model=encoder)
    for name, values in text.items():
        items[name] = values
    summary: dict = {"n_items": int(len(items))}
    if encoder is not None:
        summary["sentence_model"] = {**encoder.describe(), "column": "sentence_cosine"}
    elif minilm:
        summary["sentence_model"] = {"name": minilm_name(), "column": "minilm_cosine",
                                     "paper_model": False,
                                     "note": "fallback; CompoSET App. F.2 uses "
                                             "all-mpnet-base-v2 (--text-model DIR)"}
    if pixels:
        px = pixel_table(bench, learned=learned)
        items = items.merge(px, on=["image_base", "image_foil"], how="left")
        summary["pixels"] = {col: float(px[col].mean()) for col in [*PIXEL_COLUMNS, *learned]}
        summary["pixels"]["n_pairs"] = int(len(px))
        # §4 compares medians too: "mean ... 0.083 on CompoSET (median 0.048)"
        summary["pixels"]["fraction_affected_median"] = float(px["fraction_affected"].median())
        if "edit_type" in items.columns:
            per_pair = items.drop_duplicates(["image_base", "image_foil"])
            summary["fraction_affected_by_edit_type"] = {
                str(k): float(v) for k, v in
                per_pair.groupby("edit_type")["fraction_affected"].median().items()}
        if learned:
            summary["learned_image_metrics"] = {name: getattr(d, "source", "")
                                                for name, d in learned.items()}
    text_cols = [c for c in ("token_levenshtein", "token_change_fraction", "sentence_cosine",
                             "minilm_cosine") if c in items.columns]
    by_tier = items.groupby("tier", sort=False)[text_cols].mean()
    summary["text_by_tier"] = {str(t): {c: float(v) for c, v in row.items()}
                               for t, row in by_tier.iterrows()}
    tiers = summary["text_by_tier"]
    if all(t in tiers for t in ("short", "medium", "long")):
        fr = [tiers[t]["token_change_fraction"] for t in ("short", "medium", "long")]
        summary["token_change_decreasing"] = bool(fr[0] > fr[1] > fr[2])  # strict, CompoSET F
    if model is not None:
        adapter = _resolve(model)
        pairs = items.drop_duplicates(["image_base", "image_foil"])
        emb = _embed_unique(adapter, bench, [*pairs["image_base"], *pairs["image_foil"]])
        scenes = pairs["scene_id"] if "scene_id" in pairs.columns else pairs["image_base"]
        summary["similarity_gap"] = similarity_gap(
            np.stack([emb[r] for r in pairs["image_base"]]),
            np.stack([emb[r] for r in pairs["image_foil"]]), scenes.to_numpy())
    return {"items": items, "summary": summary}
