"""A construction run killed with SIGKILL mid-stage resumes without repeating a single call.

The pipeline runs in a subprocess whose backends count every finished call (by call key) in
a file and kill the process, without warning, at a chosen call. The rerun then makes exactly
the calls the killed run had not finished, and ends with the same benchmark as a clean run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import sys
from pathlib import Path
from _construct_helpers import Counter, offline_backends
from foilbench.construct.composet.spec import ComposetConfig
from foilbench.construct.engine.runner import run_pipeline

out, counts, kill_at = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
counter = Counter(counts, int(kill_at) if kill_at != "none" else None)
roles = {"text": "template", "image": "world", "edit": "world", "detector": "world"}
run_pipeline("composet", ComposetConfig(n_scenes=2, foils_per_scene=8, size=64, min_foils_per_scene=0),
             offline_backends(roles, counter), out, progress=False)
"""


def _run(out: Path, counts: Path, kill_at: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])}
    return subprocess.run([sys.executable, "-c", SCRIPT, str(out), str(counts), kill_at],
                          env=env, capture_output=True, text=True, timeout=600)


def _clean(out: Path, counts: Path) -> None:
    """The reference: the same run, never killed, in this process (the code of ``SCRIPT``
    without the kill; no interpreter of its own to start)."""
    from _construct_helpers import Counter, offline_backends
    from foilbench.construct.composet.spec import ComposetConfig
    from foilbench.construct.engine.runner import run_pipeline

    roles = {"text": "template", "image": "world", "edit": "world", "detector": "world"}
    run_pipeline("composet", ComposetConfig(n_scenes=2, foils_per_scene=8, size=64,
                                            min_foils_per_scene=0),
                 offline_backends(roles, Counter(counts)), out, progress=False)


def _keys(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_sigkill_mid_stage_then_resume_repeats_no_call(tmp_path):
    _clean(tmp_path / "clean", tmp_path / "clean.txt")
    all_keys = _keys(tmp_path / "clean.txt")
    assert len(all_keys) == len(set(all_keys)) > 20
    # call 17 falls inside the foil-render stage (12 calls precede it in this config)
    killed = _run(tmp_path / "resumed", tmp_path / "first.txt", "17")
    assert killed.returncode == -signal.SIGKILL
    first = _keys(tmp_path / "first.txt")
    assert len(first) == 16
    cached = [json.loads(line)["stage"] for line in
              (tmp_path / "resumed" / ".construct" / "calls.jsonl").read_text().splitlines()]
    assert len(cached) == 16  # every finished call was durable before the kill
    assert 0 < cached.count("foil render (step 6)") < 16  # killed inside that stage
    resumed = _run(tmp_path / "resumed", tmp_path / "second.txt", "none")
    assert resumed.returncode == 0, resumed.stderr
    second = _keys(tmp_path / "second.txt")
    assert not set(first) & set(second)  # zero repeated calls
    assert sorted(first + second) == sorted(all_keys)
    a = pd.read_parquet(tmp_path / "clean" / "items.parquet")
    b = pd.read_parquet(tmp_path / "resumed" / "items.parquet")
    pd.testing.assert_frame_equal(a, b)
