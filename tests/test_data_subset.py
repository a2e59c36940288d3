"""CompoSET App. G.4 stratified subsets: allocation by hand, seeded draw, spec parsing,
provenance in the manifest, clear errors."""

from __future__ import annotations

import pytest

from foilbench.data.subset import SubsetSpec, allocate, split_subset, stratified_subset
from foilbench.errors import BenchmarkError


def test_allocation_largest_remainder_by_hand():
    # 200 of 600 items in three tiers of 200: exactly 200/3 each -> 66.67: floors 66 x 3 =
    # 198, the two leftovers to the largest remainders (all equal, same size: key order).
    sizes = {("long",): 200, ("medium",): 200, ("short",): 200}
    assert allocate(sizes, 200) == {("long",): 67, ("medium",): 67, ("short",): 66}
    # quotas 3, 1.5, 0.5: floors 3, 1, 0; the leftover goes to the larger of the tied strata
    assert allocate({("a",): 6, ("b",): 3, ("c",): 1}, 5) == {("a",): 3, ("b",): 2, ("c",): 0}


def test_split_subset_keeps_loader_options():
    assert split_subset("/x/bench") == ("/x/bench", None)
    assert split_subset("aro_coco_order:/d?seed=3&sample=10&by=a,b&sample_seed=7") == (
        "aro_coco_order:/d?seed=3", SubsetSpec(10, ("a", "b"), 7))
    with pytest.raises(BenchmarkError, match="need '\\?sample=N'"):
        split_subset("/x?by=tier")
    with pytest.raises(BenchmarkError, match="whole numbers"):
        split_subset("/x?sample=ten")


def test_stratified_subset_of_tiny_builtin():
    from foilbench.data.registry import resolve_benchmark
    from foilbench.data.tiny import tiny_benchmark

    bench = tiny_benchmark()
    col = "edit_type" if "edit_type" in bench.items.columns else "category"
    sub = resolve_benchmark(f"tiny-builtin?sample=6&by={col}&sample_seed=1")
    assert len(sub) == 6 and sub.name == f"tiny-builtin@sample=6,by={col},seed=1"
    rec = sub.manifest.extras["stratified_subset"]
    sizes = {tuple(a["stratum"]): a["size"] for a in rec["allocation"]}
    assert {tuple(a["stratum"]): a["chosen"] for a in rec["allocation"]} == allocate(sizes, 6)
    assert rec["item_ids"] == list(sub.items["item_id"]) and rec["parent_items"] == len(bench)
    counts = sub.items[col].value_counts().to_dict()
    assert counts == {k[0]: v for k, v in allocate(sizes, 6).items() if v}
    again = resolve_benchmark(f"tiny-builtin?sample=6&by={col}&sample_seed=1")
    assert list(again.items["item_id"]) == rec["item_ids"]  # seeded
    other = resolve_benchmark(f"tiny-builtin?sample=6&by={col}&sample_seed=2")
    assert other.manifest.checksum != sub.manifest.checksum != bench.manifest.checksum
    with pytest.raises(BenchmarkError, match="no column nope"):
        stratified_subset(bench, SubsetSpec(3, ("nope",)))
    with pytest.raises(BenchmarkError, match="between 1 and"):
        stratified_subset(bench, SubsetSpec(len(bench) + 1))
