"""Perplexity audit (COMPASS App. B): U, rank-biserial r and labels by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from foilbench.audit.perplexity import (
    effect_label,
    hardest_negative,
    mann_whitney_u,
    perplexity_audit,
    rank_biserial,
)


def test_u_and_rank_biserial_by_hand():
    x, y = np.array([1.0, 2.0, 5.0]), np.array([3.0, 4.0])
    # pairs with x > y: (5,3), (5,4) -> U = 2; r = 1 - 2*2/(3*2) = 1/3
    assert mann_whitney_u(x, y) == 2.0
    assert rank_biserial(x, y) == pytest.approx(1 / 3)
    assert mann_whitney_u(x, y) == stats.mannwhitneyu(x, y).statistic


def test_ties_count_half():
    x, y = np.array([1.0, 3.0]), np.array([3.0, 4.0])
    # no pair x > y, one tie (3, 3) -> U = 0.5; r = 1 - 1/4
    assert mann_whitney_u(x, y) == 0.5
    assert rank_biserial(x, y) == pytest.approx(0.75)


@pytest.mark.parametrize("r,label", [(0.05, "negligible"), (-0.2, "small"), (0.35, "medium"),
                                     (-0.35, "medium"), (0.5, "large"), (0.99, "large")])
def test_effect_labels(r, label):
    assert effect_label(r) == label


def test_hardest_negative_is_the_closest_perplexity():
    pos = np.array([10.0, 20.0, 5.0])
    neg = np.array([[11.0, 30.0], [50.0, 18.0], [np.nan, 100.0]])
    assert hardest_negative(pos, neg).tolist() == [0, 1, 1]


def test_audit_detects_planted_fluency_gap():
    rng = np.random.default_rng(0)
    pos = rng.uniform(10, 20, 50)
    neg = np.stack([pos + rng.uniform(15, 30, 50), pos + rng.uniform(40, 60, 50)], axis=1)
    out = perplexity_audit(pos, neg)
    assert out["hardest_index"].tolist() == [1] * 50  # 1-based: the first negative
    assert out["rank_biserial"] > 0.5 and out["effect"] == "large" and out["p_value"] < 1e-6
    same = perplexity_audit(pos, np.stack([pos[::-1]], axis=1))
    assert same["rank_biserial"] == pytest.approx(0.0)
    assert same["effect"] == "negligible"
