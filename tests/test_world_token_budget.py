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
