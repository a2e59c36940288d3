"""on_result trackers: a strict fake pins the contract; W&B (offline mode) and MLflow (a
local file store) are the real ones, never imported unless a logger is made."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from foilbench import runner
from foilbench.errors import FoilbenchError
from foilbench.models.base import CallableDualEncoder
from foilbench.tracking import MlflowLogger, WandbLogger, scalars, step_of

SRC = Path(__file__).resolve().parents[1] / "src"
RUN = {"n_boot": 200, "progress": False, "report": False, "log": lambda level, msg: None}


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))


def _model(name="tracked model"):
    return CallableDualEncoder(lambda ims: np.tile([1.0, 0.5], (len(ims), 1)),
                               lambda txts: np.array([[len(t) % 3, 1.0] for t in txts]),
                               name=name)


class StrictRun:
    """A tracker run that accepts only what W&B's ``Run.log`` documents: a dict of str keys
    to numbers, an optional non-negative int step that never decreases."""

    def __init__(self):
        self.rows, self.last = [], -1

    def log(self, data, step=None, commit=None):
        assert isinstance(data, dict) and data
        for key, value in data.items():
            assert isinstance(key, str) and key.strip()
            assert isinstance(value, float) and math.isfinite(value)
        if step is not None:
            assert isinstance(step, int) and step >= self.last >= -1
            self.last = step
        self.rows.append((step, dict(data)))


def test_scalars_are_the_stored_overall_rows_with_their_intervals(tmp_path):
    out = runner.run([_model()], ["tiny-builtin"], tmp_path / "o", metadata={"step": 7}, **RUN)
    record = out.records[0]
    got = scalars(record)
    for metric, row in out.summary["runs"][0]["metrics"].items():
        base = f"foilbench/tiny-builtin/{metric}"
        assert got[base] == row["value"]
        assert got[base + "_ci_low"] == row["ci_low"] and got[base + "_ci_high"] == row["ci_high"]
        assert got[base + "_n"] == row["n"]
    assert step_of(record) == 7 and step_of(record, 3) == 3
    keyed = scalars(record, prefix="eval", key="{prefix}/{model}/{benchmark}/{metric}")
    assert all(k.startswith("eval/tracked model/tiny-builtin/") for k in keyed)


def test_the_hook_contract_with_a_strict_fake(tmp_path):
    fake = StrictRun()
    logger = WandbLogger(run=fake)
    for step in (10, 20):
        runner.run([_model()], ["tiny-builtin", "tiny-builtin"], tmp_path / "o",
                   metadata={"step": step}, on_result=logger, **RUN)
    assert [step for step, _ in fake.rows] == [10, 10, 20, 20]  # one row per stored run


def test_a_failing_hook_propagates_and_the_run_is_kept(tmp_path):
    def broken(record):
        raise RuntimeError("tracker down")

    with pytest.raises(RuntimeError, match="tracker down"):
        runner.run([_model()], ["tiny-builtin"], tmp_path / "o", on_result=broken, **RUN)
    from foilbench.store.db import ResultsStore

    with ResultsStore(tmp_path / "o" / "foilbench.duckdb", read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


def test_wandb_offline_log_holds_each_step(tmp_path, monkeypatch):
    import wandb

    from _wandb_offline import history_rows

    monkeypatch.setenv("WANDB_SILENT", "true")
    run = wandb.init(mode="offline", dir=str(tmp_path), project="foilbench-test")
    try:
        for step in (1, 2):
            runner.run([_model()], ["tiny-builtin"], tmp_path / "o", metadata={"step": step},
                       on_result=WandbLogger(), **RUN)
    finally:
        run.finish()
    [log] = list((tmp_path / "wandb").glob("offline-run-*/run-*.wandb"))
    rows = [r for r in history_rows(log) if "foilbench/tiny-builtin/group" in r]
    assert [r["_step"] for r in rows] == [1, 2]
    assert all(0.0 <= r["foilbench/tiny-builtin/group_ci_low"] <= r["foilbench/tiny-builtin/group"]
               for r in rows)


def test_wandb_logger_without_a_run_is_a_clear_error(monkeypatch):
    import wandb

    monkeypatch.setattr(wandb, "run", None)
    with pytest.raises(FoilbenchError, match="wandb.init"):
        WandbLogger()


def test_mlflow_local_store_holds_each_step(tmp_path, monkeypatch):
    import mlflow
    from mlflow.tracking import MlflowClient

    # a local file store: sqlite needs the full mlflow package, and mlflow 3 asks for this
    # variable before it opens a file store
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    mlflow.set_tracking_uri(uri)
    try:
        with mlflow.start_run() as active:
            for step in (5, 6):
                out = runner.run([_model()], ["tiny-builtin"], tmp_path / "o",
                                 metadata={"step": step}, on_result=MlflowLogger(), **RUN)
        history = MlflowClient(uri).get_metric_history(active.info.run_id,
                                                       "foilbench/tiny-builtin/group")
        tags = MlflowClient(uri).get_run(active.info.run_id).data.tags
    finally:
        mlflow.set_tracking_uri("")
    assert [m.step for m in history] == [5, 6]
    assert history[-1].value == out.summary["runs"][0]["metrics"]["group"]["value"]
    assert tags["foilbench_run/tiny-builtin"] == out.run_ids[0]


def test_no_tracker_is_imported_unless_asked():
    code = ("import sys\nimport foilbench.tracking as t\nfrom foilbench import runner\n"
            "t.scalars\nassert 'wandb' not in sys.modules and 'mlflow' not in sys.modules\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=120)
    assert done.returncode == 0, done.stderr
