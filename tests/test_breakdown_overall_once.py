"""A tiered metric table summarises each row once: the breakdown calls of
:func:`foilbench.stats.units.tiered_metric_table` leave out the overall rows they would only
drop (``metric_table(overall=False)``), and every row kept is the one computed before."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.stats import breakdown, units
from foilbench.stats.breakdown import metric_table
from foilbench.stats.units import tiered_metric_table

TIERS = ("short", "medium", "long")


def _long(n_instances: int = 120, seed: int = 3) -> pd.DataFrame:
    """Two metrics over instances x tiers, scenes of three instances, two edit types: enough
    scenes (40) that ``auto`` takes the scene bootstrap for the overall rows."""
    rng = np.random.default_rng(seed)
    rows = []
    for metric in ("text", "group"):
        for i in range(n_instances):
            for tier in TIERS:
                rows.append({"item_id": f"i{i}/{tier}", "foil_id": f"i{i}", "tier": tier,
                             "scene_id": f"s{i // 3}", "edit_type": ("swap", "replace")[i % 2],
                             "metric": metric, "outcome": float(rng.random() < 0.4),
                             "tie": bool(rng.random() < 0.1), "chance": 1 / 6})
    return pd.DataFrame(rows)


def test_overall_false_is_the_table_without_its_overall_rows():
    table = _long()
    full = metric_table(table, by=["tier", "edit_type"], n_boot=500, seed=7)
    assert (full["group_by"] == "").sum() == 2  # one overall row per metric
    assert full["ci_method"].str.startswith("bootstrap").any()
    part = metric_table(table, by=["tier", "edit_type"], n_boot=500, seed=7, overall=False)
    want = full[full["group_by"] != ""].reset_index(drop=True)
    pd.testing.assert_frame_equal(part, want, check_exact=True)


@pytest.mark.parametrize("unit", ["paper", "instance", "pooled", "tier"])
def test_tiered_table_summarises_each_row_once_and_keeps_its_numbers(unit, monkeypatch):
    table = _long()
    kwargs = dict(unit=unit, instance="foil_id", by=["tier", "edit_type"], n_boot=500, seed=7)
    real_metric_table = units.metric_table

    def every_overall(*args, **kw):  # the former calls: overall rows made, then dropped
        kw.pop("overall", None)
        return real_metric_table(*args, **kw)

    monkeypatch.setattr(units, "metric_table", every_overall)
    before = tiered_metric_table(table, **kwargs)
    monkeypatch.undo()
    calls = []
    real_summarise = breakdown.summarise
    monkeypatch.setattr(breakdown, "summarise",
                        lambda *a, **kw: calls.append(1) or real_summarise(*a, **kw))
    after = tiered_metric_table(table, **kwargs)
    assert len(calls) == len(after)  # no row summarised and thrown away
    pd.testing.assert_frame_equal(after, before, check_exact=True)


def test_metrics_keep_the_order_of_their_first_rows():
    table = _long(n_instances=60)
    order = ["text", "image", "group"]  # neither sorted nor the table's first order
    parts = [table[table["metric"] == "text"].assign(metric=m) for m in order]
    table = pd.concat(parts, ignore_index=True).astype({"metric": "string"})
    out = tiered_metric_table(table, instance="foil_id", by=["tier"], n_boot=200)
    assert list(dict.fromkeys(out["metric"])) == order
    firsts = out.groupby("metric", sort=False)["group_by"].first()
    assert (firsts == "").all()  # each metric's overall row first, then its tiers
