"""Adapters feed models what their own libraries would (issue 12, "Adapters").

- open_clip: its eval transform resizes and crops in the image's own mode and converts to RGB
  last (``open_clip/transform.py``: ``Resize``/``CenterCrop`` then ``MaybeConvertMode()``), so
  palette and RGBA images must reach it unconverted.
- ``roberta-ViT-B-32:laion2b_s12b_b32k``: the architecture config says ``quick_gelu: true``, the
  tag says nothing; open_clip builds it with QuickGELU (``factory.create_model`` only ever sets
  ``quick_gelu`` from ``force_quick_gelu``), and so must we.
- VQAScore: "Yes" after ``" ASSISTANT:"`` is ``" Yes"`` for a byte-level BPE (``ĠYes``), and
  ``"Yes"`` after Qwen2-VL's ``"assistant\\n"``; captions after a newline take no forced space.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import open_clip
import pytest
import torch
from PIL import Image

from _models_tiny import tiny_images, write_openclip_config
from foilbench.errors import ModelError
from foilbench.models.base import to_rgb
from foilbench.models.hf.vlm import HFVLMScorer
from foilbench.models.openclip.spec import quickgelu_for_tag
from foilbench.models.registry import resolve_model
from foilbench.models.vlm_templates import (
    TEMPLATES,
    answer_token,
    continuation_ids,
    separator,
)


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("oc")
    cfg = write_openclip_config(folder, "fb-fid-gelu")
    open_clip.add_model_config(cfg)
    torch.manual_seed(1)
    model, _, preprocess = open_clip.create_model_and_transforms("fb-fid-gelu")
    save_file({k: v.contiguous() for k, v in model.eval().state_dict().items()},
              str(folder / "w.safetensors"))
    return cfg, folder / "w.safetensors", model, preprocess


def _odd_images() -> list[Image.Image]:
    """A palette image and an RGBA image whose left half is fully transparent (red under it),
    at a size the transform must resize (40x28 -> 32)."""
    rng = np.random.default_rng(3)
    rgb = Image.fromarray(rng.integers(0, 256, (28, 40, 3), dtype=np.uint8))
    palette = rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    rgba = rgb.convert("RGBA")
    alpha = np.full((28, 40), 255, np.uint8)
    alpha[:, :20] = 0
    arr = np.asarray(rgba).copy()
    arr[:, :20, :3] = (255, 0, 0)
    arr[..., 3] = alpha
    return [palette, Image.fromarray(arr, "RGBA")]


def _encode(model, preprocess, images):
    with torch.no_grad():
        emb = model.encode_image(torch.stack([preprocess(i) for i in images]))
    return torch.nn.functional.normalize(emb, dim=-1).numpy()


def test_openclip_palette_and_rgba_reach_open_clips_transform_unconverted(tiny_clip):
    cfg, weights, model, preprocess = tiny_clip
    adapter = resolve_model(f"openclip:{cfg}:{weights}", device="cpu")
    images = _odd_images()
    want = _encode(model, preprocess, images)  # open_clip's own pipeline on the raw images
    np.testing.assert_allclose(adapter.embed_images(images), want, atol=1e-5)
    # the old order (composite on white, convert, then resize) is a different input: the
    # test would catch a return to it
    composited = _encode(model, preprocess, [to_rgb(im) for im in images])
    assert not np.allclose(composited[1], want[1], atol=1e-3)


def test_openclip_sixteen_bit_images_are_scaled_first_a_documented_decision(tiny_clip):
    cfg, weights, _, _ = tiny_clip
    adapter = resolve_model(f"openclip:{cfg}:{weights}", device="cpu")
    grey = tiny_images(1)[0].convert("L")
    wide = Image.fromarray(np.asarray(grey, dtype=np.uint16) * 257).convert("I;16")
    emb = adapter.embed_images([grey, wide])
    np.testing.assert_allclose(emb[1], emb[0], atol=1e-5)  # open_clip alone would clip to white


def test_roberta_vit_b_32_laion_tag_resolves_as_open_clip_builds_it():
    # the registry pair itself (no download): arch config QuickGELU, tag silent
    assert open_clip.get_model_config("roberta-ViT-B-32")["quick_gelu"] is True
    assert "quick_gelu" not in open_clip.get_pretrained_cfg("roberta-ViT-B-32",
                                                            "laion2b_s12b_b32k")
    assert quickgelu_for_tag("roberta-ViT-B-32", "laion2b_s12b_b32k") == \
        ("roberta-ViT-B-32", False, None)


def test_silent_tag_on_quickgelu_config_builds_quickgelu_and_explicit_gelu_refuses(
        tmp_path, monkeypatch):
    cfg = write_openclip_config(tmp_path, "fb-fid-own-qg", quick_gelu=True)
    open_clip.add_model_config(cfg)
    tags = {"silent": {"hf_hub": "nobody/x"}, "gelu": {"hf_hub": "nobody/y", "quick_gelu": False}}
    monkeypatch.setattr(open_clip, "get_pretrained_cfg", lambda arch, tag: tags.get(tag, {}))
    arch, force, warning = quickgelu_for_tag("fb-fid-own-qg", "silent")
    assert (arch, force, warning) == ("fb-fid-own-qg", False, None)
    built = open_clip.create_model(arch, force_quick_gelu=force)
    assert any(type(m).__name__ == "QuickGELU" for m in built.modules())
    with pytest.raises(ModelError, match="uses GELU"):
        quickgelu_for_tag("fb-fid-own-qg", "gelu")


@pytest.fixture(scope="module")
def byte_bpe():
    """A byte-level BPE trained here (GPT-2 style: a piece carries its leading space)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=320, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    corpus = ['USER: Does this figure show "a cat"? Please answer yes or no. ASSISTANT: Yes',
              "ASSISTANT: No", "<|im_start|>assistant\nYes", "<|im_start|>assistant\nNo",
              "assistant\na cat on a mat", "Describe the image. ASSISTANT: a cat on a mat"]
    tok.train_from_iterator(corpus * 40, trainer)
    return tok


def test_vqascore_yes_token_is_chosen_per_tokenizer_and_template(byte_bpe):
    tokenize = lambda s: byte_bpe.encode(s).ids  # noqa: E731
    spaced, bare = byte_bpe.token_to_id("ĠYes"), byte_bpe.token_to_id("Yes")
    assert spaced is not None and bare is not None and spaced != bare
    for template, want in (("llava", spaced), ("qwen2vl", bare)):
        scorer = SimpleNamespace(template=TEMPLATES[template], score="vqascore",
                                 backend=SimpleNamespace(tokenize=tokenize))
        yes, no = HFVLMScorer._answer_ids(scorer)
        assert yes == want, template
        assert no == byte_bpe.token_to_id("ĠNo" if template == "llava" else "No")


def test_captions_follow_the_template_without_a_forced_space(byte_bpe):
    tokenize = lambda s: byte_bpe.encode(s).ids  # noqa: E731
    qwen_prefix = "<|im_start|>assistant\n"
    llava_prefix = "USER: <image>\nDescribe the image. ASSISTANT:"
    assert (separator(qwen_prefix), separator(llava_prefix), separator("")) == ("", " ", "")
    for prefix in (qwen_prefix, llava_prefix):
        scorer = SimpleNamespace(template=TEMPLATES["llava"], score="loglik",
                                 backend=SimpleNamespace(tokenize=tokenize),
                                 _prefix_text=lambda p=prefix: p)
        ids = HFVLMScorer._continuation(scorer, "a cat on a mat")
        # the ids the caption has inside the one string prefix + caption
        assert tokenize(prefix) + ids == tokenize(prefix + separator(prefix) + "a cat on a mat")
    # the old rule (always " " + caption) tokenises differently after the newline
    assert continuation_ids(tokenize, qwen_prefix, "a cat") != tokenize(" a cat")
    assert answer_token(tokenize, qwen_prefix, "") is None


def test_openclip_shared_preparation_equals_the_engines_own_on_odd_files(tiny_clip, tmp_path):
    """What a sweep shares (pixels once, tail per model) equals the adapter's own
    ``prepare_image`` on every odd file the engine decodes: palette, RGBA, 16-bit, grey."""
    import torch

    from foilbench.scoring.encode import open_image

    cfg, weights, _, _ = tiny_clip
    adapter = resolve_model(f"openclip:{cfg}:{weights}", device="cpu")
    prep = adapter.image_preparer()
    grey = tiny_images(1)[0].convert("L")
    files = {"odd": _odd_images(), "wide": [Image.fromarray(
        np.asarray(grey, dtype=np.uint16) * 257).convert("I;16")], "grey": [grey]}
    k = 0
    for images in files.values():
        for im in images:
            path = tmp_path / f"odd{k}.png"
            im.save(path)
            k += 1
            decoded = open_image(path)  # as the engine decodes for open_clip
            assert torch.equal(prep.finish(prep.pixels(decoded)),
                               adapter.prepare_image(decoded, 0)), path
