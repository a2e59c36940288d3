"""CompoSET as the paper states it: App. G.3 margins and decompositions, App. G.4 / §3 API
rules. Each test quotes the passage it follows; expectations are computed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis.hardness import (
    jaccard_null,
    jaccard_null_ratio,
    scene_margin_stats,
    split_tiers,
)
from foilbench.analysis.margins import add_margins, margin_summary
from foilbench.analysis.variance import (
    edit_type_shares,
    foil_success_shares,
    scene_model_decomposition,
)
from foilbench.kinds import KINDS
from foilbench.kinds.pair import pair_margins


def test_margin_is_sim_img_a_cap_a_minus_sim_img_a_cap_b():
    """App. G.3: "we compute the I2T margin as sim(img_a, cap_a) - sim(img_a, cap_b) and the
    analogous T2I margin." a = the base. The foil image prefers the wrong caption here, so the
    I2T decision fails while the paper's margin is positive; foilbench's decision margin
    (the smaller comparison) is negative."""
    # [caption, image]: s(c0,i0)=.9 s(c0,i1)=.6 s(c1,i0)=.4 s(c1,i1)=.5
    m = pair_margins(np.array([[[0.9, 0.6], [0.4, 0.5]]]))
    assert m["i2t"][0] == pytest.approx(0.9 - 0.4)  # sim(i0,c0) - sim(i0,c1)
    assert m["t2i"][0] == pytest.approx(0.9 - 0.6)  # sim(i0,c0) - sim(i1,c0)
    assert m["i2t_decision"][0] == pytest.approx(min(0.5, 0.5 - 0.6))  # -0.1
    assert m["t2i_decision"][0] == pytest.approx(min(0.3, 0.5 - 0.4))  # 0.1
    df = pd.DataFrame({"model": "m", "i2t": [0.0], "t2i": [1.0],
                       "scores": [np.array([0.9, 0.6, 0.4, 0.5])]})
    table = margin_summary(df)
    wrong = table[(table.direction == "i2t") & (table.decision == "wrong")].iloc[0]
    assert wrong["n"] == 1 and wrong["mean"] == pytest.approx(0.5)  # split by the outcome


def test_scene_std_within_a_tier():
    """App. G.3: "For each model and scene, we compute the mean and standard deviation of the
    I2T margin across the scene's ~22 foils" -- each foil once, i.e. within one tier."""
    df = pd.DataFrame({"model": "m", "scene_id": "s", "tier": ["short"] * 2 + ["long"] * 2,
                       "margin_i2t": [0.1, 0.3, 0.5, 0.7]})
    with pytest.raises(ValueError, match="within one caption tier"):
        scene_margin_stats(df)
    stds = {t: scene_margin_stats(part)["std"].item() for t, part in split_tiers(df)}
    assert stds == pytest.approx({"short": np.std([0.1, 0.3], ddof=1),
                                  "long": np.std([0.5, 0.7], ddof=1)})  # 0.1414 each
    pooled = scene_margin_stats(df, pool_tiers=True)["std"].item()
    assert pooled == pytest.approx(np.std([0.1, 0.3, 0.5, 0.7], ddof=1))  # 0.2582


def planted_cells(cells: dict[tuple[str, str], float], spread: float = 0.2) -> pd.DataFrame:
    """Two foils per (scene, model) at mean +- spread: the per-scene means are the cells."""
    rows = []
    for (scene, model), mean in cells.items():
        for k, d in enumerate((-spread, spread)):
            rows.append({"model": model, "scene_id": scene, "item_id": f"{scene}/{k}",
                         "tier": "short", "margin_i2t": mean + d})
    return pd.DataFrame(rows)


def test_scene_model_decomposition_by_hand():
    """App. G.3: "A two-way decomposition attributes 53% of per-scene mean-margin variance to
    scene identity and 10% to model identity, leaving 37% to their interaction." Planted
    per-scene means (scene x model) [[1, 2], [3, 6], [5, 7]]: grand 4, scene means 1.5, 4.5, 6
    -> SS 2 (6.25 + 0.25 + 4) = 21; model means 3, 5 -> SS 3 (1 + 1) = 6; total 28;
    interaction 28 - 21 - 6 = 1 (residuals +-0.5 in the first two scenes)."""
    cells = {("s1", "a"): 1, ("s1", "b"): 2, ("s2", "a"): 3, ("s2", "b"): 6,
             ("s3", "a"): 5, ("s3", "b"): 7}
    out = scene_model_decomposition(planted_cells(cells))
    assert out["share_scene"] == pytest.approx(21 / 28)
    assert out["share_model"] == pytest.approx(6 / 28)
    assert out["share_interaction"] == pytest.approx(1 / 28)
    assert out["share_scene"] + out["share_model"] + out["share_interaction"] == pytest.approx(1)
    assert out["n_scenes"] == 3 and out["n_models"] == 2


def test_edit_type_shares_by_hand():
    """App. G.3: "edit type alone explains 3.7% of margin variance, while the scene x
    edit-type interaction explains a further 16%". Margins (scene, edit): (s,e)=1, (s,f)=4,
    (t,e)=5, (t,f)=6: grand 4, total 9 + 0 + 1 + 4 = 14; edit means 3, 5 -> SS_edit 4
    (share 2/7); scene means 2.5, 5.5 -> SS 9; additive 13; cells 14 -> interaction 1/14."""
    df = pd.DataFrame({"model": "m", "scene_id": ["s", "s", "t", "t"],
                       "edit_type": ["e", "f", "e", "f"], "margin_i2t": [1.0, 4.0, 5.0, 6.0]})
    row = edit_type_shares(df).set_index("model").loc["m"]
    assert row["share_edit_type"] == pytest.approx(2 / 7)
    assert row["share_scene_x_edit"] == pytest.approx(1 / 14)


def test_within_scene_share_of_per_foil_success_rate():
    """App. G.3: "94.7% of per-foil success-rate variance lies within scenes; 5.3% lies
    between." Two models; foil rates (mean over models) f1 1, f2 .5 (scene s), f3 0, f4 .5
    (scene t): grand .5, total .25 + 0 + .25 + 0 = .5; scene means .75, .25 -> between
    2 (.0625) + 2 (.0625) = .25: half between, half within."""
    df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4,
                       "foil_id": ["f1", "f2", "f3", "f4"] * 2,
                       "scene_id": ["s", "s", "t", "t"] * 2,
                       "i2t": [1, 1, 0, 1, 1, 0, 0, 0.0]})
    out = foil_success_shares(df, "i2t")
    assert out["between_scene"] == pytest.approx(0.5) and out["within_scene"] == pytest.approx(0.5)
    assert out["n_foils"] == 4 and out["foil_key"] == "foil_id"


def test_jaccard_null_for_independent_quartile_draws():
    """App. G.3: "scene-hard sets overlap at mean Jaccard 0.36, against 0.14 for independent
    quartile draws." The paper's number is the ratio of expectations: 80 scenes, quartiles of
    20: E[overlap] = 20 x 20 / 80 = 5, E[union] = 35, 5/35 = 0.1429 -> 0.14. The exact
    expected Jaccard (foilbench's, beside it) is 0.1456 (it would print as 0.15)."""
    assert jaccard_null_ratio(80, 20) == pytest.approx(5 / 35)
    assert round(jaccard_null_ratio(80, 20), 2) == 0.14
    # exact: n = 4, k = 1: the draws coincide with probability 1/4 (J = 1), else J = 0
    assert jaccard_null(4, 1) == pytest.approx(0.25)
    # n = 4, k = 2: X = 0 (1/6, J 0), 1 (4/6, J 1/3), 2 (1/6, J 1) -> 2/9 + 1/6 = 7/18
    assert jaccard_null(4, 2) == pytest.approx(7 / 18)
    assert jaccard_null(80, 20) == pytest.approx(0.1456, abs=5e-5)


def test_api_rules_averaged_and_no_partial_credit():
    """App. G.4: "We counterbalance every call by issuing it twice with the option order
    swapped and averaging the binary correctness"; §3: "The benchmark score is the average
    pass rate over instances. There is no partial credit." a = [img0, img1, cap0, cap1]."""
    out, chance = KINDS["pair"].api_outcomes(np.array([[1.0, 0.5, 1.0, 1.0],
                                                        [1.0, 1.0, 1.0, 1.0]]))
    assert out["i2t"].tolist() == [0.5, 1.0]  # 1 x 0.5
    assert out["group"].tolist() == [0.5, 1.0]  # I2T x T2I (foilbench's for the API slice)
    assert out["i2t_no_partial"].tolist() == [0.0, 1.0]  # img1 right in one order only
    assert out["t2i_no_partial"].tolist() == [1.0, 1.0]
    assert out["group_no_partial"].tolist() == [0.0, 1.0]
    assert {m: v[0] for m, v in chance.items()} == pytest.approx({
        "i2t": 1 / 4, "t2i": 1 / 4, "group": 1 / 16,  # E[a] = 1/2 per question
        "i2t_no_partial": 1 / 16, "t2i_no_partial": 1 / 16,  # right twice: 1/4 per question
        "group_no_partial": 1 / 256})
    out, chance = KINDS["choice"].api_outcomes(np.array([[0.5], [1.0]]))
    assert out["r1"].tolist() == [0.5, 1.0] and out["r1_no_partial"].tolist() == [0.0, 1.0]
    assert chance["r1"][0] == 0.5 and chance["r1_no_partial"][0] == 0.25


def test_add_margins_names_both_kinds_of_margin():
    df = pd.DataFrame({"model": "m", "i2t": [1.0], "t2i": [1.0],
                       "scores": [np.array([0.9, 0.2, 0.1, 0.8])]})
    cols = [c for c in add_margins(df).columns if c.startswith("margin_")]
    assert cols == ["margin_i2t", "margin_t2i", "margin_i2t_decision", "margin_t2i_decision"]
