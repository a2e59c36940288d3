"""Intervals with few scenes: coverage on planted data, the method each row says it used, and
the boundary cases the issue reported (39 items from 2 scenes; a perfect score)."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.stats.bootstrap import cluster_bootstrap_ci
from foilbench.stats.breakdown import summarise
from foilbench.stats.few_clusters import cluster_wilson_ci, design_effect
from foilbench.stats.intervals import wilson_ci

P0, ICC = 0.3, 0.1  # planted: scene rates ~ Beta with mean 0.3 and intra-scene correlation 0.1
REPS = 400           # coverage estimate's standard error: sqrt(.95 * .05 / 400) = 1.1 points


def planted(rng: np.random.Generator, n_scenes: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = P0 * (1 - ICC) / ICC, (1 - P0) * (1 - ICC) / ICC
    rates = rng.beta(a, b, size=n_scenes)
    sizes = rng.integers(10, 40, size=n_scenes)
    scenes = np.repeat(np.arange(n_scenes), sizes)
    return (rng.random(len(scenes)) < rates[scenes]).astype(float), scenes.astype(str)


def coverage(n_scenes: int, method: str = "auto", seed: int = 0) -> float:
    rng = np.random.default_rng([seed, n_scenes])
    hits = 0
    for rep in range(REPS):
        values, scenes = planted(rng, n_scenes)
        row = summarise(values, clusters=scenes, method=method, n_boot=1000, seed=rep)
        hits += row["ci_low"] <= P0 <= row["ci_high"]
    return hits / REPS


@pytest.mark.parametrize(("n_scenes", "low", "high", "method"), [
    # 2 scenes: the t(1) quantile (12.7) makes the interval wide on purpose: conservative
    (2, 0.93, 1.0, "cluster-wilson"),
    (5, 0.91, 0.99, "cluster-wilson"),
    (10, 0.91, 0.99, "cluster-wilson"),
    (80, 0.91, 0.99, "bootstrap"),
])
def test_auto_interval_covers_about_95_percent(n_scenes, low, high, method):
    """Seeded simulation, 400 planted data sets per scene count; tolerance: 95% minus 4 points
    (about 3.5 standard errors of the coverage estimate) and at most 99% (not uselessly wide),
    except at 2 scenes where only conservative intervals are honest."""
    rng = np.random.default_rng(1)
    values, scenes = planted(rng, n_scenes)
    assert summarise(values, clusters=scenes, n_boot=200)["ci_method"].startswith(method)
    assert low <= coverage(n_scenes) <= high


def test_the_bootstrap_is_too_narrow_with_five_scenes():
    """Why auto leaves the bootstrap below 30 scenes: on the same planted data it covers far
    less than 95% with 5 scenes."""
    assert coverage(5, method="bootstrap") < 0.88


def test_design_effect_and_interval_by_hand():
    # 3 scenes [1,1,0], [1,0,0], [0,0,0]: p = 1/3, S - p n = (1, 0, -1), V = 3/2 * 2 / 81 = 1/27,
    # binomial p(1-p)/n = 2/81: deff = (1/27) / (2/81) = 1.5, n_eff = 6, z = t(2) = 4.3027
    values = np.array([1, 1, 0, 1, 0, 0, 0, 0, 0], dtype=float)
    scenes = np.array(["a"] * 3 + ["b"] * 3 + ["c"] * 3)
    codes = np.repeat([0, 1, 2], 3)
    assert design_effect(values, codes, 3) == pytest.approx(1.5)
    lo, hi = cluster_wilson_ci(values, scenes)
    assert (lo, hi) == pytest.approx(wilson_ci(2.0, 6.0, 4.302652729911275))
    # z^2 = 18.513, denominator 1 + z^2/6 = 4.0855, centre (1/3 + 1.5428) / 4.0855 = 0.4592,
    # half-width 4.3027 * sqrt(0.037037 + 0.128563) / 4.0855 = 0.4286
    assert lo == pytest.approx(0.0306, abs=5e-4) and hi == pytest.approx(0.8878, abs=5e-4)


def test_negative_spread_never_narrows_below_wilson():
    # both scenes exactly at the pooled rate: V = 0 < binomial, deff clamps to 1
    values = np.array([1, 0, 1, 0], dtype=float)
    codes = np.array([0, 0, 1, 1])
    assert design_effect(values, codes, 2) == 1.0


def test_two_scenes_39_items_get_an_honest_interval():
    """The issue: 39 items from 2 scenes got [16.7, 20.0]. Now: the few-cluster interval,
    labelled, and far wider than the bootstrap's."""
    values = np.zeros(39)
    values[:4] = values[20:23] = 1  # 4/20 and 3/19: 7/39 = 17.9%
    scenes = np.array(["s1"] * 20 + ["s2"] * 19)
    row = summarise(values, clusters=scenes, n_boot=1000)
    assert row["ci_method"] == "cluster-wilson:scene_id (2 scenes < 30)"
    boot = cluster_bootstrap_ci(values, scenes, n_boot=1000)
    assert row["ci_high"] - row["ci_low"] > 5 * (boot[1] - boot[0])
    assert row["ci_low"] <= 7 / 39 <= row["ci_high"]


@pytest.mark.parametrize("k", [0, 120])
def test_an_estimate_at_0_or_1_uses_wilson_and_says_so(k):
    values = np.zeros(120)
    values[:k] = 1
    scenes = np.repeat([f"s{i}" for i in range(40)], 3)
    row = summarise(values, clusters=scenes, n_boot=500)
    pct = 0 if k == 0 else 100
    assert row["ci_method"] == f"wilson (estimate at {pct}%)"
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_ci(k, 120))
    assert row["ci_high"] - row["ci_low"] > 0.02  # not [100.0, 100.0]


def test_explicit_methods_are_kept():
    values = np.array([1, 0, 1, 1, 0, 1], dtype=float)
    scenes = np.array(["a", "a", "b", "b", "c", "c"])
    assert summarise(values, clusters=scenes, method="bootstrap", n_boot=200)["ci_method"] \
        == "bootstrap:scene_id"
    assert summarise(values, clusters=scenes, method="wald")["ci_method"] == "wald"
    with pytest.raises(ValueError, match="at least 2 clusters"):
        cluster_wilson_ci(values, np.array(["a"] * 6))


@pytest.mark.parametrize("values, clusters, level, message", [
    ([1.0, float("nan"), 0.0, 1.0], list("aabb"), 0.95, "outcomes in \\[0, 1\\]"),
    ([1.0, 0.3, 2.0, 1.0], list("aabb"), 0.95, "outcomes in \\[0, 1\\]"),
    ([1.0, 0.0, 0.0, 1.0], list("aabb"), 1.5, "level must lie strictly between 0 and 1"),
    ([1.0, 0.0, 0.0, 1.0], ["a", None, "b", "b"], 0.95, "needs a cluster label"),
    ([1.0, 0.0, 0.0], list("aabb"), 0.95, "clusters has length 4, values has length 3"),
])
def test_cluster_wilson_refuses_bad_input_by_name(values, clusters, level, message):
    with pytest.raises(ValueError, match=message):
        cluster_wilson_ci(np.array(values), np.array(clusters, dtype=object), level=level)


def test_t_quantile_equals_scipy_stats_t_ppf_bit_for_bit():
    """t_quantile reads scipy.special.stdtrit (cheaper to import) where it read
    scipy.stats.t.ppf: the old and the new computation agree exactly on every level and
    degrees of freedom a run can ask for (1 to 499 scenes minus one), and the hand value holds."""
    from scipy.stats import t

    from foilbench.stats.few_clusters import t_quantile

    levels = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 0.6827]
    for level in levels:
        for df in range(1, 500):
            assert t_quantile(level, df) == float(t.ppf(1 - (1 - level) / 2, df)), (level, df)
    assert abs(t_quantile(0.95, 1) - 12.7062047) < 1e-6  # tan(pi/2 * 0.95) for df = 1
