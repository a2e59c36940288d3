"""open_clip's BPE encode, remembered and shared by equal tokenizers, gives open_clip's tokens."""

from __future__ import annotations

import pytest
import torch

open_clip = pytest.importorskip("open_clip")

from foilbench.models.openclip import tokens as openclip_tokens  # noqa: E402

TEXTS = [
    "a red cube to the left of a blue sphere",
    "  A  Red   CUBE,\tleft of\n the SPHERE!  ",
    "café crème — naïve façade, 東京の猫 🐈",
    "&amp; html &lt;escaped&gt; text",
    " ".join(["a very long caption"] * 40),  # past 77 tokens: truncated, EOT kept last
    "",
]


def test_remembered_tokens_are_open_clips_and_equal_tokenizers_share_one_memory(monkeypatch):
    monkeypatch.setattr(openclip_tokens, "_MEMO", {})
    plain = open_clip.get_tokenizer("ViT-B-32")
    expected = plain(TEXTS)
    lengths = [len(plain.encode(t)) for t in TEXTS]
    first, second = open_clip.get_tokenizer("ViT-B-32"), open_clip.get_tokenizer("ViT-B-32")
    calls = []
    real = type(first).encode
    monkeypatch.setattr(type(first), "encode",
                        lambda self, text: calls.append(text) or real(self, text))
    assert openclip_tokens.share_encode(first) and openclip_tokens.share_encode(second)
    assert torch.equal(first(TEXTS), expected)
    assert len(calls) == len(TEXTS)
    assert torch.equal(second(TEXTS), expected)  # the second model encodes nothing
    assert len(calls) == len(TEXTS)
    assert [len(second.encode(t)) for t in TEXTS] == lengths
    assert len(calls) == len(TEXTS)  # the truncation report reads the same memory
    assert torch.equal(first(TEXTS[:2]), expected[:2])  # returned lists are never shared


def test_a_tokenizer_with_other_cleaning_has_its_own_memory_and_others_are_left_alone():
    from open_clip.tokenizer import SimpleTokenizer

    lower = SimpleTokenizer(clean="lower")
    canon = SimpleTokenizer(clean="canonicalize")
    assert openclip_tokens.tokenizer_key(lower) != openclip_tokens.tokenizer_key(canon)
    assert openclip_tokens.share_encode(canon)
    assert torch.equal(canon(TEXTS), SimpleTokenizer(clean="canonicalize")(TEXTS))

    class Other:
        def encode(self, text):
            return [1]

    other = Other()
    assert openclip_tokens.tokenizer_key(other) is None
    assert not openclip_tokens.share_encode(other)
    assert other.encode.__func__ is Other.encode


def test_one_tokenizer_per_architecture_and_config(monkeypatch):
    monkeypatch.setattr(openclip_tokens, "_TOKENIZERS", {})
    monkeypatch.setattr(openclip_tokens, "_MEMO", {})
    first = openclip_tokens.shared_tokenizer("ViT-B-32")
    assert openclip_tokens.shared_tokenizer("ViT-B-32") is first
    assert torch.equal(first(TEXTS), open_clip.get_tokenizer("ViT-B-32")(TEXTS))
    assert openclip_tokens.tokenizer_key(first) in openclip_tokens._MEMO  # encode remembered
    # a config with another context length gets its own tokenizer
    config = open_clip.get_model_config("ViT-B-32")
    config["text_cfg"]["context_length"] = 32
    monkeypatch.setattr(open_clip, "get_model_config",
                        lambda name: config if name == "short-ctx" else None)
    monkeypatch.setattr(open_clip, "get_tokenizer",
                        lambda name: open_clip.tokenizer.SimpleTokenizer(context_length=32))
    short = openclip_tokens.shared_tokenizer("short-ctx")
    assert short is not first and short.context_length == 32
    assert openclip_tokens.shared_tokenizer("short-ctx") is short
