"""A kill with requests in flight (issue 40): their reservations stay committed at the worst
case, the resume says how much and which, and the user releases them by id (or all) once the
provider's dashboard shows they were not billed, each release recorded in the ledger; the
manifest's spend totals are the folder's, summed over every process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from _strict_providers import StrictProviders
from _strict_scripts import composet_answer, composet_image
from foilbench.cli.main import cli
from foilbench.construct.engine.ledger import SpendLedger

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders(answer=composet_answer, image=composet_image)
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


def args(out: Path, cap: str) -> list[str]:
    return ["construct", "composet", "--text", "api:openai:gpt-5-mini", "--image",
            "api:gemini-image:gemini-2.5-flash-image", "--edit",
            "api:gemini-image:gemini-2.5-flash-image", "--n-scenes", "2", "--foils-per-scene",
            "6", "--min-foils", "0", "--size", "64", "--no-progress", "--out", str(out),
            "--max-spend", cap, "--concurrency", "4"]


def test_a_kill_leaves_reservations_the_resume_reports_and_the_user_releases(strict,
                                                                              tmp_path):
    out = tmp_path / "o"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "foilbench", *args(out, "50")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen: list[str] = []

    def kill_at_the_sixth(path):
        seen.append(path)
        if len(seen) == 6:
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    strict.on_request = kill_at_the_sixth
    proc.communicate(timeout=300)
    strict.on_request = None
    assert proc.returncode == -signal.SIGKILL
    led = SpendLedger(out, 50)
    left = led.left_open()
    assert left and led.reserved == pytest.approx(sum(r["usd"] for r in left))
    held = led.reserved
    res = CliRunner().invoke(cli, args(out, "50"))
    assert res.exit_code == 0, res.output
    assert f"${held:.4f} stays committed at their worst case" in res.output
    assert left[0]["id"] in res.output and "--release ID" in res.output
    after = SpendLedger(out, 50)
    assert after.reserved == pytest.approx(held)  # still held: only the user releases
    shown = CliRunner().invoke(cli, ["construct", "spend", str(out)])
    assert shown.exit_code == 0 and left[0]["id"] in shown.output
    bad = CliRunner().invoke(cli, ["construct", "spend", str(out), "--release", "nope"])
    assert bad.exit_code == 2 and "no open reservation 'nope'" in bad.output
    one = CliRunner().invoke(cli, ["construct", "spend", str(out), "--release", left[0]["id"],
                                   "--note", "dashboard: not billed"])
    assert one.exit_code == 0 and "released 1 reservation(s)" in one.output, one.output
    rest = CliRunner().invoke(cli, ["construct", "spend", str(out), "--all-open"])
    assert rest.exit_code == 0, rest.output
    final = SpendLedger(out, 50)
    assert final.reserved == 0
    rows = [json.loads(x) for x in (out / ".construct" / "spend.jsonl").read_text()
            .splitlines()]
    manual = [r for r in rows if r["op"] == "release" and r.get("manual")]
    assert {r["id"] for r in manual} == {r["id"] for r in left}
    assert manual[0]["note"] == "dashboard: not billed"
    # the provider billed the killed requests too (their replies were lost): the folder's
    # settled spend is what this process and the resume settled
    assert final.settled <= strict.billed_usd
    manifest = json.loads((out / "manifest.json").read_text())
    spend = manifest["extras"]["construction"]["spend"]
    settles = [r for r in rows if r["op"] == "settle"]
    assert spend["folder_requests"] == len(settles) > spend["this_run_requests"]
    assert spend["folder_billed_usd"] == pytest.approx(sum(r["usd"] for r in settles),
                                                       abs=1e-6)
    print(f"kill: ${held:.4f} left open in {len(left)} reservation(s); resume billed; "
          f"released by hand; provider billed ${strict.billed_usd:.4f}, ledger settled "
          f"${final.settled:.4f} (the difference: replies lost at the kill)")
