"""CLIP BPE token counts: the world's table for world captions, CLIP's real BPE for any text.

Captions must fit CLIP's 77-token context (CompoSET §3: "Long captions are constrained to
remain within the 77-token context window of CLIP-style text encoders"; App. B.3: "The long
tier is constrained to 77 BPE tokens").

- :func:`token_count` counts world captions without loading a tokenizer: CLIP's
  pre-tokenisation rule (lower-cased words, single digits, runs of punctuation) and a table of
  each world word's BPE length (``clip_token_lengths.json``, measured once with open_clip's
  ViT-B-32 tokenizer; ``tests/test_world_token_budget.py`` re-measures it). A piece missing
  from the table counts one token per UTF-8 byte, an upper bound for byte-level byte-pair
  encoding (each byte is one base token; merges only shorten): a Chinese character is three
  bytes, so up to three tokens. The embedded suite uses it (world words only, so it is exact
  there).
- :func:`same_in_context` says whether two texts reach a 77-token CLIP text encoder as the
  same tokens (they differ only past the cut), the context guard every construction method
  and ``inspect`` apply to a negative and its positive.
- :func:`long_tier_counter` is what a caption written by a language model is counted with:
  open_clip's tokenizer and its packaged BPE vocabulary (offline) when open_clip_torch is
  installed (``COUNTER_BPE``), else the table-plus-bytes bound above (``COUNTER_BOUND``),
  which never undercounts, so a caption it accepts fits, but it rejects long captions with
  words outside the world's table that really fit. The counter's name goes into provenance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

from foilbench.errors import FoilbenchError

# CLIP's pre-tokeniser for ASCII text: contractions, letter runs, single digits, other runs.
PIECES = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d|[a-z]+|[0-9]|[^\sa-z0-9]+")
START_END = 2
CONTEXT = 77
COUNTER_BPE = "clip-bpe (open_clip ViT-B-32 tokenizer, packaged vocabulary; exact)"
COUNTER_BOUND = ("upper bound (world BPE table, 1 token per UTF-8 byte for other words; "
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
    >>> token_count("红色")  # two characters, six UTF-8 bytes: at most six tokens
    8
    """
    table = token_lengths()
    return START_END + sum(table.get(p, _bytes(p)) for p in pieces(text))


def _bytes(piece: str) -> int:
    return len(piece.encode("utf-8"))


PIECES_MEMO = 8192  # texts whose pieces and bound are remembered (a few MB)


@lru_cache(maxsize=PIECES_MEMO)
def counted_pieces(text: str) -> tuple[tuple[str, ...], int]:
    """``(pieces(text), token_count(text))`` from one pass of the pre-tokeniser, remembered:
    :func:`same_in_context` needs both for each text of a pair, and a positive caption is
    paired with each of its negatives."""
    found = tuple(pieces(text))
    table = token_lengths()
    return found, START_END + sum(table.get(p, _bytes(p)) for p in found)


#: content tokens a 77-token CLIP encoder sees: open_clip's tokenize keeps
#: [start] + tokens[:76], then writes the end token over the last, so 75 remain
VISIBLE = CONTEXT - START_END
VISIBLE_MEMO = 4096  # texts whose visible tokens are remembered (at most ~12 MB)


@dataclass(frozen=True)
class TokenCounter:
    """``count(text)``: CLIP tokens with start and end tokens; ``name`` says which counter."""

    name: str
    count: Callable[[str], int]
    exact: bool


@lru_cache(maxsize=1)
def _bpe_tokenizer():
    """CLIP's BPE tokenizer (open_clip's ViT-B-32), shared with the open_clip adapters of
    this process: its ``encode`` looks a text up in the memory every tokenizer with the same
    vocabulary uses (:mod:`foilbench.models.openclip.tokens`), so a run's context check
    reuses the tokens the forward passes already computed for the same captions."""
    # optional dependency, loaded only when counting (ImportError without open_clip)
    from foilbench.models.openclip.tokens import shared_tokenizer  # noqa: PLC0415

    return shared_tokenizer("ViT-B-32")


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


def same_in_context(a: str, b: str, kind: str = "auto") -> bool | None:
    """Whether ``a`` and ``b`` reach a CLIP text encoder (77-token context, open_clip's
    truncation) as the same tokens, although the texts differ past the cut.

    With CLIP's BPE (open_clip installed, ``kind`` "auto" or "bpe") the answer is exact: the
    first 75 content tokens are compared. With the ``"bound"`` counter the tokens before the
    first differing word are bounded (at least one per word, at most one per byte): True when
    even the lower bound reaches 75, False when the differing words end before the cut by the
    upper bound, None when the bounds cannot tell (a caller treats that as unsafe and says so).
    Texts equal after CLIP's cleaning (case, whitespace) are the same (True).

    >>> same_in_context("a red cube", "a blue cube", kind="bound")
    False
    >>> same_in_context("a red cube " + "and a cube " * 30, "a red cube " + "and a cube " * 30
    ...                 + "and a red ball", kind="bound")
    True
    """
    (pa, na), (pb, nb) = counted_pieces(a), counted_pieces(b)
    if na <= CONTEXT and nb <= CONTEXT:
        return pa == pb  # both whole within the context (bounds from above): no cut at all
    if kind == "bound" or long_tier_counter(kind).name == COUNTER_BOUND:
        return _same_by_bounds(pa, pb)
    return visible_tokens(a) == visible_tokens(b)


@lru_cache(maxsize=VISIBLE_MEMO)
def visible_tokens(text: str) -> tuple[int, ...]:
    """The content tokens of ``text`` a 77-token CLIP encoder sees (open_clip's BPE, cut
    to :data:`VISIBLE`). Remembered: a positive caption is compared with each of its
    negatives, so without the memo it is cleaned and encoded once per negative."""
    return tuple(_bpe_tokenizer().encode(text)[:VISIBLE])


def _same_by_bounds(pa: Sequence[str], pb: Sequence[str]) -> bool | None:
    if pa == pb:
        return True
    k = next((i for i, (x, y) in enumerate(zip(pa, pb, strict=False)) if x != y),
             min(len(pa), len(pb)))
    table = token_lengths()
    lowest = sum(table.get(p, 1) for p in pa[:k])
    if lowest >= VISIBLE:
        return True
    differing = [p for p in (pa[k:k + 1] + pb[k:k + 1])]
    highest = sum(table.get(p, _bytes(p)) for p in pa[:k]) + max(
        (table.get(p, _bytes(p)) for p in differing), default=0)
    return False if highest <= VISIBLE else None


#: the reason a construction log and ``inspect`` give for such a negative
PAST_CONTEXT = ("negative identical to the positive after CLIP's 77-token cut (it differs only "
                "past the text encoder's context)")


def past_context(positive: str, negatives: Sequence[str], start: int = 0) -> list[int]:
    """Indices (from ``start``) of negatives a 77-token CLIP encoder cannot tell from the
    positive (:func:`same_in_context`; an undecidable one counts too), leaving aside exact
    repeats, which each method already drops as such."""
    return [start + k for k, t in enumerate(negatives)
            if t.lower() != positive.lower() and same_in_context(positive, t) is not False]
