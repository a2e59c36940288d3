"""A run's console: one progress display, dependency warnings kept off it, torch threads chosen
from the usable CPUs and the load, idle threads that sleep."""

from __future__ import annotations

import os
import warnings

import pytest
import tqdm as tqdm_module

from foilbench import runner
from foilbench.runner import threads
from foilbench.runner.log import contained_warnings
from foilbench.runner.settings import RunnerError, RunSettings


def test_one_progress_display_for_the_whole_run(tmp_path, monkeypatch):
    made = []
    real = tqdm_module.tqdm

    class Counting(real):
        def __init__(self, *args, **kwargs):
            made.append(kwargs.get("desc"))
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(tqdm_module, "tqdm", Counting)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    runner.run(["tiny-random"], ["tiny-builtin", "tiny-builtin"], tmp_path / "out",
               n_boot=200, progress=True, report=False, log=lambda level, msg: None)
    # two cells, two stages each (images, texts): one display, named after the run
    assert made == ["foilbench run"]


def test_a_fresh_home_run_builds_the_suite_on_the_same_one_display(tmp_path, monkeypatch):
    """Issue 29: the one-time embedded suite build shows its parts on the run's display, not
    as bars of its own (a tiny suite: the parts' sizes cut down, the machinery unchanged)."""
    from tqdm import std

    from foilbench.construct import suite
    from foilbench.runner.progress import RunProgress

    made, labels = [], []
    real_init, real_stage = std.tqdm.__init__, RunProgress.stage

    def counting_init(self, *args, **kwargs):  # every bar, tqdm.auto's included
        made.append(kwargs.get("desc"))
        real_init(self, *args, **kwargs)

    def recording_stage(self, label, total):
        labels.append(label)
        return real_stage(self, label, total)

    monkeypatch.setattr(std.tqdm, "__init__", counting_init)
    monkeypatch.setattr(RunProgress, "stage", recording_stage)
    tiny = {"pairs": {"n_scenes": 2, "foils_per_scene": 2},
            "autocomp": {"n_concepts": 1, "ns": (2,)}, "autocomp-n1": {"n_concepts": 1},
            "compass": {"n_scenes": 2}}
    monkeypatch.setattr(suite, "PARTS", tuple(suite.Part(p.name, p.target, tiny[p.name])
                                              for p in suite.PARTS))
    monkeypatch.setattr(suite, "DEFAULT_SIZE", 64)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    assert not suite.cache_dir().exists()  # a fresh home: the run builds the suite
    runner.run(["tiny-random"], ["synth"], tmp_path / "out", n_boot=100, progress=True,
               report=False, log=lambda level, msg: None)
    assert (suite.cache_dir() / suite.SUITE_FILE).is_file()
    assert made == ["foilbench run"]
    assert [lab for lab in labels if lab.startswith("suite: ")] == [
        "suite: world pairs", "suite: auto-comp concepts", "suite: auto-comp N=1 concepts",
        "suite: compass scenes"]



def test_a_fresh_home_sweep_builds_the_suite_on_its_one_display(tmp_path, monkeypatch):
    """The same for ``sweep``: the suite build and every cell on one display."""
    from tqdm import std

    from foilbench.construct import suite

    made = []
    real_init = std.tqdm.__init__

    def counting_init(self, *args, **kwargs):
        made.append(kwargs.get("desc"))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(std.tqdm, "__init__", counting_init)
    tiny = {"pairs": {"n_scenes": 2, "foils_per_scene": 2},
            "autocomp": {"n_concepts": 1, "ns": (2,)}, "autocomp-n1": {"n_concepts": 1},
            "compass": {"n_scenes": 2}}
    monkeypatch.setattr(suite, "PARTS", tuple(suite.Part(p.name, p.target, tiny[p.name])
                                              for p in suite.PARTS))
    monkeypatch.setattr(suite, "DEFAULT_SIZE", 64)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    runner.sweep(["tiny-random"], ["synth", "tiny-builtin"], tmp_path / "out", n_boot=100,
                 progress=True, log=lambda level, msg: None)
    assert (suite.cache_dir() / suite.SUITE_FILE).is_file()
    assert made == ["foilbench sweep"]

def test_dependency_warnings_go_to_debug_ours_to_warning():
    said = []
    with contained_warnings(lambda level, msg: said.append((level, msg))):
        for _ in range(3):  # the same message once
            warnings.warn_explicit("ConvergenceWarning: maximum likelihood did not converge",
                                   UserWarning, "/venv/site-packages/statsmodels/base/model.py",
                                   607)
        warnings.warn_explicit("a foilbench note", UserWarning,
                               "/src/foilbench/analysis/compass.py", 10)
    assert [level for level, _ in said] == ["debug", "warning"]
    assert "statsmodels/base/model.py:607" in said[0][1] and said[1][1] == "a foilbench note"


@pytest.mark.parametrize(("cpus", "load", "total", "want"), [
    (2, 0.0, 2, 2), (2, 0.4, 2, 2), (2, 1.0, 2, 1), (2, 1.6, 2, 1), (2, 19.0, 2, 1),
    (1, 0.0, 1, 1), (8, 2.0, 8, 6), (4, 4.0, 16, 3),
])
def test_threads_are_the_usable_cpus_minus_the_load(cpus, load, total, want):
    assert threads.choose_threads(cpus, load, total) == want


def test_an_explicit_count_or_omp_num_threads_wins(monkeypatch):
    import torch

    before = torch.get_num_threads()
    try:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        said = []
        assert threads.configure_threads(1, lambda level, msg: said.append(msg)) == 1
        assert torch.get_num_threads() == 1 and "as requested" in said[0]
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        assert threads.configure_threads(0) == 1
        monkeypatch.setenv("OMP_NUM_THREADS", "x")  # not a number: ignored, chosen instead
        monkeypatch.setattr(threads, "machine_load", lambda: 0.0)
        monkeypatch.setattr(threads, "usable_cpus", lambda: 1)
        assert threads.configure_threads(0) == 1
    finally:
        torch.set_num_threads(before)


def test_the_wait_policy_is_read_never_written(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert threads.sleeping_threads() is False
    with threads.run_threads(1):
        assert "OMP_WAIT_POLICY" not in os.environ  # the library writes no variable
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert threads.sleeping_threads() is True


def test_threads_setting_is_checked():
    with pytest.raises(RunnerError, match="threads must be an integer >= 0"):
        RunSettings(threads=-1)


def test_run_help_names_foilbench_home_not_the_deprecated_variable():
    from click.testing import CliRunner

    from foilbench.cli.main import cli

    text = " ".join(CliRunner().invoke(cli, ["run", "--help"]).output.split())
    assert "$FOILBENCH_HOME/embeddings" in text and "FOILBENCH_CACHE" not in text
    assert "--threads" in text


def test_readme_setups_use_two_venvs_and_ci_runs_the_test_command_verbatim():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readme, ci = (root / "README.md").read_text(), (root / ".ci" / "run").read_text()
    blocks = [b.split("```", 1)[0].strip() for b in readme.split("```bash\n")[1:3]]
    assert "python3 -m venv .venv && . .venv/bin/activate" in blocks[0]
    assert "python3 -m venv .venv-test && . .venv-test/bin/activate" in blocks[1]
    assert blocks[1] in ci.splitlines()
