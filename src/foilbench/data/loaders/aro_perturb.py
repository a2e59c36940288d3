"""ARO's four word-order perturbations (Yuksekgonul et al., ICLR 2023, section 2.2 "Order").

COCO-Order and Flickr30k-Order pair each caption with four shuffled versions of itself; a model
that reads captions as bags of words cannot tell them apart. The four perturbations, in the
order the authors list them (``dataset_zoo/aro_datasets.py``; definitions after O'Connor &
Andreas 2021):

1. ``shuffle_nouns_and_adj``: the nouns are permuted among the noun positions and, separately,
   the adjectives among the adjective positions; every other token stays put.
2. ``shuffle_allbut_nouns_and_adj``: the opposite -- every token that is *not* a noun or an
   adjective (including punctuation) is permuted among those positions.
3. ``shuffle_within_trigrams``: the token list is cut into consecutive trigrams (the last may be
   shorter) and each trigram's tokens are permuted in place.
4. ``shuffle_trigrams``: the same trigrams are permuted as units, keeping each one's inside order.

"Noun" and "adjective" are Penn Treebank tags (NN NNS NNP NNPS; JJ JJR JJS), as the authors read
them from spaCy's ``en_core_web_sm`` (``token.tag_``). Every caption -- original and perturbed --
then goes through :func:`normalise` (the authors' ``pre_caption``: lower-case, the characters
``.!"()*#:;~`` become spaces, whitespace collapsed, at most ``max_words`` words).

Why a ``tagger`` argument: no tagger model can be bundled, so the functions here are pure (tokens
and tags in, tokens out) and take any ``tagger(tokens) -> tags`` callable; :func:`spacy_tagger`
builds the authors' one when spaCy and its English model are installed.

Differences from the authors' code, on purpose: one regex tokeniser for all four perturbations
(they tokenised with spaCy for 1-2 and NLTK for 3-4; words joined by an inner hyphen or
apostrophe stay one token here) and a seeded generator per caption (theirs was unseeded, so their
negatives differ run to run).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from foilbench.errors import FoilbenchError

Tagger = Callable[[list[str]], list[str]]

NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
ADJECTIVE_TAGS = frozenset({"JJ", "JJR", "JJS"})
PERTURBATIONS = ("shuffle_nouns_and_adj", "shuffle_allbut_nouns_and_adj",
                 "shuffle_within_trigrams", "shuffle_trigrams")
DEFAULT_MAX_WORDS = 30  # the authors' COCO_Order / Flickr30k_Order default

_TOKEN = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]")
_DROPPED_CHARS = re.compile(r"[.!\"()*#:;~]")
_SPACES = re.compile(r"\s{2,}")
SPACY_MODEL = "en_core_web_sm"
SPACY_HINT = (f"install it with `pip install spacy && python -m spacy download {SPACY_MODEL}`, "
              f"or pass ?perturbations=FILE with negatives generated elsewhere")


class TaggerUnavailableError(FoilbenchError):
    """No part-of-speech tagger: spaCy or its English model is not installed."""


def tokenize(caption: str) -> list[str]:
    """Words (inner ``-`` and ``'`` kept) and single punctuation marks, in order."""
    return _TOKEN.findall(caption)


def normalise(caption: str, max_words: int = DEFAULT_MAX_WORDS) -> str:
    """The authors' ``pre_caption``: lower-case, drop ``.!"()*#:;~``, squeeze spaces, truncate."""
    text = _SPACES.sub(" ", _DROPPED_CHARS.sub(" ", caption.lower())).strip()
    words = text.split(" ")
    return " ".join(words[:max_words]) if len(words) > max_words else text


def _permute_at(tokens: Sequence[str], positions: np.ndarray,
                rng: np.random.Generator) -> list[str]:
    out = list(tokens)
    for dst, src in zip(positions, rng.permutation(positions), strict=True):
        out[dst] = tokens[src]
    return out


def _positions(tags: Sequence[str], wanted: frozenset[str], *, invert: bool = False) -> np.ndarray:
    hit = np.fromiter((t in wanted for t in tags), dtype=bool, count=len(tags))
    return np.flatnonzero(~hit if invert else hit)


def _check(tokens: Sequence[str], tags: Sequence[str]) -> None:
    if len(tokens) != len(tags):
        raise ValueError(f"tagger returned {len(tags)} tags for {len(tokens)} tokens "
                         f"({list(tokens)!r})")


def shuffle_nouns_and_adj(tokens: Sequence[str], tags: Sequence[str],
                          rng: np.random.Generator) -> list[str]:
    """Permute nouns among noun positions, then adjectives among adjective positions."""
    _check(tokens, tags)
    out = _permute_at(tokens, _positions(tags, NOUN_TAGS), rng)
    return _permute_at(out, _positions(tags, ADJECTIVE_TAGS), rng)


def shuffle_allbut_nouns_and_adj(tokens: Sequence[str], tags: Sequence[str],
                                 rng: np.random.Generator) -> list[str]:
    """Permute every token that is neither noun nor adjective among those positions."""
    _check(tokens, tags)
    return _permute_at(tokens, _positions(tags, NOUN_TAGS | ADJECTIVE_TAGS, invert=True), rng)


def trigrams(tokens: Sequence[str]) -> list[list[str]]:
    """Consecutive chunks of three tokens; the last holds the one or two left over."""
    return [list(tokens[i:i + 3]) for i in range(0, len(tokens), 3)]


def shuffle_within_trigrams(tokens: Sequence[str], rng: np.random.Generator) -> list[str]:
    """Permute the tokens inside each trigram; trigram boundaries stay where they were."""
    return [tok for tri in trigrams(tokens) for tok in (tri[i] for i in rng.permutation(len(tri)))]


def shuffle_trigrams(tokens: Sequence[str], rng: np.random.Generator) -> list[str]:
    """Permute the trigrams as units; each keeps its inner order."""
    tris = trigrams(tokens)
    return [tok for i in rng.permutation(len(tris)) for tok in tris[i]]


def order_captions(caption: str, tagger: Tagger, rng: np.random.Generator,
                   max_words: int = DEFAULT_MAX_WORDS, redraws: int = 0) -> list[str]:
    """``[original, *negatives]`` in :data:`PERTURBATIONS` order, all normalised.

    ``redraws`` > 0 (not in the paper) re-draws a negative that came out identical to the
    original up to that many times; some captions ("Dog.") have no distinct shuffle at all.
    """
    tokens = tokenize(caption)
    tags = list(tagger(tokens))
    original = normalise(caption, max_words)
    draws = (lambda: shuffle_nouns_and_adj(tokens, tags, rng),
             lambda: shuffle_allbut_nouns_and_adj(tokens, tags, rng),
             lambda: shuffle_within_trigrams(tokens, rng),
             lambda: shuffle_trigrams(tokens, rng))
    out = [original]
    for draw in draws:
        negative = normalise(" ".join(draw()), max_words)
        for _ in range(redraws):
            if negative != original:
                break
            negative = normalise(" ".join(draw()), max_words)
        out.append(negative)
    return out


def spacy_tagger(model: str = SPACY_MODEL) -> Tagger:
    """The authors' tagger: spaCy's ``en_core_web_sm`` fine-grained (Penn Treebank) tags.

    spaCy is imported here, not at module level, so foilbench runs without it; a missing
    package or model raises :class:`TaggerUnavailableError` saying how to install it.
    """
    try:
        import spacy
        from spacy.tokens import Doc
    except ImportError:
        raise TaggerUnavailableError(
            f"ARO COCO-Order / Flickr-Order need a part-of-speech tagger and spaCy is not "
            f"installed; {SPACY_HINT}") from None
    try:
        nlp = spacy.load(model)
    except OSError:
        raise TaggerUnavailableError(
            f"ARO COCO-Order / Flickr-Order: spaCy is installed but its model {model!r} is "
            f"not; {SPACY_HINT}") from None

    def tag(tokens: list[str]) -> list[str]:
        # our tokens, spaCy's tags: the pipeline runs on a pre-tokenised Doc
        return [t.tag_ for t in nlp(Doc(nlp.vocab, words=list(tokens)))]

    return tag
