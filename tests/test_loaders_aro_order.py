"""ARO COCO-Order / Flickr30k-Order: the four perturbations, determinism, counts, no-spaCy error."""

from __future__ import annotations

import sys
import types
from collections import Counter

import numpy as np
import pytest

from _loader_fixtures import png, write_json
from foilbench.data.loaders import aro_order
from foilbench.data.loaders.aro_perturb import (
    TaggerUnavailableError,
    normalise,
    order_captions,
    shuffle_allbut_nouns_and_adj,
    shuffle_nouns_and_adj,
    shuffle_trigrams,
    shuffle_within_trigrams,
    tokenize,
    trigrams,
)
from foilbench.data.loaders.common import LoaderWarning
from foilbench.data.registry import resolve_benchmark
from foilbench.errors import BenchmarkError

TAGS = {"a": "DT", "the": "DT", "small": "JJ", "big": "JJ", "red": "JJ", "green": "JJ",
        "dog": "NN", "ball": "NN", "park": "NN", "man": "NN", "bike": "NN", "cats": "NNS",
        "chases": "VBZ", "rides": "VBZ", "sleep": "VBP", "in": "IN", "on": "IN", ".": ".",
        ",": ",", "two": "CD"}


def stub_tagger(tokens):
    """Penn Treebank tags from a fixed dict (lower-cased lookup); unknown words fail loudly."""
    return [TAGS[t.lower()] for t in tokens]


SENTENCE = "a small dog chases a big red ball in the green park".split()
SENT_TAGS = stub_tagger(SENTENCE)
NOUN_POS, ADJ_POS = [2, 7, 11], [1, 5, 6, 10]
OTHER_POS = [i for i in range(len(SENTENCE)) if i not in NOUN_POS + ADJ_POS]


def test_tokenize_and_normalise_follow_pre_caption():
    assert tokenize("A man's t-shirt, red.") == ["A", "man's", "t-shirt", ",", "red", "."]
    assert normalise("A Man, riding. a (red) bike!") == "a man, riding a red bike"
    assert normalise("one two three four", max_words=3) == "one two three"
    assert normalise('  "Hi"  ~there  ') == "hi there"


def test_nouns_and_adjectives_permuted_only_among_their_own_positions():
    seen_nouns = set()
    for seed in range(60):
        out = shuffle_nouns_and_adj(SENTENCE, SENT_TAGS, np.random.default_rng(seed))
        assert [out[i] for i in OTHER_POS] == [SENTENCE[i] for i in OTHER_POS]
        assert Counter(out[i] for i in NOUN_POS) == Counter(["dog", "ball", "park"])
        assert Counter(out[i] for i in ADJ_POS) == Counter(["small", "big", "red", "green"])
        seen_nouns.add(tuple(out[i] for i in NOUN_POS))
    assert len(seen_nouns) == 6  # every ordering of the three nouns occurs: a full permutation


def test_allbut_nouns_and_adjectives_keeps_nouns_and_adjectives_fixed():
    seen = set()
    for seed in range(60):
        out = shuffle_allbut_nouns_and_adj(SENTENCE, SENT_TAGS, np.random.default_rng(seed))
        assert [out[i] for i in NOUN_POS + ADJ_POS] == [SENTENCE[i] for i in NOUN_POS + ADJ_POS]
        assert Counter(out[i] for i in OTHER_POS) == Counter(SENTENCE[i] for i in OTHER_POS)
        seen.add(tuple(out[i] for i in OTHER_POS))
    assert len(seen) > 1


def test_trigrams_chunk_by_three_with_a_short_tail():
    assert trigrams(list("abcdefg")) == [["a", "b", "c"], ["d", "e", "f"], ["g"]]
    assert trigrams([]) == []


def test_within_trigrams_permutes_inside_each_chunk_only():
    tokens = list("abcdefgh")  # chunks abc / def / gh
    seen = set()
    for seed in range(40):
        out = shuffle_within_trigrams(tokens, np.random.default_rng(seed))
        assert sorted(out[0:3]) == ["a", "b", "c"]
        assert sorted(out[3:6]) == ["d", "e", "f"]
        assert sorted(out[6:8]) == ["g", "h"]
        seen.add("".join(out))
    assert len(seen) > 1


def test_shuffle_trigrams_moves_whole_chunks_keeping_their_inner_order():
    tokens = list("abcdefghij")  # abc / def / ghi / j
    chunks = {"abc", "def", "ghi", "j"}
    orders = set()
    for seed in range(60):
        out = "".join(shuffle_trigrams(tokens, np.random.default_rng(seed)))
        parts, rest = [], out
        while rest:  # greedy split back into the original chunks
            head = next(c for c in chunks if rest.startswith(c))
            parts.append(head)
            rest = rest[len(head):]
        assert sorted(parts) == sorted(chunks)
        orders.add(tuple(parts))
    assert len(orders) > 6


def test_tagger_must_tag_every_token():
    with pytest.raises(ValueError, match="2 tags for 3 tokens"):
        shuffle_nouns_and_adj(["a", "dog", "."], ["DT", "NN"], np.random.default_rng(0))


def test_order_captions_original_first_then_four_and_deterministic():
    caption = "A small dog chases a big red ball in the green park."
    one = order_captions(caption, stub_tagger, np.random.default_rng(3))
    assert one == order_captions(caption, stub_tagger, np.random.default_rng(3))
    assert len(one) == 5 and one[0] == "a small dog chases a big red ball in the green park"
    for neg in one[1:]:
        assert sorted(neg.split()) == sorted(one[0].split())  # same words, new order
    # a caption whose every shuffle is a no-op after normalisation: all four negatives tie
    assert order_captions("Dog.", stub_tagger, np.random.default_rng(0)) == ["dog"] * 5


# --- loader ------------------------------------------------------------------------------------

COCO = [
    {"image": "val2014/COCO_val2014_000000000001.jpg", "image_id": 1,
     "caption": ["A small dog chases a big red ball.", "A man rides a green bike.", "Dog.",
                 "Two cats sleep in the park.", "A red ball on the green park."]},
    {"image": "val2014/COCO_val2014_000000000002.jpg", "image_id": 2,
     "caption": ["A man rides a bike in the park.", "The small dog, the big ball."]},
]
FLICKR = [{"image": "flickr30k-images/1007129816.jpg",
           "caption": ["A man rides a red bike.", "Two cats sleep.", "A dog chases a ball.",
                       "A big dog in the park.", "A man on a bike."]}]


def _coco(root, images=True):
    write_json(root / "coco_karpathy_test.json", COCO)
    if images:
        for entry in COCO:
            png(root / entry["image"])
    return root


def test_coco_order_items_counts_and_identical_negative_warning(tmp_path):
    root = _coco(tmp_path)
    with pytest.warns(LoaderWarning) as caught:
        bench = aro_order.load_coco(root, tagger=stub_tagger)
    text = " ".join(str(w.message) for w in caught)
    assert "25010" in text and "5000" in text  # captions and images differ from the release
    tied = sum(any(n == c[0] for n in c[1:]) for c in bench.items["captions"])
    assert tied >= 1 and f"{tied} of 7 captions have a negative identical" in text
    assert bench.name == "aro_coco_order" and bench.manifest.kind == "choice"
    assert bench.manifest.primary_metric == "r1" and len(bench) == 7
    items = bench.items.set_index("item_id")
    assert list(items.loc["coco_order/0/2", "captions"]) == ["dog"] * 5
    assert items.loc["coco_order/0/2", "n_identical_negatives"] == 4
    assert items.loc["coco_order/1/0", "captions"][0] == "a man rides a bike in the park"
    assert all(len(c) == 5 for c in bench.items["captions"])
    assert bench.manifest.extras["negative_order"][0] == "shuffle_nouns_and_adj"


def test_loader_is_deterministic_per_seed(tmp_path):
    root = _coco(tmp_path)
    with pytest.warns(LoaderWarning):
        a = aro_order.load_coco(root, check_images=False, tagger=stub_tagger)
        b = aro_order.load_coco(root, check_images=False, tagger=stub_tagger)
        c = aro_order.load_coco(f"{root}?seed=7", check_images=False, tagger=stub_tagger)
    caps = [list(map(list, x.items["captions"])) for x in (a, b, c)]
    assert caps[0] == caps[1]
    assert caps[0] != caps[2]


def test_flickr_order_reads_the_blip_test_json(tmp_path):
    write_json(tmp_path / "flickr30k_test.json", FLICKR)
    png(tmp_path / "imgs" / "flickr30k-images" / "1007129816.jpg")
    with pytest.warns(LoaderWarning, match="5000"):
        bench = aro_order.load_flickr(f"{tmp_path}?images={tmp_path / 'imgs'}",
                                      tagger=stub_tagger)
    assert bench.name == "aro_flickr_order" and len(bench) == 5
    assert bench.items["image"].unique().tolist() == ["flickr30k-images/1007129816.jpg"]


def test_missing_image_is_refused(tmp_path):
    root = _coco(tmp_path, images=False)
    with pytest.warns(LoaderWarning), pytest.raises(BenchmarkError, match="missing"):
        aro_order.load_coco(root, tagger=stub_tagger)


def test_without_spacy_the_error_says_how_to_install(tmp_path, monkeypatch):
    root = _coco(tmp_path)
    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy -> ImportError
    with pytest.raises(TaggerUnavailableError, match="pip install spacy"):
        aro_order.load_coco(root, check_images=False)


def test_spacy_without_its_model_names_the_model(tmp_path, monkeypatch):
    root = _coco(tmp_path)

    def no_model(name):
        raise OSError(f"[E050] Can't find model '{name}'")

    fake = types.ModuleType("spacy")
    fake.load = no_model
    fake_tokens = types.ModuleType("spacy.tokens")
    fake_tokens.Doc = object
    monkeypatch.setitem(sys.modules, "spacy", fake)
    monkeypatch.setitem(sys.modules, "spacy.tokens", fake_tokens)
    with pytest.raises(TaggerUnavailableError, match="en_core_web_sm"):
        aro_order.load_coco(root, check_images=False)


def test_perturbation_file_round_trip_needs_no_tagger(tmp_path, monkeypatch):
    root = _coco(tmp_path)
    with pytest.warns(LoaderWarning):
        bench = aro_order.load_coco(root, tagger=stub_tagger)
    file = aro_order.write_perturbations(bench, tmp_path / "neg.jsonl")
    monkeypatch.setitem(sys.modules, "spacy", None)
    with pytest.warns(LoaderWarning, match="25010"):
        again = resolve_benchmark(f"aro_coco_order:{root}?perturbations={file}")
    assert again.items["item_id"].tolist() == bench.items["item_id"].tolist()
    assert [list(c) for c in again.items["captions"]] == [list(c) for c in bench.items["captions"]]
    with pytest.raises(BenchmarkError, match="not a flickr_order"):
        aro_order.load_flickr(f"{root}?perturbations={file}", check_images=False)


def test_bad_options_and_missing_annotation(tmp_path):
    with pytest.raises(ValueError, match="seed"):
        aro_order.load_coco(f"{_coco(tmp_path)}?seed=x", tagger=stub_tagger)
    with pytest.raises(BenchmarkError, match="flickr30k_test.json"):
        aro_order.load_flickr(tmp_path, tagger=stub_tagger)


def test_redraws_reduce_identical_negatives_but_cannot_invent_one(tmp_path):
    caption = "A man rides a green bike."  # 2 nouns, 1 adjective: the noun swap is a coin flip
    plain = [order_captions(caption, stub_tagger, np.random.default_rng(s)) for s in range(30)]
    assert any(c[1] == c[0] for c in plain)  # the paper's recipe does produce ties
    redrawn = [order_captions(caption, stub_tagger, np.random.default_rng(s), redraws=20)
               for s in range(30)]
    assert all(c[1] != c[0] for c in redrawn)
    assert order_captions("Dog.", stub_tagger, np.random.default_rng(0), redraws=5) == ["dog"] * 5
    root = _coco(tmp_path)
    with pytest.warns(LoaderWarning):
        bench = aro_order.load_coco(f"{root}?redraws=20", check_images=False, tagger=stub_tagger)
    assert bench.manifest.extras["redraws"] == 20
    # only "Dog." is left with identical negatives (all four)
    assert bench.items.set_index("item_id")["n_identical_negatives"].to_dict() == {
        "coco_order/0/0": 0, "coco_order/0/1": 0, "coco_order/0/2": 4, "coco_order/0/3": 0,
        "coco_order/0/4": 0, "coco_order/1/0": 0, "coco_order/1/1": 0}
