"""Wald, Wilson, the scene-clustered bootstrap, paired deltas and breakdowns, by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.stats import (
    cluster_bootstrap_ci,
    cluster_bootstrap_means,
    paired_delta_ci,
    wald_ci,
    wilson_ci,
)
from foilbench.stats.breakdown import metric_table, summarise


def test_wald_hand_values_and_clamping():
    assert wald_ci(50, 100) == pytest.approx((0.402, 0.598))
    # p = 0.1, half = 1.96 sqrt(0.09 / 10) = 0.18594; the low end is clamped at 0
    lo, hi = wald_ci(1, 10)
    assert lo == 0.0 and hi == pytest.approx(0.1 + 0.185942, abs=1e-6)
    assert wald_ci(10, 10) == (1.0, 1.0)
    assert wald_ci(0, 10) == (0.0, 0.0)


def test_wilson_hand_values():
    # 5/10: centre 0.5, half = 1.96 sqrt(0.025 + 0.009604) / 1.38416 = 0.263411
    assert wilson_ci(5, 10) == pytest.approx((0.236589, 0.763411), abs=1e-6)
    # 0/10: upper = (0.19208 + 0.19208) / 1.38416 = 0.277540
    lo, hi = wilson_ci(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.277540, abs=1e-6)
    # 10/10 mirrors 0/10
    assert wilson_ci(10, 10) == pytest.approx((1 - 0.277540, 1.0), abs=1e-6)


def test_intervals_reject_bad_counts():
    with pytest.raises(ValueError, match="n must be positive"):
        wilson_ci(0, 0)
    with pytest.raises(ValueError, match="k must lie"):
        wald_ci(11, 10)


def _slow_reference_means(values, clusters, n_boot, seed):
    """One resample at a time: draw G cluster labels, concatenate their rows, take the mean."""
    labels, codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
    g = len(labels)
    draws = np.random.default_rng(seed).integers(0, g, size=(n_boot, g))
    means = []
    for row in draws:
        rows = np.concatenate([values[codes == c] for c in row])  # drawn k times -> k copies
        means.append(rows.mean())
    return np.array(means)


def test_bootstrap_matches_slow_reference_loop():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 2, size=23).astype(float)
    clusters = np.array(list("aaabbbbbcdddeeeeeffgggh"))
    fast = cluster_bootstrap_means(values, clusters, n_boot=300, seed=7)
    slow = _slow_reference_means(values, clusters, n_boot=300, seed=7)
    np.testing.assert_allclose(fast, slow)


def test_bootstrap_pools_rows_so_a_scene_drawn_twice_counts_twice():
    # scene A: three successes, scene B: one failure. Resamples of 2 scenes:
    # AA -> 6/6 = 1, AB or BA -> 3/4 (pooled rows, not the mean of scene means 1/2), BB -> 0
    values = np.array([1.0, 1.0, 1.0, 0.0])
    means = cluster_bootstrap_means(values, np.array(["A", "A", "A", "B"]), n_boot=2000, seed=1)
    assert set(np.round(means, 12)) == {1.0, 0.75, 0.0}
    assert np.mean(means == 0.75) == pytest.approx(0.5, abs=0.05)


def test_bootstrap_ci_is_percentile_of_means():
    values = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    clusters = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    means = cluster_bootstrap_means(values, clusters, n_boot=500, seed=3)
    lo, hi = cluster_bootstrap_ci(values, clusters, n_boot=500, seed=3)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))


def test_paired_delta_hand_cases():
    clusters = np.repeat(np.arange(5), 2)
    same = np.array([1, 0] * 5, dtype=float)
    d = paired_delta_ci(same, same, clusters, n_boot=500)
    assert (d["delta"], d["ci_low"], d["ci_high"], d["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    d = paired_delta_ci(np.ones(10), np.zeros(10), clusters, n_boot=500)
    assert (d["delta"], d["ci_low"], d["ci_high"], d["p_value"]) == (1.0, 1.0, 1.0, 0.0)


def test_paired_delta_resamples_differences_jointly():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, 40).astype(float)
    b = rng.integers(0, 2, 40).astype(float)
    clusters = np.repeat(np.arange(8), 5)
    d = paired_delta_ci(a, b, clusters, n_boot=400, seed=9)
    assert d["delta"] == pytest.approx(a.mean() - b.mean())
    assert (d["ci_low"], d["ci_high"]) == pytest.approx(
        cluster_bootstrap_ci(a - b, clusters, n_boot=400, seed=9))
    with pytest.raises(ValueError, match="differ in shape"):
        paired_delta_ci(a, b[:-1])


def test_paired_delta_p_value_is_two_sided():
    """p = 2 min(P(delta_b <= 0), P(delta_b >= 0)) over the same resampled differences."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 2, 30).astype(float)
    b = (rng.random(30) < 0.35).astype(float)
    clusters = np.repeat(np.arange(10), 3)
    diffs = cluster_bootstrap_means(a - b, clusters, n_boot=400, seed=4)
    lower, upper = np.mean(diffs <= 0), np.mean(diffs >= 0)
    assert 0 < min(lower, upper) < 0.5  # a case where the factor 2 matters and is not capped
    d = paired_delta_ci(a, b, clusters, n_boot=400, seed=4)
    assert d["p_value"] == pytest.approx(2 * min(lower, upper))


def test_summarise_methods_and_fallback():
    out = np.array([1, 1, 0, 1], dtype=float)
    assert summarise(out, method="wilson")["ci_low"] == pytest.approx(wilson_ci(3, 4)[0])
    assert summarise(out, method="wald")["ci_high"] == pytest.approx(wald_ci(3, 4)[1])
    assert summarise(out, method="auto")["ci_method"] == "wilson"  # no clusters
    one_scene = summarise(out, clusters=np.array(["s"] * 4), method="auto")
    # a single cluster cannot be resampled, and the row says the items are not independent
    assert one_scene["ci_method"] == "wilson (1 scene: items not independent)"
    two = summarise(out, clusters=np.array(["s", "s", "t", "t"]), method="auto", n_boot=200)
    assert two["ci_method"] == "cluster-wilson:scene_id (2 scenes < 30)"  # tests/test_few_clusters
    many = summarise(np.tile(out, 10), clusters=np.repeat(np.arange(40), 1), n_boot=200)
    assert many["ci_method"] == "bootstrap:scene_id"
    with pytest.raises(ValueError, match="unknown ci method"):
        summarise(out, method="exact")


def test_metric_table_breakdown_by_any_column():
    table = pd.DataFrame({
        "metric": ["group"] * 6,
        "outcome": [1, 0, 1, 1, 0, 0.5],
        "tie": [False, True, False, False, True, False],
        "chance": [1 / 6] * 6,
        "scene_id": ["a", "a", "b", "b", "c", "c"],
        "tier": ["short", "long", "short", "long", "short", "long"],
        "colour": ["red"] * 3 + ["blue"] * 3,
    })
    res = metric_table(table, by=["tier", "colour"], n_boot=200)
    overall = res[res["group_by"] == ""].iloc[0]
    assert (overall["value"], overall["k"], overall["n"], overall["ties"]) == \
        pytest.approx((3.5 / 6, 3.5, 6, 2))
    assert overall["chance"] == pytest.approx(1 / 6)
    assert overall["ci_method"] == "cluster-wilson:scene_id (3 scenes < 30)"
    short = res[(res["group_by"] == "tier") & (res["group_value"] == "short")].iloc[0]
    assert (short["value"], short["n"], short["ties"]) == pytest.approx((2 / 3, 3, 1))
    red = res[(res["group_by"] == "colour") & (res["group_value"] == "red")].iloc[0]
    assert red["value"] == pytest.approx(2 / 3)
    assert set(res["group_by"]) == {"", "tier", "colour"}
    # the standard metadata columns that vary, scene_id excluded
    default = metric_table(table, candidates=METADATA_COLUMNS, n_boot=200)
    assert set(default["group_by"]) == {"", "tier"}
    with pytest.raises(ValueError, match="not in the results"):
        metric_table(table, by=["nope"])


def test_metric_table_needs_columns_or_candidates():
    table = pd.DataFrame({"metric": ["r1"], "outcome": [1.0], "tie": [False], "chance": [0.5]})
    with pytest.raises(ValueError, match="by= .* or candidates="):
        metric_table(table)
    assert list(metric_table(table, by=[])["group_by"]) == [""]


def test_stats_is_pure_it_imports_no_other_foilbench_package():
    import re
    from pathlib import Path

    import foilbench.stats

    folder = Path(foilbench.stats.__file__).parent
    imported = {m for p in folder.glob("*.py")
                for m in re.findall(r"^\s*(?:from|import) (foilbench\.\w+)", p.read_text(), re.M)}
    assert imported == {"foilbench.stats"}
