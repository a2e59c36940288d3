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


PLAIN_ARCHS = ["ViT-B-32", "ViT-B-16", "RN50", "ViT-L-14", "convnext_base", "MobileCLIP-S1"]
# a tokenizer name (Hugging Face), keyword arguments, or SigLIP in the name: not plain
OTHER_ARCHS = ["ViT-B-16-SigLIP", "ViT-B-32-SigLIP2-256", "xlm-roberta-base-ViT-B-32",
               "nllb-clip-base"]


@pytest.mark.parametrize("arch", PLAIN_ARCHS + OTHER_ARCHS)
def test_the_plain_key_is_given_only_where_open_clip_builds_its_default_tokenizer(arch):
    cfg = open_clip.get_model_config(arch)
    if cfg is None:
        pytest.skip(f"{arch} is not in this open_clip")
    key = openclip_tokens.plain_tokenizer_key(arch, cfg)
    if arch in PLAIN_ARCHS:
        # what open_clip builds for the name is exactly the plain tokenizer the key stands for
        built = open_clip.get_tokenizer(arch)
        assert type(built) is open_clip.tokenizer.SimpleTokenizer
        plain = open_clip.tokenizer.SimpleTokenizer(context_length=built.context_length)
        assert key == f"plain:{built.context_length}"
        assert openclip_tokens.tokenizer_key(built) == openclip_tokens.tokenizer_key(plain)
        assert torch.equal(built(TEXTS), plain(TEXTS))
    else:
        assert key is None
    assert openclip_tokens.plain_tokenizer_key(f"hf-hub:org/{arch}", cfg) is None


def test_architectures_with_the_plain_tokenizer_share_one(monkeypatch, tmp_path):
    import json

    monkeypatch.setattr(openclip_tokens, "_TOKENIZERS", {})
    cfg = open_clip.get_model_config("ViT-B-32")
    cfg["vision_cfg"]["layers"] = 2  # another architecture, the same text side
    path = tmp_path / "fb-plain-tok.json"
    path.write_text(json.dumps(cfg))
    open_clip.add_model_config(path)
    first = openclip_tokens.shared_tokenizer("fb-plain-tok")
    assert openclip_tokens.shared_tokenizer("ViT-B-32") is first
    assert torch.equal(first(TEXTS), open_clip.get_tokenizer("ViT-B-32")(TEXTS))
    cfg["text_cfg"]["context_length"] = 32  # another context length: a tokenizer of its own
    path.write_text(json.dumps(cfg))
    open_clip.add_model_config(path)
    short = openclip_tokens.shared_tokenizer("fb-plain-tok")
    assert short is not first and short.context_length == 32
