"""Signed margins (CompoSET App. G.3) by hand, and their agreement with strict outcomes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis.margins import add_margins, choice_margins, margin_summary, pair_margins
from foilbench.scoring.protocols import pair_outcomes


def test_pair_margins_by_hand():
    # s(c0,i0)=.9 s(c0,i1)=.2 s(c1,i0)=.4 s(c1,i1)=.6
    sims = np.array([[[0.9, 0.2], [0.4, 0.6]]])
    m = pair_margins(sims)
    assert m["i2t"][0] == pytest.approx(0.9 - 0.4)  # paper: anchored on the base image
    assert m["t2i"][0] == pytest.approx(0.9 - 0.2)  # paper: anchored on the base caption
    assert m["i2t_decision"][0] == pytest.approx(min(0.9 - 0.4, 0.6 - 0.2))  # 0.4
    assert m["t2i_decision"][0] == pytest.approx(min(0.9 - 0.2, 0.6 - 0.4))  # 0.2


def test_margin_sign_matches_strict_outcomes():
    rng = np.random.default_rng(0)
    sims = rng.normal(size=(500, 2, 2)).round(1)  # rounding makes ties happen
    m, out = pair_margins(sims), pair_outcomes(sims)
    assert np.array_equal(m["i2t_decision"] > 0, out["i2t"])
    assert np.array_equal(m["t2i_decision"] > 0, out["t2i"])
    assert (m["i2t_decision"] == 0).any()  # a tie: margin 0, a failure


def test_choice_margins_ragged():
    s = np.array([[0.5, 0.2, np.nan], [0.1, 0.3, 0.05]])
    assert choice_margins(s).tolist() == pytest.approx([0.3, -0.2])


def test_summary_splits_correct_and_wrong():
    df = pd.DataFrame({"model": ["a"] * 4, "i2t": [1, 0, 0, 0], "t2i": [1, 1, 0, 0],
                       "scores": [np.array([0.9, 0.1, 0.2, 0.8]), np.array([0.9, 0.5, 0.2, 0.4]),
                                  np.array([0.5, 0.1, 0.6, 0.8]), np.array([0.1, 0.5, 0.6, 0.2])]})
    framed = add_margins(df)
    assert framed["margin_i2t_decision"].tolist() == pytest.approx([0.7, -0.1, -0.1, -0.5])
    assert framed["margin_i2t"].tolist() == pytest.approx([0.7, 0.7, -0.1, -0.5])
    table = margin_summary(df)
    pick = lambda d, dec: table[(table.direction == d) & (table.decision == dec)].iloc[0]  # noqa: E731
    row = pick("i2t_decision", "correct")
    assert row["n"] == 1 and row["mean"] == pytest.approx(0.7)
    wrong = pick("i2t_decision", "wrong")
    assert wrong["n"] == 3 and wrong["mean"] == pytest.approx((-0.1 - 0.1 - 0.5) / 3)
    # the paper's margin, split by the I2T outcome: item 2 is wrong with margin +0.7
    wrong = pick("i2t", "wrong")
    assert wrong["n"] == 3 and wrong["mean"] == pytest.approx((0.7 - 0.1 - 0.5) / 3)


def test_histogram_counts_every_value():
    from foilbench.analysis.margins import margin_histogram

    h = margin_histogram(np.array([-1.0, -0.5, 0.0, 0.5, 1.0]), bins=4)
    assert h["counts"] == [1, 1, 1, 2] and h["edges"][0] == -1.0 and h["edges"][-1] == 1.0


def test_near_ties_count_margins_within_float32_rounding_of_zero():
    from foilbench.analysis.margins import NEAR_TIE, summarise

    assert NEAR_TIE == 1e-6
    v = np.array([0.0, 5e-8, -8e-8, 9.9e-7, -1e-6, 2e-6, 0.3, -0.2])
    # 0 is an exact tie, not a near tie; +-1e-6 and beyond are outside
    assert summarise(v)["near_ties"] == 3
    assert summarise(np.array([]))["near_ties"] == 0
    # on a logit scale (CLIP: 100 x cos) the bound grows with the scores: 1e-4 at scale 100
    assert summarise(np.array([5e-5, 2e-4, -9e-5]), scale=100.0)["near_ties"] == 2
    assert summarise(np.array([5e-5]), scale=np.array([0.3]))["near_ties"] == 0  # max(1, .)


def test_summary_reports_near_ties_per_decision():
    # the float32 flip issue 30's bench met: margins -8.0e-8 (wrong) and +5.0e-8 (correct)
    df = pd.DataFrame({"model": ["a"] * 3, "r1": [0, 1, 1],
                       "scores": [np.array([0.25, 0.25 + 8e-8]), np.array([0.25 + 5e-8, 0.25]),
                                  np.array([0.5, 0.1])]})
    table = margin_summary(df)
    pick = lambda dec: table[(table.direction == "r1") & (table.decision == dec)].iloc[0]  # noqa: E731
    assert pick("wrong")["near_ties"] == 1 and pick("correct")["near_ties"] == 1
    assert pick("all")["near_ties"] == 2 and pick("all")["n"] == 3
    # the same decisions on a logit scale (x 100): margins 8e-6 and 5e-6 are still near ties
    df["scores"] = [s * 100 for s in df["scores"]]
    assert margin_summary(df).query("direction == 'r1' and decision == 'all'")[
        "near_ties"].iloc[0] == 2
