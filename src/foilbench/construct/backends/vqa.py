"""VQA validators constrained to the pipeline's vocabulary: ``hf-vlm:/dir`` and ``api:...``.

Auto-Comp validates attributes and relations by asking a VLM about each generated image (App.
A.6); the paper used a prompted model and free answers. We constrain the answer to the
pipeline's choices instead, so a validator verdict is a plain comparison:

``hf-vlm:/dir[?norm=mean|sum&template=...]``  every choice is scored by its log-likelihood as
    the answer, ``sum_j log p(t_j | image, prompt, t_<j)`` (``norm=mean``, the default,
    divides by the choice's token count, so longer choices are not penalised), after the
    prompt ``head + VQA_PROMPT + tail`` of the model's template (:mod:`foilbench.models.
    vlm_templates`); the image+prompt prefix is computed once and shared by every choice
    (:mod:`foilbench.models.vlm_backends`). The highest score wins; a tie for the top has no
    answer (strict ``>``, as everywhere in foilbench) and raises ``UnanswerableError``.
``api:anthropic|openai|gemini:MODEL[?effort=...&thinking=N]``  the image and ``API_PROMPT``
    (the question and the choices, one per line) at temperature 0 (1.0 for Gemini 3, its
    default that Google asks to keep; none for OpenAI reasoning
    models), ``answer_tokens`` for the answer (sized from the longest choice, at most
    ``API_MAX_TOKENS``) plus room for thinking on thinking models (:mod:`.api_tokens`); the
    reply is read by ``parse_choice_text``. A reply naming no choice
    or several raises ``UnanswerableError`` (cached: the model answered); a cut, empty, refused
    or blocked reply is not cached and fails the call with its reason.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from foilbench.construct.backends.api_common import (
    check_options,
    concurrency,
    content_key,
    parse_api_spec,
)
from foilbench.construct.backends.api_tokens import TOKEN_OPTIONS, TokenPricedAPI
from foilbench.construct.backends.base import UnanswerableError, VQABackend
from foilbench.errors import ModelError
from foilbench.models.api.adapter import png_bytes
from foilbench.models.api.wire import PROVIDERS, request_temperature
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.spec_options import split_options

VQA_PROMPT = "{question}\nAnswer the question using a single word or phrase."
API_PROMPT = ("{question}\nChoose the answer from this list:\n{choices}\n"
              "Reply with the answer only, written exactly as in the list.")
API_MAX_TOKENS = 32
#: output tokens an answer may add around the choice it names ("Answer:", quotes, a period)
ANSWER_FRAME_TOKENS = 12


def answer_tokens(question: str, choices: Sequence[str]) -> int:
    """The output budget of one VQA request (issue 40: each request's bound from its own max
    output): the longest choice at :func:`~foilbench.construct.engine.replies.content_tokens`'
    rule (two bytes a token when the question and choices are all ASCII, else one a byte)
    plus :data:`ANSWER_FRAME_TOKENS`, never above :data:`API_MAX_TOKENS` (the flat budget it
    replaces, still the bound of a plan that cannot know its choices). The provider enforces
    it, so the output bound stays a bound; a cut reply is not cached and fails the call.

    >>> answer_tokens("What colour is the cube?", ["red", "blue"])
    14
    >>> answer_tokens("Where is the cube?", ["left of", "to the right of"])
    20
    >>> answer_tokens("Quelle couleur ?", ["rouge", "vert\u00e2tre"]), answer_tokens("?", ["x" * 99])
    (21, 32)
    """
    from foilbench.construct.engine.replies import content_tokens, is_ascii

    longest = max((len(str(c).encode("utf-8")) for c in choices), default=0)
    content = content_tokens(longest, ascii=is_ascii(question, *choices))
    return min(API_MAX_TOKENS, ANSWER_FRAME_TOKENS + content)


def choice_lines(choices: Sequence[str]) -> str:
    """The choices as ``API_PROMPT`` lists them, one ``- choice`` line each."""
    return "\n".join(f"- {c}" for c in choices)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def parse_choice_text(reply: str, choices: Sequence[str]) -> str | None:
    """The one choice the reply names, else None.

    A reply equal to a choice (case and punctuation aside) names it; otherwise the choices that
    occur in the reply as whole words, less those contained in a longer one that also occurs
    ("red" inside "dark red"), must come down to exactly one.

    >>> parse_choice_text("Red.", ["red", "blue"]), parse_choice_text("It is dark red", [
    ...     "red", "dark red"]), parse_choice_text("red or blue", ["red", "blue"])
    ('red', 'dark red', None)
    """
    said = _norm(reply)
    said = re.sub(r"^(the )?answer( is)? ", "", said)
    exact = [c for c in choices if _norm(c) == said]
    if len(exact) == 1:
        return exact[0]
    found = [c for c in choices
             if _norm(c) and re.search(rf"\b{re.escape(_norm(c))}\b", said)]
    kept = [c for c in found
            if not any(o != c and re.search(rf"\b{re.escape(_norm(c))}\b", _norm(o))
                       for o in found)]
    return kept[0] if len(kept) == 1 else None


def _check_choices(choices: Sequence[str]) -> list[str]:
    choices = list(choices)
    if len(choices) < 2:
        raise ModelError(f"VQA needs at least two choices, got {choices!r}")
    if len({_norm(c) for c in choices}) != len(choices):
        raise ModelError(f"VQA choices must differ (case and punctuation aside): {choices!r}")
    return choices


class HFVLMVQA(VQABackend):
    """Constrained answers from a local generative VLM (reuses the ``hf-vlm:`` loader)."""

    def __init__(self, spec: str, target: str, device: str = "auto", dtype: str = "float32",
                 norm: str = "mean", template: str | None = None) -> None:
        from foilbench.models.hf.vlm import HFVLMScorer

        self.spec, self.norm = spec, norm
        self.scorer = HFVLMScorer(spec, target, device=device, dtype=dtype, score="loglik",
                                  norm=norm, template=template)
        extras = {k: v for k, v in self.scorer.info.extras.items()
                  if k not in ("prompt", "question", "score", "yes")}
        self._fingerprint = make_fingerprint("hf-vlm-vqa", {
            **extras, "vqa_prompt": VQA_PROMPT, "norm": norm})
        self._lock = threading.Lock()  # one forward pass at a time on one model

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "spec": self.spec, "norm": self.norm,
                "template": self.scorer.template.name}

    def prefix_text(self, question: str) -> str:
        t = self.scorer.template
        head = t.head.format(image=getattr(self.scorer.backend, "image_token", ""))
        return head + VQA_PROMPT.format(question=question) + t.tail

    def scores(self, image: Image.Image, question: str, choices: Sequence[str]) -> np.ndarray:
        """Each choice's (mean or summed) log-likelihood as the answer."""
        import torch

        from foilbench.models.vlm_scoring import continuation_loglik

        choices = _check_choices(choices)
        backend = self.scorer.backend
        rows = []
        for c in choices:
            ids = backend.tokenize(" " + c)
            if not ids:
                raise ModelError(f"VQA choice {c!r} tokenises to nothing")
            rows.append(ids)
        with self._lock, torch.no_grad():
            state = backend.encode_prefix(image.convert("RGB"), self.prefix_text(question))
            ids, lengths = self.scorer._padded(rows)
            logits = backend.continue_from(state, ids)
            return continuation_loglik(state.last_logits, logits, ids, lengths, self.norm)

    def answer(self, image: Image.Image, question: str, choices: Sequence[str]) -> str:
        choices = list(choices)
        s = self.scores(image, question, choices)
        best = int(np.argmax(s))
        if int(np.sum(s == s[best])) > 1:
            raise UnanswerableError(f"{self.spec}: the top choices tie for {question!r} "
                                    f"({dict(zip(choices, s.tolist(), strict=True))})")
        return choices[best]


def from_spec(rest: str, **options: Any) -> HFVLMVQA:
    check_options(f"hf-vlm:{rest}", options)
    from foilbench.models.vlm_templates import TEMPLATES

    body, opts = split_options(rest, {"norm": ("mean", "sum"), "template": tuple(TEMPLATES)})
    return HFVLMVQA(f"hf-vlm:{rest}", body, device=options.get("device") or "auto",
                    dtype=options.get("dtype") or "float32", norm=opts.get("norm", "mean"),
                    template=opts.get("template"))


class APIVQA(TokenPricedAPI, VQABackend):
    def __init__(self, provider: str, model: str, spec: str, max_concurrency: int = 4,
                 opts: dict | None = None, ledger: Any = None, policy: Any = None,
                 cache_dir: str | Path | None = None) -> None:
        self._connect(provider, model, spec, max_concurrency, opts or {}, ledger, policy,
                      cache_dir)
        self.unanswerable = 0
        self._fingerprint = make_fingerprint("api-vqa", {
            "provider": provider, "model": model, "prompt": API_PROMPT,
            "max_tokens": API_MAX_TOKENS, "effort": self.effort, "thinking": self.thinking})

    @property
    def cost_per_call_usd(self) -> float:
        """The dry run's bound per call: a question with choices of at most 4000 bytes."""
        return self.dry_run_bound(API_MAX_TOKENS, input_tokens=4000)

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "spec": self.spec, "prompt": API_PROMPT}

    def ask(self, image: Image.Image, question: str, choices: Sequence[str]) -> str:
        """The raw reply text (cached; only usable replies are)."""
        text = API_PROMPT.format(question=question,
                                 choices=choice_lines(_check_choices(choices)))
        png = png_bytes(image)
        base = PROVIDERS[self.provider].base_url()
        sampled = request_temperature(self.provider, self.model, 0.0)  # Gemini 3: 1.0
        budget = answer_tokens(question, choices)
        key = content_key("vqa-v2", base, self.provider, self.model, self.effort,
                          self.thinking, text, png, budget,
                          *([{"temperature": sampled}] if sampled else []))
        return self._reply(key, "vqa", [("image", png), ("text", text)], [image.size],
                           budget).text

    def answer(self, image: Image.Image, question: str, choices: Sequence[str]) -> str:
        reply = self.ask(image, question, choices)
        picked = parse_choice_text(reply, choices)
        if picked is None:
            self.unanswerable += 1
            raise UnanswerableError(f"{self.spec}: the reply {reply[:120]!r} names none or "
                                    f"several of {list(choices)!r} ({question!r})")
        return picked

    def usage(self) -> dict:
        return {**self.caller.usage(), "unanswerable": self.unanswerable}


def api_from_spec(rest: str, **options: Any) -> APIVQA:
    check_options(f"api:{rest}", options)
    provider, model, opts = parse_api_spec(rest, tuple(PROVIDERS), "VQA", TOKEN_OPTIONS)
    return APIVQA(provider, model, f"api:{rest}",
                  concurrency(opts, options.get("max_concurrency")), opts,
                  options.get("ledger"), options.get("policy"), options.get("cache_dir"))
