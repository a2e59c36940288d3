"""examples/train_during_eval.py, the documented loop, runs and stores one run per
evaluation with its step, each checkpoint under its own fingerprint."""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_during_eval.py"


def test_the_training_loop_example_stores_each_step(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    spec = importlib.util.spec_from_file_location("train_during_eval", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    rows = example.main(["--out", str(tmp_path / "out"), "--steps", "4", "--every", "2",
                         "--n-boot", "200"])
    assert [r[0] for r in rows] == [2, 4]
    assert len({r[-1] for r in rows}) == 2  # step 2 and step 4: two fingerprints
    for _, _, _, value, low, high, _ in rows:
        assert low <= value <= high
    printed = capsys.readouterr().out
    assert printed.count("still training: True") == 2  # the loop's train mode came back


def test_docs_name_the_example_and_the_hooks():
    text = (Path(__file__).resolve().parents[1] / "docs" / "training.md").read_text()
    for part in ("examples/train_during_eval.py", "from_open_clip", "from_hf", "on_result",
                 "WandbLogger", "MlflowLogger", "metadata"):
        assert part in text
