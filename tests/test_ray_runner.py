"""``sweep`` and ``run`` on a local Ray cluster (2 CPUs, usage stats off, one per module).

The sequential sweep is the reference: a Ray sweep of the same models x benchmarks must store
exactly the same metrics, per-item scores and outcomes. Exactly, so the reference runs with
one BLAS/torch thread like each Ray worker (``OMP_NUM_THREADS=1`` for a 1-CPU actor): a
float32 matrix product summed by two threads differs in the last digits.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

# The [ray] extra's modules: without them this module is skipped (and says why), not an
# error that aborts the collection of the whole suite.
ray = pytest.importorskip("ray")
threadpoolctl = pytest.importorskip("threadpoolctl")

import torch  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from _models_tiny import save_tiny_hf_dual  # noqa: E402
from _ray_hook import register  # noqa: E402
from _ray_models import (  # noqa: E402
    FAULT_ENV,
    calls,
    composet_spec,
    openclip_spec,
    stored,
    sugarcrepe_spec,
)
from foilbench.cli.run_cmd import run as run_cmd  # noqa: E402
from foilbench.cli.sweep_cmd import sweep as sweep_cmd  # noqa: E402
from foilbench.errors import UnknownNameError  # noqa: E402
from foilbench.runner import RayOptions, sweep  # noqa: E402
from foilbench.runner.settings import DB_FILE  # noqa: E402

threadpool_limits = threadpoolctl.threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
# Ray Data's own DataContext reads its deprecated fields when copied to workers
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
FAST = {"n_boot": 200, "progress": False}
# Every worker of this local 2-CPU cluster is placed; the default start timeout (120 s) is for
# a cluster that cannot place one (a lost node). Beside busy CI processes a worker's start
# (its interpreter, torch) can take longer than that, and releasing it for a new one only
# starts the wait over: the tests gave up a worker pair at 120 s and waited another 100 s.
START_S = 600.0


def ray_options(**settings) -> RayOptions:
    return RayOptions(start_timeout=START_S, **settings)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, one_ray_at_a_time):
    """A local Ray instance whose workers know ``faulty-tiny`` and see the test folders.
    Under ``pytest -n 2`` no other Ray test runs beside it (tests/conftest.py); the tests
    here that start no Ray do not take that lock, so a worker that is handed one of them
    never waits for the other worker's Ray tests to end."""
    fault, home = tmp_path_factory.mktemp("fault"), tmp_path_factory.mktemp("home")
    path = os.pathsep.join(p for p in (str(ROOT / "tests"), str(ROOT / "src"),
                                       os.environ.get("PYTHONPATH", "")) if p)
    env = {FAULT_ENV: str(fault), "FOILBENCH_HOME": str(home), "PYTHONPATH": path,
           "RAY_USAGE_STATS_ENABLED": "0"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        register()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": env, "worker_process_setup_hook": "_ray_hook.register"})
        try:
            yield fault
        finally:
            ray.shutdown()


@contextmanager
def one_thread():
    """One BLAS and torch thread, like a 1-CPU Ray worker; loader count warnings off (the
    fixtures' counts differ from the releases)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def world(cluster, tmp_path_factory):
    """4 tiny models x 3 tiny benchmarks, and the sequential sweep of them."""
    root = tmp_path_factory.mktemp("world")
    (root / "oc").mkdir()
    models = ["tiny-random", "faulty-tiny", openclip_spec(root / "oc"),
              f"hf:{save_tiny_hf_dual(root / 'clip', 'clip', root / 'tok')}"]
    benches = ["tiny-builtin", sugarcrepe_spec(root / "sc"), composet_spec(root / "cs")]
    with one_thread():
        seq = sweep(models, benches, root / "seq", cache_dir=root / "cache-seq", **FAST)
    assert seq.failures == [] and seq.computed == 12
    return {"root": root, "models": models, "benches": benches, "seq": seq,
            "want": stored(root / "seq" / DB_FILE)}


def ray_sweep(world, models, benches, out, options=None, **settings):
    lines: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = sweep(models, benches, world["root"] / out, ray=options or ray_options(),
                        log=lambda level, msg: lines.append(f"{level}: {msg}"),
                        **{"cache_dir": world["root"] / f"cache-{out}", **FAST, **settings})
    return outcome, lines


def same_cells(got: dict, want: dict, keys) -> None:
    for key in keys:
        for table in ("metrics", "item_results", "item_outcomes"):
            pd.testing.assert_frame_equal(got[key][table], want[key][table], check_exact=True,
                                          obj=f"{key} {table}")


def test_ray_sweep_stores_what_the_sequential_sweep_stores_then_resumes(world, cluster):
    out, lines = ray_sweep(world, world["models"], world["benches"], "ray")
    assert out.failures == [] and out.computed == 12
    assert out.ray_stats.model_loads == 4 and out.ray_stats.cells == 12
    assert out.ray_stats.cache_servers == 1
    got = stored(world["root"] / "ray" / DB_FILE)
    assert set(got) == set(world["want"]) and len(got) == 12
    same_cells(got, world["want"], got)
    seq_cells = world["seq"].cells.drop(columns=["run_id"])
    pd.testing.assert_frame_equal(out.cells.drop(columns=["run_id"]), seq_cells)
    assert any("[ray] cells: 12/12 done (0 reused)" in line for line in lines)
    assert any((world["root"] / "cache-ray").rglob("emb-*.safetensors"))  # the driver's node

    before = len(calls(cluster))
    # one worker describes the 4 models in turn (a second worker process would only start
    # torch again); a run that reuses every cell starts no cache process
    again, lines = ray_sweep(world, world["models"], world["benches"], "ray",
                             ray_options(max_workers=1))
    assert again.computed == 0 and again.reused == 12 and again.ray_stats.cells == 0
    assert again.ray_stats.model_loads == 4 and again.ray_stats.actors == 1
    assert again.ray_stats.cache_servers == 0
    assert len(calls(cluster)) == before  # faulty-tiny embedded nothing: nothing recomputed
    assert again.cells["run_id"].tolist() == out.cells["run_id"].tolist()
    assert len(stored(world["root"] / "ray" / DB_FILE)) == 12


def test_a_worker_killed_mid_cell_is_retried_with_the_same_result(world, cluster,
                                                                   monkeypatch):
    import foilbench.runner.ray.schedule as schedule

    probes: list[str] = []
    real_probe = schedule.probe
    monkeypatch.setattr(schedule, "probe",
                        lambda ray, node: (probes.append(node), real_probe(ray, node))[1])
    (cluster / "die").touch()
    before = calls(cluster)
    # no embedding cache: the killed worker wrote nothing to it, and its process would be one
    # more start-up beside the two workers this test is about
    out, lines = ray_sweep(world, ["faulty-tiny"], ["tiny-builtin"], "fault",
                           ray_options(retries=2), use_cache=False)
    assert not (cluster / "die").exists()  # the fault fired
    # the worker died on the driver's own node: judged a process death at once, no probe
    # (runner/ray/recover.py); a probe is for a worker on another node (test_ray_node_loss)
    assert probes == [] and any("worker died; retry 1 of 2" in line for line in lines)
    pids = calls(cluster)[len(before):]
    assert len(pids) == 2 and pids[0] != pids[1]  # killed once, then a fresh process
    assert out.failures == [] and out.computed == 1
    key = ("faulty-tiny", "tiny-builtin")
    same_cells(stored(world["root"] / "fault" / DB_FILE), world["want"], [key])


def test_a_cell_whose_worker_always_dies_fails_alone(world, cluster):
    missing = f"openclip:{world['root'] / 'oc' / 'fb-ray-tiny.json'}:{world['root'] / 'no.pt'}"
    (cluster / "die-always").touch()
    try:
        out, lines = ray_sweep(world, ["faulty-tiny", "tiny-random", missing], ["tiny-builtin"],
                               "dies", ray_options(retries=1), use_cache=False)
    finally:
        (cluster / "die-always").unlink()
    assert sorted(out.failures) == sorted([f"{missing} x tiny-builtin",
                                           "faulty-tiny x tiny-builtin"])
    assert out.cells["model"].tolist() == ["tiny-random"]
    assert any("worker died (1 retry used)" in line for line in lines)
    assert any("weights file not found" in line for line in lines)
    same_cells(stored(world["root"] / "dies" / DB_FILE), world["want"],
               [("tiny-random", "tiny-builtin")])
    assert "| faulty-tiny |" in out.markdown()  # the failed cell prints as a dash


def test_a_large_cell_split_in_shards_gives_the_same_result(world):
    model = world["models"][2]
    out, _ = ray_sweep(world, [model], ["tiny-builtin"], "shards", ray_options(shard_size=8),
                       batch_size=4, use_cache=False)
    assert out.failures == [] and out.ray_stats.works == 5  # 2 image + 2 text shards, finish
    with one_thread():
        sweep([model], ["tiny-builtin"], world["root"] / "seq4", batch_size=4, use_cache=False,
              **FAST)
    key = (model, "tiny-builtin")
    same_cells(stored(world["root"] / "shards" / DB_FILE),
               stored(world["root"] / "seq4" / DB_FILE), [key])


def test_cli_sweep_and_run_with_ray(world, tmp_path):
    # the smallest Ray run: one worker, no cache process (the cache on Ray: the first test)
    args = ["--model", "tiny-random", "--benchmark", "tiny-builtin", "--n-boot", "200", "--quiet",
            "--ray", "--ray-max-workers", "1", "--no-cache"]
    res = CliRunner().invoke(sweep_cmd, [*args, "--out", str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "1 run(s) computed" in res.output and "[ray] cells: 1/1 done" in res.output
    res = CliRunner().invoke(run_cmd, [*args, "--out", str(tmp_path / "r"), "--no-report"])
    assert res.exit_code == 0, res.output
    assert "stored 1 run(s)" in res.output
    same_cells(stored(tmp_path / "r" / DB_FILE), world["want"], [("tiny-random", "tiny-builtin")])


def test_ray_options_need_ray_and_specs_are_checked_first(tmp_path):
    res = CliRunner().invoke(sweep_cmd, ["--model", "tiny-random", "--benchmark", "tiny-builtin",
                                         "--ray-retries", "3"])
    assert res.exit_code == 2 and "--ray-retries only apply with --ray" in res.output
    with pytest.raises(UnknownNameError, match="tiny-randon"):
        sweep(["tiny-randon"], ["tiny-builtin"], tmp_path, ray="127.0.0.1:1")


# --- construction pipelines on Ray Data ------------------------------------------------------
COMPOSET = ["construct", "composet", "--n-scenes", "2", "--foils-per-scene", "8", "--size", "64",
            "--min-foils", "0", "--no-progress"]


def construct_cli(out: Path, *extra: str):
    from foilbench.cli.main import cli

    return CliRunner().invoke(cli, [*COMPOSET, "--out", str(out), *extra])


def call_keys(out: Path) -> list[str]:
    lines = (out / ".construct" / "calls.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["key"] for line in lines)


def test_construct_heavy_stages_on_ray_data_build_the_same_benchmark(cluster, tmp_path,
                                                                    monkeypatch):
    import ray.data._internal.util as data_util

    said: list[str] = []
    real_warning = data_util.logger.warning
    monkeypatch.setattr(data_util.logger, "warning",
                        lambda msg, *a, **k: (said.append(str(msg)), real_warning(msg, *a, **k)))
    seq = construct_cli(tmp_path / "seq")
    assert seq.exit_code == 0, seq.output
    res = construct_cli(tmp_path / "ray", "--ray", "--ray-max-workers", "1")
    assert res.exit_code == 0, res.output
    assert not [m for m in said if "concurrency" in m]  # the current compute= form
    assert "RemoteBackend" not in res.output and "image=world-" in res.output.replace(" ", "")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "seq" / "items.parquet"),
                                  pd.read_parquet(tmp_path / "ray" / "items.parquet"))
    log = "construction_log.jsonl"
    assert (tmp_path / "seq" / log).read_text() == (tmp_path / "ray" / log).read_text()
    assert call_keys(tmp_path / "seq") == call_keys(tmp_path / "ray")
    made = re.search(r"calls: (\d+) made", res.output)
    assert made and int(made.group(1)) == len(call_keys(tmp_path / "ray")) > 20
    again = construct_cli(tmp_path / "ray", "--ray")  # resume: every call from the cache
    assert again.exit_code == 0, again.output
    assert "calls: 0 made" in again.output


def test_a_failing_call_is_retried_on_the_worker_with_the_engine_policy():
    from foilbench.construct.backends.base import TextRequest
    from foilbench.construct.engine.ray_calls import attempt

    class Flaky:
        """Times out on its first call, then answers; ``broken`` never answers."""

        def __init__(self, broken: bool = False, retryable: bool = True) -> None:
            self.calls, self.broken, self.retryable = 0, broken, retryable

        def complete(self, request):
            self.calls += 1
            if self.broken or self.calls == 1:
                err = TimeoutError("no reply")
                err.retryable = self.retryable
                raise err
            return "a red cube"

    request = TextRequest(prompt="p")
    assert attempt(Flaky(), "text", "complete", (request,), 2, 0.0) == {
        "ok": True, "value": "a red cube", "attempts": 2}
    assert attempt(Flaky(broken=True), "text", "complete", (request,), 2, 0.0) == {
        "ok": False, "error": "TimeoutError: no reply", "attempts": 3}
    final = attempt(Flaky(broken=True, retryable=False), "text", "complete", (request,), 2, 0.0)
    assert final["attempts"] == 1 and not final["ok"]
