"""``--dry-run --count-tokens`` (issue 40): the providers' free token-count endpoints, their
request shapes against the strict fake, and the one-sentence errors (no key, offline, not a
dry run). The bound it gives is checked against the bill in test_construct_money_builds.py."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import pytest
from click.testing import CliRunner

from _strict_common import KEY, tokens
from _strict_providers import StrictProviders
from _strict_scripts import compass_answer, dry_bound
from foilbench.cli.main import cli
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.engine.budget import (
    JOINT_TOKENS,
    Calls,
    FixedPrompt,
    estimate,
    fixed_prompt,
)
from foilbench.models.api.prices import PriceBook, token_cost
from foilbench.models.api.token_count import (
    TokenCountError,
    count_input_tokens,
    count_request,
    read_count,
)
from foilbench.models.api.transport import RetryPolicy

COMPASS = ["construct", "compass", "--text", "api:anthropic:claude-haiku-4-5", "--n-scenes",
           "2", "--no-progress", "--max-spend", "5", "--dry-run"]


@pytest.fixture
def strict(monkeypatch, tmp_path):
    server = StrictProviders(answer=compass_answer)
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    yield server
    server.close()


@pytest.mark.parametrize("provider,model", [("anthropic", "claude-haiku-4-5"),
                                            ("openai", "gpt-4o-mini"),
                                            ("gemini", "gemini-2.5-flash")])
def test_each_providers_count_request_is_accepted_and_counts_what_it_bills(strict, provider,
                                                                          model):
    n = count_input_tokens(provider, model, "You are terse.", "Caption: a red mug",
                           RetryPolicy(max_retries=0))
    assert n == tokens("You are terse." + "Caption: a red mug")
    assert strict.rejected == [] and strict.billed_usd == 0
    assert strict.counts == [(provider, model, n)]


def _post(url: str, body: dict, headers: dict) -> int:
    req = urllib.request.Request(url, json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def test_the_fake_count_endpoints_are_strict(strict):
    anthropic = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    path, body = count_request("anthropic", "claude-haiku-4-5", "", "hi")
    assert _post(strict.url + path, body, anthropic) == 200
    assert _post(strict.url + path, {**body, "max_tokens": 5}, anthropic) == 400
    assert _post(strict.url + path, {"messages": body["messages"]}, anthropic) == 400
    assert _post(strict.url + path, body, {**anthropic, "x-api-key": "sk-wrong"}) == 401
    path, body = count_request("openai", "gpt-4o-mini", "s", "hi")
    bearer = {"Authorization": f"Bearer {KEY}"}
    assert _post(strict.url + path, body, bearer) == 200
    assert _post(strict.url + path, {"input": "hi"}, bearer) == 400
    assert _post(strict.url + path, {**body, "max_output_tokens": 5}, bearer) == 400
    assert _post(strict.url + path, body, {"Authorization": "Bearer nope"}) == 401
    path, body = count_request("gemini", "gemini-2.5-flash", "s", "hi")
    goog = {"x-goog-api-key": KEY}
    assert _post(strict.url + path, body, goog) == 200
    both = {**body, "contents": body["generateContentRequest"]["contents"]}
    assert _post(strict.url + path, both, goog) == 400
    inner = {k: v for k, v in body["generateContentRequest"].items() if k != "model"}
    assert _post(strict.url + path, {"generateContentRequest": inner}, goog) == 400
    assert _post(strict.url + path, body, {"x-goog-api-key": "nope"}) == 403
    assert len(strict.rejected) == 9 and strict.billed_usd == 0


def test_a_count_reply_without_its_count_is_an_error():
    assert read_count("openai", {"object": "response.input_tokens", "input_tokens": 7}) == 7
    with pytest.raises(TokenCountError, match="'totalTokens'"):
        read_count("gemini", {"input_tokens": 7})


def test_a_fixed_prompt_empties_its_fields_and_counts_their_joints():
    fixed = fixed_prompt("compass.realise", {"facts": 100})
    assert "$facts" not in fixed.system + fixed.user
    assert (fixed.field_bytes, fixed.fields) == (100, 1)
    assert FixedPrompt("", "", 10, 3).bound(5) == 5 + 10 + 3 * 2 * JOINT_TOKENS


def test_known_captions_are_counted_once_and_bound_the_stages_sum(strict):
    """SugarCrepe's rule by hand, the fake counting 4 bytes a token: fixed part "You are
    terse." + "Caption: " (23 B) counts 6; captions "a red mug" (9 B) and "two dogs on a
    sofa" (18 B) joined by a newline (28 B) count 7, in one more request. A call's fixed
    part: 6 + 18 (longest caption) + 2*4 (joints) + 16 (allowance) = 48, less the caption's
    18 = 30. Four calls, each caption in two: 4*30 + 2*1*(7 + 2*4*2) = 166 tokens, under the
    per-call rule's 4*48 = 192."""
    assert JOINT_TOKENS == 4 and tokens("You are terse.Caption: ") == 6
    b = resolve_backend("text", "api:openai:gpt-4o-mini",
                        policy=RetryPolicy(max_retries=0, timeout=10))
    fixed = FixedPrompt("You are terse.", "Caption: ", field_bytes=18, fields=1, known=1,
                        known_bytes=18)
    calls = Calls(4, max_tokens=100, prompt_bytes=14 + 9 + 18, fixed=(fixed,),
                  known=("a red mug", "two dogs on a sofa"), known_uses=2)
    assert b.counted_tokens(fixed) == 48
    assert b.counted_stage_tokens(calls) == 166
    assert [n for _, _, n in strict.counts] == [6, 7]
    price = PriceBook().token_price("openai", "gpt-4o-mini", 166)
    assert not b.retries_cut() and b.bounds([], [], 100, b.thinking)[1] == 100
    assert b.counted_stage_bound(calls) == pytest.approx(token_cost(price, 166, 4 * 100))
    est = estimate({"s": {"text": calls}}, {"text": b}, count_tokens=True)
    assert est.total_usd == pytest.approx(token_cost(price, 166, 400))
    assert est.total_usd < 4 * b.call_bound(calls, count_tokens=True)
    assert len(strict.counts) == 2 and strict.billed_usd == 0  # each text counted once


def test_the_known_rule_is_never_above_the_per_call_rule(strict):
    """Tiny captions, where the joint margins outweigh the bytes saved, cannot lift the
    stage's bound above the per-call rule: a call counts 1 + 2 + 2*4 + 16 = 27, the byte rule
    4 + 16 = 20; the known rule 3*(27 - 2) + 1*1*(2 + 2*4*3) = 101; the bound is 3*20."""
    b = resolve_backend("text", "api:openai:gpt-4o-mini",
                        policy=RetryPolicy(max_retries=0, timeout=10))
    fixed = FixedPrompt("s", "u", field_bytes=2, fields=1, known=1, known_bytes=2)
    calls = Calls(3, max_tokens=10, prompt_bytes=4, fixed=(fixed,),
                  known=("ab", "cd", "ef"), known_uses=1)
    assert b.counted_tokens(fixed) == 27 and tokens("ab\ncd\nef") == 2
    assert b.counted_stage_tokens(calls) == 3 * 20


def test_a_fixed_prompt_marks_its_known_field():
    fixed = fixed_prompt("sugarcrepe.locate", {"caption": 50, "concept": 9}, known="caption")
    # the template names the caption once and the concept kind twice
    assert (fixed.known, fixed.known_bytes, fixed.field_bytes) == (1, 50, 50 + 2 * 9)
    assert fixed_prompt("sugarcrepe.locate", {"caption": 50}).known == 0


def test_count_tokens_tightens_the_bound_and_bills_nothing(strict, tmp_path):
    plain = CliRunner().invoke(cli, [*COMPASS, "--out", str(tmp_path / "o")])
    counted = CliRunner().invoke(cli, [*COMPASS, "--out", str(tmp_path / "o"),
                                       "--count-tokens"])
    assert plain.exit_code == 0 and counted.exit_code == 0, counted.output
    assert dry_bound(counted.output)[1] < dry_bound(plain.output)[1]
    assert "counted by its provider (--count-tokens)" in counted.output
    assert "--count-tokens" not in plain.output
    # each prompt counted once: the proposal prompt once a kind (its kind filled in) with
    # one count of that kind's words joined, for object, attribute and relation, and the
    # realisation prompt
    assert len(strict.counts) == 3 * 2 + 1 and strict.billed_usd == 0
    assert len({r["raw"] for r in strict.requests}) == len(strict.requests)
    assert not (tmp_path / "o" / "construction_log.jsonl").exists()


def test_count_tokens_without_a_key_is_one_sentence_exit_2(strict, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    res = CliRunner().invoke(cli, [*COMPASS, "--out", str(tmp_path / "o"), "--count-tokens"])
    assert isinstance(res.exception, TokenCountError)  # foilbench's main: "error: ...", exit 2
    assert str(res.exception).startswith("--count-tokens: anthropic:claude-haiku-4-5: "
                                         "anthropic: no API key; set ANTHROPIC_API_KEY")
    assert strict.requests == []


def test_count_tokens_offline_is_one_sentence_exit_2(strict, tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("FOILBENCH_ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    res = CliRunner().invoke(cli, [*COMPASS, "--out", str(tmp_path / "o"), "--count-tokens",
                                   "--retries", "0"])
    assert isinstance(res.exception, TokenCountError)  # foilbench's main: exit 2
    assert "the count request failed" in str(res.exception)
    assert str(res.exception).endswith("run the dry run without --count-tokens to bound "
                                       "offline")


def test_count_tokens_needs_the_dry_run(strict, tmp_path):
    cmd = [c for c in COMPASS if c != "--dry-run"]
    res = CliRunner().invoke(cli, [*cmd, "--out", str(tmp_path / "o"), "--count-tokens"])
    assert res.exit_code == 2 and "only applies with --dry-run" in res.output
    assert strict.requests == []


def test_the_cli_says_it_in_one_line_and_exits_2_without_a_key(tmp_path):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["FOILBENCH_HOME"] = str(tmp_path / "home")
    res = subprocess.run([sys.executable, "-m", "foilbench", *COMPASS, "--out",
                          str(tmp_path / "o"), "--count-tokens"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: --count-tokens: anthropic:claude-haiku-4-5: anthropic: no API "
                      "key; set ANTHROPIC_API_KEY in the environment"]


def test_a_plan_with_no_fixed_prompt_says_its_bound_is_the_byte_bound():
    from foilbench.construct.engine.budget import Calls, estimate

    class Backend:
        spec, counts_tokens = "api:openai:gpt-4o-mini", True

        def call_bound(self, calls, count_tokens=False):
            return 2.0 if count_tokens and calls.fixed else 3.0

    plain = estimate({"s": {"text": Calls(1, prompt_bytes=10)}}, {"text": Backend()},
                     count_tokens=True)
    fixed = (FixedPrompt("", "x", 1, 1),)
    counted = estimate({"s": {"text": Calls(1, prompt_bytes=10, fixed=fixed)}},
                       {"text": Backend()}, count_tokens=True)
    assert (plain.counted, plain.total_usd) == (False, 3.0)
    assert (counted.counted, counted.total_usd) == (True, 2.0)
    assert any("one token a prompt byte" in line for line in plain.lines())
    assert estimate({"s": {"text": Calls(1, fixed=fixed)}}, {"text": Backend()}).counted is None
