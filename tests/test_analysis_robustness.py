"""CompoSET App. G.3 robustness statistics on planted data with hand-computed answers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from foilbench.analysis import robustness as r


def _stats(means: dict[str, list[float]]) -> pd.DataFrame:
    rows = [{"model": m, "scene_id": f"s{i}", "n": 2, "mean": v, "std": 1.0}
            for m, vals in means.items() for i, v in enumerate(vals)]
    return pd.DataFrame(rows)


def test_scene_hard_counts_majority_and_none():
    # 8 scenes, q = 0.25: the cut lies between the 2nd and 3rd lowest means, so the two
    # lowest scenes of each model are scene-hard. A: s0,s1; B: s0,s2; C: s3,s4.
    stats = _stats({"A": [0, 1, 2, 3, 4, 5, 6, 7],
                    "B": [0, 5, 1, 6, 7, 2, 3, 4],
                    "C": [5, 6, 7, 0, 1, 2, 3, 4]})
    out = r.scene_hard_counts(stats)
    assert out["min_models"] == 2  # ceil(3 / 2), the paper's "11 of the 22" rule
    assert out["per_scene"] == {"s0": 2, "s1": 1, "s2": 1, "s3": 1, "s4": 1, "s5": 0,
                                "s6": 0, "s7": 0}
    assert out["n_scenes_hard_for_min_models"] == 1 and out["n_scenes_hard_for_none"] == 3
    assert r.scene_hard_counts(stats, min_models=1)["n_scenes_hard_for_min_models"] == 5
    with pytest.raises(ValueError, match="min_models"):
        r.scene_hard_counts(stats, min_models=4)


def test_family_agreement_same_vs_cross():
    up, down = [0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0]
    stats = _stats({"A": up, "B": up, "C": down})
    out = r.family_agreement(stats, {"A": "x", "B": "x", "C": "y"})
    assert out == {"same_family_spearman": 1.0, "n_same_pairs": 1,
                   "cross_family_spearman": -1.0, "n_cross_pairs": 2}
    with pytest.raises(ValueError, match="no family given for model.*C"):
        r.family_agreement(stats, {"A": "x", "B": "x"})


def _items(spec: dict[str, list[tuple[str, float]]], model: str = "M") -> pd.DataFrame:
    return pd.DataFrame([{"model": model, "scene_id": s, "edit_type": e, "margin_i2t": v}
                         for s, foils in spec.items() for e, v in foils])


def test_edit_hard_stability_by_hand():
    # e1 margins 0 everywhere, e2 margins 1, 2, 3, 10: the scene std is |e2| / sqrt 2 (ranks
    # 1, 2, 3, 4). Removing edit-type means (e1: 0, e2: 4) leaves e2 at -3, -2, -1, 6: stds
    # rank 3, 2, 1, 4, so rho = 1 - 6 (4 + 0 + 4 + 0) / (4 (16 - 1)) = 0.2. Edit-hard (std >=
    # Q3) is s3 alone in both, so the overlap is 1.
    df = _items({"s0": [("e1", 0), ("e2", 1)], "s1": [("e1", 0), ("e2", 2)],
                 "s2": [("e1", 0), ("e2", 3)], "s3": [("e1", 0), ("e2", 10)]})
    out = r.edit_hard_stability(df).set_index("model")
    assert out.loc["M", "spearman"] == pytest.approx(0.2)
    assert out.loc["M", "n_edit_hard"] == 1 and out.loc["M", "top_quartile_overlap"] == 1.0
    assert out.loc["mean", "spearman"] == pytest.approx(0.2)


def test_least_local_mann_whitney_exact_p():
    # scenes with swap_role have stds 3/sqrt2, 4/sqrt2; without: 1/sqrt2, 2/sqrt2. U = 4 (every
    # pair with > without); exact one-sided p = P(U >= 4) = 1 / C(4, 2) = 1/6.
    df = _items({"a": [("swap_role", 0), ("e1", 3)], "b": [("modify_pose", 0), ("e1", 4)],
                 "c": [("e1", 0), ("e2", 1)], "d": [("e1", 0), ("e2", 2)]})
    out = r.least_local_mann_whitney(df)
    assert (out["n_with"], out["n_without"], out["u"]) == (2, 2, 4.0)
    assert out["p_value"] == pytest.approx(1 / 6)
    assert out["median_std_with"] == pytest.approx(3.5 / math.sqrt(2))
    with pytest.raises(ValueError, match="with and without"):
        r.least_local_mann_whitney(df[df["scene_id"].isin(["c", "d"])])


def test_readings_differ_where_planted_and_ours_is_pinned():
    """Issue 41, item 7: with identical sets every reading of "top-quartile overlap" gives 1;
    here they differ. raw = {s1, s2, s3, s4}, resid = {s1, s2, s5}: ours |A & B| / |A| = 0.5,
    Jaccard 2/5 = 0.4, |A & B| / |B| = 2/3."""
    a, b = {"s1", "s2", "s3", "s4"}, {"s1", "s2", "s5"}
    assert r.top_quartile_overlap(a, b) == 0.5
    assert len(a & b) / len(a | b) == 0.4 and len(a & b) / len(b) == pytest.approx(2 / 3)
    assert r.top_quartile_overlap(a, a) == 1.0 and math.isnan(r.top_quartile_overlap(set(), b))


def test_scene_hard_threshold_is_at_least_half_not_a_majority():
    """G.3's "at least 11 of the 22 encoders" is read as at least half (ceil(M / 2)); with
    M = 4 a scene hard for exactly 2 models counts, which a majority reading (> M / 2)
    would not. 8 scenes, the two lowest means of each model are scene-hard: s0 is hard for
    A and B only."""
    stats = _stats({"A": [0, 1, 2, 3, 4, 5, 6, 7], "B": [0, 7, 1, 6, 5, 4, 3, 2],
                    "C": [7, 6, 5, 0, 1, 2, 3, 4], "D": [6, 5, 7, 4, 3, 2, 0, 1]})
    out = r.scene_hard_counts(stats)
    assert out["min_models"] == 2 and out["per_scene"]["s0"] == 2
    majority = sum(v > 4 / 2 for v in out["per_scene"].values())
    assert out["n_scenes_hard_for_min_models"] == 1 and majority == 0
