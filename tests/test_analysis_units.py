"""Unit of n (CompoSET §5 / Table 9): per tier, per instance tier-mean, pooled, by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from foilbench.analysis.units import unit_table


def _frame():
    # instance A: short 1, medium 0, long 1; instance B: 0, 0, 1
    rows = [("A", "short", 1), ("A", "medium", 0), ("A", "long", 1),
            ("B", "short", 0), ("B", "medium", 0), ("B", "long", 1)]
    return pd.DataFrame([{"model": "m", "foil_id": f, "tier": t, "group": g, "scene_id": "s"}
                         for f, t, g in rows])


def test_three_units_by_hand():
    t = unit_table(_frame(), method="wald").set_index(["unit", "tier"])
    assert t.loc[("per_tier", "short"), ["value", "n"]].tolist() == [0.5, 2]
    assert t.loc[("per_tier", "medium"), "value"] == 0.0
    assert t.loc[("per_tier", "long"), "value"] == 1.0
    inst = t.loc[("instance", "all")]
    assert inst["value"] == pytest.approx(0.5) and inst["n"] == 2  # (2/3 + 1/3) / 2
    assert inst["k"] == pytest.approx(1.0)
    pooled = t.loc[("pooled", "all")]
    assert (pooled["value"], pooled["n"]) == (0.5, 6)
    half = 1.96 * math.sqrt(0.25 / 6)
    assert pooled["ci_low"] == pytest.approx(0.5 - half)
    assert pooled["ci_high"] == pytest.approx(0.5 + half)
    # 0.5 +- 1.96 sqrt(0.25 / 2) = 0.5 +- 0.693: Wald clamped to [0, 1]
    assert (inst["ci_low"], inst["ci_high"]) == (0.0, 1.0)
    assert set(t["label"]) == {"per tier (n = instances in the tier)",
                               "per instance, tier mean (n = instances)",
                               "pooled tiers (n = tiers x instances)"}


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="unknown unit"):
        unit_table(_frame(), units=("scene",))
    dup = pd.concat([_frame(), _frame().iloc[:1]])
    with pytest.raises(ValueError, match="appears twice in tier 'short'"):
        unit_table(dup)


def test_missing_columns_empty_frames_and_bad_outcomes_are_named():
    with pytest.raises(ValueError, match="needs column.*i2t.*the frame has"):
        unit_table(_frame(), metric="i2t")
    with pytest.raises(ValueError, match="needs column.*instance_id"):
        unit_table(_frame(), instance="instance_id")
    with pytest.raises(ValueError, match="the frame has no rows"):
        unit_table(_frame().iloc[:0])
    nan = _frame().assign(item_id=[f"i{k}" for k in range(6)])
    nan.loc[4, "group"] = float("nan")
    with pytest.raises(ValueError, match="item 'i4' of model 'm' has no number in column 'group'"):
        unit_table(nan)
    big = _frame()
    big.loc[2, "group"] = 2.0
    with pytest.raises(ValueError, match="row 2 of model 'm' has 'group' = 2.0, outside"):
        unit_table(big)
    keyless = _frame()
    keyless.loc[1, "foil_id"] = None
    with pytest.raises(ValueError, match="row 1 of model 'm' has no 'foil_id'"):
        unit_table(keyless)
    tierless = _frame()
    tierless.loc[3, "tier"] = None
    with pytest.raises(ValueError, match="row 3 of model 'm' has no 'tier'"):
        unit_table(tierless)


def _scenes_frame(n_instances: int = 120):
    """Two models, three tiers, 40 scenes: ``auto`` takes the scene bootstrap everywhere."""
    import numpy as np

    rng = np.random.default_rng(5)
    return pd.DataFrame([{"model": m, "foil_id": f"i{i}", "tier": t, "scene_id": f"s{i // 3}",
                          "group": float(rng.random() < 0.3)}
                         for m in ("a", "b") for i in range(n_instances)
                         for t in ("short", "medium", "long")])


def test_bootstraps_share_one_count_matrix_and_keep_their_numbers(monkeypatch):
    import contextlib

    from foilbench.stats import bootstrap

    df = _scenes_frame()
    monkeypatch.setattr(bootstrap, "shared_resamples", contextlib.nullcontext)
    alone = unit_table(df, n_boot=2000, seed=3)  # each bootstrap draws its own matrix
    monkeypatch.undo()
    drawn = []
    real = bootstrap._count_block
    monkeypatch.setattr(bootstrap, "_count_block",
                        lambda rng, b, g: drawn.append((b, g)) or real(rng, b, g))
    shared = unit_table(df, n_boot=2000, seed=3)
    assert shared["ci_method"].str.startswith("bootstrap").all()
    # 5 rows per model, every one a bootstrap over the same 40 scenes: one matrix for all 10
    assert len(shared) == 10 and drawn == [(2000, 40)]
    pd.testing.assert_frame_equal(shared, alone, check_exact=True)
    assert bootstrap._KEPT.get() is None  # nothing kept after the table
