"""The last open_clip layer at the pooled token only: open_clip's features within the
adapter's check tolerance, the towers it must not touch left alone, and the fallback."""

from __future__ import annotations

import logging

import pytest
import torch

open_clip = pytest.importorskip("open_clip")

from foilbench.models.openclip import pooled as openclip_pooled  # noqa: E402
from foilbench.models.openclip.adapter import TRIM_CHECK_ATOL  # noqa: E402
from foilbench.models.openclip.fast import encode_text_trimmed  # noqa: E402
from test_prepared_share import openclip_model  # noqa: E402


def _unit(x):
    return torch.nn.functional.normalize(x.float(), dim=-1)


@pytest.mark.parametrize("layers", [1, 3])
def test_pooled_last_layer_gives_open_clips_features(tmp_path, layers):
    adapter = openclip_model(tmp_path, f"fb-pool-{layers}",
                             vision={"layers": layers, "image_size": 64, "patch_size": 16},
                             extra={"text_cfg": {"context_length": 24, "vocab_size": 49408,
                                                 "width": 32, "heads": 4, "layers": layers}})
    model = adapter.model
    assert openclip_pooled.image_blocker(model.visual) is None
    torch.manual_seed(1)
    images = torch.randn(9, 3, 64, 64)
    texts = ["a cube", "a red cube left of a blue ball on the long wooden table", "",
             "one two three four five six seven eight nine ten eleven twelve thirteen"]
    tokens = adapter.tokenizer(texts)  # end-of-text at four different positions, one cut
    with torch.inference_mode():
        full_img, fast_img = model.encode_image(images), \
            openclip_pooled.encode_image_pooled(model, images)
        full_txt, fast_txt = model.encode_text(tokens), encode_text_trimmed(model, tokens)
    assert fast_img.shape == full_img.shape and fast_txt.shape == full_txt.shape
    assert torch.allclose(_unit(fast_img), _unit(full_img), atol=TRIM_CHECK_ATOL, rtol=0)
    assert torch.allclose(_unit(fast_txt), _unit(full_txt), atol=TRIM_CHECK_ATOL, rtol=0)
    assert (fast_img - full_img).abs().max() < 1e-5  # not the same bits: other matrix shapes
    with torch.inference_mode():  # the adapter's own image path takes the shortcut
        got = adapter.embed_prepared([images[k] for k in range(9)])
    assert adapter._pool_checked and adapter.pool_blocker is None
    assert torch.allclose(torch.as_tensor(got), _unit(full_img), atol=TRIM_CHECK_ATOL, rtol=0)


def test_towers_that_pool_otherwise_run_open_clips_own_forward(tmp_path):
    avg = openclip_model(tmp_path, "fb-pool-avg", vision={"pool_type": "avg"})
    assert "class token" in openclip_pooled.image_blocker(avg.model.visual)
    attn = openclip_model(tmp_path, "fb-pool-attn",
                          vision={"attentional_pool": True, "attn_pooler_queries": 4,
                                  "attn_pooler_heads": 2})
    assert "class token" in openclip_pooled.image_blocker(attn.model.visual)
    assert "a Linear" in openclip_pooled.block_blocker(torch.nn.Linear(2, 2))
    images = torch.randn(3, 3, 32, 32)
    with torch.inference_mode():
        assert torch.equal(torch.as_tensor(avg.embed_prepared(list(images))),
                           _unit(avg.model.encode_image(images)))


def test_a_shortcut_that_differs_is_dropped_with_a_warning(tmp_path, monkeypatch, caplog):
    adapter = openclip_model(tmp_path, "fb-pool-off")
    monkeypatch.setattr("foilbench.models.openclip.adapter.encode_image_pooled",
                        lambda model, px: model.encode_image(px) + 1.0)
    images = torch.randn(3, 3, 32, 32)
    with caplog.at_level(logging.WARNING), torch.inference_mode():
        got = adapter.embed_prepared(list(images))
        again = adapter.embed_prepared(list(images))
        full = _unit(adapter.model.encode_image(images))
    assert torch.equal(torch.as_tensor(got), full) and torch.equal(torch.as_tensor(again), full)
    assert "differed" in adapter.pool_blocker and "full forward" in caplog.text
