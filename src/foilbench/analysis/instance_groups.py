"""Instance-level scores when one benchmark instance spans several items (SugarCrepe++).

SugarCrepe++ (Dumpala et al., NeurIPS 2024 D&B, section 4 "Evaluation metrics"; the authors'
``VLMs/README.md``) pairs an image I with two positives P1, P2 and one negative N. The loader
stores one choice item per positive, ``[P1, N]`` and ``[P2, N]``, sharing ``instance_id``. The
paper scores the *instance*:

- ITT (image-to-text): ``s(I, P1) > s(I, N)  and  s(I, P2) > s(I, N)``, i.e. both items right.
  Given the per-item I2T R@1 outcomes this is their AND (:func:`group_all_correct`); the
  single-item accuracies are the paper's "Image-P1-Neg" / "Image-P2-Neg".
- TOT (text-only): with the text encoder alone,
  ``cos(P1, P2) > cos(P1, N)  and  cos(P1, P2) > cos(P2, N)`` (:func:`tot_outcomes`). It needs
  text embeddings, not image scores, so :func:`tot_from_embedder` takes the model's
  ``embed_texts``.

All comparisons are strict: a tie is a failure and is counted. Accuracies come with Wilson 95%
intervals over instances (the unit the paper counts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from foilbench.analysis.frame import present, require
from foilbench.stats import wilson_ci


def group_all_correct(df: pd.DataFrame, metric: str = "r1", group: str = "instance_id",
                      size: int | None = 2) -> pd.DataFrame:
    """One row per (model, instance): ``all_correct`` = product of the items' outcomes.

    For 0/1 outcomes the product is the AND the paper scores (ITT for SugarCrepe++); for API
    models' 0.5 outcomes it is the chance both would be right if the two asks were independent.
    Columns: model (when present), ``group``, metadata shared by the instance (edit_type,
    operation, category when present), ``n_items``, ``all_correct``, ``any_tie`` (an item's
    ``tie_<metric>``; False without that column). Instances with other than ``size`` items
    (``size=None`` accepts any) are left out and counted in ``.attrs["incomplete"]``.
    """
    require(df, [group, metric], f"instance scores of {metric!r}")
    df = df[df[metric].notna()]
    keys = [*present(df, ["model"]), group]
    tie_col = f"tie_{metric}"
    work = df.assign(_outcome=df[metric].astype(float),
                     _tie=df[tie_col].astype(bool) if tie_col in df.columns else False)
    grouped = work.groupby(keys, sort=True, dropna=False)
    out = grouped.agg(n_items=("_outcome", "size"), all_correct=("_outcome", "prod"),
                      any_tie=("_tie", "any"))
    for col in present(df, ["edit_type", "operation", "category"]):
        out[col] = grouped[col].first()
    out = out.reset_index()
    incomplete = 0
    if size is not None:
        keep = out["n_items"] == size
        incomplete = int((~keep).sum())
        out = out[keep].reset_index(drop=True)
    out.attrs["incomplete"] = incomplete
    return out


def accuracy_table(instances: pd.DataFrame, outcome: str,
                   by: Sequence[str] = ("edit_type",)) -> pd.DataFrame:
    """Per model (and ``by`` value, plus an ``all`` row): n instances, accuracy = mean
    ``outcome``, Wilson 95% interval, and ties (instances with ``any_tie``)."""
    require(instances, [outcome], f"accuracy of {outcome!r}")
    models = present(instances, ["model"])
    by = present(instances, by)
    rows = []
    for cols in ([], by) if by else ([],):  # the overall row first, then one per by-value
        keys = [*models, *cols]
        groups = instances.groupby(keys, sort=True, dropna=False) if keys else [((), instances)]
        for values, sub in groups:
            label = dict(zip(keys, values if isinstance(values, tuple) else (values,),
                             strict=True))
            label.update({c: "all" for c in by if c not in cols})
            y = sub[outcome].to_numpy(dtype=float)
            lo, hi = wilson_ci(float(y.sum()), len(y))
            ties = int(sub["any_tie"].sum()) if "any_tie" in sub.columns else 0
            rows.append({**label, "n": len(y), "accuracy": float(y.mean()), "ci_low": lo,
                         "ci_high": hi, "ties": ties})
    return pd.DataFrame(rows)


def itt_accuracy(df: pd.DataFrame, metric: str = "r1",
                 by: Sequence[str] = ("edit_type",)) -> pd.DataFrame:
    """SugarCrepe++ ITT accuracy from per-item I2T outcomes (both positives above N)."""
    return accuracy_table(group_all_correct(df, metric), "all_correct", by)


def tot_outcomes(sim_p1_p2: np.ndarray, sim_p1_n: np.ndarray,
                 sim_p2_n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SugarCrepe++ TOT per instance: ``sim(P1,P2) > sim(P1,N) and sim(P1,P2) > sim(P2,N)``.

    Returns ``(correct, tie)`` boolean arrays; ``tie`` marks instances that failed only because
    ``sim(P1,P2)`` equalled the larger positive-negative similarity.
    """
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (sim_p1_p2, sim_p1_n, sim_p2_n))
    rival = np.maximum(b, c)
    return a > rival, a == rival


def cosine_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two (n, d) arrays."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1)
    return np.einsum("nd,nd->n", x, y) / np.where(norms == 0, 1.0, norms)


def instance_triplets(items: pd.DataFrame, group: str = "instance_id") -> pd.DataFrame:
    """(P1, P2, N) per instance from SugarCrepe++ items (``positive`` p1/p2, captions [pos, neg]).

    One row per instance with both items (model rows are de-duplicated), keeping edit_type.
    """
    require(items, [group, "positive", "captions"], "SugarCrepe++ triplets")
    one = items.drop_duplicates([group, "positive"])
    pos = one.assign(_pos=[c[0] for c in one["captions"]], _neg=[c[1] for c in one["captions"]])
    wide = pos.pivot(index=group, columns="positive", values="_pos")
    if not {"p1", "p2"} <= set(wide.columns):
        raise ValueError(f"SugarCrepe++ triplets need items with positive p1 and p2; found "
                         f"{sorted(map(str, wide.columns))}")
    wide = wide.dropna(subset=["p1", "p2"])
    neg = pos.groupby(group)["_neg"].first()
    out = pd.DataFrame({group: wide.index, "p1": wide["p1"].to_numpy(),
                        "p2": wide["p2"].to_numpy(),
                        "negative": neg.reindex(wide.index).to_numpy()})
    if "edit_type" in pos.columns:
        out["edit_type"] = pos.groupby(group)["edit_type"].first().reindex(wide.index).to_numpy()
    return out


def tot_from_embedder(triplets: pd.DataFrame,
                      embed_texts: Callable[[list[str]], np.ndarray]) -> pd.DataFrame:
    """TOT per instance with a text embedder (a dual adapter's ``embed_texts``).

    Adds ``sim_p1_p2``, ``sim_p1_n``, ``sim_p2_n`` (cosine), ``tot`` (0/1) and ``any_tie``.
    Each distinct caption is embedded once.
    """
    require(triplets, ["p1", "p2", "negative"], "TOT")
    texts = list(dict.fromkeys([*triplets["p1"], *triplets["p2"], *triplets["negative"]]))
    emb = np.asarray(embed_texts(texts), dtype=np.float64)
    if emb.shape[0] != len(texts):
        raise ValueError(f"embed_texts returned {emb.shape[0]} rows for {len(texts)} texts")
    index = {t: i for i, t in enumerate(texts)}
    e1, e2, en = (emb[[index[t] for t in triplets[c]]] for c in ("p1", "p2", "negative"))
    out = triplets.copy()
    out["sim_p1_p2"], out["sim_p1_n"], out["sim_p2_n"] = (
        cosine_rows(e1, e2), cosine_rows(e1, en), cosine_rows(e2, en))
    correct, tie = tot_outcomes(out["sim_p1_p2"], out["sim_p1_n"], out["sim_p2_n"])
    out["tot"], out["any_tie"] = correct.astype(float), tie
    return out
