"""Minimal and Contextual wording of Auto-Comp captions (Auto-Comp §3, Stage 1).

"Minimal Captions ... The template joins the object-attribute pairs into a factual list ...
and adding the suffix 'on a white background'." "Contextual Captions. This track produces a
fluent, naturalistic description of the same concept. The concept is provided to a generative
LLM ..." Stage 3: negatives "differing only in the swapped conceptual elements".
"""

from __future__ import annotations

import pytest

from foilbench.construct.autocomp.captions import (
    CONTEXT_FRAMES,
    MINIMAL_FRAME,
    SLOT,
    LLMRealiser,
    SceneContext,
    TemplateRealiser,
    apply_frame,
    frame_from_reply,
    unframe,
)
from foilbench.negatives import Concept, caption

CONCEPT = Concept("color", ("mug", "box"), ("red", "blue"))
POSITIVE = caption(CONCEPT)  # "a red mug and a blue box"


def test_minimal_carries_the_papers_suffix():
    frame = TemplateRealiser().frame(CONCEPT, POSITIVE, SceneContext("minimal"))
    assert frame == MINIMAL_FRAME
    assert apply_frame(frame, POSITIVE) == "a red mug and a blue box on a white background"


def test_contextual_template_frame_is_picked_by_the_backdrop_and_holds_the_body_once():
    got = {TemplateRealiser().frame(CONCEPT, POSITIVE, SceneContext("contextual", "", v))
           for v in range(len(CONTEXT_FRAMES))}
    assert got == set(CONTEXT_FRAMES) and MINIMAL_FRAME not in got
    for frame in got:
        text = apply_frame(frame, POSITIVE)
        assert text.count(POSITIVE) == 1 and "white" not in text
        assert unframe(text, frame) == POSITIVE
    with pytest.raises(ValueError, match="unknown condition 'dusk'"):
        TemplateRealiser().frame(CONCEPT, POSITIVE, SceneContext("dusk"))


def test_apply_frame_refuses_a_frame_without_exactly_one_slot():
    with pytest.raises(ValueError, match="exactly once"):
        apply_frame("no slot here", POSITIVE)
    with pytest.raises(ValueError, match="exactly once"):
        apply_frame(SLOT + " and " + SLOT, POSITIVE)
    assert apply_frame(SLOT + " {x}", "a {y}") == "a {y} {x}"  # no format-string parsing


class FakeText:
    """A text backend that returns a fixed reply and records the requests it saw."""

    fingerprint = "fake-llm"

    def __init__(self, reply: str) -> None:
        self.reply, self.requests = reply, []

    def complete(self, request) -> str:
        self.requests.append(request)
        return self.reply


def test_llm_frame_keeps_the_description_and_negatives_follow_it():
    backend = FakeText("On a sunny kitchen counter, A red mug and a blue box wait for tea.")
    realiser = LLMRealiser(backend)
    ctx = SceneContext("contextual", "a kitchen", 7)
    frame = realiser.frame(CONCEPT, POSITIVE, ctx)
    assert frame == "On a sunny kitchen counter, " + SLOT + " wait for tea."
    negative = caption(Concept("color", ("mug", "box"), ("blue", "red")))
    assert apply_frame(frame, negative) == \
        "On a sunny kitchen counter, a blue mug and a red box wait for tea."
    req, = backend.requests
    assert POSITIVE in req.prompt and "a kitchen" in req.prompt and req.temperature == 0.0
    assert req.max_tokens == 150 and req.seed == 7 and realiser.fallbacks == 0
    # Minimal stays the paper's template, with no model call
    assert realiser.frame(CONCEPT, POSITIVE, SceneContext("minimal")) == MINIMAL_FRAME
    assert len(backend.requests) == 1


@pytest.mark.parametrize("reply", [
    "A red mug next to a blue box in a kitchen.",             # description altered
    "a red mug and a blue box, and a red mug and a blue box",  # twice
    "In a kitchen with a green mug: a red mug and a blue box",  # names a concept word outside
    "a red mug and a blue box near a {vase}",                  # braces
    "",
])
def test_llm_reply_failing_the_preservation_check_falls_back(reply):
    assert frame_from_reply(reply, CONCEPT, POSITIVE) is None
    realiser = LLMRealiser(FakeText(reply))
    frame = realiser.frame(CONCEPT, POSITIVE, SceneContext("contextual", "a room", 1))
    assert frame == CONTEXT_FRAMES[1] and realiser.fallbacks == 1


def test_realiser_from_spec_names_the_backends():
    from foilbench.construct.autocomp.captions import realiser_from_spec
    from foilbench.errors import FoilbenchError

    assert isinstance(realiser_from_spec(), TemplateRealiser)
    with pytest.raises(FoilbenchError, match="text backend"):
        realiser_from_spec("no-such-llm:/x")
