"""Breakdowns with intervals, matched modify-vs-swap contrasts, direction asymmetry."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis.asymmetry import direction_asymmetry
from foilbench.analysis.breakdowns import breakdown
from foilbench.analysis.contrasts import modify_swap_contrasts, modify_swap_pairs
from foilbench.stats import wilson_ci


def test_breakdown_cells_and_intervals():
    df = pd.DataFrame({"model": "m", "edit_type": ["a", "a", "a", "b"], "tier": "short",
                       "scene_id": ["s1", "s2", "s3", "s1"], "group": [1, 1, 0, 0.0],
                       "chance_group": 1 / 6})
    out = breakdown(df, "group", n_boot=500)
    assert list(out.columns[:3]) == ["model", "edit_type", "tier"]  # category absent: skipped
    a = out[out.edit_type == "a"].iloc[0]
    assert a["n"] == 3 and a["accuracy"] == pytest.approx(2 / 3)
    assert a["chance"] == pytest.approx(1 / 6)
    assert (a["ci_low"], a["ci_high"]) == pytest.approx(wilson_ci(2, 3))
    assert 0 <= a["boot_low"] <= a["accuracy"] <= a["boot_high"] <= 1
    assert np.isnan(out[out.edit_type == "b"].iloc[0]["boot_low"])  # one scene: no bootstrap


def test_modify_swap_pairs_found_from_data():
    types = ["modify_color", "swap_color", "swap_material", "modify_shape"]
    assert modify_swap_pairs(types) == {"color": ("modify_color", "swap_color")}


def test_modify_swap_contrast_recovers_planted_gap():
    rng = np.random.default_rng(0)
    rows = []
    for s in range(60):
        for tier in ("short", "long"):
            rows.append({"model": "m", "scene_id": s, "tier": tier, "edit_type": "modify_color",
                         "group": float(rng.random() < 0.8)})
            rows.append({"model": "m", "scene_id": s, "tier": tier, "edit_type": "swap_color",
                         "group": float(rng.random() < 0.3)})
    rows.append({"model": "m", "scene_id": 99, "tier": "short", "edit_type": "swap_color",
                 "group": 1.0})  # unmatched cell: left out
    out = modify_swap_contrasts(pd.DataFrame(rows), "group", n_boot=2000).iloc[0]
    assert out["attribute"] == "color" and out["n_cells"] == 120
    assert out["delta"] == pytest.approx(out["modify"] - out["swap"])
    assert out["ci_low"] > 0.3 and out["ci_high"] < 0.7 and out["p_value"] < 0.01


def test_direction_asymmetry_planted_and_discordant_counts():
    rng = np.random.default_rng(1)
    n = 400
    i2t = (rng.random(n) < 0.7).astype(float)
    t2i = np.where(rng.random(n) < 0.5, i2t, 0.0)  # T2I only ever loses
    df = pd.DataFrame({"model": "m", "i2t": i2t, "t2i": t2i, "scene_id": np.arange(n) // 4})
    row = direction_asymmetry(df, n_boot=2000).iloc[0]
    assert row["delta"] == pytest.approx(i2t.mean() - t2i.mean())
    assert row["ci_low"] > 0 and row["only_t2i"] == 0
    assert row["only_i2t"] == int(((i2t == 1) & (t2i == 0)).sum())
