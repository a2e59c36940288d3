"""The unit of n in `foilbench run`'s own numbers (CompoSET §5 vs Tables 9/10), by hand.

Planted: 2 instances (A in scene s0, B in scene s1) x 3 tiers, Group outcomes
A: short 1, medium 0, long 1; B: short 0, medium 0, long 1 (the colour encoder passes a pair
whose captions name its images' colours and fails one whose captions are swapped).
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from _core_helpers import ColourEncoder, solid, write_folder
from foilbench.cli.main import cli
from foilbench.data.format import load_benchmark
from foilbench.errors import BenchmarkError
from foilbench.evaluation import evaluate_run, hashed_unit, run_config_hash
from foilbench.stats.units import tiered_metric_table

PLANT = {("A", "short"): 1, ("A", "medium"): 0, ("A", "long"): 1,
         ("B", "short"): 0, ("B", "medium"): 0, ("B", "long"): 1}
SCENE = {"A": "s0", "B": "s1"}
EDIT = {"A": "modify_color", "B": "swap_color"}


def _wald(k: float, n: int) -> tuple[float, float]:
    p = k / n
    half = 1.96 * math.sqrt(p * (1 - p) / n)
    return max(0.0, p - half), min(1.0, p + half)


def _long() -> pd.DataFrame:
    return pd.DataFrame([{"item_id": f"{i}/{t}", "foil_id": i, "tier": t, "scene_id": SCENE[i],
                          "edit_type": EDIT[i], "metric": "group", "outcome": float(g),
                          "tie": False, "chance": 1 / 6} for (i, t), g in PLANT.items()])


def _rows(table: pd.DataFrame) -> dict:
    return {(r["group_by"], r["group_value"]): r for r in table.to_dict(orient="records")}


@pytest.mark.parametrize("unit", ["paper", "instance", "pooled", "tier"])
def test_each_setting_by_hand(unit):
    t = _rows(tiered_metric_table(_long(), unit=unit, instance="foil_id",
                                  by=["tier", "edit_type"], method="wald"))
    overall = t[("", "")]
    if unit == "pooled":  # 3 passes of 6 (instance, tier) items: Table 8/9's n
        assert (overall["k"], overall["n"], overall["unit"]) == (3.0, 6, "pooled")
        assert (overall["ci_low"], overall["ci_high"]) == pytest.approx(_wald(3, 6))
    else:  # tier means 2/3 and 1/3: k = 1 of n = 2 instances (§5's n)
        assert overall["k"] == pytest.approx(1.0) and overall["n"] == 2
        assert overall["value"] == pytest.approx(0.5) and overall["unit"] == "instance"
        assert (overall["ci_low"], overall["ci_high"]) == (0.0, 1.0)  # 0.5 +- 0.69, clamped
    # the tier rows are per tier in every setting (Table 10): short 1 of 2, medium 0, long 2
    for tier, k in (("short", 1), ("medium", 0), ("long", 2)):
        row = t[("tier", tier)]
        assert (row["k"], row["n"], row["unit"]) == (k, 2, "per_tier")
    edit = {"paper": ("pooled", 2.0, 3), "pooled": ("pooled", 2.0, 3),
            "instance": ("instance", 2 / 3, 1)}
    if unit in edit:  # modify_color = instance A: 2 of 3 items pooled, 2/3 of 1 instance
        want_unit, k, n = edit[unit]
        row = t[("edit_type", "modify_color")]
        assert row["unit"] == want_unit and row["k"] == pytest.approx(k) and row["n"] == n
    else:  # tier: every other breakdown within each tier, one instance per cell
        assert ("edit_type", "modify_color") not in t
        assert t[("tier/edit_type", "long/swap_color")]["k"] == 1.0
        assert t[("tier/edit_type", "medium/modify_color")]["n"] == 1
        assert {r["unit"] for k, r in t.items() if k[0] == "tier/edit_type"} == {"per_tier"}


def test_bad_unit_and_columns_are_named():
    with pytest.raises(ValueError, match="unknown unit 'scene'"):
        tiered_metric_table(_long(), unit="scene", instance="foil_id", by=[])
    with pytest.raises(ValueError, match="needs column.*instance_id"):
        tiered_metric_table(_long(), instance="instance_id", by=[])
    with pytest.raises(ValueError, match="got no rows"):
        tiered_metric_table(_long().iloc[:0], instance="foil_id", by=[])


def planted_folder(root, tiers=("short", "medium", "long")):
    """The planted benchmark as a foilbench folder (pair kind, tier + foil_id)."""
    solid(root / "red.png", "red")
    solid(root / "blue.png", "blue")
    rows = []
    for (i, t), g in PLANT.items():
        if t not in tiers:
            continue
        cb, cf = ("red", "blue") if g else ("blue", "red")  # swapped captions fail
        rows.append({"item_id": f"{i}/{t}", "image_base": "red.png", "image_foil": "blue.png",
                     "caption_base": f"a {cb} square", "caption_foil": f"a {cf} square",
                     "scene_id": SCENE[i], "edit_type": EDIT[i], "tier": t, "foil_id": i})
    return write_folder(root, "pair", pd.DataFrame(rows))


def test_evaluate_run_defaults_to_the_papers_unit(tmp_path):
    bench = load_benchmark(planted_folder(tmp_path / "b"))
    ev = evaluate_run(ColourEncoder(), bench, n_boot=200, ci_method="wald", progress=False)
    t = _rows(ev.metrics[ev.metrics["metric"] == "group"])
    assert (t[("", "")]["unit"], t[("", "")]["n"], t[("", "")]["k"]) == ("instance", 2, 1.0)
    assert (t[("tier", "long")]["unit"], t[("tier", "long")]["n"]) == ("per_tier", 2)
    assert (t[("edit_type", "swap_color")]["unit"], t[("edit_type", "swap_color")]["n"]) == (
        "pooled", 3)
    pooled = evaluate_run(ColourEncoder(), bench, n_boot=200, ci_method="wald",
                          progress=False, unit="pooled")
    row = _rows(pooled.metrics[pooled.metrics["metric"] == "group"])[("", "")]
    assert (row["unit"], row["n"], row["k"]) == ("pooled", 6, 3.0)
    # the unit is part of the resume key on a tiered benchmark; pooled keeps the old key
    assert ev.provenance["config_hash"] == run_config_hash(n_boot=200, ci_method="wald",
                                                           bench=bench)
    assert pooled.provenance["config_hash"] == run_config_hash(n_boot=200, ci_method="wald")
    assert ev.provenance["config_hash"] != pooled.provenance["config_hash"]


def test_untiered_benchmarks_count_items_whatever_the_unit(tmp_path):
    bench = load_benchmark(planted_folder(tmp_path / "b", tiers=("short",)))
    assert hashed_unit(bench, "paper") is None
    ev = evaluate_run(ColourEncoder(), bench, n_boot=200, ci_method="wald", progress=False,
                      unit="instance")
    row = _rows(ev.metrics[ev.metrics["metric"] == "group"])[("", "")]
    assert (row["unit"], row["n"], row["k"]) == ("items", 2, 1.0)


@pytest.mark.parametrize("change,match", [
    (lambda d: pd.concat([d, d.iloc[:1].assign(item_id="A/short-again")]),
     r"foil_id 'A' appears twice in tier 'short' \(item 'A/short-again'\)"),
    (lambda d: d.assign(scene_id=d["scene_id"].where(d["item_id"] != "A/long", "s9")),
     "foil_id 'A' spans scene_ids s0, s9"),
    (lambda d: d.assign(foil_id=d["foil_id"].where(d["item_id"] != "B/medium", None)),
     "item 'B/medium' has no 'foil_id'"),
])
def test_malformed_instances_are_named_before_the_model_runs(tmp_path, change, match):
    root = planted_folder(tmp_path / "b")
    items = change(pd.read_parquet(root / "items.parquet"))
    items.to_parquet(root / "items.parquet", index=False)
    model = ColourEncoder()
    with pytest.raises(BenchmarkError, match=match):
        evaluate_run(model, load_benchmark(root), n_boot=200, progress=False)
    assert model.image_calls == 0


def _cli(args):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


def test_cli_unit_option_and_the_stated_unit(env):
    bench = planted_folder(env / "planted")
    base = ["run", "--model", "tiny-random", "--benchmark", str(bench), "--n-boot", "200",
            "--no-report", "--quiet"]
    res = _cli([*base, "--out", str(env / "paper")])
    assert res.exit_code == 0, res.output
    assert "instance = per instance, tier mean (n = instances)" in res.output
    assert "planted per tier" in res.output  # the per-tier table
    [path] = (env / "paper").glob("*/summary.json")
    [entry] = json.loads(path.read_text())["runs"]
    assert {m: (v["unit"], v["n"]) for m, v in entry["metrics"].items()} == {
        m: ("instance", 2) for m in ("i2t", "t2i", "group")}
    assert {t: (v["unit"], v["n"]) for t, v in entry["by_tier"]["group"].items()} == {
        t: ("per_tier", 2) for t in ("short", "medium", "long")}
    res = _cli([*base, "--out", str(env / "pooled"), "--unit", "pooled"])
    assert res.exit_code == 0, res.output
    assert "pooled = pooled tiers (n = tiers x instances)" in res.output
    [path] = (env / "pooled").glob("*/summary.json")
    summary = json.loads(path.read_text())
    assert {(r["unit"], r["n"]) for r in summary["results"]} == {("pooled", 6)}
    run_id = summary["runs"][0]["run_id"]
    shown = _cli(["show", run_id, "--db", str(env / "pooled" / "foilbench.duckdb"), "--json"])
    assert {(m["unit"], m["n"]) for m in json.loads(shown.output)["metrics"]} == {("pooled", 6)}
    bad = CliRunner().invoke(cli, [*base, "--out", str(env / "bad"), "--unit", "scene"])
    assert bad.exit_code == 2 and "'scene' is not one of 'paper', 'tier'" in bad.output


def test_the_sweep_matrix_states_unit_and_n():
    from foilbench.analysis import matrix

    cells = pd.DataFrame([
        {"model": "m", "benchmark": "pairs", "metric": "group", "value": 0.5, "ci_low": 0.0,
         "ci_high": 1.0, "n": 2, "partial": False, "run_id": "r1", "unit": "instance"},
        {"model": "m", "benchmark": "old", "metric": "group", "value": 0.5, "ci_low": 0.4,
         "ci_high": 0.6, "n": 6, "partial": False, "run_id": "r2", "unit": None}])
    md = matrix.to_markdown(cells)
    assert "Unit of n: pairs: per instance, tier mean (n = instances), n = 2." in md
    assert "old:" not in md  # a cell stored before units were recorded states none
    assert "n = instances), n = 2." in matrix.to_latex(cells)
    # Wald on k = 0.5 x 2 of n = 2 (the instance n), clamped: [0, 100]
    assert "50.0 [0.0, 100.0]" in md
    assert "unit" in matrix.to_csv(cells).splitlines()[0]


def test_show_reads_a_store_written_before_units(env):
    from foilbench.store.db import ResultsStore

    bench = planted_folder(env / "planted")
    res = _cli(["run", "--model", "tiny-random", "--benchmark", str(bench), "--n-boot", "200",
                "--no-report", "--quiet", "--out", str(env / "o")])
    assert res.exit_code == 0, res.output
    db = env / "o" / "foilbench.duckdb"
    from foilbench.report import write_report

    html = write_report(db, [], env / "new.html").read_text()
    assert html.count("per instance, tier mean (n = instances)") >= 3  # i2t, t2i, group rows
    with ResultsStore(db) as store:  # what a schema-2 store looked like
        store.con.execute("ALTER TABLE metrics DROP COLUMN unit")
        store.con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        [run_id] = store.list_runs()["run_id"].tolist()
    shown = CliRunner().invoke(cli, ["show", run_id, "--db", str(db)], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "not recorded = stored before units were recorded" in shown.output
    html = write_report(db, [run_id], env / "r.html").read_text()
    assert "pooled tiers (n = tiers x instances)" in html  # older rows: read as pooled


def test_sweep_takes_the_unit_and_resumes_per_unit(env):
    from foilbench.cli.sweep_cmd import sweep

    bench = planted_folder(env / "planted")
    args = ["--model", "tiny-random", "--benchmark", str(bench), "--out", str(env / "s"),
            "--n-boot", "200", "--quiet"]
    runner = CliRunner()
    pooled = runner.invoke(sweep, [*args, "--unit", "pooled"])
    assert pooled.exit_code == 0, pooled.output
    assert "Unit of n: planted: pooled tiers (n = tiers x instances), n = 6." in pooled.output
    paper = runner.invoke(sweep, args)  # another unit: other numbers, computed anew
    assert "1 run(s) computed, 0 reused" in paper.output
    assert "planted: per instance, tier mean (n = instances), n = 2." in paper.output
    again = runner.invoke(sweep, [*args, "--unit", "paper"])
    assert "0 run(s) computed, 1 reused" in again.output
    [latest] = sorted((env / "s").glob("sweep-*"))[-1:]
    assert "n = instances), n = 2." in (latest / "matrix.md").read_text()


def test_run_settings_refuse_an_unknown_unit():
    from foilbench.runner.settings import RunnerError, RunSettings

    with pytest.raises(RunnerError, match="unit 'scene': choose one of paper, tier, instance, "
                                          "pooled"):
        RunSettings(unit="scene")
    assert RunSettings().scoring()["unit"] == "paper"


def test_a_composet_release_counts_its_instances(tmp_path):
    """The composet: loader keys instances by instance_id (one item per id and tier)."""
    from _ray_models import composet_spec
    from foilbench.data.registry import resolve_benchmark
    from foilbench.models.tiny import build_tiny_random

    bench = resolve_benchmark(composet_spec(tmp_path / "cs"))
    ev = evaluate_run(build_tiny_random(device="cpu"), bench, n_boot=200, progress=False)
    t = _rows(ev.metrics[ev.metrics["metric"] == "group"])
    assert (t[("", "")]["unit"], t[("", "")]["n"]) == ("instance", 3)  # 3 variations x 3 tiers
    assert (t[("tier", "short")]["unit"], t[("tier", "short")]["n"]) == ("per_tier", 3)
