"""A small word n-gram language model with Witten-Bell interpolation (Chen & Goodman 1998).

    P_WB(w | h) = (c(h, w) + T(h) P_WB(w | h')) / (c(h) + T(h))

where h' drops the oldest word of h, c(h) counts h as a context, and T(h) is the number of
distinct words seen after h; an unseen context (c(h) = 0) backs off fully. The recursion ends
in an add-one unigram over the training vocabulary plus one unknown word, so no probability is
ever zero. Sentences are padded with ``<s>`` on the left and scored through ``</s>``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

BOS, EOS = "<s>", "</s>"


class NgramLM:
    def __init__(self, order: int = 3) -> None:
        if order < 1:
            raise ValueError(f"n-gram order must be >= 1, got {order}")
        self.order = order
        self.follow: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        self.unigram: Counter[str] = Counter()

    def fit(self, sentences: list[list[str]]) -> NgramLM:
        for tokens in sentences:
            seq = [BOS] * (self.order - 1) + tokens + [EOS]
            for pos in range(self.order - 1, len(seq)):
                word = seq[pos]
                self.unigram[word] += 1
                for n in range(1, self.order):
                    self.follow[tuple(seq[pos - n : pos])][word] += 1
        self._total = sum(self.unigram.values())
        self._vocab = len(self.unigram) + 1  # + the unknown word
        return self

    def prob(self, word: str, history: tuple[str, ...]) -> float:
        p = (self.unigram.get(word, 0) + 1) / (self._total + self._vocab)
        for n in range(1, len(history) + 1):  # shortest context first, then longer ones
            seen = self.follow.get(history[-n:])
            if not seen:
                break
            count, types = sum(seen.values()), len(seen)
            p = (seen.get(word, 0) + types * p) / (count + types)
        return p

    def mean_logprob(self, tokens: list[str]) -> float:
        """Mean natural-log probability per predicted token (the words and ``</s>``)."""
        seq = [BOS] * (self.order - 1) + tokens + [EOS]
        logs = [
            math.log(self.prob(seq[pos], tuple(seq[pos - self.order + 1 : pos])))
            for pos in range(self.order - 1, len(seq))
        ]
        return sum(logs) / len(logs)
