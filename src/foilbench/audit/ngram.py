"""A small word n-gram language model with Witten-Bell interpolation (Chen & Goodman 1998).

    P_WB(w | h) = (c(h, w) + T(h) P_WB(w | h')) / (c(h) + T(h))

where h' drops the oldest word of h, c(h) counts h as a context, and T(h) is the number of
distinct words seen after h; an unseen context (c(h) = 0) backs off fully. The recursion ends
in an add-one unigram over the training vocabulary plus one unknown word, so no probability is
ever zero. Sentences are padded with ``<s>`` on the left and scored through ``</s>``.

Speed (the blind audit fits one model per fold and scores every caption with each):

- c(h) and T(h) are computed once per context after fitting, not summed for each probability;
- counting goes through ``Counter.update`` over whole sentences' n-grams;
- :class:`Queries` turns the audit's sentences into integer codes once; per fold,
  :meth:`Queries.fit_mean_logprobs` counts with numpy and computes each distinct
  (history, word) log-probability once (captions and their negatives share most n-grams),
  then each sentence's mean from them.

None changes a number: the same integer counts, and the same float operations in the same
order (each sentence's log-probabilities summed left to right from zero, as
:meth:`NgramLM.mean_logprob` does).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from operator import itemgetter

import numpy as np

BOS, EOS = "<s>", "</s>"


def _padded(tokens: list[str], context: int) -> list[str]:
    return [BOS] * context + list(tokens) + [EOS]


def _histories(seq: list[str], context: int, n: int):
    """For each predicted position of ``seq``, the tuple of the ``n`` words before it."""
    end = len(seq)
    return zip(*(seq[context - n + i : end - n + i] for i in range(n)), strict=True)


class Queries:
    """Sentences prepared once for many models: word ids, per predicted position the id codes
    of its histories, the distinct (history, word) pairs (``keys``) and, per sentence, a getter
    of its pairs' values in order. :meth:`fit_mean_logprobs` fits a model on some of the
    sentences and scores all of them with numpy, giving exactly :class:`NgramLM`'s numbers."""

    def __init__(self, sentences: list[list[str]], order: int) -> None:
        context = order - 1
        vocab: dict[str, int] = {}
        ids: list[int] = []
        self.lengths: list[int] = []
        for tokens in sentences:
            seq = _padded(tokens, context)
            ids.extend(vocab.setdefault(w, len(vocab)) for w in seq)
            self.lengths.append(len(seq) - context)
        self.order, self.n_words = order, len(vocab)
        if self.n_words ** order >= 2**62:  # codes must fit in int64
            raise ValueError(f"vocabulary of {self.n_words} too large for order {order}")
        seq_ids = np.asarray(ids, dtype=np.int64)
        starts = np.cumsum([0] + [n + context for n in self.lengths])[:-1]
        # every predicted position: its index in seq_ids
        pos = np.repeat(starts + context, self.lengths) + _ranks(self.lengths)
        self.word = seq_ids[pos]
        # history codes: hist[n] = the last n word ids before the position, base n_words
        self.hist = [np.zeros(len(pos), dtype=np.int64)]
        for n in range(1, order):
            self.hist.append(self.hist[-1] + seq_ids[pos - n] * self.n_words ** (n - 1))
        top = self.hist[-1] * self.n_words + self.word
        keys, self.key_of_pos = np.unique(top, return_inverse=True)
        first = np.zeros(len(keys), dtype=np.int64)
        first[self.key_of_pos[::-1]] = np.arange(len(pos))[::-1]
        self.key_first = first  # one position holding each key
        self.sentence = np.repeat(np.arange(len(self.lengths)), self.lengths)
        self.getters = []
        offset = 0
        for n in self.lengths:
            row = self.key_of_pos[offset : offset + n].tolist()
            self.getters.append(itemgetter(*row, row[0]) if n == 1 else itemgetter(*row))
            offset += n

    def fit_mean_logprobs(self, train: np.ndarray) -> np.ndarray:
        """Mean log-probability of every sentence under a model fitted on the sentences
        ``train`` (row numbers), equal to ``NgramLM(order).fit(...).mean_logprob(...)``."""
        at = np.isin(self.sentence, np.asarray(train, dtype=np.int64))
        v = self.n_words
        unigram = np.bincount(self.word[at], minlength=v)
        total, vocab = int(at.sum()), int((unigram > 0).sum()) + 1
        q = self.key_first  # evaluate at one position per distinct key
        word = self.word[q]
        p = (unigram[word] + 1) / (total + vocab)
        active = np.ones(len(q), dtype=bool)
        for n in range(1, self.order):  # shortest context first, then longer ones
            hist = self.hist[n][at]
            if not len(hist):
                break
            contexts, context_count = np.unique(hist, return_counts=True)
            pair_codes, pair_count = np.unique(hist * v + self.word[at], return_counts=True)
            types = np.bincount(np.searchsorted(contexts, pair_codes // v),
                                minlength=len(contexts))
            h = self.hist[n][q]
            k = np.minimum(np.searchsorted(contexts, h), len(contexts) - 1)
            active &= contexts[k] == h  # an unseen context ends the recursion
            code = h * v + word
            j = np.minimum(np.searchsorted(pair_codes, code), len(pair_codes) - 1)
            c = np.where(pair_codes[j] == code, pair_count[j], 0)
            count, typ = context_count[k], types[k]
            p = np.where(active, (c + typ * p) / (count + typ), p)
        logs = [math.log(x) for x in p.tolist()]  # math.log, as NgramLM.mean_logprob
        out = np.empty(len(self.lengths))
        for r, (get, n) in enumerate(zip(self.getters, self.lengths, strict=True)):
            out[r] = sum(get(logs)[:n]) / n
        return out


def _ranks(lengths: list[int]) -> np.ndarray:
    """0..n-1 for each length n, concatenated."""
    total = int(sum(lengths))
    starts = np.repeat(np.cumsum([0] + lengths[:-1]), lengths)
    return np.arange(total) - starts


class NgramLM:
    def __init__(self, order: int = 3) -> None:
        if order < 1:
            raise ValueError(f"n-gram order must be >= 1, got {order}")
        self.order = order
        self.follow: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
        self.unigram: Counter[str] = Counter()
        self._totals: dict[tuple[str, ...], tuple[int, int]] = {}

    def fit(self, sentences: list[list[str]]) -> NgramLM:
        context = self.order - 1
        pairs: Counter = Counter()
        for tokens in sentences:
            seq = _padded(tokens, context)
            words = seq[context:]
            self.unigram.update(words)
            for n in range(1, self.order):
                pairs.update(zip(_histories(seq, context, n), words, strict=True))
        for (history, word), count in pairs.items():
            self.follow[history][word] += count
        self._total = sum(self.unigram.values())
        self._vocab = len(self.unigram) + 1  # + the unknown word
        # c(h) and T(h) per context, once
        self._totals = {h: (sum(seen.values()), len(seen)) for h, seen in self.follow.items()}
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
        seq = _padded(tokens, context)
        logs = [math.log(self.prob(seq[pos], tuple(seq[pos - context : pos])))
                for pos in range(context, len(seq))]
        return sum(logs) / len(logs)
