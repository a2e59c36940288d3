"""Model-vs-model comparisons on every benchmark kind and unit: a planted difference is found
(the paired 95% interval excludes 0 and the headline calls the better model), a planted
no-difference is not; on a CompoSET-format benchmark counted per instance the pairing is per
instance (each instance's tier mean), clustered by scene, and says so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis.paired import overall_unit, paired_outcomes
from foilbench.report.build import RunData
from foilbench.report.headline import headline_parts, paired_differences

SCENES = 40  # >= 30 scenes: enough for the clustered test to call a model better
TIERS = ("short", "medium", "long")


def _metrics(metric: str, values: np.ndarray, n: int, unit: str | None,
             chance: float) -> pd.DataFrame:
    row = {"metric": metric, "group_by": "", "group_value": "all",
           "value": float(np.nanmean(values)), "ci_low": 0.0, "ci_high": 1.0,
           "chance": chance, "n": n, "ties": 0, "ci_method": "bootstrap:scene_id"}
    if unit is not None:
        row["unit"] = unit
    return pd.DataFrame([row])


def _run(model: str, items: pd.DataFrame, kind: str, metric: str, n: int,
         unit: str | None, chance: float) -> RunData:
    run = {"run_id": f"{model}-{kind}-{unit}", "model_spec": model, "benchmark_name": kind,
           "benchmark_checksum": f"sha256:{kind}", "benchmark_kind": kind, "n_boot": 2000,
           "seed": 0, "config": {"primary_metric": metric}}
    return RunData(run, _metrics(metric, items[metric].to_numpy(float), n, unit, chance),
                   items)


def _tiered(outcome) -> pd.DataFrame:
    """SCENES scenes x 2 instances x 3 tiers; ``outcome(scene, instance, tier)`` in {0, 1}."""
    rows = []
    for s in range(SCENES):
        for j in range(2):
            for t, tier in enumerate(TIERS):
                rows.append({"item_id": f"s{s}-i{j}-{tier}", "scene_id": f"s{s}",
                             "foil_id": f"s{s}-i{j}", "tier": tier,
                             "group": float(outcome(s, j, t))})
    return pd.DataFrame(rows)


def _flat(outcome, metric: str) -> pd.DataFrame:
    """SCENES scenes x 3 items, no tiers; ``outcome(scene, k)`` in {0, 1}."""
    return pd.DataFrame([{"item_id": f"s{s}-{k}", "scene_id": f"s{s}",
                          metric: float(outcome(s, k))} for s in range(SCENES)
                         for k in range(3)])


def _pair_tiered(a, b, unit="instance"):
    ia, ib = _tiered(a), _tiered(b)
    n = SCENES * 2 if unit == "instance" else len(ia)
    return [_run("A", ia, "pair", "group", n, unit, 1 / 6),
            _run("B", ib, "pair", "group", n, unit, 1 / 6)]


def _flat_runs(a, b, kind, metric, chance):
    ia, ib = _flat(a, metric), _flat(b, metric)
    return [_run("A", ia, kind, metric, len(ia), "items", chance),
            _run("B", ib, kind, metric, len(ib), "items", chance)]


# A right on short and medium, B on short only: every instance differs by exactly 1/3
BETTER_TIERED = (lambda s, j, t: t < 2, lambda s, j, t: t < 1)
# even scenes A right and B wrong, odd scenes the reverse: mean difference exactly 0
EVEN_TIERED = (lambda s, j, t: s % 2 == 0, lambda s, j, t: s % 2 == 1)
BETTER_FLAT = (lambda s, k: k < 2, lambda s, k: k < 1)  # +1/3 on every scene
EVEN_FLAT = (lambda s, k: s % 2 == 0, lambda s, k: s % 2 == 1)

CASES = {
    "pair per instance": lambda better: _pair_tiered(*(BETTER_TIERED if better
                                                       else EVEN_TIERED)),
    "pair per item (pooled tiers)": lambda better: _pair_tiered(
        *(BETTER_TIERED if better else EVEN_TIERED), unit="pooled"),
    "pair per item": lambda better: _flat_runs(*(BETTER_FLAT if better else EVEN_FLAT),
                                               "pair", "group", 1 / 6),
    "choice": lambda better: _flat_runs(*(BETTER_FLAT if better else EVEN_FLAT),
                                        "choice", "r1", 1 / 2),
    "image_choice": lambda better: _flat_runs(*(BETTER_FLAT if better else EVEN_FLAT),
                                              "image_choice", "r1", 1 / 2),
}


@pytest.mark.parametrize("case", list(CASES))
def test_planted_difference_is_found(case):
    runs = CASES[case](True)
    metric = runs[0].run["config"]["primary_metric"]
    [row] = paired_differences(runs, metric).to_dict(orient="records")
    assert row["delta"] == pytest.approx(1 / 3)
    assert row["ci_low"] > 0 and row["p_value"] < 0.05
    assert row["clustered"] and row["n_clusters"] == SCENES
    _, sentences, _ = headline_parts(runs)
    assert "A is better than B (+33.3 pp" in sentences[0]


@pytest.mark.parametrize("case", list(CASES))
def test_planted_no_difference_is_not_called(case):
    runs = CASES[case](False)
    metric = runs[0].run["config"]["primary_metric"]
    [row] = paired_differences(runs, metric).to_dict(orient="records")
    assert row["delta"] == pytest.approx(0.0)
    assert row["ci_low"] < 0 < row["ci_high"]
    _, sentences, _ = headline_parts(runs)
    assert "No model is reliably better than another" in sentences[0]
    assert "is better than" not in sentences[0]


def test_per_instance_pairing_counts_instances_and_says_so():
    runs = _pair_tiered(*BETTER_TIERED)
    [row] = paired_differences(runs, "group").to_dict(orient="records")
    assert row["unit"] == "instance" and row["n"] == SCENES * 2
    _, sentences, _ = headline_parts(runs)
    assert f"on {SCENES * 2} instances (tier mean)" in sentences[0]
    pooled = _pair_tiered(*BETTER_TIERED, unit="pooled")
    [row] = paired_differences(pooled, "group").to_dict(orient="records")
    assert row["unit"] == "items" and row["n"] == SCENES * 2 * 3


def test_instance_means_by_hand_with_a_tier_missing_in_one_run():
    """Instance x: A 1,1,0 and B 0,0,NaN -> tiers both scored: short, medium -> A 1, B 0.
    Instance y: A 0,0,1 and B 1,1,1 -> A 1/3, B 1. Mean difference (1 - 2/3) / 2 = 1/6."""
    def items(values):
        return pd.DataFrame({"item_id": [f"{i}-{t}" for i in "xy" for t in TIERS],
                             "foil_id": [i for i in "xy" for _ in TIERS],
                             "scene_id": [f"s-{i}" for i in "xy" for _ in TIERS],
                             "tier": list(TIERS) * 2, "group": values})
    pair = paired_outcomes(items([1, 1, 0, 0, 0, 1]), items([0, 0, np.nan, 1, 1, 1]),
                           "group", "instance")
    assert pair.unit == "instance" and pair.n == 2
    assert pair.a.tolist() == pytest.approx([1.0, 1 / 3])
    assert pair.b.tolist() == pytest.approx([0.0, 1.0])
    assert list(pair.clusters) == ["s-x", "s-y"]
    assert float(np.mean(pair.a - pair.b)) == pytest.approx(1 / 6)


def test_unit_of_a_row_stored_before_units_is_read_from_its_n():
    items = _tiered(BETTER_TIERED[0])
    per_instance = _metrics("group", items["group"].to_numpy(float), SCENES * 2, None, 1 / 6)
    pooled = _metrics("group", items["group"].to_numpy(float), len(items), None, 1 / 6)
    neither = _metrics("group", items["group"].to_numpy(float), 7, None, 1 / 6)
    assert overall_unit(per_instance, items, "group") == "instance"
    assert overall_unit(pooled, items, "group") == "items"
    assert overall_unit(neither, items, "group") is None


def test_runs_counting_different_units_are_not_paired():
    a, _ = _pair_tiered(*BETTER_TIERED)
    _, b = _pair_tiered(*BETTER_TIERED, unit="pooled")
    assert paired_differences([a, b], "group").empty


def test_per_instance_without_an_instance_key_is_a_clear_error():
    items = _flat(BETTER_FLAT[0], "group")
    with pytest.raises(ValueError, match="no instance key"):
        paired_outcomes(items, items, "group", "instance")
