"""The tokenizer-free CLIP token count agrees with open_clip's BPE on world captions."""

from __future__ import annotations

import numpy as np
import open_clip
import pytest

from foilbench.world.captions import describe_scene
from foilbench.world.sample import sample_scene
from foilbench.world.token_budget import token_count, token_lengths


@pytest.fixture(scope="module")
def bpe():
    return open_clip.get_tokenizer("ViT-B-32")


def test_table_matches_bpe(bpe):
    for word, n in token_lengths().items():
        assert len(bpe.encode(word)) == n, word


def test_scene_captions_exact(bpe):
    rng = np.random.default_rng(7)
    for k in range(40):
        scene = sample_scene(rng, n_objects=1 + k % 8,
                             condition="contextual" if k % 2 else "minimal")
        text = describe_scene(scene)
        assert token_count(text) == len(bpe.encode(text)) + 2
        assert token_count(text) <= 77


@pytest.mark.parametrize("text", ["a zyzzyva beside 3 quokkas!", "an aardvark's umbrella, 42"])
def test_unknown_words_are_an_upper_bound(bpe, text):
    assert token_count(text) >= len(bpe.encode(text)) + 2


def _same_in_context_two_passes(a, b, kind="auto"):
    """same_in_context as written before counted_pieces: pieces and counts in two passes."""
    from foilbench.world import token_budget as tb

    pa, pb = tb.pieces(a), tb.pieces(b)
    if tb.token_count(a) <= tb.CONTEXT and tb.token_count(b) <= tb.CONTEXT:
        return pa == pb
    if kind == "bound" or tb.long_tier_counter(kind).name == tb.COUNTER_BOUND:
        return tb._same_by_bounds(pa, pb)
    return tb.visible_tokens(a) == tb.visible_tokens(b)


def test_one_pass_pieces_give_the_same_answers_as_two():
    from foilbench.world import token_budget as tb

    rng = np.random.default_rng(3)
    words = ["a", "red", "cube", "left", "of", "the", "blue", "sphere", "café", "東京",
             "don't", "3", "!!", "Large", "METAL", "naïve", "x" * 30]
    texts = ["", "  A red   cube ", "a red cube", "A RED CUBE"]
    for n in (3, 20, 60, 74, 76, 80, 120):
        for _ in range(6):
            texts.append(" ".join(rng.choice(words, size=n)))
    base = " ".join(["a red cube and a blue sphere"] * 12)
    texts += [base, base + " and a cat", base.replace("red", "green", 1),
              base + " and a café", "a red cube " + "and a cube " * 30,
              "a " * 70 + "zzzzzzzzzz a cube", "a " * 70 + "qqqqqqqqqq a cube"]  # undecided
    for t in texts:
        assert tb.counted_pieces(t) == (tuple(tb.pieces(t)), tb.token_count(t)), t
    answers = set()
    for a in texts:
        for b in texts:
            for kind in ("auto", "bound"):
                got = tb.same_in_context(a, b, kind=kind)
                assert got == _same_in_context_two_passes(a, b, kind=kind), (a, b, kind)
                answers.add((kind, got))
    # the pairs reach every branch: within the context, cut and same, cut and different
    assert {("auto", True), ("auto", False), ("bound", True), ("bound", False)} <= answers
    assert ("bound", None) in answers
