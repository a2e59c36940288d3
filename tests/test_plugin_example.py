"""The worked plugin of docs/plugins.md (examples/plugin_package) installed the way a user
would (pip, offline, into a folder on the path) and used through the CLI: its model and
benchmark are listed, and `foilbench run` scores them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "examples" / "plugin_package"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    import shutil

    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("src") / "plugin_package"  # the build writes beside it
    shutil.copytree(PACKAGE, source)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-index", "--no-build-isolation", "--target", str(target),
                           str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (target / "foilbench_colour_plugin-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target


def _foilbench(args, target, home):
    env = {**os.environ, "FOILBENCH_HOME": str(home), "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([str(target), str(ROOT / "src")])}
    return subprocess.run([sys.executable, "-m", "foilbench", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def test_the_plugin_is_listed(installed, tmp_path):
    models = _foilbench(["models"], installed, tmp_path)
    assert models.returncode == 0, models.stderr
    assert "colour-mean" in models.stdout and "foilbench-colour-plugin" in models.stdout
    benches = _foilbench(["benchmarks"], installed, tmp_path)
    assert benches.returncode == 0, benches.stderr
    assert "colour-pairs" in benches.stdout


def test_run_scores_the_plugin_model_on_the_plugin_benchmark(installed, tmp_path):
    out = tmp_path / "out"
    res = _foilbench(["run", "--model", "colour-mean", "--benchmark", "colour-pairs",
                      "--n-boot", "200", "--quiet", "--no-report", "--out", str(out)],
                     installed, tmp_path)
    assert res.returncode == 0, res.stderr
    (summary,) = out.glob("*/summary.json")
    run = json.loads(summary.read_text())["runs"][0]
    assert (run["model"], run["benchmark"], run["n_items"]) == ("colour-mean",
                                                                 "colour-pairs", 4)
    # by hand: every base image is the colour its caption names and every foil another, so
    # the mean-colour model gets each of the 4 items right in both directions
    for metric in ("i2t", "t2i", "group"):
        assert run["metrics"][metric]["value"] == 1.0
