"""Issue 41, item 9: each reading a docstring documents in analysis/units.py and
analysis/autocomp_filters.py, pinned on planted inputs where the readings give DIFFERENT
answers (each computed by hand here), asserting foilbench returns the chosen one."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from foilbench.analysis.autocomp_filters import filter_shift, survival_by_condition
from foilbench.analysis.units import unit_table
from test_analysis_autocomp_filters import _log


def _wilson(k: float, n: float, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval written out again, for the hand computations below."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


# --- analysis/units.py --------------------------------------------------------------------

def _uneven():
    # A: short 1, medium 0, long 1 (mean 2/3); B: short 0 only (mean 0);
    # C: short 1, medium 1 (mean 1). Unequal tiers per instance make the readings differ.
    rows = [("A", "short", 1), ("A", "medium", 0), ("A", "long", 1), ("B", "short", 0),
            ("C", "short", 1), ("C", "medium", 1)]
    return pd.DataFrame([{"model": "m", "foil_id": f, "tier": t, "group": g}
                         for f, t, g in rows])


def test_instance_unit_is_the_mean_of_tier_means_with_fractional_k():
    """units.py: "``instance``: each instance's outcome averaged over its tiers ..., then the
    mean over instances; n = instances. Its binomial intervals take k = sum of the tier means
    (a fractional count), the reading of "n = 1,776 instances" for a tier-averaged score"
    (CompoSET §3: "CompoSET contains 1,776 instances"; App. C: "p = k/n, where k is the number
    of successes and n is the number of pairs"). Planted: instance means 2/3, 0, 1.
    Readings: instance (ours) 5/9, n 3, k 5/3; pooled rows 4/6 = 2/3, n 6; k rounded to a
    whole count (2 of 3) would give Wilson(2, 3) instead of Wilson(5/3, 3)."""
    t = unit_table(_uneven(), method="wilson").set_index(["unit", "tier"])
    inst, pooled = t.loc[("instance", "all")], t.loc[("pooled", "all")]
    assert inst["value"] == pytest.approx(5 / 9) and inst["n"] == 3
    assert inst["k"] == pytest.approx(5 / 3)
    assert (pooled["value"], pooled["n"]) == (pytest.approx(2 / 3), 6)
    lo, hi = _wilson(5 / 3, 3)
    assert (inst["ci_low"], inst["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    rounded = _wilson(2, 3)
    assert abs(inst["ci_low"] - rounded[0]) > 0.05  # the readings differ, and we are k = 5/3
    # per tier: short 2/3 of 3, medium 1/2 of 2, long 1/1
    assert t.loc[("per_tier", "short"), "value"] == pytest.approx(2 / 3)
    assert t.loc[("per_tier", "short"), "n"] == 3
    assert t.loc[("per_tier", "medium"), ["value", "n"]].tolist() == [0.5, 2]
    assert t.loc[("per_tier", "long"), ["value", "n"]].tolist() == [1.0, 1]


# --- analysis/autocomp_filters.py ---------------------------------------------------------

def test_survival_is_per_stage_out_over_in_not_out_over_created():
    """autocomp_filters.py: "survival: per (task, N, stage): tracks in, out and out/in per
    condition" and "A track entered every stage of its condition up to the one that dropped
    it" (Auto-Comp §4: "The validation survival rates (Table 3) expose where generators fail
    most ... the largest drop typically occurs at the final Attribute/Relation Correctness
    Check"). Planted: 10 Minimal tracks, 5 dropped at object presence, 2 of the 5 left at the
    attribute check. Per-stage reading (ours): 5/10, 5/5, 3/5 = 0.6 at the attribute check;
    cumulative reading (out / created): 3/10 = 0.3 there."""
    concepts = {f"k{i}": (["cube", "ball"], ["red", "blue"]) for i in range(10)}
    drops = {f"k{i}-minimal": "object presence [minimal]" for i in range(5)}
    drops |= {f"k{i}-minimal": "attribute check [minimal]" for i in (5, 6)}
    out = survival_by_condition(_log(concepts, drops)).set_index("stage")
    assert out.loc["object presence", "minimal_survival"] == 0.5
    assert out.loc["background check", ["minimal_in", "minimal_out"]].tolist() == [5, 5]
    att = out.loc["attribute check"]
    assert (att["minimal_in"], att["minimal_out"]) == (5, 3)
    assert att["minimal_survival"] == pytest.approx(0.6)
    assert att["minimal_survival"] != pytest.approx(3 / 10)


def test_stage_order_is_first_appearance_in_the_log():
    """autocomp_filters.py: "A track entered every stage of its condition up to the one that
    dropped it (stage order: first appearance in the log)". Planted (the filters test's log):
    stages logged object presence, background check, attribute check; Minimal drops a at
    object presence and b at the background check. Log order (ours): background 3 in, 2 out
    = 2/3. Alphabetical order (attribute, background, object) would give background 4 in,
    3 out = 3/4 and object presence last."""
    from test_analysis_autocomp_filters import CONCEPTS, DROPS

    out = survival_by_condition(_log(CONCEPTS, DROPS))
    assert list(out["stage"]) == ["object presence", "background check", "attribute check"]
    bg = out.set_index("stage").loc["background check"]
    assert (bg["minimal_in"], bg["minimal_out"]) == (3, 2)
    assert bg["minimal_survival"] == pytest.approx(2 / 3)


SKEWED = {"a": (["cube"], ["red"]), "b": (["cube"], ["red"]), "c": (["ball"], ["red"]),
          "d": (["mug"], ["blue"])}


def test_target_prior_is_what_the_sampler_asked_for_uniform_on_request():
    """autocomp_filters.py: "p_target(l) the share of label l among the values of every
    created concept of that (task, N) (what the sampler asked for: our reading of "target
    prior", which the text does not define; ``target="uniform"`` takes the uniform prior over
    the labels asked for instead)" (Auto-Comp §4: "how far the retained label distribution
    departs from the target prior"). Planted: created red 3, blue 1; Minimal keeps a and d
    (red 1, blue 1), Contextual keeps all four.
    created prior (ours): Minimal TV = (|1/2 - 3/4| + |1/2 - 1/4|) / 2 = 1/4, ratios 2/3 and 2
    -> within [0.5, 1.5] 1 of 2; Contextual TV 0; mean 1/8.
    uniform prior: Minimal TV 0, within 2 of 2; Contextual TV = (1/4 + 1/4) / 2 = 1/4."""
    drops = {"b-minimal": "object presence [minimal]", "c-minimal": "object presence [minimal]"}
    ours = filter_shift(_log(SKEWED, drops)).set_index("condition")
    assert ours.loc["minimal", "label_tv"] == pytest.approx(0.25)
    assert ours.loc["minimal", "label_within_0.5_1.5"] == 0.5
    assert ours.loc["contextual", "label_tv"] == pytest.approx(0.0)
    assert ours.loc["mean", "label_tv"] == pytest.approx(0.125)
    uni = filter_shift(_log(SKEWED, drops), target="uniform").set_index("condition")
    assert uni.loc["minimal", "label_tv"] == pytest.approx(0.0)
    assert uni.loc["minimal", "label_within_0.5_1.5"] == 1.0
    assert uni.loc["contextual", "label_tv"] == pytest.approx(0.25)


def test_table4_mean_skips_a_condition_that_kept_nothing():
    """autocomp_filters.py: "Table 4 averages Minimal and Contextual: ``mean`` rows (over the
    conditions that kept something)" (Auto-Comp §4: "averaged over Minimal and Contextual").
    Planted: Minimal as above (TV 1/4), Contextual keeps nothing. Ours: mean = 1/4 (the
    Minimal TV alone); NaN-propagating reading: NaN; nothing-kept-as-0 reading: 1/8."""
    drops = {"b-minimal": "object presence [minimal]", "c-minimal": "object presence [minimal]"}
    drops |= {f"{c}-contextual": "attribute check [contextual]" for c in SKEWED}
    out = filter_shift(_log(SKEWED, drops)).set_index("condition")
    assert math.isnan(out.loc["contextual", "label_tv"])
    assert out.loc["mean", "label_tv"] == pytest.approx(0.25)


def test_ratio_band_is_inclusive_and_below_is_strict():
    """autocomp_filters.py: "the share of labels with p_final / p_target in [0.5, 1.5] and
    below 0.25" (Table 16: "% labels within 0.5-1.5x target", "% labels below 0.25x target").
    Planted: created red 3 and blue 3 (1/2 each), Minimal keeps a and c: red 3, blue 1, ratios
    exactly 1.5 and 0.5. Inclusive band (ours): 2 of 2 = 1.0; open band: 0.0."""
    concepts = {"a": (["cube", "ball"], ["red", "red"]), "b": (["cube", "ball"],
                                                              ["blue", "blue"]),
                "c": (["cube", "ball"], ["red", "blue"])}
    out = filter_shift(_log(concepts, {"b-minimal": "object presence [minimal]"}))
    row = out.set_index("condition").loc["minimal"]
    assert row["label_within_0.5_1.5"] == 1.0
    assert row["label_below_0.25"] == 0.0
    # below 0.25 is strict: N = 8, a asks red x7 + blue, b blue x7 + red (created 8 and 8,
    # 1/2 each); kept a alone: red 7/8, blue 1/8 -> ratios 7/4 and exactly 1/4.
    # Strict (ours): below 0.25 = 0 of 2; "at or below": 1 of 2.
    eight = {"a": (["cube"] * 8, ["red"] * 7 + ["blue"]),
             "b": (["cube"] * 8, ["blue"] * 7 + ["red"])}
    row = filter_shift(_log(eight, {"b-minimal": "object presence [minimal]"})).set_index(
        "condition").loc["minimal"]
    assert row["label_below_0.25"] == 0.0
    assert row["label_within_0.5_1.5"] == 0.0


def test_cli_audit_filters_gives_both_target_readings(tmp_path):
    """The same planted log through `foilbench audit filters DIR --target created|uniform`."""
    import json

    from click.testing import CliRunner

    from foilbench.cli.main import cli

    drops = {"b-minimal": "object presence [minimal]", "c-minimal": "object presence [minimal]"}
    (tmp_path / "construction_log.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in _log(SKEWED, drops)))
    got = {}
    for target in ("created", "uniform"):
        res = CliRunner().invoke(cli, ["audit", "filters", str(tmp_path), "--target", target,
                                       "--json", str(tmp_path / f"{target}.json")])
        assert res.exit_code == 0, res.output
        assert f"target prior: {target}" in res.output
        rows = json.loads((tmp_path / f"{target}.json").read_text())["filter_shift"]
        got[target] = {r["condition"]: r["label_tv"] for r in rows}
    assert got["created"]["minimal"] == pytest.approx(0.25)
    assert got["uniform"]["minimal"] == pytest.approx(0.0)
