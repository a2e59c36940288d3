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

import numpy as np
import pandas as pd
from PIL import Image

from foilbench.analysis.pixel_controls import load_for_audit, pair_pixel_metrics
from foilbench.analysis.text_controls import text_deviation
from foilbench.errors import BenchmarkError
from foilbench.kinds import kinds_where

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


def pixel_table(bench, side: int = 512) -> pd.DataFrame:
    """Pixel metrics for every unique (image_base, image_foil) pair of ``bench``."""
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
        rows.append({"image_base": base, "image_foil": foil,
                     **pair_pixel_metrics(load(base), load(foil))})
        cache.pop(foil, None)  # foils are seldom shared; bases are
    return pd.DataFrame(rows, columns=["image_base", "image_foil", *PIXEL_COLUMNS])


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


def audit_controls(bench, model=None, minilm: bool = True, pixels: bool = True) -> dict:
    """Per-item control metrics and their summary for a ``pair`` benchmark.

    ``model`` (an adapter or a model spec string) adds the similarity gap; ``minilm`` adds the
    MiniLM caption cosine; ``pixels=False`` skips image loading (text-only audit).
    """
    if not bench.item_kind.is_edit_pair:
        wanted = " or ".join(repr(k) for k in kinds_where(lambda kind: kind.is_edit_pair))
        raise BenchmarkError(f"audit controls needs a {wanted} benchmark; {bench.name!r} is "
                             f"{bench.kind!r}")
    items = bench.items.copy()
    if "tier" not in items.columns:
        items["tier"] = "all"
    text = text_deviation(items["caption_base"].tolist(), items["caption_foil"].tolist(),
                          minilm=minilm)
    for name, values in text.items():
        items[name] = values
    summary: dict = {"n_items": int(len(items))}
    if pixels:
        px = pixel_table(bench)
        items = items.merge(px, on=["image_base", "image_foil"], how="left")
        summary["pixels"] = {col: float(px[col].mean()) for col in PIXEL_COLUMNS}
        summary["pixels"]["n_pairs"] = int(len(px))
    text_cols = [c for c in ("token_levenshtein", "token_change_fraction", "minilm_cosine")
                 if c in items.columns]
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
