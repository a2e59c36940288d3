"""``sweep --matrix-only``: the matrix files rebuilt from the stored runs, no model loaded."""

from __future__ import annotations

import sys

import pytest

from foilbench.cli.main import main
from foilbench.runner import sweep
from foilbench.runner.settings import RunnerError

MODELS = ["tiny-random", "foilbench-plain"]
FILES = ("matrix.csv", "matrix.md", "matrix.tex", "comparisons.csv")


def _no_model_builds(monkeypatch) -> None:
    """Building any model from here on fails the test."""
    import foilbench.runner.setup as setup

    def refuse(*args, **kwargs):
        raise AssertionError(f"a model was built: {args!r}")

    monkeypatch.setattr(setup, "resolve_model", refuse)


def _cli(monkeypatch, capsys, args) -> tuple[int, str]:
    """``foilbench ARGS`` as the console runs it: exit code, stdout + stderr."""
    monkeypatch.setattr(sys, "argv", ["foilbench", *args])
    code = 0
    try:
        main()
    except SystemExit as stop:
        code = stop.code
    got = capsys.readouterr()
    return code, got.out + got.err


def _args(out, *models):
    return ["sweep", *(x for m in models for x in ("--model", m)), "--benchmark", "tiny-builtin",
            "--out", str(out), "--n-boot", "200", "--quiet", "--matrix-only"]


def test_a_matrix_only_rebuild_equals_the_sweeps_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    first = sweep(MODELS, ["tiny-builtin"], tmp_path, n_boot=200, progress=False)
    assert first.computed == 2 and first.failures == []
    original = tmp_path / f"sweep-{first.sweep_id}"
    assert {p.name for p in original.iterdir()} >= set(FILES)

    _no_model_builds(monkeypatch)
    code, output = _cli(monkeypatch, capsys, _args(tmp_path, *MODELS))
    assert code == 0, output
    assert "0 run(s) computed, 2 reused" in output
    rebuilt = [p for p in tmp_path.glob("sweep-*") if p != original]
    assert len(rebuilt) == 1
    for name in FILES:
        assert (rebuilt[0] / name).read_text() == (original / name).read_text(), name


def test_matrix_only_refuses_a_missing_cell_by_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    sweep(["tiny-random"], ["tiny-builtin"], tmp_path, n_boot=200, progress=False)
    _no_model_builds(monkeypatch)
    code, output = _cli(monkeypatch, capsys, _args(tmp_path, *MODELS))
    assert code == 2, output
    assert ("cannot rebuild the matrix: no stored run of foilbench-plain on tiny-builtin "
            "with these settings in") in output
    assert len(list(tmp_path.glob("sweep-*"))) == 1  # nothing written for the refusal
    assert output.strip().splitlines()[-1].startswith("error: cannot rebuild the matrix")


def test_matrix_only_without_a_store_is_one_sentence(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    _no_model_builds(monkeypatch)
    code, output = _cli(monkeypatch, capsys, _args(tmp_path / "none", "tiny-random"))
    assert code == 2, output
    assert "there is no results database at" in output
    assert not (tmp_path / "none" / "foilbench.duckdb").exists()


def test_matrix_only_from_a_config_file(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    first = sweep(["tiny-random"], ["tiny-builtin"], tmp_path, n_boot=200, progress=False)
    _no_model_builds(monkeypatch)
    config = {"models": ["tiny-random"], "benchmarks": ["tiny-builtin"], "out": str(tmp_path),
              "n_boot": 200, "progress": False, "matrix_only": True}
    again = sweep(config=config)
    assert again.computed == 0 and again.cells["run_id"].tolist() == \
        first.cells["run_id"].tolist()
    with pytest.raises(RunnerError, match="matrix_only must be true or false"):
        sweep(config={**config, "matrix_only": "yes"})


def test_matrix_only_names_a_model_held_in_memory_by_its_spec(tmp_path, monkeypatch):
    from foilbench.models.tiny import build_tiny_random

    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    held = build_tiny_random()
    first = sweep([held], ["tiny-builtin"], tmp_path, n_boot=200, progress=False)
    again = sweep([held], ["tiny-builtin"], tmp_path, n_boot=200, progress=False,
                  matrix_only=True)
    assert again.computed == 0 and again.models == first.models
    assert again.cells["run_id"].tolist() == first.cells["run_id"].tolist()
