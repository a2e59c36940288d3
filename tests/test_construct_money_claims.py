"""One request, one payment per folder (issue 40): two or three processes building into one
``--out`` at once (the docs invite it) pay for each distinct request once; the others wait for
the claimant's reply. Measured against the STRICT provider fake, which bills every request it
answers: no two requests it received may carry the same bytes, and the folder's benchmark is
the one a single process builds."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _strict_providers import StrictProviders
from _strict_scripts import composet_answer, composet_image
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.data.format import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
SPECS = ["--text", "api:openai:gpt-5-mini", "--image", "api:gemini-image:gemini-2.5-flash-image",
         "--edit", "api:gemini-image:gemini-2.5-flash-image"]


def slow_provider() -> StrictProviders:
    server = StrictProviders(answer=composet_answer, image=composet_image)
    # a slow provider keeps every process busy with requests the others need too
    server.on_request = lambda path: time.sleep(0.2)
    return server


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """The reference: one process alone builds the folder against a provider of its own (the
    same for every process count, so built once): its requests and its benchmark. The
    provider answers at once: its slowness only makes processes overlap, and one alone has
    none to overlap with (the requests and the benchmark are the same either way)."""
    # alone, no process has anything to wait for: the provider need not be slow
    server = StrictProviders(answer=composet_answer, image=composet_image)
    folder = tmp_path_factory.mktemp("alone")
    try:
        with pytest.MonkeyPatch.context() as mp:
            server.environ(mp)
            run_together(folder / "out", 1, {**os.environ, "PYTHONPATH": str(ROOT / "src"),
                                             "FOILBENCH_HOME": str(folder / "home")})
    finally:
        server.close()
    assert server.rejected == []
    return {"requests": len(server.requests), "items": items_digest(folder / "out")}


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = slow_provider()
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


def command(out: Path) -> list[str]:
    return [sys.executable, "-m", "foilbench", "construct", "composet", *SPECS, "--n-scenes",
            "2", "--foils-per-scene", "6", "--min-foils", "0", "--size", "64", "--no-progress",
            "--out", str(out), "--max-spend", "50"]


def duplicates(requests: list[dict]) -> int:
    seen: set[tuple[str, bytes]] = set()
    n = 0
    for r in requests:
        k = (r["path"], r["raw"])
        n += k in seen
        seen.add(k)
    return n


def items_digest(out: Path) -> list[str]:
    """The benchmark's item rows, each image path replaced by the sha256 of its bytes."""
    import pandas as pd

    assert len(load_benchmark(out)) > 0
    rows = []
    for row in pd.read_parquet(out / "items.parquet").to_dict("records"):
        for k, v in row.items():
            if isinstance(v, str) and v.endswith(".png") and (out / v).is_file():
                row[k] = hashlib.sha256((out / v).read_bytes()).hexdigest()
        rows.append(repr(sorted(row.items())))
    return sorted(rows)


def run_together(out: Path, n: int, env: dict) -> list[str]:
    procs = [subprocess.Popen(command(out), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT) for _ in range(n)]
    logs = [p.communicate(timeout=400)[0].decode() for p in procs]
    for p, log in zip(procs, logs, strict=True):
        assert p.returncode == 0, log
    return logs


@pytest.mark.parametrize("n", [2, 3])
def test_concurrent_processes_pay_each_request_once(alone, strict, tmp_path, n):
    one_process = alone["requests"]
    out = tmp_path / "shared"
    run_together(out, n, {**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert strict.rejected == []
    dup = duplicates(strict.requests)
    print(f"{n} processes on one --out: {len(strict.requests)} requests, {dup} duplicates "
          f"(one process alone: {one_process} requests)")
    assert dup == 0
    assert len(strict.requests) == one_process
    led = SpendLedger(out, 50)
    assert led.settled == pytest.approx(strict.billed_usd)  # this provider billed only them
    assert led.requests == one_process and led.reserved == 0
    assert items_digest(out) == alone["items"] != []
