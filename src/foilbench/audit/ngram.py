"""A small word n-gram language model with Witten-Bell interpolation (Chen & Goodman 1998).

    P_WB(w | h) = (c(h, w) + T(h) P_WB(w | h')) / (c(h) + T(h))

where h' drops the oldest word of h, c(h) counts h as a context, and T(h) is the number of
distinct words seen after h; an unseen context (c(h) = 0) backs off fully. The recursion ends
in an add-one unigram over the training vocabulary plus one unknown word, so no probability is
ever zero. Sentences are padded with ``<s>`` on the left and scored through ``</s>``.

Speed: c(h) and T(h) are computed once per context after fitting (not summed again for each
probability), and :meth:`NgramLM.mean_logprob` remembers each (word, history) log-probability,
since a benchmark's captions and their negatives share most of their n-grams. Neither changes
a number: the same integer sums and the same float operations in the same order.
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
        self._totals: dict[tuple[str, ...], tuple[int, int]] = {}
        self._memo: dict[tuple[str, tuple[str, ...]], float] = {}

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
        # c(h) and T(h) per context, once
        self._totals = {h: (sum(seen.values()), len(seen)) for h, seen in self.follow.items()}
        self._memo = {}
        return self

    def prob(self, word: str, history: tuple[str, ...]) -> float:
        p = (self.unigram.get(word, 0) + 1) / (self._total + self._vocab)
        for n in range(1, len(history) + 1):  # shortest context first, then longer ones
            context = history[-n:]
            seen = self.follow.get(context)
            if not seen:
                break
            count, types = self._totals[context]
            p = (seen.get(word, 0) + types * p) / (count + types)
        return p

    def mean_logprob(self, tokens: list[str]) -> float:
        """Mean natural-log probability per predicted token (the words and ``</s>``)."""
        context = self.order - 1
        seq = [BOS] * context + tokens + [EOS]
        memo = self._memo
        total = 0.0
        for pos in range(context, len(seq)):
            key = (seq[pos], tuple(seq[pos - context : pos]))
            logp = memo.get(key)
            if logp is None:
                logp = memo[key] = math.log(self.prob(*key))
            total += logp
        return total / (len(seq) - context)
