"""API models (Anthropic, OpenAI, Gemini) answering prompted two-option choices.

Spec: ``api:PROVIDER:MODEL[?max_tokens=N]``, e.g. ``api:anthropic:claude-3-5-sonnet-20241022``.
Keys come from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or
GOOGLE_API_KEY), read at each request, never logged, stored, cached or fingerprinted. Base
URLs can be redirected with FOILBENCH_{ANTHROPIC,OPENAI,GEMINI}_BASE_URL. Replies are cached
in ``$FOILBENCH_HOME/api_responses.jsonl``; spend is capped by FOILBENCH_API_SPEND_CAP
(USD, default 5). The protocol that turns choices into I2T/T2I/Group is
:mod:`foilbench.scoring.api_protocol`.
"""

from __future__ import annotations

from foilbench.errors import ModelError
from foilbench.models.api.adapter import APIChoiceModel
from foilbench.models.api.wire import PROVIDERS
from foilbench.models.spec_options import int_option, split_options

__all__ = ["APIChoiceModel", "from_spec"]


def from_spec(rest: str, device: str = "auto", dtype: str = "float32") -> APIChoiceModel:
    """``rest`` is ``PROVIDER:MODEL[?max_tokens=N]``; device and dtype do not apply."""
    body, opts = split_options(rest, {"max_tokens": None})
    provider, _, model = body.partition(":")
    if provider not in PROVIDERS:
        import difflib

        close = difflib.get_close_matches(provider, list(PROVIDERS), n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ModelError(f"unknown API provider {provider!r}.{hint} Known: "
                         f"{', '.join(PROVIDERS)} (spec: api:PROVIDER:MODEL)")
    if not model:
        raise ModelError(f"api:{provider}: name the model, e.g. api:{provider}:MODEL")
    return APIChoiceModel(provider, model, spec=f"api:{rest}",
                          max_tokens=int_option(opts, "max_tokens", 64))
