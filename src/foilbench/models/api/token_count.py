"""The providers' free token-count endpoints, for ``--dry-run --count-tokens`` (issue 40).

The dry run's bound counts one input token per prompt byte because no provider tokenizer is
available offline. With ``--count-tokens`` it asks the provider instead, for the fixed part of
each stage's prompt (system prompt, template, demonstrations); the variable fields are still
bounded by their bytes (:mod:`foilbench.construct.engine.budget`). A count is not a
generation: it is free, so it is never reserved in, nor billed to, the spend ledger; it needs
the key and the network all the same.

The shapes, from the providers' public references:

Anthropic  ``POST /v1/messages/count_tokens`` with the Messages body less ``max_tokens``
           (``model``, ``messages``, ``system``), headers as for Messages; reply
           ``{"input_tokens": N}``
           (https://platform.claude.com/docs/en/api/messages/count_tokens).
OpenAI     ``POST /v1/responses/input_tokens`` with a Responses body (``model``, ``input``,
           ``instructions``), Bearer key; reply ``{"object": "response.input_tokens",
           "input_tokens": N}``
           (https://developers.openai.com/api/reference/resources/responses/subresources/
           input_tokens).
Gemini     ``POST /v1beta/models/{model}:countTokens`` with ``contents`` or, to count a
           system instruction too, a ``generateContentRequest`` (the two are exclusive);
           reply ``{"totalTokens": N}`` (https://ai.google.dev/api/tokens).

An OpenAI count is of a Responses request while the pipelines send Chat Completions: the two
frame one system and one user message alike but for a few tokens, which the per-joint margin
of the plan's fields (:data:`~foilbench.construct.engine.budget.JOINT_TOKENS`) and the
per-message allowance added on top cover.
"""

from __future__ import annotations

from typing import Any

from foilbench.errors import FoilbenchError
from foilbench.models.api.transport import APIError, RetryPolicy, post_json
from foilbench.models.api.wire import PROVIDERS, auth_headers


class TokenCountError(FoilbenchError):
    """A count the dry run asked for could not be had (no key, offline, a refused request)."""


def count_request(provider: str, model: str, system: str, user: str) -> tuple[str, dict]:
    """(path after the base URL, JSON body) of one count of a system and a user text.

    >>> count_request("openai", "gpt-4o-mini", "Be brief.", "Hi")
    ('/v1/responses/input_tokens', {'model': 'gpt-4o-mini', 'input': 'Hi', \
'instructions': 'Be brief.'})
    """
    body: dict[str, Any]
    if provider == "anthropic":
        body = {"model": model, "messages": [{"role": "user",
                                              "content": [{"type": "text", "text": user}]}]}
        if system:
            body["system"] = system
        return "/v1/messages/count_tokens", body
    if provider == "openai":
        body = {"model": model, "input": user}
        if system:
            body["instructions"] = system
        return "/v1/responses/input_tokens", body
    if provider == "gemini":
        inner: dict[str, Any] = {"model": f"models/{model}",
                                 "contents": [{"role": "user", "parts": [{"text": user}]}]}
        if system:
            inner["systemInstruction"] = {"parts": [{"text": system}]}
        return f"/v1beta/models/{model}:countTokens", {"generateContentRequest": inner}
    raise TokenCountError(f"--count-tokens: no token-count endpoint for provider {provider!r}")


def read_count(provider: str, data: dict) -> int:
    """The count in a reply; a reply without one raises :class:`TokenCountError`.

    >>> read_count("gemini", {"totalTokens": 12})
    12
    """
    name = "totalTokens" if provider == "gemini" else "input_tokens"
    value = data.get(name) if isinstance(data, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TokenCountError(f"--count-tokens: {provider}'s count reply has no whole "
                              f"{name!r}")
    return value


def count_input_tokens(provider: str, model: str, system: str, user: str,
                       policy: RetryPolicy) -> int:
    """Input tokens of one request of ``system`` and ``user`` text, as the provider counts
    them (free; never reserved or billed). No key, no network or a refusal: one sentence."""
    where = f"--count-tokens: {provider}:{model}"
    path, body = count_request(provider, model, system, user)
    try:
        headers = auth_headers(provider)
        data, _ = post_json(PROVIDERS[provider].base_url() + path, body, {}, headers, policy)
    except APIError as e:
        raise TokenCountError(f"{where}: the count request failed ({e}); run the dry run "
                              "without --count-tokens to bound offline") from None
    except FoilbenchError as e:  # no key
        raise TokenCountError(f"{where}: {e}") from None
    return read_count(provider, data)
