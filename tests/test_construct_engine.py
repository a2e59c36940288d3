"""The construction stage engine: call cache, retries, spend cap, concurrency, log accounting,
prompts and reply parsing."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PIL import Image

from foilbench.construct.backends.base import (
    Detection,
    EditResult,
    TextBackend,
    TextRequest,
    VQABackend,
)
from foilbench.construct.engine.budget import estimate
from foilbench.construct.engine.cache import CallCache
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.construct.engine.log import AccountingError, Candidate, account, read_log
from foilbench.construct.engine.prompts import load_prompt, parse_prompt, prompt_names
from foilbench.construct.engine.replies import ReplyError, parse_json
from foilbench.construct.engine.stages import CallResult, Context, Failure
from foilbench.errors import FoilbenchError


class Echo(TextBackend):
    """Replies with the prompt; ``fail`` prompts always raise; records concurrency."""

    def __init__(self, cost: float = 0.0, concurrency: int = 1, fail: str = "") -> None:
        self.cost_per_call_usd, self.max_concurrency, self.fail = cost, concurrency, fail
        self.calls, self.active, self.peak = 0, 0, 0
        self._lock = threading.Lock()

    @property
    def fingerprint(self) -> str:
        return "echo:1"

    def complete(self, request):
        with self._lock:
            self.calls += 1
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            threading.Event().wait(0.01)
            if self.fail and self.fail in request.prompt:
                raise RuntimeError("backend down")
            return request.prompt.upper()
        finally:
            with self._lock:
                self.active -= 1


def _jobs(prompts):
    return [(f"j{k}", (TextRequest(p),)) for k, p in enumerate(prompts)]


def test_cache_roundtrip_every_result_type_and_torn_line(tmp_path):
    cache = CallCache(tmp_path)
    img = Image.new("RGB", (6, 4), (10, 20, 30))
    img.info["foilbench.world_scene"] = '{"x": 1}'
    mask = np.zeros((4, 6), bool)
    mask[1, 2] = True
    cache.put("t", "hello")
    cache.put("i", img)
    cache.put("e", EditResult(img, mask))
    cache.put("d", [Detection("cube", 0.9, (1.0, 2.0, 3.0, 4.0))])
    with open(cache.path, "a") as f:
        f.write('{"key": "torn", "type": "te')  # a write cut by a kill
    again = CallCache(tmp_path)
    assert again.torn_lines == 1 and "torn" not in again and len(again) == 4
    assert again.get("t") == "hello"
    got = again.get("i")
    assert np.array_equal(np.asarray(got), np.asarray(img))
    assert got.info["foilbench.world_scene"] == '{"x": 1}'
    edit = again.get("e")
    assert np.array_equal(edit.mask, mask) and edit.image.size == (6, 4)
    assert again.get("d") == [Detection("cube", 0.9, (1.0, 2.0, 3.0, 4.0))]


def test_rerun_answers_from_cache_and_identical_jobs_run_once(tmp_path):
    backend = Echo()
    ctx = Context(tmp_path, {"text": backend}, progress=False)
    first = ctx.call_many("s", "text", _jobs(["a", "b", "a"]))
    assert backend.calls == 2 and first["j0"].value == "A" and not first["j0"].cached
    ctx2 = Context(tmp_path, {"text": backend}, progress=False)
    second = ctx2.call_many("s", "text", _jobs(["a", "b"]))
    assert backend.calls == 2 and all(r.cached for r in second.values())
    assert ctx2.stats["s"]["cached"] == 2


def test_failed_call_is_dropped_at_once_not_cached(tmp_path):
    """Only the API transport retries (429 / 5xx / network); a backend's own error fails the
    same way again, so it is reported at once (issue 24)."""
    backend = Echo(fail="bad")
    ctx = Context(tmp_path, {"text": backend}, retries=2, backoff_s=0, progress=False)
    out = ctx.call_many("s", "text", _jobs(["ok", "bad"]))
    assert isinstance(out["j0"], CallResult)
    assert isinstance(out["j1"], Failure) and out["j1"].attempts == 1
    assert "backend down" in out["j1"].error
    assert ctx.stats["s"]["retried"] == 0 and ctx.stats["s"]["failed"] == 1
    assert out["j1"].key not in ctx.cache


class Transient(RuntimeError):
    retryable = True


def test_an_error_marked_retryable_is_retried(tmp_path):
    class Flaky(Echo):
        def complete(self, request):
            self.calls += 1
            raise Transient("try again")

    backend = Flaky()
    ctx = Context(tmp_path, {"text": backend}, retries=2, backoff_s=0, progress=False)
    out = ctx.call_many("s", "text", _jobs(["x"]))["j0"]
    assert isinstance(out, Failure) and out.attempts == 3 and backend.calls == 3
    assert ctx.stats["s"]["retried"] == 2 and ctx.stats["s"]["failed"] == 1


class SameEveryTime(FoilbenchError):
    retryable = False  # e.g. a prompt longer than a local model's context


class Deterministic(Echo):
    def complete(self, request):
        self.calls += 1
        raise SameEveryTime("the prompt is 900 tokens, the model's context is 512")


def test_an_error_that_repeats_is_not_retried(tmp_path):
    backend = Deterministic()
    ctx = Context(tmp_path, {"text": backend}, retries=2, backoff_s=0, progress=False)
    out = ctx.call_many("s", "text", _jobs(["long"]))["j0"]
    assert isinstance(out, Failure) and out.attempts == 1 and backend.calls == 1
    assert "context is 512" in out.error and ctx.stats["s"]["failed"] == 1


def test_unanswerable_vqa_is_an_answer_stored_once(tmp_path):
    from foilbench.construct.backends.base import Unanswerable, UnanswerableError

    class Tie(VQABackend):
        calls = 0
        fingerprint = "tie:1"

        def answer(self, image, question, choices):
            Tie.calls += 1
            raise UnanswerableError("the top choices tie")

    job = [("q", (Image.new("RGB", (4, 4)), "What colour?", ["red", "blue"]))]
    ctx = Context(tmp_path, {"vqa": Tie()}, retries=2, backoff_s=0, progress=False)
    got = ctx.call_many("s", "vqa", job)["q"]
    assert got.value == Unanswerable("the top choices tie") and Tie.calls == 1
    again = Context(tmp_path, {"vqa": Tie()}, progress=False).call_many("s", "vqa", job)["q"]
    assert again.cached and again.value == got.value and Tie.calls == 1


def test_the_context_binds_its_folder_ledger_into_paying_backends(tmp_path):
    class Caller:
        ledger = None

        def bind_ledger(self, ledger):
            self.ledger = ledger

    class Paying(Echo):
        caller = Caller()

    backend = Paying()
    ledger = SpendLedger(tmp_path, 1.0)
    ctx = Context(tmp_path, {"text": backend, "other": Echo()}, budget=ledger, progress=False)
    assert backend.caller.ledger is ledger and ctx.budget is ledger


def test_estimate_is_calls_times_price():
    est = estimate({"text": 10, "image": 0}, {"text": Echo(cost=0.25)})
    assert est.calls == {"text": 10} and est.total_usd == pytest.approx(2.5)
    assert "at most" in est.lines()[0]


def test_estimate_per_stage_prices_each_stage_and_sums_to_the_total():
    est = estimate({"spec": {"text": 4}, "render": {"image": 2, "text": 0},
                    "verbosity": {"text": 6}}, {"text": Echo(cost=0.25), "image": Echo(cost=1.0)})
    assert est.stage_usd == pytest.approx({"spec": 1.0, "render": 2.0, "verbosity": 1.5})
    assert est.calls == {"text": 10, "image": 2} and est.total_usd == pytest.approx(4.5)
    table = est.lines()
    assert table[0].split()[:2] == ["stage", "role"] and "$1.5000" in table[3]


def test_composet_plan_per_stage_by_hand():
    from foilbench.construct.composet.pipeline import ComposetConfig, plan

    # 2 scenes x 3 foils: text 2 spec + 2 QC + 2 instances + 2 foils + 2 self-check + 6
    # verbosity = 16; detector 2 base + 6 edit regions + 12 verify = 20
    p = plan(ComposetConfig(n_scenes=2, foils_per_scene=3, caption_qc=True, subjects=(1, 4)))
    # vqa: 2 scenes x (4 subjects + 4 more names a spec may hold) count questions at most
    assert per_role(p) == {"text": 16, "image": 2, "vqa": 16, "detector": 20, "edit": 6}
    assert p["verbosity (step 7)"] == {"text": 6}
    bias = per_role(plan(ComposetConfig(n_scenes=2, foils_per_scene=3, caption_qc=False,
                                        bias_variants=True)))
    # f = 6 foils per scene: 2 spec + 4 instances + 4 foils + 2 self-check + 24 verbosity
    assert bias["text"] == 36 and bias["edit"] == 12


def test_concurrency_is_bounded_by_the_backend(tmp_path):
    backend = Echo(concurrency=3)
    ctx = Context(tmp_path, {"text": backend}, progress=False)
    out = ctx.call_many("s", "text", _jobs([f"p{k}" for k in range(12)]))
    assert [out[f"j{k}"].value for k in range(12)] == [f"P{k}" for k in range(12)]
    assert 1 < backend.peak <= 3


class BadVQA(VQABackend):
    fingerprint = "bad-vqa"

    def answer(self, image, question, choices):
        return "purple"


def test_reply_outside_the_choices_is_a_failure(tmp_path):
    ctx = Context(tmp_path, {"vqa": BadVQA()}, retries=0, progress=False)
    img = Image.new("RGB", (4, 4))
    out = ctx.call_many("s", "vqa", [("q", (img, "What color is the cube?", ["red", "blue"]))])
    assert isinstance(out["q"], Failure) and "not a valid reply" in out["q"].error


def test_stage_must_account_for_every_candidate(tmp_path):
    ctx = Context(tmp_path, {}, progress=False)
    a, b, c = (Candidate(x, "thing") for x in "abc")
    for cand in (a, b, c):
        ctx.log.created(cand)
    with ctx.log.stage("check", [a, b, c]) as st:
        st.passed(a)
        st.drop(b, "too small")
        st.expand(c, [Candidate("c1", "part"), Candidate("c2", "part")])
    assert [x.id for x in st.children] == ["c1", "c2"]
    with pytest.raises(AccountingError, match="neither passed nor dropped"):
        with ctx.log.stage("leaky", st.children):
            pass
    ctx.log.keep_all([a])
    ctx.close()
    acct = account(read_log(tmp_path / "construction_log.jsonl"))
    assert acct["kinds"]["thing"] == {"created": 3, "kept": 1, "dropped": 1, "expanded": 1}
    assert any("c1: no outcome" in p for p in acct["problems"])
    assert ctx.log.rows[0].to_dict()["dropped_by_reason"] == {"too small": 1}


def test_every_packaged_prompt_parses_and_names_itself():
    names = prompt_names()
    assert {"composet.foils", "sugarcrepe.swap.swap_obj", "autocomp.contextual",
            "compass.realise"} <= set(names)
    for name in names:
        p = load_prompt(name)
        assert p.id == f"{name}@{p.version}" and p.user and p.source
    assert load_prompt("sugarcrepe.new_concept.replace_obj").temperature == 1.5
    with pytest.raises(FoilbenchError, match="no value for placeholder"):
        load_prompt("sugarcrepe.locate").render(caption="x")
    with pytest.raises(FoilbenchError, match="missing header"):
        parse_prompt("version: 1\n[user]\nhi")


def test_reply_json_is_found_in_prose_and_fences():
    assert parse_json('Sure!\n```json\n{"a": [1, "}"]}\n```') == {"a": [1, "}"]}
    assert parse_json("[1, 2] trailing") == [1, 2]
    with pytest.raises(ReplyError, match="no JSON"):
        parse_json("no structure here")


def test_call_key_hashes_request_images_by_their_pixels():
    from foilbench.construct.backends.base import call_key

    backend = Echo()
    red, blue = (Image.new("RGB", (4, 4), c) for c in ((255, 0, 0), (0, 0, 255)))
    key = call_key(backend, "complete", TextRequest("p", images=(red,)))
    assert key == call_key(backend, "complete", TextRequest("p", images=(red.copy(),)))
    assert key != call_key(backend, "complete", TextRequest("p", images=(blue,)))
    assert key != call_key(backend, "complete", TextRequest("p"))
    assert TextRequest("p", images=(red,)) == TextRequest("p")  # images stay out of ==


def per_role(plan: dict[str, dict[str, int]]) -> dict[str, int]:
    """The per-role totals of a per-stage plan (what the dry run's role lines add up)."""
    out: dict[str, int] = {}
    for roles in plan.values():
        for role, n in roles.items():
            out[role] = out.get(role, 0) + int(n)
    return out
