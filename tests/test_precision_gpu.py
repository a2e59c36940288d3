"""Reduced precision with its changed-outcome share measured against float32 (bf16 runs on
the CPU, so the whole path is tested here), and the GPU batch arithmetic (no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from foilbench.errors import ModelError
from foilbench.runner.settings import RunnerError, RunSettings
from foilbench.scoring import gpu
from foilbench.scoring.engine import evaluate
from foilbench.scoring.precision import changed_outcomes, evaluate_in_precision, precision_note
from test_prepared_share import openclip_model, pair_bench


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    torch.set_num_threads(1)


def test_changed_outcomes_by_hand():
    low = {"r1": np.array([1, 0, 1, 1]), "group": np.array([0, 0, 0, 1])}
    ref = {"r1": np.array([1, 1, 1, 0]), "group": np.array([0, 0, 0, 1])}
    got = changed_outcomes(low, ref)
    assert got == {"group": {"changed": 0, "n": 4, "share": 0.0},
                   "r1": {"changed": 2, "n": 4, "share": 0.5}}
    with pytest.raises(ValueError, match="different metrics"):
        changed_outcomes({"r1": low["r1"]}, ref)
    with pytest.raises(ValueError, match="'r1'"):
        changed_outcomes({"r1": low["r1"][:3], "group": low["group"]}, ref)


def test_bf16_on_cpu_reports_the_changes_against_a_separate_float32_run(tmp_path):
    bench = pair_bench(tmp_path / "bench", n_items=8)
    adapter = openclip_model(tmp_path, "fb-prec", seed=0)
    fp32_fingerprint = adapter.info.fingerprint
    low, table = evaluate_in_precision(
        adapter, "bf16", lambda a: evaluate(a, bench, batch_size=4, progress=False))
    # the adapter is float32 again, with its float32 fingerprint
    assert adapter.dtype_name == "float32" and adapter.info.fingerprint == fp32_fingerprint
    assert next(adapter.model.parameters()).dtype == torch.float32
    assert low.model.fingerprint == adapter.fingerprint_for("bfloat16") != fp32_fingerprint
    # the table equals counting by hand from two independent runs
    ref = evaluate(adapter, bench, batch_size=4, progress=False)
    adapter.set_dtype("bfloat16")
    again = evaluate(adapter, bench, batch_size=4, progress=False)
    adapter.set_dtype("float32")
    for metric in ref.outcomes:
        assert np.array_equal(again.outcomes[metric], low.outcomes[metric])
        k = int((np.asarray(low.outcomes[metric]) != np.asarray(ref.outcomes[metric])).sum())
        assert table[metric] == {"changed": k, "n": len(bench), "share": k / len(bench)}
    # bf16 really ran: the scores moved
    diff = max(np.abs(a - b).max() for a, b in zip(low.scores, ref.scores, strict=True))
    assert diff > 1e-6
    assert low.stats["precision"] == "bf16" and low.stats["precision_changed"] == table
    assert precision_note(low.stats).startswith("bf16 changed ")
    assert precision_note(ref.stats) is None


def test_precision_refusals_are_clear(tmp_path):
    adapter = openclip_model(tmp_path, "fb-prec-no", seed=0)
    with pytest.raises(ModelError, match="float16 on the CPU"):  # before any pass runs
        evaluate_in_precision(adapter, "fp16", lambda a: pytest.fail("no pass should run"))
    assert adapter.dtype_name == "float32"
    with pytest.raises(ModelError, match="choose one of bf16, fp16"):
        evaluate_in_precision(adapter, "int8", lambda a: None)

    class NoSwitch:
        info = adapter.info

    with pytest.raises(ModelError, match="cannot switch precision"):
        evaluate_in_precision(NoSwitch(), "bf16", lambda a: None)
    with pytest.raises(RunnerError, match="precision 'int8'"):
        RunSettings(precision="int8")


def test_run_with_precision_stores_the_share_and_resumes_its_own_run(tmp_path, monkeypatch):
    from foilbench import runner
    from foilbench.store.shared import SharedStore
    from test_prepared_runner import _model_spec

    spec = _model_spec(tmp_path, "fb-prec-run", 0)
    opts = {"n_boot": 100, "progress": False}
    fp32 = runner.sweep([spec], ["tiny-builtin"], tmp_path / "out", **opts)
    low = runner.sweep([spec], ["tiny-builtin"], tmp_path / "out", precision="bf16", **opts)
    assert low.reused == 0  # a float32 run is not a bf16 run
    row = SharedStore(low.db_path).get_run(low.cells["run_id"].iloc[0])
    stats = row["eval_stats"]
    assert stats["precision"] == "bf16" and stats["precision_changed"]
    outcomes = SharedStore(low.db_path).load_item_results(low.cells["run_id"].iloc[0])
    for metric, entry in stats["precision_changed"].items():
        assert metric in outcomes.columns
        assert entry["n"] == row["n_items"] and 0 <= entry["changed"] <= entry["n"]
    again = runner.sweep([spec], ["tiny-builtin"], tmp_path / "out", precision="bf16", **opts)
    assert again.reused == 1
    assert again.cells["run_id"].iloc[0] == low.cells["run_id"].iloc[0]
    assert fp32.cells["run_id"].iloc[0] != low.cells["run_id"].iloc[0]


def test_fit_batch_arithmetic():
    gib = 1024**3
    # 10 GiB free, 0.6 of it usable, 30 MiB per image: floor(6 GiB / 30 MiB) = 204
    assert gpu.fit_batch(10 * gib, 30 * 1024**2, requested=64) == 204
    assert gpu.fit_batch(100 * gib, 1024**2, requested=64) == gpu.MAX_GPU_BATCH
    assert gpu.fit_batch(1024, 10**9, requested=64) == 1  # never zero
    assert gpu.fit_batch(10 * gib, 0.0, requested=64) == 64  # unknown cost: as asked
    with pytest.raises(ValueError, match="headroom"):
        gpu.fit_batch(gib, 1.0, requested=8, headroom=0)
    # per-item memory from two peaks: (1.5 GB - 1.0 GB) / (16 - 8) inputs
    assert gpu.per_item_from_peaks({8: 10**9, 16: 15 * 10**8}) == 62_500_000


def test_cpu_batches_are_unchanged(tmp_path):
    adapter = openclip_model(tmp_path, "fb-gpu-cpu", seed=0)
    assert gpu.size_to_memory(adapter, 48) == 48 and adapter.batch_size == 4
