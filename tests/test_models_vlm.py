"""hf-vlm: tiny BLIP and LLaVA; shared-prefix scores equal from-scratch and direct ones."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import transformers  # noqa: F401  (the hf extra is a test dependency)

from _models_tiny import save_tiny_blip, save_tiny_llava, save_tiny_qwen2vl, tiny_images  # noqa: E402
from foilbench.errors import ModelError  # noqa: E402
from foilbench.models.registry import resolve_model  # noqa: E402

CAPTIONS = [["a red cube left of a blue sphere", "a blue cube left of a red sphere",
             "two green cones", "a cube"],
            ["three red spheres on the right", "a green cone"]]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def blip_dir(tmp_path_factory):
    return save_tiny_blip(tmp_path_factory.mktemp("blip") / "model")


@pytest.fixture(scope="module")
def llava_dir(tmp_path_factory):
    return save_tiny_llava(tmp_path_factory.mktemp("llava") / "model")


@pytest.fixture(scope="module")
def qwen2vl_dir(tmp_path_factory):
    return save_tiny_qwen2vl(tmp_path_factory.mktemp("qwen2vl") / "model")


@pytest.fixture(params=["blip", "llava", "qwen2vl"])
def vlm_dir(request):
    return request.param, request.getfixturevalue(f"{request.param}_dir")


def direct_logits(adapter, image, prefix_text, caption_text):
    """Next-token logits over one full prefix+caption sequence, straight from the model."""
    cont = adapter.backend.tokenize(caption_text)
    with torch.no_grad():
        if adapter.template.name == "blip":
            b = adapter.backend
            ids = torch.tensor([[b.bos_id, *b.tokenize(prefix_text), *cont]])
            feats = b._image_features(image)
            logits = adapter.model.text_decoder(input_ids=ids, encoder_hidden_states=feats,
                                                return_dict=True).logits[0]
            n_prefix = 1 + len(b.tokenize(prefix_text))
        else:
            enc = adapter.backend.processor(images=[image], text=[prefix_text],
                                            return_tensors="pt")
            ids = torch.cat([enc["input_ids"], torch.tensor([cont])], dim=1)
            extra = {k: v for k, v in enc.items() if k not in ("input_ids", "attention_mask")}
            if "mm_token_type_ids" in extra:  # Qwen2-VL: the caption tokens are text (type 0)
                extra["mm_token_type_ids"] = torch.cat(
                    [extra["mm_token_type_ids"], torch.zeros(1, len(cont), dtype=torch.long)], 1)
            logits = adapter.model(input_ids=ids, **extra).logits[0]
            n_prefix = enc["input_ids"].shape[1]
    return logits.double(), cont, n_prefix


@pytest.mark.parametrize("norm", ["mean", "sum"])
def test_loglik_shared_equals_scratch_and_direct(vlm_dir, norm):
    kind, folder = vlm_dir
    adapter = resolve_model(f"hf-vlm:{folder}?norm={norm}&batch=3", device="cpu")
    images = tiny_images(2)
    shared = adapter.score_pairs(images, CAPTIONS)
    assert adapter.prefix_passes == 2  # once per image, whatever the number of captions
    for image, caps, got in zip(images, CAPTIONS, shared, strict=True):
        scratch = adapter.score_image(image, caps, share=False)
        np.testing.assert_allclose(got, scratch, atol=1e-4, rtol=0)
        logits, cont, p = direct_logits(adapter, image, adapter._prefix_text(), " " + caps[0])
        logp = torch.log_softmax(logits, -1)
        tok = [logp[p - 1 + j, t].item() for j, t in enumerate(cont)]
        want = sum(tok) / (len(tok) if norm == "mean" else 1)
        assert got[0] == pytest.approx(want, abs=1e-4)
    assert adapter.info.family == "pairwise" and adapter.info.score_kind == "loglik"
    assert adapter.info.extras["norm"] == norm


@pytest.mark.parametrize("yes", ["raw", "normalised"])
def test_vqascore_shared_equals_scratch_and_direct(vlm_dir, yes):
    kind, folder = vlm_dir
    adapter = resolve_model(f"hf-vlm:{folder}?score=vqascore&yes={yes}", device="cpu")
    image = tiny_images(1)[0]
    got = adapter.score_pairs([image], CAPTIONS[:1])[0]
    np.testing.assert_allclose(got, adapter.score_image(image, CAPTIONS[0], share=False),
                               atol=1e-4, rtol=0)
    question = adapter._continuation(CAPTIONS[0][1])
    assert question  # the question really reaches the model
    text = 'Does this figure show "a blue cube left of a red sphere"? Please answer yes or no.'
    logits, cont, p = direct_logits(adapter, image, adapter._prefix_text(),
                                    text + adapter.template.tail)
    last = logits[p + len(cont) - 1]
    probs = torch.softmax(last, -1)
    py, pn = probs[adapter.yes_id].item(), probs[adapter.no_id].item()
    want = py if yes == "raw" else py / (py + pn)
    assert got[1] == pytest.approx(want, abs=1e-6)
    assert adapter.info.score_kind == "p_yes" and 0 < got.min() and got.max() < 1


def test_options_change_the_fingerprint(blip_dir):
    specs = ["", "?norm=sum", "?score=vqascore", "?score=vqascore&yes=normalised"]
    prints = {resolve_model(f"hf-vlm:{blip_dir}{s}", device="cpu").info.fingerprint
              for s in specs}
    assert len(prints) == len(specs)


def test_bad_input_is_named(tmp_path, blip_dir):
    missing = tmp_path / "no-vlm"
    with pytest.raises(ModelError, match=str(missing)):
        resolve_model(f"hf-vlm:{missing}", device="cpu")
    with pytest.raises(ModelError, match="score"):
        resolve_model(f"hf-vlm:{blip_dir}?score=clipscore", device="cpu")
    adapter = resolve_model(f"hf-vlm:{blip_dir}", device="cpu")
    with pytest.raises(ModelError, match="tokenises to nothing"):
        adapter.score_pairs(tiny_images(1), [[""]])
    with pytest.raises(ValueError, match="2 images but 1"):
        adapter.score_pairs(tiny_images(2), [["a cube"]])
    grey = tiny_images(1)[0].convert("L")
    assert np.isfinite(adapter.score_pairs([grey], [["a cube"]])[0]).all()


def test_norm_unstated_takes_the_benchmarks_and_enters_the_fingerprint(blip_dir):
    """Auto-Comp §3 sums token log-likelihoods; CompoSET App. G.4 takes the per-token mean.
    An unstated ?norm= follows the benchmark; a stated one is kept."""
    adapter = resolve_model(f"hf-vlm:{blip_dir}", device="cpu")
    assert adapter.info.extras["norm"] == "mean"
    assert adapter.info.extras["norm_source"] == "foilbench default"
    summed = adapter.with_default_norm("sum", "Auto-Comp §3")
    assert summed is not adapter and summed.model is adapter.model  # weights shared
    assert summed.info.fingerprint != adapter.info.fingerprint
    assert summed.info.extras["norm_source"] == "Auto-Comp §3"
    image = tiny_images(1)[0]
    caps = CAPTIONS[0]
    lengths = np.array([len(adapter._continuation(c)) for c in caps])
    np.testing.assert_allclose(summed.score_image(image, caps),
                               adapter.score_image(image, caps) * lengths, rtol=1e-6)
    assert adapter.with_default_norm("mean", "foilbench default") is adapter
    stated = resolve_model(f"hf-vlm:{blip_dir}?norm=mean", device="cpu")
    assert stated.with_default_norm("sum", "Auto-Comp §3") is stated
    assert stated.info.fingerprint == adapter.info.fingerprint  # same scores, same cache key
    with pytest.raises(ModelError, match="possible: mean, sum"):
        adapter.with_default_norm("max", "?")


def test_different_images_give_different_scores(vlm_dir):
    """The tiny models see their image: the same captions scored against a black, a white and
    a random image differ by at least ten times the 1e-4 the equality tests above allow
    (measured: BLIP by tenths, LLaVA and Qwen2-VL by about 1e-2)."""
    from PIL import Image

    kind, folder = vlm_dir
    adapter = resolve_model(f"hf-vlm:{folder}", device="cpu")
    images = [Image.new("RGB", (32, 32), "black"), Image.new("RGB", (32, 32), "white"),
              tiny_images(1)[0]]
    scores = np.array(adapter.score_pairs(images, [CAPTIONS[0]] * 3))
    for a in range(3):
        for b in range(a + 1, 3):
            assert np.abs(scores[a] - scores[b]).max() > 1e-3, (kind, scores)
