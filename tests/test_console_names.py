"""Names a user tries either work or say exactly what to do: the embedded suite's benchmarks by
name, a missing folder, a release not fetched yet, a loader foilbench cannot fetch, and open_clip
weights that do not fit their config."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from foilbench.cli.main import _main
from foilbench.construct import suite
from foilbench.data.registry import resolve_benchmark, resolve_benchmarks
from foilbench.errors import ModelError, UnknownNameError


@pytest.fixture(scope="module")
def tiny_suite(tmp_path_factory):
    from test_construct_suite import TINY

    root = tmp_path_factory.mktemp("suite") / "suite-0"
    suite.build_suite(root, seed=0, size=48, config=TINY, progress=False)
    return root


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_members_name_what_the_suite_builds(tiny_suite):
    built = json.loads((tiny_suite / suite.SUITE_FILE).read_text())["benchmarks"]
    assert tuple(built) == suite.MEMBERS


@pytest.mark.parametrize("name", suite.MEMBERS)
def test_a_suite_member_resolves_by_name(tiny_suite, home, monkeypatch, name):
    monkeypatch.setattr(suite, "cache_dir", lambda seed=0: tiny_suite)
    [bench] = resolve_benchmarks(name, progress=False)
    assert bench.name == name and bench.root == tiny_suite / name
    assert resolve_benchmark(name).name == name


def test_a_folder_of_a_members_name_wins(tiny_suite, home, monkeypatch):
    import shutil

    monkeypatch.setattr(suite, "cache_dir", lambda seed=0: home / "nowhere")
    shutil.copytree(tiny_suite / "autocomp-n1", home / "autocomp-n1")
    [bench] = resolve_benchmarks("autocomp-n1", progress=False)  # no build: the folder
    assert bench.root.resolve() == (home / "autocomp-n1").resolve()
    assert not (home / "nowhere").exists()


def run_cli(args, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["foilbench", *args])
    with pytest.raises(SystemExit) as exc:
        _main()
    return exc.value.code, capsys.readouterr().err


@pytest.mark.parametrize("spec", ["./nosuch", "data/nosuch", "/no/such/bench"])
def test_a_missing_folder_is_said_as_such(home, monkeypatch, capsys, spec):
    code, err = run_cli(["inspect", spec], monkeypatch, capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: folder {spec} does not exist (a benchmark is a folder holding manifest.json; "
        "a release is LOADER:PATH)"]


def test_a_release_not_fetched_yet_names_the_fetch_command(home):
    with pytest.raises(UnknownNameError) as exc:
        resolve_benchmarks("sugarcrepe", progress=False)
    msg = str(exc.value)
    assert "sugarcrepe is not fetched yet: run `foilbench fetch sugarcrepe`" in msg
    assert "sugarcrepe:PATH" in msg
    with pytest.raises(UnknownNameError, match="fetch whatsup`.*whatsup_pairs:PATH"):
        resolve_benchmark("whatsup")


def test_a_loader_without_a_fetcher_says_loader_path(home):
    with pytest.raises(UnknownNameError, match="composet is a loader, not a benchmark: name "
                                               "the folder of its release as composet:PATH"):
        resolve_benchmark("composet")


def test_a_near_miss_lists_the_members(home):
    with pytest.raises(UnknownNameError, match="world-pairs"):
        resolve_benchmark("world-pairz")


def test_the_cli_run_takes_a_member_name(tiny_suite, home, monkeypatch):
    monkeypatch.setattr(suite, "cache_dir", lambda seed=0: tiny_suite)
    from foilbench.cli.main import cli

    res = CliRunner().invoke(cli, ["run", "--model", "tiny-random", "--benchmark",
                                   "autocomp-n1", "--n-boot", "200", "--no-report", "--quiet",
                                   "--out", str(home / "o")])
    assert res.exit_code == 0, res.output
    assert "autocomp-n1 (choice" in res.output and "world-pairs" not in res.output


class TestOpenclipMismatch:
    """Weights saved from one config, loaded with another: one sentence, no traceback."""

    @pytest.fixture(scope="class")
    @classmethod
    def files(cls, tmp_path_factory):
        open_clip = pytest.importorskip("open_clip")
        import torch

        from _models_tiny import TINY_OPENCLIP_CFG, write_openclip_config
        from foilbench.models.openclip.spec import register_json_config

        d = tmp_path_factory.mktemp("oc")
        config = write_openclip_config(d, "tinycfg")
        out = {"config": config}
        for key, change in (("vision", ("vision_cfg", "width", 64)),
                            ("text", ("text_cfg", "width", 64))):
            cfg = json.loads(json.dumps(TINY_OPENCLIP_CFG))
            cfg[change[0]][change[1]] = change[2]
            other = d / f"tiny{key}.json"
            other.write_text(json.dumps(cfg))
            model = open_clip.create_model(register_json_config(other))
            out[key] = d / f"{key}.pt"
            torch.save(model.state_dict(), out[key])
        return out

    @pytest.mark.parametrize("key,detail", [
        ("vision", "is [64] in the file but [32] in the model and "),
        ("text", "text position embedding width differs")])
    def test_one_sentence(self, files, key, detail):
        from foilbench.models.registry import resolve_model

        with pytest.raises(ModelError) as exc:
            resolve_model(f"openclip:{files['config']}:{files[key]}", device="cpu")
        msg = str(exc.value)
        assert msg.startswith(f"{files[key]} does not fit the architecture tinycfg (from "
                              f"{files['config']}): ")
        assert detail in msg and "\n" not in msg
        assert msg.endswith("give the config (or architecture name) the weights were saved "
                            "with")
        assert exc.value.__cause__ is None and exc.value.__suppress_context__
