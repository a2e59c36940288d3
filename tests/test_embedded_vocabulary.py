"""The embedded text tower's vocabulary and length cover every caption of the embedded suite."""

from __future__ import annotations

from foilbench.construct.suite import build_suite, load_suite
from foilbench.models.word_tokenizer import WordTokenizer, split_words
from foilbench.train.pipeline import MAX_LEN, TEMPLATE_WORDS, world_words

SMALL = {"pairs": {"n_scenes": 3}, "autocomp": {"n_concepts": 6},
         "autocomp-n1": {"n_concepts": 6}, "compass": {"n_scenes": 12}}


def test_no_suite_caption_is_unknown_or_truncated(tmp_path):
    build_suite(tmp_path, seed=0, config=SMALL, progress=False)
    texts = sorted({t for bench in load_suite(tmp_path, check_images=False)
                    for t in bench.unique_texts()})
    assert len(texts) > 1000
    # the vocabulary of `foilbench train` minus the training texts: the suite alone is covered
    tokenizer = WordTokenizer.build([], MAX_LEN, extra_words=world_words())
    _, stats = tokenizer.encode(texts)
    assert stats.unknown_words == {}
    assert stats.n_truncated == 0
    longest = max(len(split_words(t)) for t in texts)
    assert 30 < longest < MAX_LEN - 1  # [CLS] + words, with room to spare
    for word in ("behind", "front", "is", "there", "image"):  # the [UNK]s of issue 28
        assert tokenizer.index.get(word) is not None


def test_template_words_are_lower_case_single_words():
    assert all(split_words(w) == [w] for w in TEMPLATE_WORDS)
