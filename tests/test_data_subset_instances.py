"""CompoSET App. G.4 on a tiered benchmark: the subset is drawn by instance.

    "We separately evaluate generative VLMs on a stratified 200-instance CompoSET subset"
    (App. G.4); Table 12: "~67 instances per tier"; Table 11's scores are whole counts of
    200 instances (Sonnet's 42.5% Group = 85/200).

Planted: 600 instances x 3 tiers. Before issue 41, ``?sample=200&by=tier`` drew 200
(instance, tier) items: fewer than 200 instances, some with two tiers, and a per-instance
count such as k = 22.5. Now 200 distinct instances, 67/67/66 per tier, one item each.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from foilbench.data.benchmark import Benchmark, Manifest
from foilbench.data.subset import SubsetSpec, stratified_subset
from foilbench.errors import BenchmarkError
from foilbench.provenance import describe_subset, subset_record

TIERS = ("short", "medium", "long")


def _tiered(n_instances: int = 600) -> Benchmark:
    rows = [{"item_id": f"i{k}-{t}", "foil_id": f"i{k}", "tier": t,
             "scene_id": f"s{k}", "edit_type": "swap" if k % 3 else "replace",
             "outcome": (k * 7 + j) % 2}
            for k in range(n_instances) for j, t in enumerate(TIERS)]
    return Benchmark(Manifest(name="tiered", kind="pair"), pd.DataFrame(rows), Path("."))


def test_by_tier_draws_200_instances_67_67_66_one_item_each():
    sub = stratified_subset(_tiered(), SubsetSpec(200, ("tier",), seed=0))
    items = sub.items
    assert len(items) == 200 and items["foil_id"].nunique() == 200
    assert items["tier"].value_counts().to_dict() == {"short": 67, "medium": 67, "long": 66}
    # per-instance unit: each instance's tier mean is one 0/1 outcome, so k is whole
    k = items.groupby("foil_id")["outcome"].mean().sum()
    assert k == int(k)
    rec = sub.manifest.extras["stratified_subset"]
    assert rec["unit"] == "instance" and rec["instances"] == 200
    assert rec["allocation"] == [{"stratum": [], "size": 600, "chosen": 200,
                                  "tiers": {"short": 67, "medium": 67, "long": 66}}]
    again = stratified_subset(_tiered(), SubsetSpec(200, ("tier",), seed=0))
    assert list(again.items["item_id"]) == list(items["item_id"])  # seeded


def test_item_draw_would_have_given_fewer_instances_and_a_half_count():
    """The departure the instance draw fixes: the same seed drawing 200 of the 1,800 items
    (the item path, as a benchmark without an instance key is sampled) repeats instances."""
    bench = _tiered()
    flat = Benchmark(bench.manifest, bench.items.rename(columns={"foil_id": "pair"}),
                     bench.root)
    items = stratified_subset(flat, SubsetSpec(200, ("tier",), seed=0)).items
    assert len(items) == 200 and items["pair"].nunique() < 200


def test_without_tier_every_tier_of_each_drawn_instance_and_strata_by_instance():
    sub = stratified_subset(_tiered(), SubsetSpec(30, ("edit_type",), seed=1))
    items = sub.items
    assert items["foil_id"].nunique() == 30 and len(items) == 90
    assert (items.groupby("foil_id")["tier"].nunique() == 3).all()
    alloc = {tuple(a["stratum"]): a["chosen"] for a in
             sub.manifest.extras["stratified_subset"]["allocation"]}
    assert alloc == {("replace",): 10, ("swap",): 20}  # 200 and 400 instances: 1/3, 2/3


def test_errors_name_the_problem():
    with pytest.raises(BenchmarkError, match="between 1 and the benchmark's 600 instances"):
        stratified_subset(_tiered(), SubsetSpec(601, ("tier",)))
    bench = _tiered(6)
    bench.items.loc[0, "edit_type"] = "other"  # differs between an instance's tiers
    with pytest.raises(BenchmarkError, match="'edit_type' differs between the tiers of "
                                             "foil_id 'i0'"):
        stratified_subset(bench, SubsetSpec(3, ("edit_type",)))


def test_provenance_line_states_instances_and_tiers():
    sub = stratified_subset(_tiered(), SubsetSpec(200, ("tier",), seed=0))
    line = describe_subset(subset_record(sub.manifest.extras))
    assert line.startswith("subset of 200 instances (67 short, 67 medium, 66 long), 200 of "
                           "1800 items of tiered")
    assert np.isclose(len(sub.items) / 200, 1.0)
