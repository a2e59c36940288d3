"""The token-priced request path shared by the API text generator (:mod:`.api_text`) and the
API VQA validator (:mod:`.vqa`): worst-case reservation, the request in the provider's current
shape, billing from ``usage``, and the finish-reason rule.

Why one place: both roles send the same kind of request (image and text parts, one reply),
priced per token, through one :class:`~.api_common.GuardedCaller` and the shared
``construct_text_responses.jsonl`` cache, so they must price, cache and bill alike.

Spec options (both roles): ``effort=low|medium|high|minimal|none`` (OpenAI
``reasoning_effort``, Gemini 3 ``thinkingLevel``), ``thinking=N`` (output room for thinking:
OpenAI reasoning and Gemini 2.5 models get ``DEFAULT_THINKING_TOKENS`` when unset; Anthropic
extended thinking is on only with ``thinking=N``, N >= 1024; ``thinking=0`` turns Gemini 2.5
Flash thinking off).

Worst case of one call (what the ledger reserves): text bytes + per-message allowance + each
image's provider bound as input, at the output budget (thinking included), at the listed
price (:mod:`foilbench.models.api.prices`).

A reply cut at its limit (issue 40's decision): the pipelines size each answer's budget from
what the request asks for, generously (one token per byte of what a compliant answer holds,
plus room for the JSON around it), so a model that runs past it is off task and asking again
at twice the budget would pay three times for the same wandering. Such a reply is dropped
(billed, never cached). The one exception is a request that thinks: how long a reasoning or
thinking model thinks is not sized from the ask, and a reply cut because thinking used the
room is asked once more with twice the budget and twice the thinking room, reserved anew.
The dry run's bound includes that second request exactly where the code can send it
(:meth:`TokenPricedAPI.retries_cut`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from foilbench.construct.backends.api_common import (
    GuardedCaller,
    TailingResponseCache,
    UnusableReplyError,
)
from foilbench.errors import ModelError
from foilbench.models.api.prices import (
    PriceBook,
    PriceError,
    image_tokens_bound,
    text_tokens_bound,
    token_cost,
)
from foilbench.models.api.transport import post_json
from foilbench.models.api.wire import (
    DEFAULT_THINKING_TOKENS,
    PROVIDERS,
    Reply,
    auth_headers,
    build_request,
    check_thinking_options,
    output_budget,
    parse_reply,
    thinks,
)

EFFORTS = ("none", "minimal", "low", "medium", "high")
TOKEN_OPTIONS = {"effort": EFFORTS, "thinking": None}
WHY = {"length": "cut at its output limit",
       "empty": "empty", "refusal": "a refusal", "safety": "blocked for safety or policy"}
#: the dry run's largest request: input text tokens and images (of this side), answer tokens
DRY_INPUT_TOKENS, DRY_IMAGE_SIDE = 16000, 1024
#: a planned call that names no output budget gets the text request's default
DRY_MAX_TOKENS_DEFAULT = 512
#: the dry run's estimate (a guide, never the cap's reservation): prompt bytes a token, the
#: share of its output budget a reply uses, the share of its room a thinking model thinks
GUESS_BYTES_PER_TOKEN, GUESS_REPLY_SHARE, GUESS_THINKING_SHARE = 4, 0.25, 0.5
ESTIMATE_RULE = ("each stage's largest prompt at 4 bytes a token, replies at a quarter of "
                 "their output budget, thinking at half its room, no cut reply asked again")


def usage_reported(provider: str, data: dict) -> tuple[bool, bool]:
    """Whether the reply's usage gives (the input count, the output count): Anthropic
    ``usage.input_tokens`` / ``output_tokens``, OpenAI ``usage.prompt_tokens`` /
    ``completion_tokens``, Gemini ``usageMetadata.promptTokenCount`` / ``candidatesTokenCount``
    (or ``thoughtsTokenCount`` alone: a reply that only thought).

    >>> usage_reported("openai", {"usage": {"completion_tokens": 7}})
    (False, True)
    """
    if provider == "gemini":
        meta = data.get("usageMetadata") or {}
        return ("promptTokenCount" in meta,
                "candidatesTokenCount" in meta or "thoughtsTokenCount" in meta)
    usage = data.get("usage") or {}
    names = {"anthropic": ("input_tokens", "output_tokens"),
             "openai": ("prompt_tokens", "completion_tokens")}[provider]
    return names[0] in usage, names[1] in usage


def _thinking(raw: str | None, spec: str) -> int | None:
    """The ``thinking=N`` option: output tokens for thinking (0 turns it off where allowed)."""
    if raw is None:
        return None
    if not str(raw).isdigit():
        raise ModelError(f"{spec}: thinking={raw!r} must be a whole number of tokens >= 0")
    return int(raw)


class TokenPricedAPI:
    def _connect(self, provider: str, model: str, spec: str, max_concurrency: int,
                 opts: dict, ledger: Any, policy: Any, cache_dir: str | Path | None) -> None:
        self.provider, self.model, self.spec = provider, model, spec
        self.max_concurrency = max_concurrency
        self.effort = opts.get("effort")
        self.thinking = _thinking(opts.get("thinking"), spec)
        check_thinking_options(provider, model, self.effort, self.thinking, spec)
        self.caller = GuardedCaller(ledger, policy, cache_dir)
        self.cache = TailingResponseCache(self.caller.cache_dir / "construct_text_responses.jsonl")
        #: the provider's counts of fixed prompt parts (``--count-tokens``), by (system, user)
        self._counts: dict[tuple[str, str], int] = {}

    # -- money ------------------------------------------------------------------------------
    @property
    def prices(self) -> PriceBook:
        ledger = self.caller.ledger
        return ledger.prices if ledger is not None else PriceBook()

    def _price(self, input_tokens: int) -> tuple[float, float]:
        price = self.prices.token_price(self.provider, self.model, input_tokens)
        if price is None:
            self.prices.require(self.provider, self.model)  # raises with the fix
            raise PriceError(f"{self.spec}: no price")  # unreachable: require raised
        return price

    def bounds(self, texts: list[str], image_sizes: list[tuple[int, int]], max_tokens: int,
               thinking: int | None) -> tuple[int, int]:
        """(most input tokens, most billed output tokens) of one request."""
        tin = text_tokens_bound(texts) + sum(image_tokens_bound(self.provider, self.model, w, h)
                                             for w, h in image_sizes)
        _, out = output_budget(self.provider, self.model, max_tokens, thinking)
        return tin, out

    def worst_case(self, texts: list[str], image_sizes: list[tuple[int, int]],
                   max_tokens: int, thinking: int | None) -> float:
        tin, out = self.bounds(texts, image_sizes, max_tokens, thinking)
        return token_cost(self._price(tin), tin, out)

    estimate_rule = ESTIMATE_RULE

    def retries_cut(self) -> bool:
        """Whether a reply cut at its limit is asked once more (module docstring): only when
        the request thinks (thinking not turned off with ``thinking=0``)."""
        return self.thinking != 0 and thinks(self.provider, self.model, self.thinking)

    def _twice(self, texts: list[str], sizes: list[tuple[int, int]], max_tokens: int,
               text_tokens: int | None = None) -> float:
        """Most one request can cost, with its retry where :meth:`retries_cut` sends one;
        ``text_tokens`` (counted, :meth:`counted_tokens`) replaces the bytes of ``texts``."""
        def worst(budget: int, thinking: int | None) -> float:
            tin, out = self.bounds(texts, sizes, budget, thinking)
            if text_tokens is not None:
                tin += text_tokens - text_tokens_bound(texts)
            return token_cost(self._price(tin), tin, out)

        first = worst(max_tokens, self.thinking)
        if not self.retries_cut():
            return first
        return first + worst(2 * max_tokens, self._more(self.thinking))

    #: :func:`~foilbench.construct.engine.budget.estimate` may ask :meth:`call_bound` to
    #: count the fixed prompt parts with the provider (``--count-tokens``)
    counts_tokens = True

    def counted_tokens(self, fixed: Any) -> int:
        """Most input text tokens of a request whose prompt is ``fixed`` (a
        :class:`~foilbench.construct.engine.budget.FixedPrompt`) with its fields filled in:
        the provider's free count of the fixed part (asked once per prompt, never reserved or
        billed, :mod:`foilbench.models.api.token_count`), the fields at one token a byte and
        the joints' margin, plus the per-message allowance (:func:`text_tokens_bound` of
        nothing) for the framing a count request and the sent request may not share."""
        from foilbench.models.api.token_count import count_input_tokens

        counts = self._counts
        key = (fixed.system, fixed.user)
        if key not in counts:
            counts[key] = count_input_tokens(self.provider, self.model, fixed.system,
                                             fixed.user, self.caller.policy)
        return fixed.bound(counts[key]) + text_tokens_bound([])

    #: what joins the known texts in their one count request (a newline: where byte-level
    #: BPE tokenizers cut a piece; the margin at each end of each text covers one that
    #: merges across it, :meth:`counted_stage_tokens`)
    KNOWN_SEPARATOR = "\n"

    def counted_stage_tokens(self, calls: Any) -> int:
        """Most input text tokens of all of a stage's calls together, with ``--count-tokens``,
        for a plan that knows the texts of one field (:attr:`~foilbench.construct.engine.
        budget.Calls.known`, SugarCrepe's captions): each call's fixed part as
        :meth:`counted_tokens` bounds it, less the known field's bytes, then the known
        field's tokens for the whole stage from ONE more free count, of all its texts joined
        by :data:`KNOWN_SEPARATOR`, that count ``K``.

        Why the sum and not a per-request share: ``K`` is one number for all the texts; it
        cannot be split per text soundly (a short caption may take more than its byte share),
        but the stage's bound is a total, so the total is what needs bounding. Each text is
        sent in at most ``known_uses`` calls, ``known`` times a call at most (the most
        occurrences of the field in any of the stage's prompts), so the field's tokens over
        the stage are at most ``known_uses * known * (K + 2 * JOINT_TOKENS * len(texts))``:

        - inside the joined text, a tokenizer pre-splits at the separator and merges only
          within a piece, so the pieces wholly inside each text are cut as they are in a
          request, and their tokens summed over the texts are at most ``K`` (the separators
          and the count's own framing only add to ``K``, so nothing is subtracted);
        - the piece at each end of a text is cut differently in the request (next to the
          template's space or colon instead of the separator); that re-cut is the joint
          margin argued at :data:`~foilbench.construct.engine.budget.JOINT_TOKENS`, taken
          once more at each end of each text (the template's side of the joint keeps its
          own margin in :meth:`counted_tokens`).

        Never above the counted per-call bound times the calls, nor the byte bound."""
        from foilbench.construct.engine.budget import JOINT_TOKENS
        from foilbench.models.api.token_count import count_input_tokens

        n = int(calls)
        byte_rule = text_tokens_bound(["x" * (calls.prompt_bytes or DRY_INPUT_TOKENS)])
        per_call = min(max(self.counted_tokens(f) for f in calls.fixed), byte_rule)
        joined = self.KNOWN_SEPARATOR.join(calls.known)
        key = ("", joined)
        if key not in self._counts:
            self._counts[key] = count_input_tokens(self.provider, self.model, "", joined,
                                                   self.caller.policy)
        occurrences = max(f.known for f in calls.fixed)
        rest = max(self.counted_tokens(f) - f.known_bytes for f in calls.fixed)
        known = (calls.known_uses * occurrences
                 * (self._counts[key] + 2 * JOINT_TOKENS * len(calls.known)))
        return min(n * rest + known, n * per_call)

    def counted_stage_bound(self, calls: Any) -> float:
        """Most all of a stage's calls can cost together (:meth:`counted_stage_tokens`), each
        answered at its output budget, with its retry where :meth:`retries_cut` sends one (it
        sends the same input again). Priced at the tier of the largest request the byte rule
        allows (a longer prompt's tier is never the cheaper); unpriced: NaN."""
        max_tokens = calls.max_tokens or DRY_MAX_TOKENS_DEFAULT
        texts = ["x" * (calls.prompt_bytes or DRY_INPUT_TOKENS)]
        side = calls.image_side or DRY_IMAGE_SIDE
        n, text_in = int(calls), self.counted_stage_tokens(calls)
        attempts = [(max_tokens, self.thinking)]
        if self.retries_cut():
            attempts.append((2 * max_tokens, self._more(self.thinking)))
        try:
            usd = 0.0
            for budget, thinking in attempts:
                tin, out = self.bounds(texts, [(side, side)] * calls.images, budget, thinking)
                images = tin - text_tokens_bound(texts)
                usd += token_cost(self._price(tin), n * images + text_in, n * out)
            return usd
        except PriceError:
            return float("nan")

    def dry_run_bound(self, max_tokens: int, input_tokens: int = DRY_INPUT_TOKENS) -> float:
        """Most one call can cost: a request of ``input_tokens`` text tokens and one image,
        answered at ``max_tokens`` (and its retry, :meth:`retries_cut`); unpriced: NaN."""
        try:
            return self._twice(["x" * input_tokens], [(DRY_IMAGE_SIDE, DRY_IMAGE_SIDE)],
                               max_tokens)
        except PriceError:
            return float("nan")

    def call_bound(self, calls: Any, count_tokens: bool = False) -> float:
        """Most one call of a planned stage can cost (:class:`~foilbench.construct.engine.
        budget.Calls`): its own prompt size, images and output budget, then the one retry of
        a cut reply where :meth:`retries_cut` sends one; unpriced: NaN. With
        ``count_tokens`` and the stage's fixed prompts, its input text is bounded from the
        provider's count of them (:meth:`counted_tokens`), never above the byte bound."""
        max_tokens = calls.max_tokens or DRY_MAX_TOKENS_DEFAULT
        texts = ["x" * (calls.prompt_bytes or DRY_INPUT_TOKENS)]
        side = calls.image_side or DRY_IMAGE_SIDE
        counted = None
        if count_tokens and calls.fixed:
            counted = min(max(self.counted_tokens(f) for f in calls.fixed),
                          text_tokens_bound(texts))
        try:
            return self._twice(texts, [(side, side)] * calls.images, max_tokens, counted)
        except PriceError:
            return float("nan")

    def call_estimate(self, calls: Any) -> float:
        """What one call of a planned stage typically costs (:data:`ESTIMATE_RULE`): a guide
        for planning, not a bound (a provider's tokenizer may need up to one token a byte,
        and a model may use all its room); unpriced: NaN."""
        max_tokens = calls.max_tokens or DRY_MAX_TOKENS_DEFAULT
        side = calls.image_side or DRY_IMAGE_SIDE
        tin = math.ceil((calls.prompt_bytes or DRY_INPUT_TOKENS) / GUESS_BYTES_PER_TOKEN)
        tin += sum(image_tokens_bound(self.provider, self.model, side, side)
                   for _ in range(calls.images))
        allowed, _ = output_budget(self.provider, self.model, max_tokens, self.thinking)
        tout = math.ceil(GUESS_REPLY_SHARE * max_tokens
                         + GUESS_THINKING_SHARE * (allowed - max_tokens))
        try:
            return token_cost(self._price(tin), tin, tout)
        except PriceError:
            return float("nan")

    def _more(self, thinking: int | None) -> int | None:
        if thinking == 0 or not thinks(self.provider, self.model, thinking):
            return thinking  # thinking off stays off
        return 2 * (thinking or DEFAULT_THINKING_TOKENS)

    def _bill(self, data: dict, bound_in: int, bound_out: int) -> tuple[float, dict]:
        """USD billed and the ledger's record of it. A count the reply's usage does not give
        (a gateway that drops ``prompt_tokens``, say) is settled at its reserved bound, never
        at 0 (issue 40: the input was 71-92% of the bill)."""
        reply = parse_reply(self.provider, data)
        has_in, has_out = usage_reported(self.provider, data)
        tin = reply.input_tokens if has_in else bound_in
        tout = reply.output_tokens if has_out else bound_out
        at_bound = [f for f, ok in (("input", has_in), ("output", has_out)) if not ok]
        usd = token_cost(self._price(tin), tin, tout)
        return usd, {"model": f"{self.provider}:{self.model}", "usage": {"in": tin, "out": tout},
                     "at_bound": at_bound or None}

    # -- the call ---------------------------------------------------------------------------
    def _reply(self, key: str, role: str, parts: list, image_sizes: list[tuple[int, int]],
               max_tokens: int, system: str = "", **wire: Any) -> Reply:
        """The cached reply for ``key``, else one paid request (two when the first is cut
        and the request thinks: :meth:`retries_cut`)."""
        return self.caller.obtain(key, self.cache.get, lambda: self._pay(
            key, role, parts, image_sizes, max_tokens, system, **wire))

    def _pay(self, key: str, role: str, parts: list, image_sizes: list[tuple[int, int]],
             max_tokens: int, system: str = "", **wire: Any) -> Reply:
        texts = [v for k, v in parts if k == "text"] + ([system] if system else [])
        url = PROVIDERS[self.provider].base_url()
        thinking, budget = self.thinking, max_tokens
        for attempt in (0, 1):
            path, body = build_request(self.provider, self.model, parts, budget, system=system,
                                       reasoning_effort=self.effort, thinking_tokens=thinking,
                                       **wire)
            tin, tout = self.bounds(texts, image_sizes, budget, thinking)
            worst = token_cost(self._price(tin), tin, tout)

            def post(on_resend, path=path, body=body):
                return post_json(url + path, body, {}, auth_headers(self.provider),
                                 self.caller.policy, on_resend)

            def bill(data, tin=tin, tout=tout):
                return self._bill(data, tin, tout)

            data = self.caller.paid(f"{role} {self.spec}", worst, post, bill)
            reply = parse_reply(self.provider, data)
            if reply.usable:
                self.cache.put(key, reply)
                return reply
            if reply.finish != "length" or attempt or not self.retries_cut():
                break
            budget, thinking = 2 * budget, self._more(thinking)
        self.caller.dropped(reply.finish)
        why = WHY.get(reply.finish, reply.finish)
        raise UnusableReplyError(f"{self.spec}: the reply was {why} (finish {reply.finish!r}, "
                                 f"{reply.output_tokens} output tokens, {reply.thinking_tokens} "
                                 "of them thinking); not cached")

    def usage(self) -> dict:
        return self.caller.usage()
