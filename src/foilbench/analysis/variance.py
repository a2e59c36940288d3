"""Variance decompositions behind the scene-vs-edit question (CompoSET App. G.3).

All of them are computed within one caption tier (see :mod:`foilbench.analysis.hardness`);
the value is the paper's I2T margin (``margin_i2t``) unless stated.

Paper's quantities:

* :func:`scene_model_decomposition` -- "A two-way decomposition attributes 53% of per-scene
  mean-margin variance to scene identity and 10% to model identity, leaving 37% to their
  interaction." The data are the per-scene mean margins, one per (scene, model) cell (S scenes
  x M models, every model on every scene); with the cell value y_sm:

      SS_scene = M sum_s (ybar_s. - ybar..)^2      SS_model = S sum_m (ybar_.m - ybar..)^2
      SS_inter = sum_sm (y_sm - ybar_s. - ybar_.m + ybar..)^2
      SS_scene + SS_model + SS_inter = sum_sm (y_sm - ybar..)^2,  shares sum to 100%.

* :func:`edit_type_shares` -- "edit type alone explains 3.7% of margin variance, while the
  scene x edit-type interaction explains a further 16%". Per model over the per-foil margins
  y (one per foil): share_edit_type = SS_edit / SS_total with SS_edit = sum_e n_e (ybar_e -
  ybar)^2; share_scene_x_edit = (SS_cells - SS_additive) / SS_total, where SS_cells is the
  variance explained by the (scene, edit type) cell means and SS_additive that of the
  least-squares fit scene + edit type (main effects only). The paper does not say whether it
  pooled models; foilbench reports each model and the mean over models.

* :func:`foil_success_shares` -- "94.7% of per-foil success-rate variance lies within scenes;
  5.3% lies between." A foil's success rate is the mean over models of its 0/1 outcome (the
  paper pools the 22 encoders; it does not name the metric, foilbench defaults to I2T, the
  direction its margins use); between = sum_s n_s (rbar_s - rbar)^2 / sum_f (r_f - rbar)^2,
  within = 1 - between.

foilbench's variants, beside them:

* :func:`two_way_decomposition` -- the same two-way split on the per-(foil, model) values
  rather than on per-scene means, which adds a within-scene (foil) share:
  SS_total = SS_scene + SS_model + SS_interaction + SS_within, with M models, N items, n_s
  items of scene s (proportional design, so the sums of squares are orthogonal):
  SS_scene = sum_s M n_s (ybar_s - ybar)^2, SS_model = sum_m N (ybar_m - ybar)^2,
  SS_inter = sum_{s,m} n_s (ybar_sm - ybar_s - ybar_m + ybar)^2, SS_within = sum (y -
  ybar_sm)^2.
* :func:`success_variance_shares` -- between/within shares per model on its 0/1 outcomes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.analysis.frame import require
from foilbench.analysis.hardness import require_one_tier

FOIL_KEYS = ("foil_id", "image_foil", "item_id")


def common_items(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of the items every model has (the decomposition needs a proportional design)."""
    n_models = df["model"].nunique()
    counts = df.groupby("item_id")["model"].nunique()
    return df[df["item_id"].isin(counts.index[counts == n_models])]


def _shares(ss: dict[str, float], total: float) -> dict[str, float]:
    return {f"share_{k}": float(v / total) if total > 0 else float("nan") for k, v in ss.items()}


def scene_model_decomposition(df: pd.DataFrame, value: str = "margin_i2t") -> dict[str, float]:
    """The paper's two-way decomposition of per-scene mean margins (module docstring): shares
    of scene, model and interaction (summing to 1) over the scenes every model saw."""
    require(df, ["model", "scene_id", value], "scene x model decomposition")
    require_one_tier(df, "the scene x model decomposition")
    cells = df.groupby(["scene_id", "model"])[value].mean().unstack("model").dropna()
    if cells.shape[0] < 2 or cells.shape[1] < 2:
        raise ValueError(f"scene x model decomposition needs at least 2 scenes and 2 models "
                         f"seen together; got {cells.shape[0]} scenes x {cells.shape[1]} models")
    y = cells.to_numpy(float)
    grand = y.mean()
    scene = y.mean(axis=1, keepdims=True)
    model = y.mean(axis=0, keepdims=True)
    n_s, n_m = y.shape
    ss = {"scene": n_m * float(np.sum((scene - grand) ** 2)),
          "model": n_s * float(np.sum((model - grand) ** 2)),
          "interaction": float(np.sum((y - scene - model + grand) ** 2))}
    total = float(np.sum((y - grand) ** 2))
    return {**_shares(ss, total), "ss_total": total, "n_scenes": n_s, "n_models": n_m}


def _explained(y: np.ndarray, *factors: np.ndarray) -> float:
    """Sum of squares explained by the least-squares fit on the factors' dummies (main
    effects, with intercept)."""
    cols = [np.ones((len(y), 1))]
    for f in factors:
        codes = pd.factorize(f)[0]
        dummies = np.eye(codes.max() + 1)[codes][:, 1:]
        cols.append(dummies)
    X = np.hstack(cols)
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    fitted = X @ beta
    return float(np.sum((fitted - y.mean()) ** 2))


def edit_type_shares(df: pd.DataFrame, value: str = "margin_i2t") -> pd.DataFrame:
    """Per model (and a ``mean`` row over models): the edit type's share of margin variance
    and the scene x edit-type interaction's further share (module docstring)."""
    require(df, ["model", "scene_id", "edit_type", value], "edit-type shares")
    require_one_tier(df, "the edit-type shares")
    rows = []
    for model, sub in df.groupby("model", sort=True):
        y = sub[value].to_numpy(float)
        total = float(np.sum((y - y.mean()) ** 2))
        scene, edit = sub["scene_id"].astype(str), sub["edit_type"].astype(str)
        ss_edit = _explained(y, edit.to_numpy())
        ss_add = _explained(y, scene.to_numpy(), edit.to_numpy())
        ss_cells = _explained(y, (scene + "\x1f" + edit).to_numpy())
        rows.append({"model": model, "n": len(y),
                     "share_edit_type": ss_edit / total if total > 0 else np.nan,
                     "share_scene_x_edit": (ss_cells - ss_add) / total if total > 0 else np.nan})
    out = pd.DataFrame(rows)
    if len(out):
        mean = {"model": "mean", "n": int(out["n"].sum()),
                "share_edit_type": float(out["share_edit_type"].mean()),
                "share_scene_x_edit": float(out["share_scene_x_edit"].mean())}
        out = pd.concat([out, pd.DataFrame([mean])], ignore_index=True)
    return out


def foil_key(df: pd.DataFrame) -> str:
    """The column naming a foil: ``foil_id``, else ``image_foil``, else ``item_id``."""
    return next(c for c in FOIL_KEYS if c in df.columns)


def foil_success_shares(df: pd.DataFrame, metric: str = "i2t") -> dict[str, float]:
    """The paper's within- vs between-scene shares of per-foil success-rate variance (the
    rate of a foil = mean of ``metric`` over the models that scored it)."""
    key = foil_key(df)
    require(df, ["scene_id", metric], "per-foil success shares")
    require_one_tier(df, "the per-foil success shares")
    foils = df.groupby(key).agg(scene_id=("scene_id", "first"), rate=(metric, "mean"))
    r = foils["rate"].to_numpy(float)
    scene_mean = foils.groupby("scene_id")["rate"].transform("mean").to_numpy()
    total = float(np.sum((r - r.mean()) ** 2))
    between = float(np.sum((scene_mean - r.mean()) ** 2)) / total if total > 0 else np.nan
    return {"between_scene": between, "within_scene": 1 - between, "n_foils": len(r),
            "n_scenes": int(foils["scene_id"].nunique()),
            "n_models": int(df["model"].nunique()) if "model" in df.columns else 1,
            "foil_key": key}


def two_way_decomposition(df: pd.DataFrame, value: str = "margin_i2t") -> dict[str, float]:
    """foilbench's per-foil variant: shares of scene, model, scene x model interaction and
    within-scene variation of the per-(item, model) values (module docstring)."""
    require(df, ["model", "scene_id", "item_id", value], "variance decomposition")
    d = common_items(df)
    if d.duplicated(["model", "item_id"]).any():
        raise ValueError("variance decomposition: an item appears twice for one model")
    y = d[value].to_numpy(float)
    grand = y.mean()
    scene_mean = d.groupby("scene_id")[value].transform("mean").to_numpy()
    model_mean = d.groupby("model")[value].transform("mean").to_numpy()
    cell_mean = d.groupby(["scene_id", "model"])[value].transform("mean").to_numpy()
    ss = {"scene": np.sum((scene_mean - grand) ** 2), "model": np.sum((model_mean - grand) ** 2),
          "interaction": np.sum((cell_mean - scene_mean - model_mean + grand) ** 2),
          "within": np.sum((y - cell_mean) ** 2)}
    total = np.sum((y - grand) ** 2)
    out = _shares(ss, total)
    out.update({"ss_total": float(total), "n_rows": int(len(y)),
                "n_items": int(d["item_id"].nunique()), "n_models": int(d["model"].nunique()),
                "n_scenes": int(d["scene_id"].nunique())})
    return out


def success_variance_shares(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """foilbench's per-model variant: between-scene and within-scene shares of the variance
    of ``metric``'s 0/1 outcomes."""
    require(df, ["model", "scene_id", metric], "success variance shares")
    rows = []
    for model, sub in df.groupby("model", sort=True):
        y = sub[metric].to_numpy(float)
        scene_mean = sub.groupby("scene_id")[metric].transform("mean").to_numpy()
        total = np.sum((y - y.mean()) ** 2)
        between = np.sum((scene_mean - y.mean()) ** 2) / total if total > 0 else float("nan")
        rows.append({"model": model, "n": len(y), "n_scenes": sub["scene_id"].nunique(),
                     "between_scene": float(between), "within_scene": float(1 - between)})
    return pd.DataFrame(rows)
