"""Synthetic per-item results frames with planted effects, for the analysis tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def pair_scores_from_margins(i2t_margin: np.ndarray, t2i_margin: np.ndarray) -> list:
    """Scores [s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)] with exactly the given margins:
    s(c0,i0) = s(c1,i1) = 0.5; both I2T gaps equal m1, both T2I gaps equal m2."""
    return [np.array([0.5, 0.5 - t, 0.5 - i, 0.5]) for i, t in zip(i2t_margin, t2i_margin,
                                                                   strict=True)]


def planted_scene_frame(n_scenes=40, n_edits=8, models=("m1", "m2", "m3"), seed=0,
                        scene_sd=0.2, noise_sd=0.03, model_shift=0.0):
    """I2T margins = scene effect (shared by all models) + small noise; the scene effect
    dominates, so the scene-hard sets agree across models."""
    rng = np.random.default_rng(seed)
    scene_effect = rng.normal(0, scene_sd, n_scenes)
    rows = []
    for mi, model in enumerate(models):
        for s in range(n_scenes):
            for e in range(n_edits):
                m = scene_effect[s] + mi * model_shift + rng.normal(0, noise_sd)
                rows.append({"model": model, "item_id": f"s{s}/e{e}", "scene_id": f"s{s}",
                             "edit_type": f"edit{e}", "margin_i2t": m})
    df = pd.DataFrame(rows)
    df["scores"] = pair_scores_from_margins(df["margin_i2t"].to_numpy(),
                                            df["margin_i2t"].to_numpy())
    df["i2t"] = (df["margin_i2t"] > 0).astype(float)
    df["t2i"] = df["i2t"]
    return df, scene_effect
