"""Validation complete before any model loads, the same in ``inspect`` and ``run`` (issue 42,
item 3). Each case once passed ``inspect`` or crashed ``run`` after the model had run."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from _core_helpers import colour_pair_folder
from _faults_cli import foilbench, no_traceback
from foilbench.data.validate import visible
from foilbench.errors import BenchmarkError
from foilbench.runner import run, sweep

FAST = {"n_boot": 100, "progress": False, "use_cache": False}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "300")


@pytest.fixture
def no_model_loads(monkeypatch):
    """A model load fails the test: the benchmark must be refused first."""
    import foilbench.runner.setup as setup

    def refuse(*args, **kwargs):
        raise AssertionError("a model was loaded before the benchmark was refused")

    monkeypatch.setattr(setup, "resolve_model", refuse)


def edit_manifest(root, **fields):
    manifest = json.loads((root / "manifest.json").read_text())
    manifest.setdefault("extras", {}).update(fields.pop("extras", {}))
    manifest.update(fields)
    (root / "manifest.json").write_text(json.dumps(manifest))


def edit_items(root, **columns):
    items = pd.read_parquet(root / "items.parquet")
    for col, values in columns.items():
        items[col] = values
    items.to_parquet(root / "items.parquet", index=False)


def tiered(root, instance, tier):
    edit_items(root, instance_id=instance, tier=tier)


CASES = {
    "score_unit names no column": (
        lambda r: edit_manifest(r, extras={"score_unit": "instance_id"}),
        "missing_unit_column", "score_unit 'instance_id' names no column"),
    "non-numeric unit_chance": (
        lambda r: edit_manifest(r, extras={"unit_chance": "half"}),
        "bad_unit_chance", "finite number in [0, 1], got 'half'"),
    "unit_chance 7.0": (
        lambda r: edit_manifest(r, extras={"unit_chance": 7.0}),
        "bad_unit_chance", "finite number in [0, 1], got 7.0"),
    "0 rows": (
        lambda r: pd.read_parquet(r / "items.parquet").head(0).to_parquet(
            r / "items.parquet", index=False),
        "no_items", "has no items"),
    "tier outside the tier set": (
        lambda r: tiered(r, ["i1", "i1", "i2", "i2"], ["short", "medium", "short", "enormous"]),
        "unknown_tier", "tier 'enormous' is not one of the benchmark's tiers"),
    "instance split across scenes": (
        lambda r: tiered(r, ["i1", "i2", "i1", "i2"], ["short", "short", "medium", "medium"]),
        "bad_instance", "instance_id 'i1' spans scene_ids s1, s2"),
    "zero-width-space caption": (
        lambda r: edit_items(r, caption_foil=["\u200b", "a blue square", "a blue square",
                                              "a red square"]),
        "empty_caption", "only invisible characters"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_inspect_and_run_refuse_the_same_before_a_model_loads(tmp_path, capsys, case,
                                                              no_model_loads):
    make, reason, message = CASES[case]
    root = colour_pair_folder(tmp_path / "b")
    make(root)
    code, out, err = foilbench(capsys, "inspect", str(root), "--json")
    no_traceback(err)
    assert code == 1
    problems = json.loads(out)["problems"]
    assert any(p["reason"] == reason and message in p["message"] for p in problems), problems
    with pytest.raises(BenchmarkError, match="invalid") as refused:
        run(["tiny-random"], [str(root)], tmp_path / "out", report=False, **FAST)
    assert message in str(refused.value)
    code, out, err = foilbench(capsys, "run", "--model", "tiny-random", "--benchmark",
                               str(root), "--out", str(tmp_path / "out2"), "--no-report")
    no_traceback(err)
    assert code == 2 and reason in err


def test_a_sweep_refuses_a_table_problem_before_a_model_loads(tmp_path, no_model_loads):
    root = colour_pair_folder(tmp_path / "b")
    edit_manifest(root, extras={"unit_chance": 7.0})
    with pytest.raises(BenchmarkError, match="unit_chance"):
        sweep(["tiny-random"], [str(root)], tmp_path / "out", **FAST)


def test_n_items_that_disagrees_with_the_table_is_refused(tmp_path, capsys, no_model_loads):
    root = colour_pair_folder(tmp_path / "b")
    edit_manifest(root, n_items=999)
    for args in (["inspect", str(root)],
                 ["run", "--model", "tiny-random", "--benchmark", str(root), "--out",
                  str(tmp_path / "out"), "--no-report"]):
        code, out, err = foilbench(capsys, *args)
        no_traceback(err)
        assert code == 2 and "n_items says 999 but items.parquet holds 4 rows" in err


def test_declared_tiers_are_the_tier_set(tmp_path, capsys):
    root = colour_pair_folder(tmp_path / "b")
    tiered(root, ["i1", "i1", "i2", "i2"], ["tiny", "huge", "tiny", "huge"])
    edit_manifest(root, extras={"tiers": ["tiny", "huge"]})
    code, out, err = foilbench(capsys, "inspect", str(root), "--json")
    assert code == 0, out


def test_visible_text():
    assert not visible("\u200b \u200d\t\u2060\u202e")
    assert visible("a\u200b")
    assert visible("\u00e9")
