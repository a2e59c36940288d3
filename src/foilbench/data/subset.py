"""Seeded stratified subsets of a benchmark, for models too costly to run on all of it.

CompoSET App. G.4: "We separately evaluate generative VLMs on a stratified 200-instance
CompoSET subset", with "~67 instances per tier" (Table 12), "sized to bound API cost" (§5).
The paper does not name its strata beyond the tiers or its allocation; foilbench's:

* spec options ``?sample=N&by=COL[,COL...]&sample_seed=S`` on any benchmark spec (a folder,
  ``LOADER:PATH``, a registered name or a suite; the loader's own options stay beside them);
  ``by`` defaults to no strata (a simple random sample), ``sample_seed`` to 0;
* proportional allocation by largest remainder (Hamilton): stratum h of N_h items gets
  floor(N N_h / total) items, and the leftover items go to the largest fractional parts (ties:
  the larger stratum, then the stratum key in sorted order); a missing value is its own
  stratum ``NA``;
* within a stratum, a uniform draw without replacement from one generator seeded by
  ``sample_seed``, strata visited in sorted key order; items keep their original order.

A tiered pair benchmark (CompoSET format: an instance key and caption tiers) is sampled by
instance, N instances (:mod:`foilbench.data.subset_instances`): ``by=tier`` gives the paper's
"200-instance subset" with "~67 instances per tier", one item per instance, so counts are
whole at every unit; before issue 41 it drew N (instance, tier) items (191 instances, k =
22.5 under the per-instance unit).

The subset is recorded where every run sees it: the benchmark's name gains
``@sample=N,by=A+B,seed=S`` (so stored runs never mix it with the full benchmark), its
checksum covers the parent's and the chosen item ids, and
``manifest.extras["stratified_subset"]`` holds
the parameters, the parent's name and checksum, the allocation per stratum and the item ids.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode

import numpy as np
import pandas as pd

from foilbench.data.allocation import allocate
from foilbench.errors import BenchmarkError
from foilbench.hashing import sha256_text

__all__ = ["KEYS", "SubsetSpec", "allocate", "split_subset", "stratified_subset"]

KEYS = ("sample", "by", "sample_seed")


@dataclass(frozen=True)
class SubsetSpec:
    n: int
    by: tuple[str, ...] = ()
    seed: int = 0

    def label(self) -> str:
        """The suffix a subset's name gains (no brackets or spaces: names reach rich-markup
        tables and file names)."""
        by = f",by={'+'.join(self.by)}" if self.by else ""
        return f"@sample={self.n}{by},seed={self.seed}"


def split_subset(spec: str) -> tuple[str, SubsetSpec | None]:
    """(the spec without the subset options, the subset or None); other options stay.

    >>> split_subset("sugarcrepe:/d?subset=table8&sample=200&by=category")
    ('sugarcrepe:/d?subset=table8', SubsetSpec(n=200, by=('category',), seed=0))
    """
    base, sep, query = spec.partition("?")
    if not sep:
        return spec, None
    pairs = parse_qsl(query, keep_blank_values=True)
    ours = {k: v for k, v in pairs if k in KEYS}
    rest = [(k, v) for k, v in pairs if k not in KEYS]
    clean = f"{base}?{urlencode(rest)}" if rest else base
    if not ours:
        return spec, None
    if "sample" not in ours:
        raise BenchmarkError(f"{spec}: 'by' and 'sample_seed' need '?sample=N'")
    try:
        n, seed = int(ours["sample"]), int(ours.get("sample_seed", 0))
    except ValueError:
        raise BenchmarkError(f"{spec}: sample and sample_seed must be whole numbers") from None
    by = tuple(c for c in ours.get("by", "").split(",") if c)
    return clean, SubsetSpec(n, by, seed)


def stratified_subset(bench, subset: SubsetSpec):
    """The subset of ``bench`` (see the module docstring); refuses a sample larger than the
    benchmark or a stratum column it lacks, naming it."""
    from foilbench.data.tiers import TIER, instance_column

    items = bench.items
    missing = [c for c in subset.by if c not in items.columns]
    if missing:
        raise BenchmarkError(f"{bench.name}: no column {', '.join(missing)} to stratify by; "
                             f"columns: {', '.join(map(str, items.columns))}")
    instance = instance_column(items.columns)
    if instance is not None and TIER in items.columns and items[TIER].dropna().nunique() > 1:
        return _by_instance(bench, subset, instance)
    if not 1 <= subset.n <= len(items):
        raise BenchmarkError(f"{bench.name}: sample={subset.n} must lie between 1 and the "
                             f"benchmark's {len(items)} items")
    keys = (items[list(subset.by)].astype(object).where(items[list(subset.by)].notna(), "NA")
            .astype(str).apply(tuple, axis=1) if subset.by
            else pd.Series([()] * len(items), index=items.index))
    groups = {k: np.flatnonzero((keys == k).to_numpy()) for k in sorted(set(keys))}
    alloc = allocate({k: len(v) for k, v in groups.items()}, subset.n)
    rng = np.random.default_rng(subset.seed)
    chosen = np.sort(np.concatenate([rng.choice(groups[k], alloc[k], replace=False)
                                     for k in sorted(groups)]))
    allocation = [{"stratum": list(k), "size": len(groups[k]), "chosen": alloc[k]}
                  for k in sorted(groups)]
    return _subset_of(bench, subset, chosen, {"allocation": allocation})


def _by_instance(bench, subset: SubsetSpec, instance: str):
    from foilbench.data.subset_instances import instance_subset

    chosen, record = instance_subset(bench.items, instance, subset.n, subset.by, subset.seed,
                                     bench.name)
    return _subset_of(bench, subset, chosen, record)


def _subset_of(bench, subset: SubsetSpec, chosen: np.ndarray, extra: dict):
    """The benchmark of the rows ``chosen``, its name, checksum and manifest record."""
    items = bench.items
    sub_items = items.iloc[chosen].reset_index(drop=True)
    ids = [str(i) for i in sub_items["item_id"]]
    parent = bench.manifest.checksum or bench.compute_checksum(include_images=False)
    record = {"n": subset.n, "by": list(subset.by), "seed": subset.seed,
              "parent_name": bench.name, "parent_checksum": parent,
              "parent_items": len(items), **extra, "item_ids": ids}
    checksum = "sha256:" + sha256_text(f"{parent}|{subset.label()}|{'|'.join(ids)}")
    manifest = replace(bench.manifest, name=f"{bench.name}{subset.label()}", checksum=checksum,
                       extras={**bench.manifest.extras, "stratified_subset": record})
    return replace(bench, manifest=manifest, items=sub_items)
