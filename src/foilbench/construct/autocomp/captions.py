"""Minimal and Contextual wording of Auto-Comp captions: one frame per (concept, condition).

Auto-Comp §3, Stage 1: "Minimal Captions. This track produces a direct, structured description
of the concept using a template-based approach. The template joins the object-attribute pairs
into a factual list, handling grammatical nuances (e.g., articles, pluralization) and adding the
suffix 'on a white background'." and "Contextual Captions. This track produces a fluent,
naturalistic description of the same concept. The concept is provided to a generative LLM
(Gemma3-12b-it) with a few-shot prompt ...". Stage 3: "our programmatic swapping ensures
positive and negative captions are perfectly controlled, identical in length and complexity,
differing only in the swapped conceptual elements."

foilbench words a concept's captions through a *frame*: a text holding ``{body}`` exactly
once, where ``body`` is the template rendering of one arrangement (the positive's or a
negative's, :mod:`foilbench.construct.autocomp.negatives`). The positive and every negative of
one (concept, condition) share the frame, so negatives follow the same rewrite and differ from
the positive only in the swapped elements, as Stage 3 asks.

* Minimal: ``"{body} on a white background"`` (the paper's suffix).
* Contextual: the scene's context around the body. :class:`TemplateRealiser` (the offline
  default) picks one of a few fixed frames true of every contextual backdrop of the world, by
  the scene's backdrop seed. :class:`LLMRealiser` asks a text backend
  (``resolve_backend("text", spec)``, e.g. ``hf-lm:/dir`` or ``api:...``) to rewrite the
  positive caption into one sentence set in the scene's context, keeping the description word
  for word; the reply becomes the frame where the description stands. A reply that drops or
  alters the description, repeats it, or names a concept word outside it falls back to the
  template frame (``fallbacks`` counts them): the analogue of the paper's "semantic
  preservation check", which discards such concepts instead.

Where we differ from the paper: its LLM rewrites the object phrases too ("correct association"
is then checked by a syntactic pattern); here only the frame around the template phrases is
rewritten, so negatives stay exactly controlled without span surgery (the construction
pipeline ``foilbench construct autocomp`` does the paper's full rewrite). The paper samples
at temperature 0.7 (App. A.7); the suite's realiser asks for temperature 0 so a rebuild is
reproducible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from foilbench.construct.autocomp.negatives import Concept

SLOT = "{body}"
MINIMAL_FRAME = SLOT + " on a white background"
# Frames true of every contextual backdrop (a room: wall, floor, props; world.backdrop).
CONTEXT_FRAMES: tuple[str, ...] = (
    SLOT + " in a furnished room",
    "a room with " + SLOT + " on the floor",
    SLOT + ", standing on the floor of a room",
    "an indoor scene with " + SLOT,
)
PROMPT_ID = "autocomp.contextual-frame@1"
SYSTEM = ("You are an expert image caption writer. Write a single, natural-sounding sentence "
          "describing the scene. Generate ONLY the caption text without any preamble, "
          "explanations, or markdown formatting.")
PROMPT = ("Rewrite this caption into one fluent sentence set in the scene described below. "
          "Copy the quoted description exactly, word for word, once; add only words about the "
          "surroundings, never another object, colour, size or position.\n"
          "Description: \"{body}\"\nScene: {context}\nCaption:")


@dataclass(frozen=True)
class SceneContext:
    """What a realiser may say about the scene around the concept: ``description`` (words,
    for a language model) and ``variant`` (a seed, e.g. the backdrop's, for templates)."""

    condition: str
    description: str = ""
    variant: int = 0


def apply_frame(frame: str, body: str) -> str:
    """``frame`` with its single ``{body}`` replaced by ``body`` (no format-string parsing)."""
    if frame.count(SLOT) != 1:
        raise ValueError(f"a caption frame must hold {SLOT} exactly once, got {frame!r}")
    return frame.replace(SLOT, body)


def unframe(text: str, frame: str) -> str:
    """The template text inside ``frame`` (``text`` unchanged when it does not fit the frame).

    >>> unframe("a red cube on a white background", MINIMAL_FRAME)
    'a red cube'
    """
    head, sep, tail = frame.partition(SLOT)
    if sep and len(text) >= len(head) + len(tail) and text.startswith(head) \
            and text.endswith(tail):
        return text[len(head):len(text) - len(tail)]
    return text


@runtime_checkable
class AutoCompRealiser(Protocol):
    """Wording backend of the suite's Auto-Comp captions; ``name`` goes into the manifest."""

    name: str

    def frame(self, concept: Concept, positive: str, context: SceneContext) -> str:
        """The frame (with ``{body}`` once) shared by the positive and its negatives."""
        ...


class TemplateRealiser:
    """Deterministic frames: the paper's Minimal suffix; a context frame chosen by
    ``context.variant`` for Contextual scenes."""

    name = "template"

    def frame(self, concept: Concept, positive: str, context: SceneContext) -> str:
        if context.condition == "minimal":
            return MINIMAL_FRAME
        if context.condition != "contextual":
            raise ValueError(f"unknown condition {context.condition!r}; possible: minimal, "
                             "contextual")
        return CONTEXT_FRAMES[context.variant % len(CONTEXT_FRAMES)]


class LLMRealiser:
    """Contextual frames from a text backend (``complete(TextRequest) -> str``); Minimal stays
    the template, as in the paper. See the module docstring for the checks and the fallback."""

    def __init__(self, backend, name: str | None = None, max_tokens: int = 150) -> None:
        self.backend = backend
        self.name = name or f"llm:{getattr(backend, 'fingerprint', type(backend).__name__)}"
        self.max_tokens = max_tokens  # App. A.7: "max_new_tokens was set to 150"
        self.fallbacks = 0
        self._template = TemplateRealiser()

    def frame(self, concept: Concept, positive: str, context: SceneContext) -> str:
        if context.condition != "contextual":
            return self._template.frame(concept, positive, context)
        from foilbench.construct.backends.base import TextRequest

        request = TextRequest(prompt=PROMPT.replace(SLOT, positive).replace(
            "{context}", context.description), system=SYSTEM, temperature=0.0,
            max_tokens=self.max_tokens, seed=context.variant, prompt_id=PROMPT_ID,
            task={"objects": list(concept.objects), "values": list(concept.values)})
        frame = frame_from_reply(str(self.backend.complete(request)), concept, positive)
        if frame is None:
            self.fallbacks += 1
            return self._template.frame(concept, positive, context)
        return frame


def realiser_from_spec(spec: str = "template", **options) -> AutoCompRealiser:
    """``"template"`` (the offline default) or any text backend spec
    (``resolve_backend("text", spec)``: ``hf-lm:/dir``, ``api:anthropic:MODEL``, ...) wrapped in
    :class:`LLMRealiser`; pass the result to ``build_autocomp(..., realiser=...)``."""
    if spec == "template":
        return TemplateRealiser()
    from foilbench.construct.backends.registry import resolve_backend

    return LLMRealiser(resolve_backend("text", spec, **options), name=spec)


def frame_from_reply(reply: str, concept: Concept, positive: str) -> str | None:
    """The frame in a model's reply, or None when the reply fails the preservation check:
    the positive must occur exactly once (case aside), the rest must name none of the
    concept's words and hold no brace."""
    text = " ".join(reply.strip().strip('"').split())
    low, body = text.lower(), positive.lower()
    if not text or "{" in text or "}" in text or low.count(body) != 1:
        return None
    at = low.index(body)
    rest = (text[:at] + " " + text[at + len(body):]).lower()
    words = set(re.findall(r"[a-z0-9]+", rest))
    for phrase in (*concept.objects, *concept.values):
        if all(w in words for w in re.findall(r"[a-z0-9]+", phrase.lower())):
            return None
    return text[:at] + SLOT + text[at + len(body):]
