"""Scene-hard vs edit-hard (CompoSET App. G.3) on frames with a planted scene effect."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _analysis_frames import planted_scene_frame
from foilbench.analysis.hardness import (
    cross_model_agreement,
    hard_sets,
    jaccard,
    overlap_table,
    residualise_edit_type,
    scene_margin_stats,
)
from foilbench.analysis.margins import add_margins
from foilbench.analysis.variance import success_variance_shares, two_way_decomposition


def test_scene_hard_sets_recover_the_planted_scenes():
    df, effect = planted_scene_frame()
    stats = scene_margin_stats(df)
    truth = {f"s{i}" for i in np.argsort(effect)[:10]}  # bottom quartile of 40 scenes
    for model, sets in hard_sets(stats).items():
        assert sets["scene_hard"] == truth, model
    agree = cross_model_agreement(stats)
    assert agree["mean_spearman"] > 0.95 and agree["mean_jaccard_scene_hard"] == 1.0
    assert agree["n_models"] == 3 and len(agree["spearman"]) == 3


def test_margins_from_scores_match_planted_values():
    df, _ = planted_scene_frame(n_scenes=4, n_edits=2)
    framed = add_margins(df.drop(columns="margin_i2t"))
    assert framed["margin_i2t"].to_numpy() == pytest.approx(df["margin_i2t"].to_numpy())


def test_variance_decomposition_attributes_the_planted_scene_effect():
    df, _ = planted_scene_frame()
    shares = two_way_decomposition(df)
    assert shares["share_scene"] > 0.9
    total = sum(v for k, v in shares.items() if k.startswith("share_"))
    assert total == pytest.approx(1.0)
    shifted, _ = planted_scene_frame(scene_sd=0.0, noise_sd=0.01, model_shift=0.5)
    assert two_way_decomposition(shifted)["share_model"] > 0.95


def test_decomposition_by_hand():
    # two scenes x two models, one item per scene: y = [[1, 3], [5, 7]] (scene x model)
    df = pd.DataFrame({"model": ["a", "b", "a", "b"], "item_id": ["x", "x", "y", "y"],
                       "scene_id": ["s", "s", "t", "t"], "v": [1.0, 3.0, 5.0, 7.0]})
    out = two_way_decomposition(df, "v")
    # grand 4; scene means 2, 6 -> SS 4*4 = 16; model means 3, 5 -> SS 4; total 20
    assert out["ss_total"] == 20.0
    assert out["share_scene"] == pytest.approx(16 / 20)
    assert out["share_model"] == pytest.approx(4 / 20)
    assert out["share_interaction"] == pytest.approx(0.0)
    assert out["share_within"] == pytest.approx(0.0)


def test_overlap_against_independence_by_hand():
    # 8 scenes: means 1..8 (scene-hard: mean <= Q1 = 2.75 -> s1, s2);
    # stds: s1 and s8 highest (>= Q3) -> edit-hard {s1, s8}; overlap 1/8
    stats = pd.DataFrame({"model": "m", "scene_id": [f"s{i}" for i in range(1, 9)],
                          "n": 5, "mean": np.arange(1.0, 9.0),
                          "std": [9, 1, 1, 1, 1, 1, 2, 9.0]})
    row = overlap_table(stats).iloc[0]
    assert row["n_scene_hard"] == 2 and row["n_edit_hard"] == 2 and row["n_both"] == 1
    assert row["overlap"] == 1 / 8 and row["expected_independent"] == 0.0625
    assert row["expected_from_sizes"] == pytest.approx((2 / 8) ** 2)


def test_jaccard():
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    assert jaccard(set(), set()) == 1.0


def test_edit_type_residualisation_removes_edit_means():
    df, _ = planted_scene_frame(scene_sd=0.0, noise_sd=0.01)
    df["margin_i2t"] += df["edit_type"].str[-1].astype(int) * 0.3  # edit-type effect only
    assert two_way_decomposition(df)["share_within"] > 0.9
    res = residualise_edit_type(df)
    means = res.groupby(["model", "edit_type"])["margin_i2t"].mean()
    assert np.abs(means).max() < 1e-12
    assert res["margin_i2t"].std() < 0.02


def test_success_variance_shares():
    # scene a: all correct, scene b: all wrong -> everything is between scenes
    df = pd.DataFrame({"model": "m", "scene_id": ["a", "a", "b", "b"], "i2t": [1, 1, 0, 0.0]})
    row = success_variance_shares(df, "i2t").iloc[0]
    assert row["between_scene"] == 1.0 and row["within_scene"] == 0.0
    df["i2t"] = [1, 0, 1, 0.0]  # each scene half right: everything within
    assert success_variance_shares(df, "i2t").iloc[0]["between_scene"] == 0.0
