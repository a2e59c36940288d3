"""``--config FILE`` for run, sweep and construct; ``@FILE`` list files; provenance."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from foilbench.cli.config_option import config_keys
from foilbench.cli.main import cli
from foilbench.cli.run_cmd import run
from foilbench.cli.sweep_cmd import sweep
from foilbench.configfile import ConfigError, expand_specs, read_config
from foilbench.runner import RunSettings
from foilbench.runner.config_keys import valid_keys


def _summary(out):
    (path,) = out.glob("*/summary.json")
    return json.loads(path.read_text())


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


def test_run_reads_the_config_and_a_flag_overrides_it(home):
    (home / "models.txt").write_text("# the models\ntiny-random\n\n")
    config = home / "run.toml"
    config.write_text('models = ["@models.txt"]\nbenchmarks = ["tiny-builtin"]\n'
                      'n_boot = 200\nseed = 3\nquiet = true\nno_report = true\n'
                      f'out = "{home / "out"}"\n')
    res = CliRunner().invoke(run, ["--config", str(config), "--seed", "11"])
    assert res.exit_code == 0, res.output
    prov = _summary(home / "out")["provenance"]
    assert prov["seed"] == 11 and prov["n_boot"] == 200  # the flag beat the file's seed 3
    record = prov["run_config"]
    assert record["file"] == str(config.resolve())
    assert len(record["sha256"]) == 64
    values = record["values"]
    assert values["models"] == ["tiny-random"]  # the list file, expanded
    assert values["benchmarks"] == ["tiny-builtin"]
    assert values["seed"] == 11 and values["n_boot"] == 200 and values["no_report"] is True
    assert not list((home / "out").glob("*/report.html"))


def test_the_recorded_config_is_itself_a_valid_config(home):
    """What provenance holds uses the config keys: feeding it back resolves the same."""
    from foilbench import runner

    out = home / "out"
    first = runner.run(config={"models": ["tiny-random"], "benchmarks": ["tiny-builtin"],
                               "n_boot": 200, "quiet": True, "no_report": True,
                               "out": str(out)})
    values = first.summary["provenance"]["run_config"]["values"]
    assert "file" not in first.summary["provenance"]["run_config"]
    again = runner.run(config=values)
    assert again.summary["provenance"]["run_config"]["values"] == values
    assert again.report_path is None
    assert RunSettings.from_config(values) == RunSettings(n_boot=200, progress=False)


def test_python_arguments_override_the_config(home, tmp_path):
    from foilbench import runner

    config = tmp_path / "run.toml"
    config.write_text('benchmarks = "tiny-builtin"\nmodels = "tiny-random"\nn_boot = 300\n'
                      'seed = 5\nquiet = true\nno_report = true\n'
                      f'out = "{tmp_path / "a"}"\n')
    outcome = runner.run(out=tmp_path / "b", config=config, seed=9)
    prov = outcome.summary["provenance"]
    assert (prov["seed"], prov["n_boot"]) == (9, 300)
    assert outcome.summary_path.parent.parent == tmp_path / "b"
    assert prov["run_config"]["values"]["out"] == str(tmp_path / "b")


def test_sweep_reads_a_yaml_config_and_writes_the_resolved_config(home):
    pytest.importorskip("yaml")
    (home / "benches.txt").write_text("tiny-builtin\n")
    config = home / "sweep.yaml"
    config.write_text("model: [tiny-random]\nbenchmarks: ['@benches.txt']\nn-boot: 200\n"
                      f"quiet: true\nout: {home / 'out'}\ndb: {home / 'res.duckdb'}\n")
    res = CliRunner().invoke(sweep, ["--config", str(config), "--n-boot", "250"])
    assert res.exit_code == 0, res.output
    (folder,) = (home / "out").glob("sweep-*")
    record = json.loads((folder / "run_config.json").read_text())
    assert record["file"] == str(config.resolve())
    assert record["values"]["n_boot"] == 250  # the flag
    assert record["values"]["benchmarks"] == ["tiny-builtin"]
    assert record["values"]["db"] == str(home / "res.duckdb")
    assert (home / "res.duckdb").is_file()


def test_sweep_config_without_models_still_says_what_is_missing(home):
    config = home / "s.toml"
    config.write_text('benchmarks = ["tiny-builtin"]\n')
    res = CliRunner().invoke(sweep, ["--config", str(config)])
    assert res.exit_code == 2
    assert "--model" in res.output


def test_construct_reads_the_config_and_records_it_in_construction_json(tmp_path):
    config = tmp_path / "c.toml"
    out = tmp_path / "cs"
    config.write_text(f'out = "{out}"\nn_scenes = 1\nfoils_per_scene = 4\nsize = 64\n'
                      'min_foils = 0\nprogress = false\nseed = 2\n')
    res = CliRunner().invoke(cli, ["construct", "composet", "--config", str(config),
                                   "--size", "72"])
    assert res.exit_code == 0, res.output
    prov = json.loads((out / "construction.json").read_text())
    invocation = prov["options"]["invocation"]
    assert invocation["file"] == str(config.resolve())
    assert invocation["values"]["size"] == 72 and invocation["values"]["seed"] == 2
    assert "size" not in invocation["from_file"] and "n_scenes" in invocation["from_file"]
    assert prov["options"]["config"]["size"] == 72


@pytest.mark.parametrize("command", [["run"], ["sweep"], ["construct", "composet"]])
def test_an_unknown_key_is_one_sentence_naming_it_and_the_valid_ones(tmp_path, command):
    config = tmp_path / "c.toml"
    config.write_text("n_bot = 3\n")
    res = CliRunner().invoke(cli, [*command, "--config", str(config)])
    assert res.exit_code == 2
    message = " ".join(res.output.split())
    assert "unknown key 'n_bot'" in message
    assert f"(foilbench {' '.join(command)})" in message
    assert "valid keys: " in message and "seed" in message
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_the_python_api_rejects_an_unknown_key_the_same_way(tmp_path):
    from foilbench import runner

    with pytest.raises(ConfigError, match=r"unknown key 'report'.*valid keys: models"):
        runner.run(config={"report": False}, out=tmp_path)
    with pytest.raises(ConfigError, match="unknown key 'no_report'"):
        runner.sweep(config={"no_report": True, "models": ["x"]})


def test_cli_and_library_agree_on_the_keys():
    """Every option of run/sweep is a config key the runner also accepts, and no more."""
    for command, name in ((run, "run"), (sweep, "sweep")):
        assert set(config_keys(command)) == set(valid_keys(name))


def test_a_bad_value_is_reported_as_the_option_it_sets(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('n_boot = "many"\n')
    res = CliRunner().invoke(run, ["--config", str(config)])
    assert res.exit_code == 2
    assert "--n-boot" in res.output and "many" in res.output


def test_malformed_and_wrong_type_config_files(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("n_boot = \n")
    with pytest.raises(ConfigError, match=r"c\.toml: not valid TOML"):
        read_config(bad)
    with pytest.raises(ConfigError, match="must end in .toml, .yaml or .yml"):
        read_config(tmp_path / "c.json")
    res = CliRunner().invoke(run, ["--config", str(bad)])
    assert res.exit_code == 2 and "not valid TOML" in res.output


def test_yaml_without_pyyaml_names_the_extra(tmp_path, monkeypatch):
    config = tmp_path / "c.yaml"
    config.write_text("seed: 1\n")
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now fails
    with pytest.raises(ConfigError, match=r"needs PyYAML.*foilbench\[yaml\]"):
        read_config(config)


def test_list_files_expand_in_place_nested_and_relative_to_themselves(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "more.txt").write_text("c  # inline comment\n")
    (tmp_path / "all.txt").write_text("a\n# skipped\n@sub/more.txt\n\nb\n")
    assert expand_specs(["x", f"@{tmp_path / 'all.txt'}", "y"]) == ["x", "a", "c", "b", "y"]
    assert expand_specs(["@all.txt"], base=tmp_path) == ["a", "c", "b"]


def test_list_file_errors_name_the_file(tmp_path):
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(ConfigError, match="empty.txt names no spec"):
        expand_specs([f"@{tmp_path / 'empty.txt'}"])
    with pytest.raises(ConfigError, match="missing.txt: cannot read it"):
        expand_specs([f"@{tmp_path / 'missing.txt'}"])
    (tmp_path / "loop.txt").write_text(f"@{tmp_path / 'loop.txt'}\n")
    with pytest.raises(ConfigError, match="nested more than"):
        expand_specs([f"@{tmp_path / 'loop.txt'}"])


def test_at_file_on_the_command_line(home):
    (home / "m.txt").write_text("tiny-random\n")
    (home / "b.txt").write_text("tiny-builtin\n")
    res = CliRunner().invoke(run, ["--model", f"@{home / 'm.txt'}", "--benchmark",
                                   f"@{home / 'b.txt'}", "--n-boot", "200", "--quiet",
                                   "--no-report", "--out", str(home / "out")])
    assert res.exit_code == 0, res.output
    values = _summary(home / "out")["provenance"]["run_config"]["values"]
    assert values["models"] == ["tiny-random"] and values["benchmarks"] == ["tiny-builtin"]
    assert "file" not in _summary(home / "out")["provenance"]["run_config"]


def test_ray_keys_become_ray_options_and_need_ray():
    from foilbench.runner.config import merged

    args = merged({"ray": "auto", "ray_retries": 3, "ray_gpus": 0.5}, "run", models=None,
                  benchmarks=None, out=None, settings=None, ray=None)
    assert (args.ray.address, args.ray.retries, args.ray.gpus_per_model) == ("auto", 3, 0.5)
    assert merged({"ray": True}, "sweep", models=None, benchmarks=None, out=None,
                  settings=None, ray=None).ray.address == "local"
    with pytest.raises(ConfigError, match="ray_retries only apply with ray"):
        merged({"ray_retries": 3}, "run", models=None, benchmarks=None, out=None,
               settings=None, ray=None)


def test_settings_from_a_toml_file(tmp_path):
    config = tmp_path / "s.toml"
    config.write_text('n-boot = 500\nno_cache = true\ncache = "/tmp/emb"\nunit = "tier"\n'
                      'models = ["ignored-here"]\n')
    assert RunSettings.from_config(config) == RunSettings(n_boot=500, use_cache=False,
                                                          cache_dir="/tmp/emb", unit="tier")
    config.write_text("no_cache = 1\n")
    with pytest.raises(ConfigError, match="no_cache must be true or false"):
        RunSettings.from_config(config)


def test_a_construct_argument_is_set_by_its_name(tmp_path, monkeypatch):
    from PIL import Image

    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    Image.new("RGB", (32, 32), (200, 0, 0)).save(tmp_path / "a.png")
    (tmp_path / "caps.json").write_text(json.dumps(
        [{"image": "a.png", "caption": "a red square on a table"}]))
    config = tmp_path / "c.toml"
    config.write_text(f'captions = "{tmp_path / "caps.json"}"\nout = "{tmp_path / "sc"}"\n'
                      'dry_run = true\nlimit = 1\n')
    res = CliRunner().invoke(cli, ["construct", "sugarcrepe", "--config", str(config)])
    assert res.exit_code == 0, res.output
    assert "spend bound per stage" in res.output  # the dry run, with CAPTIONS from the file
    assert not (tmp_path / "sc" / "construction.json").exists()


def test_a_repeated_flag_replaces_the_files_list(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('models = ["a", "b"]\nbenchmarks = ["x"]\n')
    ctx = run.make_context("run", ["--config", str(config), "--model", "c"])
    assert ctx.params["models"] == ("c",) and ctx.params["benchmarks"] == ("x",)
