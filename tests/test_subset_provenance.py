"""A G.4 subset (``?sample=N&by=...&sample_seed=S``) is recorded in the run's provenance:
stored with the run (``eval_stats.subset``), printed by ``foilbench show RUN`` and in the
report's provenance table; a full benchmark says so."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from foilbench.provenance import describe_subset, subset_record


def test_subset_record_keeps_parameters_and_allocation_not_ids():
    extras = {"stratified_subset": {"n": 4, "by": ["edit_type"], "seed": 3, "parent_name": "p",
                         "parent_checksum": "sha256:abc", "parent_items": 12,
                         "allocation": [{"stratum": ["a"], "size": 6, "chosen": 2},
                                        {"stratum": ["b"], "size": 6, "chosen": 2}],
                         "item_ids": ["i1", "i2", "i3", "i4"]}}
    rec = subset_record(extras)
    assert rec == {"n": 4, "by": ["edit_type"], "seed": 3, "parent_name": "p",
                   "parent_checksum": "sha256:abc", "parent_items": 12,
                   "allocation": extras["stratified_subset"]["allocation"], "n_item_ids": 4}
    assert describe_subset(rec) == (
        "subset of 4 of 12 items of p (sha256:abc), stratified by edit_type (2 strata, "
        "proportional allocation), sample_seed 3 (CompoSET App. G.4)")
    assert subset_record({}) is None and subset_record(None) is None
    assert describe_subset(None) is None


def test_a_loaders_own_subset_option_is_not_a_g4_record():
    """SugarCrepe's loader keeps its own ``subset`` option (``?subset=table8``) in the
    manifest extras; it must not be read as a G.4 stratified subset."""
    from foilbench.provenance import subset_record

    assert subset_record({"subset": "table8", "types": ["swap_obj"]}) is None


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    from foilbench.cli.run_cmd import run as run_cmd

    out = tmp_path_factory.mktemp("subset")
    res = CliRunner().invoke(run_cmd, [
        "--model", "tiny-random", "--benchmark", "tiny-builtin?sample=6&by=edit_type&sample_seed=1",
        "--benchmark", "tiny-builtin", "--out", str(out), "--n-boot", "200", "--no-report"])
    assert res.exit_code == 0, res.output
    return out / "foilbench.duckdb"


def _runs(db):
    from foilbench.store.db import ResultsStore

    with ResultsStore(db, read_only=True) as store:
        return {r["benchmark_name"]: store.get_run(r["run_id"])
                for r in store.list_runs().to_dict(orient="records")}


def test_run_stores_the_subset_and_show_prints_it(stored):
    from foilbench.cli.show_cmd import show
    from foilbench.data.registry import resolve_benchmark

    runs = _runs(stored)
    sub_run = runs["tiny-builtin@sample=6,by=edit_type,seed=1"]
    rec = sub_run["eval_stats"]["subset"]
    bench = resolve_benchmark("tiny-builtin?sample=6&by=edit_type&sample_seed=1")
    expect = bench.manifest.extras["stratified_subset"]
    assert rec["n"] == 6 and rec["by"] == ["edit_type"] and rec["seed"] == 1
    assert rec["parent_items"] == 12 and rec["parent_name"] == "tiny-builtin"
    assert rec["allocation"] == expect["allocation"] and rec["n_item_ids"] == 6
    assert sum(a["chosen"] for a in rec["allocation"]) == 6
    assert runs["tiny-builtin"]["eval_stats"]["subset"] is None

    out = CliRunner().invoke(show, [sub_run["run_id"], "--db", str(stored)]).output
    assert "subset of 6 of 12 items of tiny-builtin" in " ".join(out.split())
    full = CliRunner().invoke(show, [runs["tiny-builtin"]["run_id"], "--db", str(stored)])
    assert "no (the full benchmark)" in " ".join(full.output.split())
    js = json.loads(CliRunner().invoke(show, [sub_run["run_id"], "--db", str(stored),
                                              "--json"]).output)
    assert js["run"]["eval_stats"]["subset"]["n"] == 6


def test_report_provenance_shows_the_subset(stored):
    from foilbench.report import sections
    from foilbench.report.build import load_runs

    html = sections.provenance(load_runs(stored, []))
    assert "<th>subset</th>" in html
    assert "6 of 12 (by edit_type, seed 1)" in html and ">full<" in html
    assert "subset of 6 of 12 items of tiny-builtin" in html
