"""``foilbench run``, ``inspect``, ``show`` and the catalog through click's CliRunner."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import torch
from click.testing import CliRunner

from _core_helpers import colour_pair_folder
from foilbench.cli.main import cli
from foilbench.errors import ModelError
from foilbench.models.registry import EMBEDDED_DEFAULTS

FIELDS = {"value", "n", "ci_low", "ci_high", "ci_method", "chance", "ties"}


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


def _run(args):
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return result


def test_run_writes_summary_with_required_fields(env):
    out = env / "runs"
    res = _run(["run", "--model", "tiny-random", "--benchmark", "tiny-builtin", "--out", str(out),
                "--n-boot", "200", "--no-report", "--quiet"])
    assert res.exit_code == 0, res.output
    assert "group" in res.output and "chance" in res.output
    [summary_path] = list(out.glob("*/summary.json"))
    summary = json.loads(summary_path.read_text())
    assert {r["metric"] for r in summary["results"]} == {"i2t", "t2i", "group"}
    for row in summary["results"]:
        assert FIELDS <= set(row) and row["model"] == "tiny-random"
        assert row["benchmark"] == "tiny-builtin" and row["n"] == 12
        assert 0 <= row["ci_low"] <= row["value"] <= row["ci_high"] <= 1
    [run] = summary["runs"]
    assert run["metrics"]["group"]["chance"] == pytest.approx(1 / 6)
    prov = run["provenance"]
    assert {"package_version", "git_revision", "seed", "tie_policy", "created"} <= set(prov)
    assert prov["seed"] == 42 and prov["tie_policy"] == "strict>"
    assert run["model_fingerprint"].startswith("tiny-random:")
    assert run["benchmark_checksum"].startswith("sha256:")
    assert summary["reference"]["tiny-builtin"]["chance"]["group"] == pytest.approx(1 / 6)
    assert (out / "foilbench.duckdb").exists()
    # the stored run can be shown by a prefix of its id
    shown = _run(["show", run["run_id"][:8], "--db", str(out / "foilbench.duckdb"), "--json"])
    assert shown.exit_code == 0
    assert json.loads(shown.output)["run"]["run_id"] == run["run_id"]


def test_run_defaults_to_the_embedded_models(env):
    res = _run(["run", "--benchmark", "tiny-builtin", "--out", str(env / "r"), "--n-boot",
                "100", "--no-report", "--quiet"])
    assert res.exit_code == 0, res.output
    summary = json.loads(next((env / "r").glob("*/summary.json")).read_text())
    assert sorted(r["model"] for r in summary["runs"]) == sorted(EMBEDDED_DEFAULTS)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error")
def test_default_models_do_not_hide_a_device_error(env):
    with pytest.raises(ModelError, match="no CUDA GPU"):
        _run(["run", "--benchmark", "tiny-builtin", "--device", "cuda", "--out", str(env / "r")])


def test_unknown_model_lists_choices(env):
    with pytest.raises(Exception, match="unknown model 'tiny-randm'.*Did you mean: tiny-random"):
        _run(["run", "--model", "tiny-randm", "--benchmark", "tiny-builtin",
              "--out", str(env / "r")])


def test_inspect_json_exact_shape(env):
    res = _run(["inspect", "tiny-builtin", "--json"])
    assert res.exit_code == 0
    data = json.loads(res.output)
    assert set(data) == {"benchmark", "n_items", "by", "images_checked", "problems"}
    assert data["benchmark"] == "tiny-builtin" and data["n_items"] == 12
    assert data["images_checked"] == "decoded"
    assert data["by"]["kind"] == {"pair": 12}
    assert data["by"]["scene_id"] == {f"s{k}": 2 for k in range(6)}
    assert data["problems"] == []


def test_inspect_without_images_reports_problems(env):
    root = colour_pair_folder(env / "bench")
    (root / "blue.png").unlink()
    items = pd.read_parquet(root / "items.parquet")
    items.loc[items["item_id"] == "a", "caption_base"] = ""
    items.to_parquet(root / "items.parquet", index=False)
    res = _run(["inspect", str(root), "--json"])
    assert res.exit_code == 1  # problems found
    data = json.loads(res.output)
    assert data["n_items"] == 4 and data["by"]["edit_type"] == {"modify_color": 4}
    found = {(p["item_id"], p["field"], p["reason"]) for p in data["problems"]}
    assert found == {("a", "caption_base", "empty_caption"), ("b", "image_foil", "missing_image"),
                     ("c", "image_foil", "missing_image"), ("d", "image_base", "missing_image")}


def test_catalog_commands_list_registries(env):
    models = _run(["models"])
    assert models.exit_code == 0 and "tiny-random" in models.output and "openclip:" in models.output
    benches = _run(["benchmarks"])
    assert benches.exit_code == 0 and "tiny-builtin" in benches.output
    assert "sugarcrepe:PATH" in benches.output


def test_allow_partial_drops_reports_and_marks_the_run(env):
    root = colour_pair_folder(env / "bench")
    items = pd.read_parquet(root / "items.parquet")
    items.loc[items["item_id"] == "b", "caption_foil"] = ""
    items.to_parquet(root / "items.parquet", index=False)
    args = ["run", "--model", "tiny-random", "--benchmark", str(root), "--out", str(env / "r"),
            "--n-boot", "100", "--no-report", "--quiet"]
    with pytest.raises(Exception, match=r"item 'b', field 'caption_foil': empty caption"):
        _run(args)
    res = _run(args + ["--allow-partial"])
    assert res.exit_code == 0 and "PARTIAL" in res.output
    [summary_path] = list((env / "r").glob("*/summary.json"))
    [run] = json.loads(summary_path.read_text())["runs"]
    assert run["partial"] is True and run["n_items"] == 3
    assert run["dropped"] == {"n": 1, "by_reason": {"empty_caption": 1}}
    shown = _run(["show", run["run_id"], "--db", str(env / "r" / "foilbench.duckdb"),
                  "--by", "scene_id"])
    assert shown.exit_code == 0 and "scene_id=s1" in shown.output and "True" in shown.output


def test_catalog_names_missing_optional_dependencies():
    from foilbench.cli.catalog_cmd import _table
    from foilbench.registry import Registry

    reg = Registry("model")
    reg.register("needs-nothing", "foilbench.models.tiny:build_tiny_random")
    reg.register("needs-ghost", "foilbench.models.tiny:build_tiny_random",
                 requires=("json", "no_such_module_xyz"))
    rows = list(zip(*[c._cells for c in _table("t", reg).columns], strict=True))
    assert rows == [("needs-ghost", "[dim]needs no_such_module_xyz[/dim]", "[dim]foilbench.models."
                     "tiny:build_tiny_random[/dim]"),
                    ("needs-nothing", "yes", "[dim]foilbench.models.tiny:build_tiny_random[/dim]")]
