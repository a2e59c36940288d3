"""Money (issue 24): the folder spend ledger, its cap across resumes, concurrent processes and
kills, the dry-run bound, prices and the checks before any paid call; against the STRICT
provider fake (tests/_strict_providers.py)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from _strict_providers import StrictProviders
from _strict_scripts import composet_answer, composet_image
from foilbench.cli.main import cli
from foilbench.construct.engine.ledger import (
    LedgerBusyError,
    LedgerError,
    SpendLedger,
    check_cap,
)
from foilbench.models.api.prices import PriceBook, PriceError, parse_price_option
from foilbench.models.api.spend import SpendCapError

ROOT = Path(__file__).resolve().parents[1]
SPECS = ["--text", "api:openai:gpt-5-mini", "--image", "api:gemini-image:gemini-2.5-flash-image",
         "--edit", "api:gemini-image:gemini-2.5-flash-image"]


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders(answer=composet_answer, image=composet_image)
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


def args(out: Path, *extra: str) -> list[str]:
    return ["construct", "composet", *SPECS, "--n-scenes", "2", "--foils-per-scene", "6", "--min-foils", "0",
            "--size", "64", "--no-progress", "--out", str(out), *extra]


def construct(out: Path, *extra: str):
    return CliRunner().invoke(cli, args(out, *extra))


def ledger_rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / ".construct" / "spend.jsonl").read_text()
            .splitlines()]


# -- the ledger, by hand ---------------------------------------------------------------------
def test_reserve_settle_release_by_hand(tmp_path):
    led = SpendLedger(tmp_path, 1.0)
    a = led.reserve(0.6, "call a")
    assert led.total == pytest.approx(0.6)
    with pytest.raises(SpendCapError, match=r"at most \$0.6000.*cap of \$1.00 set by --max-spend"):
        led.reserve(0.6, "call b")  # 0.6 + 0.6 > 1.0
    led.settle(a, 0.25)  # billed less than its worst case
    b = led.reserve(0.7, "call b")  # 0.25 + 0.7 = 0.95 <= 1.0
    assert led.total == pytest.approx(0.95)
    led.release(b)  # an error reply: not billed
    assert led.total == pytest.approx(0.25) and led.spent == pytest.approx(0.25)
    again = SpendLedger(tmp_path, 1.0)  # a resume reads the folder's spend
    assert again.settled == pytest.approx(0.25) and again.spent == 0


def test_a_reservation_left_open_by_a_killed_process_still_counts(tmp_path):
    killed = SpendLedger(tmp_path, 1.0)
    killed.reserve(0.5, "in flight at the kill")  # never settled
    resumed = SpendLedger(tmp_path, 1.0)
    assert resumed.total == pytest.approx(0.5) and resumed.open_elsewhere == pytest.approx(0.5)
    with pytest.raises(SpendCapError, match="left open by a killed run"):
        resumed.reserve(0.6, "next")


def test_two_ledgers_on_one_folder_share_the_cap_under_threads(tmp_path):
    a, b = SpendLedger(tmp_path, 1.0), SpendLedger(tmp_path, 1.0)
    granted, refused = [], []

    def take(led):
        for _ in range(10):
            try:
                granted.append(led.reserve(0.1, "x"))
            except SpendCapError:
                refused.append(1)

    threads = [threading.Thread(target=take, args=(led,)) for led in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 10 and len(refused) == 30  # 10 x 0.1 fit in 1.0, not one more
    assert SpendLedger(tmp_path, 1.0).total == pytest.approx(1.0)


def test_a_held_lock_names_the_holder_pid(tmp_path):
    """The lock is filelock's (issue 38: fcntl made construction unimportable on Windows);
    the holder's PID and host are on record in spend.holder."""
    from filelock import FileLock

    (tmp_path / ".construct").mkdir()
    lock = FileLock(str(tmp_path / ".construct" / "spend.lock"))
    lock.acquire()
    (tmp_path / ".construct" / "spend.holder").write_text("PID 4242 on elsewhere")
    try:
        led = SpendLedger(tmp_path, 1.0, lock_timeout_s=0.1)
        with pytest.raises(LedgerBusyError, match="PID 4242 on elsewhere"):
            led.reserve(0.1, "x")
    finally:
        lock.release()


def test_the_ledger_imports_without_fcntl():
    """Construction must import where fcntl does not exist (Windows)."""
    code = ("import sys; sys.modules['fcntl'] = None; "
            "import foilbench.construct.engine.ledger as m; print(m.SpendLedger.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert out.returncode == 0 and "SpendLedger" in out.stdout, out.stderr


def test_a_damaged_ledger_line_stops_the_run(tmp_path):
    (tmp_path / ".construct").mkdir()
    (tmp_path / ".construct" / "spend.jsonl").write_text('{"op": "reserve", "id": "a"}\n')
    with pytest.raises(LedgerError, match="spend.jsonl"):
        SpendLedger(tmp_path, 1.0)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, "x"])
def test_cap_values_must_be_finite_and_non_negative(bad):
    with pytest.raises(SpendCapError, match="--max-spend"):
        check_cap(bad, "--max-spend")


def test_env_cap_nan_is_refused_naming_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_API_SPEND_CAP", "nan")
    with pytest.raises(SpendCapError, match="FOILBENCH_API_SPEND_CAP"):
        SpendLedger(tmp_path)


def test_price_option_and_unknown_models():
    assert parse_price_option("openai:m=1/2") == ("openai:m", (1.0, 2.0))
    for bad in ("m=1", "m=a/b", "=1/2", "m=-1/2", "m=nan/1"):
        with pytest.raises(PriceError, match="--price"):
            parse_price_option(bad)
    book = PriceBook()
    assert book.token_price("openai", "gpt-5-mini-2025-08-07") == (0.25, 2.0)  # prefix
    assert book.token_price("openai", "gpt-4o-mini") == (0.15, 0.6)  # longest prefix wins
    assert book.token_price("gemini", "gemini-2.5-pro", 300_000) == (2.5, 15.0)  # long tier
    assert book.token_price("openai", "my-model") is None
    with pytest.raises(PriceError, match="--price openai:my-model=IN/OUT"):
        book.require("openai", "my-model")
    assert PriceBook({"openai:my-model": (1.0, 3.0)}).token_price("openai", "my-model") == (1, 3)
    assert PriceBook(allow_unpriced=True).token_price("openai", "my-model")[1] >= 60


def test_every_listed_price_names_its_source_and_date():
    from foilbench.models.api.prices import price_data

    data = price_data()
    for table in ("tokens", "images"):
        for name, row in data[table].items():
            assert row["source"].startswith("https://") and row["date"], name


# -- the CLI's options ------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["nan", "-1", "inf"])
def test_max_spend_nan_and_negative_are_usage_errors(strict, tmp_path, bad):
    res = construct(tmp_path / "o", "--max-spend", bad)
    assert res.exit_code == 2 and "--max-spend" in res.output
    assert strict.requests == []


def test_allow_unpriced_needs_max_spend(strict, tmp_path):
    res = construct(tmp_path / "o", "--allow-unpriced")
    assert res.exit_code == 2 and "--allow-unpriced needs an explicit --max-spend" in res.output


def test_an_unknown_model_is_refused_before_any_paid_call_unless_priced(strict, tmp_path):
    spec = ["--text", "api:openai:gpt-9-turbo"]
    strict.prices = PriceBook({"openai:gpt-9-turbo": (1.0, 4.0)})  # what the provider bills
    res = CliRunner().invoke(cli, [*args(tmp_path / "a"), *spec])
    assert "--price openai:gpt-9-turbo=IN/OUT" in str(res.exception)
    assert strict.requests == []
    res = CliRunner().invoke(cli, [*args(tmp_path / "b", "--price",
                                         "openai:gpt-9-turbo=1/4"), *spec])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(cli, [*args(tmp_path / "c", "--allow-unpriced", "--max-spend",
                                         "50"), *spec])
    assert res.exit_code == 0, res.output


def test_a_missing_key_is_named_before_any_paid_call(strict, tmp_path, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    res = construct(tmp_path / "o")
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in str(res.exception)
    assert strict.requests == []


# -- whole runs against the strict fake --------------------------------------------------------
def test_dry_run_bound_is_above_what_the_run_then_bills(strict, tmp_path):
    dry = construct(tmp_path / "o", "--dry-run")
    assert dry.exit_code == 0 and strict.requests == []
    bound = float(dry.output.split("total")[1].split("at most")[2].split("$")[1].split()[0])
    per_role = {line.split()[0] for line in dry.output.splitlines() if "at most" in line}
    assert {"text", "image", "edit"} <= per_role and "api:openai:gpt-5-mini" in dry.output
    res = construct(tmp_path / "o", "--max-spend", "50")
    assert res.exit_code == 0, res.output
    assert 0 < strict.billed_usd <= bound
    assert strict.rejected == []


def test_dry_run_bound_per_stage_sums_to_the_total_and_bounds_each_stage(strict, tmp_path,
                                                                       monkeypatch):
    from foilbench.construct.engine import runner

    summaries = []
    real = runner.run_pipeline

    def keep(*a, **kw):
        summaries.append(real(*a, **kw))
        return summaries[-1]

    monkeypatch.setattr(runner, "run_pipeline", keep)
    dry = construct(tmp_path / "o", "--dry-run")
    assert dry.exit_code == 0 and strict.requests == [], dry.output
    est = summaries[0].estimate
    rows = [line.split() for line in dry.output.splitlines() if "$" in line
            and line.split()[-1].startswith("api:") and "calls" not in line]
    printed = [float(r[-2].lstrip("$")) for r in rows]
    assert len(printed) == len([r for r in est.rows if r.usd > 0]) >= 3
    assert sum(printed) == pytest.approx(est.total_usd, abs=1e-3)
    assert sum(est.stage_usd.values()) == pytest.approx(est.total_usd)
    assert {r.stage for r in est.rows} >= {"base spec (step 1)", "foil render (step 6)"}
    res = construct(tmp_path / "o", "--max-spend", "50")
    assert res.exit_code == 0, res.output
    assert 0 < strict.billed_usd <= est.total_usd
    planned: dict[str, int] = {}
    for r in est.rows:
        planned[r.stage] = planned.get(r.stage, 0) + r.calls
    made = {stage: c.get("called", 0) + c.get("failed", 0) + c.get("retried", 0)
            for stage, c in summaries[-1].calls.items()}
    for stage, n in made.items():
        if n:  # every stage that called a backend is planned, with at least as many calls
            assert n <= planned.get(stage, 0), (stage, n, planned)
    assert sum(made.values()) > 0
    print(f"dry-run bound ${est.total_usd:.4f} over {len(est.rows)} stage rows, billed "
          f"${strict.billed_usd:.4f}; calls made/planned per stage: "
          + ", ".join(f"{k} {made[k]}/{planned.get(k, 0)}" for k in made if made[k]))


def test_four_capped_resumes_never_bill_past_the_cap(strict, tmp_path):
    out = tmp_path / "o"
    for _ in range(4):
        res = construct(out, "--max-spend", "0.30")
        assert res.exit_code == 0 or isinstance(res.exception, SpendCapError), res.output
    led = SpendLedger(out, 0.30)
    assert strict.billed_usd <= 0.30
    assert led.settled == pytest.approx(strict.billed_usd) and led.reserved == 0
    print(f"four capped resumes: billed ${strict.billed_usd:.4f}, cap $0.30")


def test_two_concurrent_processes_share_one_cap(strict, tmp_path):
    """Two processes building into one folder share its cap: together they bill no more than
    it, and both pay for requests. The same build makes the same requests, and a process
    waits for a request another one has claimed (one request, one payment), so a follower
    that stayed behind would only read the leader's replies and never pay. So the leader
    makes one call at a time and starts first; its first answer is held until the follower
    is in the build (it printed its spend bound, just before its first request; at most
    60 s); every answer takes 0.3 s. The follower, four calls at a time and reading the
    leader's finished replies from the cache, catches up and pays for the requests of the
    first multi-request stage (the images of the two scenes) that the leader has not
    reached."""
    out = tmp_path / "o"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    held, follower_up = threading.Event(), threading.Event()

    def rows(op: str) -> list[dict]:
        try:
            return [r for r in ledger_rows(out) if r.get("op") == op]
        except (OSError, ValueError):  # not written yet, or a line being written
            return []

    def slow_answer(path):
        if not held.is_set():
            held.set()
            follower_up.wait(timeout=60)
        time.sleep(0.3)

    def start(concurrency: str) -> subprocess.Popen:
        cmd = args(out, "--max-spend", "0.30", "--concurrency", concurrency)
        return subprocess.Popen([sys.executable, "-m", "foilbench", *cmd], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def read(proc: subprocess.Popen, lines: list[str], up: threading.Event | None) -> None:
        for line in proc.stdout:
            lines.append(line.decode())
            if up is not None and "spend bound per stage" in lines[-1]:
                up.set()

    strict.on_request = slow_answer
    leader = start("1")
    deadline = time.monotonic() + 120
    while not rows("claim") and leader.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    follower = start("4")
    said: list[list[str]] = [[], []]
    readers = [threading.Thread(target=read, args=(proc, lines, up), daemon=True)
               for proc, lines, up in zip((leader, follower), said, (None, follower_up),
                                          strict=True)]
    for reader in readers:
        reader.start()
    for proc, reader in zip((leader, follower), readers, strict=True):
        proc.wait(timeout=300)
        reader.join(timeout=60)
    logs = ["".join(lines) for lines in said]
    assert follower_up.is_set(), logs
    assert strict.billed_usd <= 0.30, logs
    led = SpendLedger(out, 0.30)
    assert led.settled == pytest.approx(strict.billed_usd) and led.reserved == 0
    assert {r["pid"] for r in rows("reserve")} == {leader.pid, follower.pid}, logs
    print(f"two concurrent processes: billed ${strict.billed_usd:.4f}, cap $0.30")


def test_a_kill_with_calls_in_flight_never_passes_the_cap(strict, tmp_path):
    out = tmp_path / "o"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "foilbench", *args(out, "--max-spend", "0.30",
                                                                     "--concurrency", "4")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = []

    def kill_at_the_fifth(path):
        seen.append(path)
        if len(seen) == 5:
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    strict.on_request = kill_at_the_fifth
    proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL
    strict.on_request = None
    left_open = SpendLedger(out, 0.30).reserved
    assert left_open > 0  # the request in flight at the kill stays counted at its worst case
    for _ in range(2):
        construct(out, "--max-spend", "0.30")
    led = SpendLedger(out, 0.30)
    assert strict.billed_usd <= led.total <= 0.30


def test_a_torn_last_line_is_cut_before_the_next_record(tmp_path):
    """A writer killed mid-line left bytes without a newline: the next lock holder moves them
    to spend.torn, so its own record is a line of its own and offsets stay true (it used to
    glue onto the fragment, and the run stopped on a 'damaged' line)."""
    led = SpendLedger(tmp_path, 1.0)
    settled = led.reserve(0.25, "a")
    led.settle(settled, 0.2)
    left_open = led.reserve(0.3, "b")
    path = tmp_path / ".construct" / "spend.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"id": "' + left_open.encode() + b'", "op": "sett')  # killed mid-settle
    other = SpendLedger(tmp_path, 1.0)
    assert other.total == pytest.approx(0.5)  # the torn settle is not counted as settled
    with pytest.warns(UserWarning, match="torn last line"):
        rid = other.reserve(0.1, "c")
    assert (tmp_path / ".construct" / "spend.torn").read_bytes().startswith(b'{"id": "')
    assert path.read_bytes().endswith(b"\n") and b'"op": "sett\n' not in path.read_bytes()
    other.settle(rid, 0.05)
    fresh = SpendLedger(tmp_path, 1.0)
    assert fresh.settled == pytest.approx(0.25) and fresh.reserved == pytest.approx(0.3)
    led.refresh()  # the first process reads on from its own offset without a hitch
    assert led.total == pytest.approx(0.55)
