"""Settling near ties in float64: the engine rescoring the items a float32 pass left within
rounding of a tie, and each torch adapter's float64 features against the library's own
float64 forward."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from PIL import Image

from _core_helpers import colour_pair_folder
from foilbench.data.format import load_benchmark
from foilbench.models.base import ModelInfo
from foilbench.models.batched import BatchedDualEncoder
from foilbench.runner.notes import note_lines
from foilbench.scoring.engine import evaluate
from foilbench.scoring.near_ties import near_tie_note

COLOUR_IDS = {"red": 0, "green": 1, "blue": 2}
BLUE_TILT = 8e-4  # the blue caption leans towards red: cos(blue caption, red image) ~ 1 - 3.2e-7
RED_ERROR = 1.2e-3  # the float32 pass's error on the red caption, along an axis no image has


class _Towers(torch.nn.Module):
    """Images: mean colour -> one-hot on the first three axes. Captions: red and green
    one-hot, blue = (1, 0, BLUE_TILT, 0)."""

    def __init__(self) -> None:
        super().__init__()
        self.image = torch.nn.Linear(3, 4, bias=False)
        self.text = torch.nn.Embedding(3, 4)
        with torch.no_grad():
            self.image.weight.copy_(torch.eye(4, 3))
            self.text.weight.copy_(torch.tensor([[1, 0, 0, 0], [0, 1, 0, 0],
                                                 [1, 0, BLUE_TILT, 0]]))


class FloatErrorModel(BatchedDualEncoder):
    """A model whose float32 pass is off by a known amount: the red caption's float32
    feature has RED_ERROR on the fourth axis, so s(red caption, red image) is
    1 / sqrt(1 + RED_ERROR**2) ~ 1 - 7.2e-7 instead of 1 (float32 rounding, made large and
    known). In float64 the feature is exact."""

    def __init__(self) -> None:
        self.net = _Towers()
        self.device, self.torch_dtype = "cpu", torch.float32
        self.batch_size, self.embed_dim = 8, 4
        self.info = ModelInfo(spec="float-error", fingerprint="float-error", family=self.family,
                              score_kind="cosine")
        self.float64_calls: list[tuple[int, int]] = []

    def torch_module(self):
        return self.net

    def image_features(self, images, offset):
        x = np.stack([np.asarray(im, np.float64).reshape(-1, 3).mean(0) / 255 for im in images])
        return self.net.image(torch.tensor(x, dtype=self.torch_dtype, device=self.device))

    def text_features(self, texts, offset):
        ids = torch.tensor([COLOUR_IDS[t.split()[1]] for t in texts])
        feats = self.net.text(ids)
        if self.torch_dtype == torch.float32:
            error = torch.zeros_like(feats)
            error[ids == 0, 3] = RED_ERROR
            feats = feats + error
        return feats

    def float64_embeddings(self, prepared, texts):
        self.float64_calls.append((len(prepared), len(texts)))
        return super().float64_embeddings(prepared, texts)


def test_near_ties_are_rescored_in_float64_and_nothing_else_moves(tmp_path):
    # items (base image/caption, foil image/caption): a red/green, b red/blue, c green/blue,
    # d blue/red. By hand, i2t = min(s00 - s10, s11 - s01):
    #   b: s(red cap, red img) - s(blue cap, red img); d: s(red cap, red img) - s(blue cap, red img)
    # float32: (1 - 7.2e-7) - (1 - 3.2e-7) = -4e-7, a near tie scored wrong;
    # float64: 1 - (1 - 3.2e-7) = +3.2e-7, right. a and c are far from ties.
    bench = load_benchmark(colour_pair_folder(tmp_path / "b"))
    assert Image.open(bench.image_path("red.png")).getpixel((0, 0)) == (255, 0, 0)
    model = FloatErrorModel()
    weights = {k: v.clone() for k, v in model.net.state_dict().items()}
    result = evaluate(model, bench, progress=False)

    stats = result.stats
    assert stats["near_ties"] == {"i2t": 2, "t2i": 0}  # of the float32 pass
    assert stats["near_ties_settled"] == 2
    assert stats["near_ties_changed"] == {"i2t": 2, "t2i": 0, "group": 0}
    assert result.outcomes["i2t"].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert result.outcomes["t2i"].tolist() == [1.0, 0.0, 1.0, 0.0]  # b, d: wrong by ~1
    assert model.float64_calls == [(2, 2)]  # the red and blue images, red and blue captions

    tilt = float(np.float32(BLUE_TILT))  # the weight as the float32 table holds it
    blue_on_red = 1 / math.sqrt(1 + tilt ** 2)
    blue_on_blue = tilt / math.sqrt(1 + tilt ** 2)
    b = result.scores[1]  # [s(c0,i0), s(c0,i1), s(c1,i0), s(c1,i1)]
    assert b.tolist() == pytest.approx([1.0, 0.0, blue_on_red, blue_on_blue], abs=1e-15)
    assert b[0] - b[2] == pytest.approx(1 - blue_on_red, rel=1e-9)
    assert b[0] - b[2] > 3.1e-7
    # item a was not a near tie: its float32 score of red on red stays as float32 gave it
    red_f32 = 1 / math.sqrt(1 + float(np.float32(RED_ERROR)) ** 2)
    assert result.scores[0][0] == pytest.approx(red_f32, abs=1e-7)
    assert result.scores[0][0] < 1 - 7e-7

    # the network is float32 again, bit for bit, and so are its float32 features
    assert model.torch_dtype == torch.float32 and model.device == "cpu"
    for name, value in model.net.state_dict().items():
        assert value.dtype == torch.float32 and torch.equal(value, weights[name])
    again = evaluate(model, bench, progress=False)
    assert again.stats["near_ties"] == {"i2t": 2, "t2i": 0}
    assert [s.tolist() for s in again.scores] == [s.tolist() for s in result.scores]

    line = near_tie_note(stats)
    assert line.startswith("near ties: 2 i2t decision(s) within float32 rounding")
    assert line.endswith("2 item(s) rescored by the model in float64, outcomes changed: 2 i2t")
    assert line in note_lines(stats)


def test_a_run_without_near_ties_recomputes_nothing(tmp_path):
    bench = load_benchmark(colour_pair_folder(tmp_path / "b"))
    model = FloatErrorModel()
    model.net.text.weight.data[2] = torch.tensor([0.0, 0.0, 1.0, 0.0])  # blue is plain blue
    result = evaluate(model, bench, progress=False)
    assert result.stats["near_ties"] == {"i2t": 0, "t2i": 0}
    assert result.stats["near_ties_settled"] == 0 and model.float64_calls == []


def test_the_note_says_when_float64_changed_nothing():
    line = near_tie_note({"near_ties": {"r1": 1}, "near_ties_settled": 1,
                          "near_ties_changed": {"r1": 0}})
    assert line.endswith("1 item(s) rescored by the model in float64, outcomes changed: none")


def test_an_adapter_without_a_network_and_a_bf16_one_are_not_recast():
    model = FloatErrorModel()
    model.torch_module = lambda: None  # a plugin that names no network
    assert model.float64_embeddings([], ["a red square"]) is None
    model = FloatErrorModel()
    del model.torch_dtype  # names a network, but says nothing of its dtype
    assert model.float64_embeddings([], ["a red square"]) is None
    assert model.net.text.weight.dtype == torch.float32
    model = FloatErrorModel()
    model.net.to(torch.bfloat16)
    model.torch_dtype = torch.bfloat16
    assert model.float64_embeddings([], ["a red square"]) is None
    assert model.net.text.weight.dtype == torch.bfloat16


def test_a_mixed_precision_network_is_not_recast():
    model = FloatErrorModel()
    model.net.image.to(torch.float16)
    assert model.float64_embeddings([], ["a red square"]) is None
    assert model.net.image.weight.dtype == torch.float16
    assert model.net.text.weight.dtype == torch.float32


def test_an_error_inside_float64_restores_the_network():
    model = FloatErrorModel()

    def broken(texts, offset):
        assert model.net.text.weight.dtype == torch.float64 and model.device == "cpu"
        raise RuntimeError("boom")

    model.text_features = broken
    with pytest.raises(RuntimeError, match="boom"):
        model.float64_embeddings([], ["a red square"])
    assert model.net.text.weight.dtype == torch.float32 and model.torch_dtype == torch.float32


# --- each torch adapter against the library's own float64 forward ---------------------------

TEXTS = ["a red cube left of a blue sphere", "a blue cube left of a red sphere", "two cats"]


def _unit(x) -> np.ndarray:
    return torch.nn.functional.normalize(x.to(torch.float64), dim=-1).numpy()


def _same_weights(before: dict, module) -> bool:
    after = module.state_dict()
    return all(after[k].dtype == v.dtype and torch.equal(after[k], v) for k, v in before.items())


@pytest.fixture()
def tiny_openclip(tmp_path):
    import open_clip
    from safetensors.torch import save_file

    from _models_tiny import write_openclip_config

    cfg = write_openclip_config(tmp_path, "fb-tiny-settle")
    open_clip.add_model_config(cfg)
    torch.manual_seed(0)
    model, _, preprocess = open_clip.create_model_and_transforms("fb-tiny-settle")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(tmp_path / "w.safetensors"))
    return cfg, tmp_path / "w.safetensors", model.eval(), preprocess


def test_openclip_float64_features_are_open_clips_own_float64_forward(tiny_openclip):
    import open_clip

    from _models_tiny import tiny_images
    from foilbench.models.registry import resolve_model

    cfg, weights, model, preprocess = tiny_openclip
    adapter = resolve_model(f"openclip:{cfg}:{weights}", device="cpu")
    images = tiny_images(3)
    before_emb = adapter.embed_images(images), adapter.embed_texts(TEXTS)
    before = {k: v.clone() for k, v in adapter.model.state_dict().items()}

    prepared = [adapter.prepare_image(im, k) for k, im in enumerate(images)]
    got_images, got_texts = adapter.float64_embeddings(prepared, TEXTS)
    reference = copy.deepcopy(model).to(torch.float64)
    with torch.no_grad():
        want_images = _unit(reference.encode_image(
            torch.stack([preprocess(im) for im in images]).to(torch.float64)))
        want_texts = _unit(reference.encode_text(open_clip.get_tokenizer("fb-tiny-settle")(TEXTS)))
    assert got_images.dtype == np.float64 and got_texts.dtype == np.float64
    assert np.abs(got_images - want_images).max() < 1e-12
    assert np.abs(got_texts - want_texts).max() < 1e-12
    # float32 features differ from them by float32 rounding only
    assert 0 < np.abs(before_emb[1] - want_texts).max() < 1e-5

    assert _same_weights(before, adapter.model) and adapter.torch_dtype == torch.float32
    assert np.array_equal(adapter.embed_images(images), before_emb[0])
    assert np.array_equal(adapter.embed_texts(TEXTS), before_emb[1])

    adapter.set_dtype("bfloat16")  # a --precision bf16 pass is not settled
    assert adapter.float64_embeddings(prepared, TEXTS) is None


def test_hf_clip_float64_features_are_transformers_own_float64_forward(tmp_path):
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    from _models_tiny import save_tiny_hf_dual, tiny_images
    from foilbench.models.registry import resolve_model

    folder = save_tiny_hf_dual(tmp_path / "clip", "clip", tmp_path / "tok")
    adapter = resolve_model(f"hf:{folder}", device="cpu")
    before = {k: v.clone() for k, v in adapter.model.state_dict().items()}
    images = tiny_images(2)
    prepared = [adapter.prepare_image(im, k) for k, im in enumerate(images)]
    got_images, got_texts = adapter.float64_embeddings(prepared, TEXTS)

    reference = AutoModel.from_pretrained(folder, dtype=torch.float64).eval()
    processor = AutoImageProcessor.from_pretrained(folder)
    tokens = AutoTokenizer.from_pretrained(folder)(TEXTS, padding="longest",
                                                   return_tensors="pt")

    def features(out):
        return out if hasattr(out, "dim") else out.pooler_output

    with torch.no_grad():
        pixels = processor(images=images, return_tensors="pt")["pixel_values"]
        want_images = _unit(features(reference.get_image_features(
            pixel_values=pixels.to(torch.float64))))
        want_texts = _unit(features(reference.get_text_features(
            input_ids=tokens["input_ids"], attention_mask=tokens["attention_mask"])))
    assert np.abs(got_images - want_images).max() < 1e-12
    assert np.abs(got_texts - want_texts).max() < 1e-12
    assert _same_weights(before, adapter.model) and adapter.torch_dtype == torch.float32


def test_embedded_float64_features_are_the_networks_own_float64_forward():
    from _models_tiny import tiny_images
    from foilbench.models.embedded_preprocess import arrays_to_tensor, image_to_array
    from foilbench.models.registry import resolve_model
    from foilbench.models.word_tokenizer import trim_padding

    adapter = resolve_model("foilbench-plain", device="cpu")
    before = {k: v.clone() for k, v in adapter.net.state_dict().items()}
    images = tiny_images(2, size=48)
    got_images, got_texts = adapter.float64_embeddings(images, TEXTS)

    reference = copy.deepcopy(adapter.net).to(torch.float64)
    size = adapter.net.cfg.image_size
    with torch.no_grad():
        x = arrays_to_tensor(np.stack([image_to_array(im, size) for im in images]))
        want_images = reference.encode_images(x.to(torch.float64)).numpy()
        ids, _ = adapter.tokenizer.encode(TEXTS)
        want_texts = reference.encode_texts(torch.from_numpy(trim_padding(ids))).numpy()
    assert np.abs(got_images - want_images).max() < 1e-12
    assert np.abs(got_texts - want_texts).max() < 1e-12
    assert _same_weights(before, adapter.net) and adapter.torch_dtype == torch.float32
