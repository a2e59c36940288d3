"""`foilbench construct composet` end to end with API backends (Anthropic text, Gemini image
generation, OpenAI GPT-image edits) against a local fake provider: the benchmark validates,
the log accounts for every candidate, the provenance names every backend and prompt version,
steps 3-4 see the base image, real checks drop what they should, a rerun makes no request, and
a run stopped by the spend cap or killed mid-stage resumes without repeating a request."""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

import _api_fake
from _construct_fake_api import ComposetResponder
from foilbench.cli.main import cli
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.construct.engine.log import account, read_log
from foilbench.data.format import load_benchmark
from foilbench.models.api.spend import SpendCapError

fake = _api_fake.fake
ROOT = Path(__file__).resolve().parents[1]
SPECS = {"text": "api:anthropic:claude-haiku-4-5",
         "image": "api:gemini-image:gemini-2.5-flash-image", "edit": "api:openai-image:gpt-image-1"}
PROMPTS = {"composet.base_spec@2", "composet.base_image@1", "composet.caption_qc@1", "composet.instance_captions@2",
           "composet.foils@2", "composet.self_check@1", "composet.foil_edit@1",
           "composet.verbosity@1"}


def args(out: Path, *extra: str) -> list[str]:
    progress = [] if "--progress" in extra else ["--no-progress"]
    return ["construct", "composet", *(a for r, s in SPECS.items() for a in (f"--{r}", s)),
            "--n-scenes", "2", "--foils-per-scene", "6", "--size", "64", "--retries", "0",
            "--min-foils", "0",
            "--out", str(out), *progress, *extra]


def construct(out: Path, *extra: str):
    return CliRunner().invoke(cli, args(out, *extra))


def bodies(requests: list[dict]) -> list[bytes]:
    return [r["raw"] for r in requests]


def test_composet_with_api_backends_end_to_end(fake, tmp_path):
    responder = fake.responder = ComposetResponder()
    out = tmp_path / "cs"
    res = construct(out, "--max-spend", "5", "--progress")
    assert res.exit_code == 0, res.output
    bench = load_benchmark(out)  # validates
    assert bench.kind == "pair" and len(bench) == 2 * 2 * 3  # 2 scenes x 2 foils x 3 tiers
    assert set(bench.items["target_object"]) == {"mug", "vase"}

    acct = account(read_log(out / "construction_log.jsonl"))
    assert acct["problems"] == []
    assert acct["kinds"]["scene"] == {"created": 2, "expanded": 2}
    assert acct["kinds"]["instance"] == {"created": 12, "dropped": 8, "kept": 4}
    drops = {r["stage"]: r["dropped_by_reason"] for r in json.loads(
        (out / "survival.json").read_text())}
    assert drops["self-check (step 5)"] == {"malformed proposal": 2, "self-check: duplicate": 2}
    assert drops["verify: drift and counts"] == {"no visible change": 2}
    assert drops["verbosity (step 7)"] == {"verbosity: edit phrase reworded": 2}

    prov = bench.manifest.extras["construction"]
    for stage, counts in prov["calls"].items():  # a progress bar for every stage with calls
        assert counts.get("called", 0) == 0 or f"composet {stage}:" in res.stderr, stage
    for role, spec in SPECS.items():
        assert prov["backends"][role]["fingerprint"] == resolve_backend(role, spec).fingerprint
        assert prov["backends"][role]["spec"] == spec
    assert set(prov["prompts"]) == PROMPTS
    assert json.loads((out / "construction.json").read_text())["prompts"] == prov["prompts"]

    # steps 3-4 saw the rendered base image, byte for byte what the benchmark holds
    assert responder.images_seen == {"caption_qc": 2, "instances": 2, "foils": 2}
    sent = next(r for r in fake.requests if r["path"] == "/v1/messages"
                and "single out one object" in r["body"]["system"])
    part = next(p for p in sent["body"]["messages"][0]["content"] if p["type"] == "image")
    shown = Image.open(io.BytesIO(base64.b64decode(part["source"]["data"]))).convert("RGB")
    base_paths = set(bench.items["image_base"])
    assert any(np.array_equal(np.asarray(shown), np.asarray(Image.open(out / p).convert("RGB")))
               for p in base_paths)

    # one HTTP request per call made (no retries here), billed against the shared cap
    n = len(fake.requests)
    assert n == sum(c.get("called", 0) for c in prov["calls"].values())
    usage = prov["api_usage"]
    assert sum(u["http_requests"] for u in usage.values()) == n
    assert all(u["spend_usd"] > 0 for u in usage.values())
    total = sum(u["spend_usd"] for u in usage.values())  # one folder ledger holds them all
    assert total <= 5 and SpendLedger(out, 5).settled == pytest.approx(total)

    again = construct(out, "--max-spend", "5")
    assert again.exit_code == 0, again.output
    assert len(fake.requests) == n  # a rerun makes no request
    assert "calls: 0 made" in again.output


def test_spend_cap_stops_the_run_and_a_rerun_resumes_without_repeats(fake, tmp_path):
    fake.responder = ComposetResponder()
    out = tmp_path / "cs"
    # text and the two base images fit in $0.30 (each base reserved at $0.042 under the
    # maxOutputTokens we send); the first edit's worst case ($0.30) does not
    stopped = construct(out, "--max-spend", "0.30")
    assert isinstance(stopped.exception, SpendCapError), stopped.output
    assert "--max-spend" in str(stopped.exception)
    first = bodies(fake.requests)
    assert not any(r["path"] == "/v1/images/edits" for r in fake.requests)
    same_cap = construct(out, "--max-spend", "0.30")  # the cap is for the folder, not per run
    assert isinstance(same_cap.exception, SpendCapError)
    assert "committed" in str(same_cap.exception) and len(fake.requests) == len(first)
    resumed = construct(out, "--max-spend", "20")
    assert resumed.exit_code == 0, resumed.output
    second = bodies(fake.requests)[len(first):]
    assert not set(first) & set(second)  # nothing asked twice
    assert len(set(first + second)) == len(first + second)
    assert len(load_benchmark(out)) == 12


def test_sigkilled_api_run_resumes_without_repeating_a_finished_request(fake, tmp_path):
    """The run is killed (SIGKILL) when the fake receives its 9th request, so 8 answers are
    finished; the rerun asks for none of them again and asks the 9th anew."""
    responder = ComposetResponder()
    out = tmp_path / "cs"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "foilbench", *args(out, "--concurrency", "1")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def respond(request):
        if len(fake.requests) == 9:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        return responder(request)

    fake.responder = respond
    log, _ = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, log.decode()[-2000:]
    first = bodies(fake.requests)
    assert len(first) == 9
    fake.responder = responder
    resumed = construct(out)
    assert resumed.exit_code == 0, resumed.output
    second = bodies(fake.requests)[9:]
    assert not set(first[:8]) & set(second)  # finished requests are never repeated
    assert first[8] in second  # the one in flight at the kill is asked again
    assert len(load_benchmark(out)) == 12
    assert account(read_log(out / "construction_log.jsonl"))["problems"] == []


def test_run_options_reach_every_backend(fake, tmp_path):
    from foilbench.construct.engine.resolve import resolve_backends

    specs = {**SPECS, "vqa": "api:gemini:gemini-test", "detector": None}
    led = SpendLedger(tmp_path / "out", 3.0)
    backends = resolve_backends(specs, device="cpu", ledger=led, max_concurrency=2,
                                cache_dir=tmp_path / "api-cache", retries=4)
    assert set(backends) == {"text", "image", "edit", "vqa"}  # None means no backend
    callers = [backends["text"].caller, backends["image"].impl.caller,
               backends["edit"].impl.caller, backends["vqa"].caller]
    assert all(c.ledger is led for c in callers) and all(c.policy.max_retries == 4
                                                         for c in callers)
    assert all(c.cache_dir == tmp_path / "api-cache" for c in callers)
    assert all(b.max_concurrency == 2 for b in backends.values())
    offline = resolve_backends({"text": "template", "image": "world"}, device="cpu",
                               max_concurrency=2, cache_dir=tmp_path)
    assert offline["text"].describe()["spec"] == "template"
