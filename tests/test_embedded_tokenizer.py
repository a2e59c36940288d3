"""Word tokenizer of the embedded models: round trip, [UNK] counting, truncation, config."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.models.word_tokenizer import CLS, PAD, UNK, WordTokenizer, split_words


def test_split_words_drops_punctuation_and_case():
    assert split_words("A red cube, and a Blue sphere.") == ["a", "red", "cube", "and", "a",
                                                               "blue", "sphere"]


def test_round_trip_keeps_word_order():
    tok = WordTokenizer.build(["a red cube and a blue sphere"], max_len=10)
    for text in ("a red cube and a blue sphere", "a blue cube and a red sphere"):
        ids, stats = tok.encode([text])
        assert tok.decode(ids[0]) == text
        assert stats.n_unknown == 0
    a, _ = tok.encode(["a red cube and a blue sphere"])
    b, _ = tok.encode(["a blue cube and a red sphere"])
    assert not np.array_equal(a, b)  # same bag of words, different order -> different ids


def test_layout_is_cls_words_then_padding():
    tok = WordTokenizer.build(["red cube"], max_len=5)
    ids, _ = tok.encode(["red cube"])
    assert ids.shape == (1, 5)
    assert ids[0, 0] == tok.index[CLS]
    assert ids[0, 1] == tok.index["red"] and ids[0, 2] == tok.index["cube"]
    assert (ids[0, 3:] == tok.index[PAD]).all() and tok.pad_id == 0


def test_unknown_words_map_to_unk_and_are_counted():
    tok = WordTokenizer.build(["a red cube"], max_len=8)
    ids, stats = tok.encode(["a green cube", "a green glittery cube"])
    assert ids[0, 2] == tok.index[UNK]
    assert stats.n_unknown == 3
    assert stats.unknown_words == {"glittery": 1, "green": 2}
    assert tok.decode(ids[1]) == "a [UNK] [UNK] cube"


def test_long_text_is_truncated_and_counted():
    tok = WordTokenizer.build(["a b c d e f"], max_len=4)
    ids, stats = tok.encode(["a b c d e f", "a b"])
    assert tok.decode(ids[0]) == "a b c"
    assert stats.n_truncated == 1


def test_config_round_trip_and_bad_vocabularies():
    tok = WordTokenizer.build(["a red cube"], max_len=6, extra_words=["sphere"])
    again = WordTokenizer.from_config(tok.to_config())
    assert again.words == tok.words and again.max_len == 6 and "sphere" in again.index
    with pytest.raises(ValueError, match="special tokens"):
        WordTokenizer(["red", "cube"], max_len=4)
    with pytest.raises(ValueError, match="duplicate"):
        WordTokenizer([PAD, UNK, CLS, "red", "red"], max_len=4)
