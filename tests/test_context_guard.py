"""The context guard (issue 40): a negative that differs from its positive only past a
77-token CLIP text encoder's cut is dropped by every construction method, with the reason, and
``inspect`` warns on a benchmark that holds one, naming the tokenizer."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from foilbench.cli.main import cli
from foilbench.world import token_budget as tb

# over 77 CLIP tokens before the differing word (checked below against the real tokenizer)
LONG = ("a man in a red shirt stands next to a wooden table in a bright kitchen while "
        + "a small dog and a black cat sit on the floor near the open window " * 4)


def test_long_captions_differing_past_the_cut_are_the_same_to_clip():
    assert tb.long_tier_counter("bpe").count(LONG) > 77
    pos, neg = LONG + "with a red ball", LONG + "with a blue ball"
    assert tb.same_in_context(pos, neg) is True
    assert tb.same_in_context(pos, neg, kind="bound") is True
    early = pos.replace("red shirt", "blue shirt", 1)
    assert tb.same_in_context(pos, early) is False
    assert tb.same_in_context(pos, early, kind="bound") is False
    assert tb.same_in_context("a red cube", "a blue cube") is False
    assert tb.past_context(pos, [neg, early, pos]) == [0]  # exact repeats are other checks'


def test_a_positive_is_encoded_once_for_all_its_negatives(monkeypatch):
    """The context check remembers each text's visible tokens: a positive compared with
    three long negatives is cleaned and encoded once, and the answers are the ones the
    tokenizer gives text by text (the second call of a text reuses the first)."""
    tok = tb._bpe_tokenizer()
    pos = LONG + "with a red ball"
    negs = [LONG + "with a blue ball", pos.replace("red shirt", "blue shirt", 1),
            LONG + "with a green ball"]
    expected = [k for k, t in enumerate(negs)
                if tok.encode(t)[:tb.VISIBLE] == tok.encode(pos)[:tb.VISIBLE]]
    assert expected == [0, 2]
    calls = []
    real = tok.encode
    monkeypatch.setattr(tok, "encode", lambda text: calls.append(text) or real(text))
    tb.visible_tokens.cache_clear()
    assert tb.past_context(pos, negs) == expected
    assert sorted(calls) == sorted([pos, *negs])  # 4 encodes, not 6
    assert tb.past_context(pos, negs) == expected
    assert len(calls) == 4  # all remembered
    tb.visible_tokens.cache_clear()


def test_the_context_check_reads_the_adapters_token_memory():
    """The context check encodes with the tokenizer the open_clip adapters share, so a
    caption the forward passes already encoded comes from the shared memory (a planted entry
    proves the lookup), and a new caption is encoded as open_clip encodes it."""
    import open_clip

    from foilbench.models.openclip import tokens

    tok = tb._bpe_tokenizer()
    assert tok is tokens.shared_tokenizer("ViT-B-32")
    memo = tokens._MEMO[tokens.tokenizer_key(tok)]
    seen, fresh = LONG + "with a planted ball", LONG + "with a fresh ball"
    memo[seen] = list(range(1, 100))
    tb.visible_tokens.cache_clear()
    try:
        assert tb.visible_tokens(seen) == tuple(range(1, tb.VISIBLE + 1))
        plain = open_clip.get_tokenizer("ViT-B-32")
        assert tb.visible_tokens(fresh) == tuple(plain.encode(fresh)[:tb.VISIBLE])
    finally:
        memo.pop(seen, None)
        tb.visible_tokens.cache_clear()


def test_the_visible_window_is_open_clips_truncation():
    """open_clip keeps [start] + 75 tokens + [end]: texts equal in their first 75 tokens
    reach the encoder identically, whatever follows."""
    import open_clip

    tok = open_clip.get_tokenizer("ViT-B-32")
    pos, neg = LONG + "with a red ball", LONG + "with a blue ball"
    assert (tok([pos]) == tok([neg])).all()
    short_pos, short_neg = "a red ball", "a blue ball"
    assert not (tok([short_pos]) == tok([short_neg])).all()


def test_the_bound_never_undercounts_non_ascii_text():
    """Issue 40: the fallback counter gave 42 for a Chinese caption CLIP counts as 102."""
    bpe = tb.long_tier_counter("bpe").count
    for text in ("一只红色的猫坐在桌子上，旁边有一只蓝色的狗" * 3, "café crème brûlée à côté",
                 "a red cube on a white background"):
        assert tb.token_count(text) >= bpe(text), text


def test_sugarcrepe_drops_a_negative_identical_after_the_cut():
    from types import SimpleNamespace

    from foilbench.construct.sugarcrepe.pipeline import _accept_negative

    dropped, passed = [], []
    st = SimpleNamespace(drop=lambda c, why, **kw: dropped.append(why),
                         passed=lambda c, **kw: passed.append(c))
    res = SimpleNamespace(describe=lambda: {})
    c = SimpleNamespace(data={"caption": LONG + "with a red ball"})
    _accept_negative(st, c, LONG + "with a blue ball", res, must_contain="blue")
    assert dropped == [tb.PAST_CONTEXT] and passed == []
    c2 = SimpleNamespace(data={"caption": "a dog with a red ball"})
    _accept_negative(st, c2, "a dog with a blue ball", res, must_contain="blue")
    assert passed == [c2]


def test_compass_checks_name_negatives_past_the_cut():
    from types import SimpleNamespace

    from foilbench.construct.compass.checks import distinct_problems

    cap = SimpleNamespace(text=LONG + "with a red ball",
                          composed_negatives=[LONG + "with a blue ball"], skill_negatives={})
    assert distinct_problems(cap) == [tb.PAST_CONTEXT]
    cap.composed_negatives = ["a dog with a blue ball"]
    assert distinct_problems(cap) == []


def _choice_bench(tmp_path, captions):
    from PIL import Image

    root = tmp_path / "b"
    (root / "img").mkdir(parents=True)
    Image.new("RGB", (8, 8), (200, 10, 10)).save(root / "img" / "a.png")
    Image.new("RGB", (8, 8), (10, 200, 10)).save(root / "img" / "b.png")
    rows = [{"item_id": f"i{k}", "image": "img/a.png" if k % 2 else "img/b.png",
             "captions": list(c), "scene_id": f"s{k}"} for k, c in enumerate(captions)]
    from foilbench.data.benchmark import Manifest
    from foilbench.data.format import make_benchmark, write_benchmark

    bench = make_benchmark(Manifest(name="ctx", kind="choice"), pd.DataFrame(rows), root)
    write_benchmark(bench, root, copy_images=False)
    return root


def test_inspect_warns_on_items_identical_after_the_cut_naming_the_tokenizer(tmp_path):
    root = _choice_bench(tmp_path, [(LONG + "with a red ball", LONG + "with a blue ball"),
                                    ("a red ball", "a blue ball")])
    res = CliRunner().invoke(cli, ["inspect", str(root)])
    assert "identical_in_context" in res.output or "77-token" in res.output, res.output
    assert "i0" in res.output and "'i1'" not in res.output
    assert "clip-bpe" in res.output


def test_the_bound_counters_name_says_what_it_counts():
    """Issue 40 (smaller): the fallback counter counts a UTF-8 byte a token outside the
    world's table; the name that goes into provenance said "per character"."""
    from foilbench.world import token_budget as tb

    assert "per UTF-8 byte" in tb.COUNTER_BOUND and "character" not in tb.COUNTER_BOUND
    assert tb.token_count("红色") == 2 + len("红色".encode())
