"""CLIP BPE token counts of world captions without loading a tokenizer.

Captions must fit CLIP's 77-token context. Loading open_clip just to count would make the
base install depend on it (and cost seconds of import), so the count is computed from CLIP's
pre-tokenisation rule (lower-cased words, single digits, runs of punctuation) and a table of
each world word's BPE length (``clip_token_lengths.json``, measured once with open_clip's
ViT-B-32 tokenizer; ``tests/test_world_token_budget.py`` re-measures it). A piece missing from
the table counts one token per character, which is an upper bound for byte-pair encoding
(merges only shorten), so the budget is never exceeded.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib.resources import files

# CLIP's pre-tokeniser for ASCII text: contractions, letter runs, single digits, other runs.
PIECES = re.compile(r"'s|'t|'re|'ve|'m|'ll|'d|[a-z]+|[0-9]|[^\sa-z0-9]+")
START_END = 2


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
