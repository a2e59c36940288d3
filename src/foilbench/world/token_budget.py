"""CLIP BPE token counts: the world's table for world captions, CLIP's real BPE for any text.

Captions must fit CLIP's 77-token context (CompoSET §3: "Long captions are constrained to
remain within the 77-token context window of CLIP-style text encoders"; App. B.3: "The long
tier is constrained to 77 BPE tokens").

- :func:`token_count` counts world captions without loading a tokenizer: CLIP's
  pre-tokenisation rule (lower-cased words, single digits, runs of punctuation) and a table of
  each world word's BPE length (``clip_token_lengths.json``, measured once with open_clip's
  ViT-B-32 tokenizer; ``tests/test_world_token_budget.py`` re-measures it). A piece missing
  from the table counts one token per character, an upper bound for byte-pair encoding
  (merges only shorten). The embedded suite uses it (world words only, so it is exact there).
- :func:`long_tier_counter` is what a caption written by a language model is counted with:
  open_clip's tokenizer and its packaged BPE vocabulary (offline) when open_clip_torch is
  installed (``COUNTER_BPE``), else the table-plus-characters bound above (``COUNTER_BOUND``),
  which never undercounts, so a caption it accepts fits, but it rejects long captions with
  words outside the world's table that really fit. The counter's name goes into provenance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from foilbench.errors import FoilbenchError

# CLIP's pre-tokeniser for ASCII text: contractions, letter runs, single digits, other runs.
PIECES = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d|[a-z]+|[0-9]|[^\sa-z0-9]+")
START_END = 2
CONTEXT = 77
COUNTER_BPE = "clip-bpe (open_clip ViT-B-32 tokenizer, packaged vocabulary; exact)"
COUNTER_BOUND = ("upper bound (world BPE table, 1 token per character for other words; "
                 "open_clip_torch not installed)")
COUNTERS = ("auto", "bpe", "bound")


class TokenCounterError(FoilbenchError, ValueError):
    """A token counter was asked for that cannot be had."""


@lru_cache(maxsize=1)
def token_lengths() -> dict[str, int]:
    table = files("foilbench.world").joinpath("clip_token_lengths.json").read_text()
    return json.loads(table)


def pieces(text: str) -> list[str]:
    return PIECES.findall(" ".join(text.lower().split()))


def token_count(text: str) -> int:
    """CLIP BPE tokens of ``text`` including start and end tokens: exact for world words,
    an upper bound otherwise.

    >>> token_count("a red cube on a white background")
    9
    """
    table = token_lengths()
    return START_END + sum(table.get(p, len(p)) for p in pieces(text))


@dataclass(frozen=True)
class TokenCounter:
    """``count(text)``: CLIP tokens with start and end tokens; ``name`` says which counter."""

    name: str
    count: Callable[[str], int]
    exact: bool


@lru_cache(maxsize=1)
def _bpe_tokenizer():
    import open_clip  # noqa: PLC0415 - optional dependency, loaded only when counting

    return open_clip.get_tokenizer("ViT-B-32")


def _bpe_count(text: str) -> int:
    # open_clip's SimpleTokenizer.encode cleans whitespace and lower-cases like CLIP's own.
    return START_END + len(_bpe_tokenizer().encode(text))


def long_tier_counter(kind: str = "auto") -> TokenCounter:
    """The counter for captions of any vocabulary: ``"bpe"`` (open_clip, required),
    ``"bound"`` (the conservative table-plus-characters bound), or ``"auto"`` (BPE when
    open_clip_torch imports, else the bound, named as such)."""
    if kind not in COUNTERS:
        raise TokenCounterError(f"unknown token counter {kind!r}; choose one of "
                                f"{', '.join(COUNTERS)}")
    if kind != "bound":
        try:
            _bpe_tokenizer()
        except ImportError:
            if kind == "bpe":
                raise TokenCounterError(
                    "the CLIP BPE token counter needs open_clip_torch "
                    "(pip install 'foilbench[openclip]'), or choose the 'bound' counter"
                ) from None
        else:
            return TokenCounter(COUNTER_BPE, _bpe_count, True)
    return TokenCounter(COUNTER_BOUND, token_count, False)
