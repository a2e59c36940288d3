"""CompoSET App. C drift audit: seeded sample, VLM flags through a strict fake backend,
resume after a crash, manual verification, and the Wilson rate by hand."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner
from PIL import Image

from foilbench.audit import drift as d
from foilbench.cli.main import cli
from foilbench.construct.backends.base import UnanswerableError
from foilbench.data.tiny import tiny_benchmark
from foilbench.errors import FoilbenchError
from foilbench.review import drift_audit as ra


class FakeVQA:
    """Strict: refuses anything but the yes/no drift question on one side-by-side image."""

    spec = "fake"

    def __init__(self, yes=(), unanswerable=(), crash_at=None):
        self.yes, self.unanswerable, self.crash_at, self.calls = list(yes), list(unanswerable), \
            crash_at, 0

    def answer(self, image, question, choices):
        assert list(choices) == ["yes", "no"]
        assert isinstance(image, Image.Image) and image.width > image.height
        assert question.startswith("The left half is the original image")
        self.calls += 1
        if self.crash_at is not None and self.calls == self.crash_at:
            raise RuntimeError("connection lost")
        if any(_said(pair, question) for pair in self.unanswerable):
            raise UnanswerableError("no single choice")
        return "yes" if any(_said(pair, question) for pair in self.yes) else "no"


def _said(pair: dict, question: str) -> bool:
    return f'"{pair["caption_base"]}" became "{pair["caption_foil"]}"' in question


def _state(n=5):
    bench = tiny_benchmark()
    return bench, ra.new_state(bench, d.drift_sample(bench, n, "short", 0), n, "short", 0, "fake")


def test_sample_is_seeded_and_checked():
    bench = tiny_benchmark()
    a, b = d.drift_sample(bench, 5, seed=1), d.drift_sample(bench, 5, seed=1)
    assert list(a["item_id"]) == list(b["item_id"]) and len(a) == 5
    assert list(d.drift_sample(bench, 5, seed=2)["item_id"]) != list(a["item_id"])
    with pytest.raises(d.DriftAuditError, match="cannot sample 13 of 12"):
        d.drift_sample(bench, 13)


def test_side_by_side_scales_foil_to_base_height():
    out = d.side_by_side(Image.new("RGB", (10, 8)), Image.new("RGB", (20, 16), "red"))
    assert out.size == (20, 8) and out.getpixel((15, 4)) == (255, 0, 0)


def test_flags_resume_verification_and_rate_by_hand():
    bench, state = _state(5)
    caps = state["pairs"]  # base + foil captions name each sampled pair uniquely
    saves = []
    with pytest.raises(RuntimeError):
        d.flag_all(state, bench, FakeVQA(yes=[caps[1]], crash_at=3), saves.append)
    assert [("flag" in p) for p in state["pairs"]] == [True, True, False, False, False]
    backend = FakeVQA(yes=[caps[1]], unanswerable=[caps[4]])
    assert d.flag_all(state, bench, backend, saves.append) == 3 and backend.calls == 3
    assert [p["flag"] for p in state["pairs"]] == ["no", "yes", "no", "no", "unanswerable"]
    with pytest.raises(d.DriftAuditError, match="2 flag\\(s\\) not verified"):
        d.drift_rate(state["pairs"])
    ids = [p["item_id"] for p in state["pairs"]]
    with pytest.raises(d.DriftAuditError, match="was not flagged"):
        ra.decide(state, ids[0], "drift")
    with pytest.raises(d.DriftAuditError, match="possible labels"):
        ra.decide(state, ids[1], "maybe")
    ra.decide(state, ids[1], "drift")
    ra.decide(state, ids[4], "disocclusion")
    rate = d.drift_rate(state["pairs"])
    z2 = 1.96 ** 2
    centre = (0.2 + z2 / 10) / (1 + z2 / 5)
    half = 1.96 * math.sqrt(0.2 * 0.8 / 5 + z2 / 100) / (1 + z2 / 5)
    assert (rate["confirmed_drift"], rate["n"], rate["flagged"]) == (1, 5, 2)
    assert rate["ci_low"] == pytest.approx(centre - half)
    assert rate["ci_high"] == pytest.approx(centre + half)
    table = d.flag_table(state["pairs"]).set_index("edit_type")
    assert table.loc["(other)", "flagged"] + table.loc["(spatial)", "flagged"] == 2


def test_spend_carries_across_resumes(tmp_path):
    """The audit folder's ledger holds what an earlier run billed: a resumed audit starts from
    it (state["spent_usd"] records it) and its cap counts it."""
    from foilbench.construct.engine.ledger import SpendLedger
    from foilbench.models.api.spend import SpendCapError

    first = SpendLedger(tmp_path, 5.0)
    first.settle(first.reserve(2.0, "an earlier flag"), 1.25)
    bench, state = _state(3)
    resumed = SpendLedger(tmp_path, 5.0)
    d.flag_all(state, bench, FakeVQA(), lambda s: None, resumed)
    assert state["spent_usd"] == pytest.approx(1.25)
    with pytest.raises(SpendCapError, match="--max-spend"):
        resumed.reserve(3.80, "a request that would pass the cap with the earlier spend")


def test_cli_verifies_and_reports(tmp_path):
    bench, state = _state(5)
    d.flag_all(state, bench, FakeVQA(yes=[state["pairs"][2]]), lambda s: None)
    ra.save_state(tmp_path, state)
    args = ["audit", "drift", "tiny-builtin", "--out", str(tmp_path), "--n", "5"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "1 flag(s) await verification" in res.output
    res = CliRunner().invoke(cli, [*args, "--decide", f"{state['pairs'][2]['item_id']}=drift"])
    assert res.exit_code == 0, res.output
    assert "confirmed drift: 1/5 = 20.00%" in res.output
    res = CliRunner().invoke(cli, ["audit", "drift", "tiny-builtin", "--out", str(tmp_path),
                                   "--n", "6"])
    # a FoilbenchError: the console entry prints it and exits 2 (cli/main.py)
    assert isinstance(res.exception, d.DriftAuditError) and "another audit" in str(res.exception)
    fresh = tmp_path / "fresh"
    res = CliRunner().invoke(cli, ["audit", "drift", "tiny-builtin", "--out", str(fresh),
                                   "--n", "4"])
    assert isinstance(res.exception, FoilbenchError) and "give --vqa" in str(res.exception)
