"""Word-level tokenizer over the procedural world's closed vocabulary.

The embedded models read captions written from a closed vocabulary (categories, colours,
materials, relations, a few function words), so whole words are the natural unit: no BPE
files to ship, and word order is kept exactly (who has which colour is a question of order).
Words outside the vocabulary map to ``[UNK]`` and are counted, never dropped silently.

>>> tok = WordTokenizer.build(["a red cube", "a blue sphere"], max_len=8)
>>> ids, stats = tok.encode(["a red cube", "a green cube"])
>>> tok.decode(ids[0])
'a red cube'
>>> stats.unknown_words
{'green': 1}
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

PAD, UNK, CLS = "[PAD]", "[UNK]", "[CLS]"
SPECIALS: tuple[str, ...] = (PAD, UNK, CLS)
_WORD = re.compile(r"[a-z0-9]+")


def trim_padding(ids):
    """``ids`` (n, max_len; numpy or torch) without its trailing all-padding columns (at
    least one column left). Exact for the embedded text tower, which masks padding keys and
    pools [CLS] at position 0: training and the adapter both run batches at this width.

    >>> trim_padding(np.array([[2, 5, 0, 0], [2, 0, 0, 0]])).shape
    (2, 2)
    """
    width = int((ids != 0).sum(1).max()) if len(ids) else 1
    return ids[:, : max(width, 1)]


def split_words(text: str) -> list[str]:
    """Lower-case words and numbers; punctuation and spacing carry no meaning here."""
    return _WORD.findall(text.lower())


@dataclass
class EncodeStats:
    """What a call to :meth:`WordTokenizer.encode` could not represent."""

    n_texts: int = 0
    n_unknown: int = 0
    unknown_words: dict[str, int] = field(default_factory=dict)
    n_truncated: int = 0

    def as_dict(self) -> dict:
        return {"n_texts": self.n_texts, "n_unknown": self.n_unknown,
                "unknown_words": dict(self.unknown_words), "n_truncated": self.n_truncated}


class WordTokenizer:
    """``[CLS] w1 w2 ... [PAD]...`` with a fixed length; index 0 is padding."""

    def __init__(self, words: list[str], max_len: int) -> None:
        if list(words[: len(SPECIALS)]) != list(SPECIALS):
            raise ValueError(f"a vocabulary must start with the special tokens {SPECIALS}")
        if len(set(words)) != len(words):
            raise ValueError("the vocabulary holds duplicate words")
        if max_len < 2:
            raise ValueError(f"max_len must be at least 2 ([CLS] and one word), got {max_len}")
        self.words = list(words)
        self.max_len = int(max_len)
        self.index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def build(cls, texts: Iterable[str], max_len: int, extra_words: Iterable[str] = ()) -> (
            WordTokenizer):
        """Vocabulary = specials + every word of ``texts`` and ``extra_words``, sorted."""
        seen: set[str] = set()
        for text in list(texts) + list(extra_words):
            seen.update(split_words(text))
        return cls(list(SPECIALS) + sorted(seen - set(SPECIALS)), max_len)

    @property
    def vocab_size(self) -> int:
        return len(self.words)

    @property
    def pad_id(self) -> int:
        return self.index[PAD]

    def encode(self, texts: list[str]) -> tuple[np.ndarray, EncodeStats]:
        """(n, max_len) int64 ids and the unknown / truncation counts of this batch."""
        ids = np.zeros((len(texts), self.max_len), dtype=np.int64)
        stats = EncodeStats(n_texts=len(texts))
        unknown: Counter[str] = Counter()
        unk, cls_id = self.index[UNK], self.index[CLS]
        for row, text in enumerate(texts):
            words = split_words(text)
            if len(words) > self.max_len - 1:
                stats.n_truncated += 1
                words = words[: self.max_len - 1]
            ids[row, 0] = cls_id
            for col, word in enumerate(words, start=1):
                token = self.index.get(word)
                if token is None:
                    unknown[word] += 1
                    token = unk
                ids[row, col] = token
        stats.unknown_words = dict(sorted(unknown.items()))
        stats.n_unknown = sum(unknown.values())
        return ids, stats

    def decode(self, ids: np.ndarray) -> str:
        """Words of one id row, without specials other than ``[UNK]``."""
        skip = {self.index[PAD], self.index[CLS]}
        return " ".join(self.words[int(i)] for i in ids if int(i) not in skip)

    def to_config(self) -> dict:
        return {"words": self.words, "max_len": self.max_len}

    @classmethod
    def from_config(cls, config: dict) -> WordTokenizer:
        return cls(list(config["words"]), int(config["max_len"]))
