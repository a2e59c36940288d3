"""Issue 24 leftovers: a spend cap met on a Ray worker stops the run (as the threaded engine
does), the stage cache keeps the dry-run bound under its own name (never as spend), and a
folder holding only foilbench's spend ledger counts as foilbench's."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from foilbench.cli.main import cli
from foilbench.construct.backends.base import TextBackend, TextRequest
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.construct.engine.outdir import OutFolderError
from foilbench.construct.engine.ray_backends import RayConstructOptions
from foilbench.construct.engine.ray_calls import Boxed, CallWorker, RayContext, attempt
from foilbench.construct.engine.stages import Context
from foilbench.errors import SpendCapReached
from foilbench.models.api.spend import SpendCapError

SMALL = ["--n-scenes", "1", "--foils-per-scene", "4", "--size", "64", "--min-foils", "0",
         "--no-progress"]


class Capped(TextBackend):
    """Answers its first ``paid`` calls, then every call meets the cap (retryable, to show a
    cap is never retried)."""

    cost_per_call_usd = 0.125

    def __init__(self, paid: int) -> None:
        self.paid, self.calls = paid, 0

    @property
    def fingerprint(self) -> str:
        return "capped:1"

    def complete(self, request):
        self.calls += 1
        if self.calls > self.paid:
            err = SpendCapError("spend cap reached: $0.30 set by --max-spend")
            err.retryable = True
            raise err
        return request.prompt.upper()


def req(text: str) -> TextRequest:
    return TextRequest(prompt=text)


# -- (a) a cap on a Ray worker ---------------------------------------------------------------
def test_attempt_returns_a_cap_as_a_stop_not_a_failed_call():
    out = attempt(Capped(0), "text", "complete", (req("a"),), retries=2, backoff_s=0.0)
    assert not out["ok"] and out["attempts"] == 1  # not retried, although marked retryable
    assert isinstance(out["cap"], SpendCapError) and "set by --max-spend" in out["error"]


def test_a_worker_makes_no_call_after_the_cap():
    worker = CallWorker.__new__(CallWorker)  # the backend a worker would build, without Ray
    worker.backend, worker.role, worker.method = Capped(1), "text", "complete"
    worker.retries, worker.backoff_s, worker.capped = 2, 0.0, None
    batch = {"key": ["k1", "k2", "k3"], "args": [Boxed((req(t),)) for t in "abc"]}
    rows = worker(batch)["result"]
    assert rows[0].value == {"ok": True, "value": "A", "attempts": 1}
    assert "cap" in rows[1].value and "cap" in rows[2].value and rows[2].value["attempts"] == 0
    assert worker.backend.calls == 2  # one paid, one refused by the cap, then none


def test_the_driver_stores_the_answered_calls_then_stops_the_run(tmp_path):
    ctx = RayContext(tmp_path, {"text": Capped(1)}, ray_options=RayConstructOptions(),
                     progress=False)
    cap = SpendCapError("spend cap reached: $0.30 set by --max-spend")
    rows = [{"key": "k1", "result": Boxed({"ok": False, "cap": cap, "error": "x",
                                           "attempts": 1})},
            {"key": "k2", "result": Boxed({"ok": True, "value": "B", "attempts": 1})}]
    stats: Counter = Counter()
    with pytest.raises(SpendCapReached, match="set by --max-spend"):
        ctx._collect("stage", "text", ctx.backend("text"), rows, stats)
    assert ctx.cache.lookup("k2") == (True, "B")  # paid reply in flight: kept for the resume
    assert stats["called"] == 1 and stats["failed"] == 0  # the cap is no "call failed"


def test_the_threaded_engine_stops_on_the_same_cap(tmp_path):
    ctx = Context(tmp_path, {"text": Capped(1)}, progress=False)
    with pytest.raises(SpendCapReached):
        ctx.call_many("s", "text", [("a", (req("a"),)), ("b", (req("b"),))])


# -- (b) the stage cache's price field ---------------------------------------------------------
def test_the_stage_cache_keeps_the_bound_under_its_own_name(tmp_path):
    ctx = Context(tmp_path, {"text": Capped(5)}, progress=False)
    ctx.call_many("s", "text", [("a", (req("a"),))])
    [record] = [json.loads(line) for line in
                (tmp_path / ".construct" / "calls.jsonl").read_text().splitlines()]
    assert record["bound_usd"] == 0.125 and "usd" not in record
    assert not hasattr(ctx.cache, "spent_usd")  # spend is the ledger's alone


# -- (c) the spend ledger belongs to foilbench's folder ------------------------------------------
def _ledger_only(out, usd: float) -> SpendLedger:
    led = SpendLedger(out, 1.0)
    led.settle(led.reserve(usd, "an earlier paid call"), usd)
    assert sorted(p.name for p in (out / ".construct").iterdir()) == [
        "spend.holder", "spend.jsonl", "spend.lock"]
    return led


def test_a_folder_with_only_the_spend_ledger_is_foilbenchs_and_its_spend_still_counts(tmp_path):
    out = tmp_path / "cs"
    _ledger_only(out, 0.10)
    res = CliRunner().invoke(cli, ["construct", "composet", "--out", str(out), *SMALL])
    assert res.exit_code == 0, res.output
    assert "$0.1000 committed" in res.output
    assert SpendLedger(out, 1.0).settled == pytest.approx(0.10)
    assert (out / ".construct" / "run.json").is_file()


def test_a_ledger_next_to_the_users_files_does_not_make_the_folder_foilbenchs(tmp_path):
    out = tmp_path / "cs"
    _ledger_only(out, 0.10)
    (out / "thesis.txt").write_text("mine")
    res = CliRunner().invoke(cli, ["construct", "composet", "--out", str(out), *SMALL])
    assert isinstance(res.exception, OutFolderError), res.output
    assert "is not empty and was not made by `foilbench construct composet`" in str(
        res.exception)
    assert sorted(p.name for p in (out / ".construct").iterdir()) == [
        "spend.holder", "spend.jsonl", "spend.lock"]
