"""CompoSET App. F dataset controls with the paper's models from local weights: the
all-mpnet-base-v2 caption cosine (tiny stand-ins built from configs), LPIPS and DINOv2 image
distances, and their clear errors when the weights are absent."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from foilbench.errors import ModelError

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "red", "blue", "cube", "next",
         "to", "cone"]


def tiny_bert_dir(folder):
    """A tiny BERT encoder with its tokenizer, saved like a transformers checkpoint."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    torch.manual_seed(0)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    BertModel(BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=1,
                         num_attention_heads=2, intermediate_size=32,
                         max_position_embeddings=32)).save_pretrained(folder)
    return folder


def hand_mean_pool(folder, text):
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()
    batch = tok([text], return_tensors="pt")
    with torch.no_grad():
        h = model(**batch).last_hidden_state[0].numpy().astype(np.float64)
    e = h.mean(axis=0)  # one text, no padding: every token's mask is 1
    return e / np.linalg.norm(e)


def test_sentence_cosine_is_mean_pooled_and_normalised(tmp_path):
    """App. F.2: "sentence-embedding cosine using all-mpnet-base-v2"; that model pools the mean
    of its token states (mask-weighted) and normalises. A tiny encoder stands in for it."""
    from foilbench.analysis.text_encoders import SentenceEncoder, pair_cosines

    folder = tiny_bert_dir(tmp_path / "enc")
    enc = SentenceEncoder(folder, backend="transformers")
    a, b = "a red cube", "a blue cube next to a cone"  # different lengths: padding in a batch
    got = enc.encode([a, b])
    want = np.stack([hand_mean_pool(folder, a), hand_mean_pool(folder, b)])
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert pair_cosines(enc, [a], [b])[0] == pytest.approx(float(want[0] @ want[1]), abs=1e-5)
    assert pair_cosines(enc, [a], [a])[0] == pytest.approx(1.0)
    assert enc.describe()["paper_model"] is False


def test_sentence_transformers_copy_named_like_the_paper_model(tmp_path):
    """A sentence-transformers folder (modules.json) named all-mpnet-base-v2 is read through
    sentence-transformers and labelled as the paper's model; its mean pooling agrees with
    ours on the same weights."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models

    from foilbench.analysis.text_encoders import SentenceEncoder

    enc_dir = tiny_bert_dir(tmp_path / "enc")
    word = models.Transformer(str(enc_dir))
    st = SentenceTransformer(modules=[word, models.Pooling(16, pooling_mode="mean"),
                                      models.Normalize()], device="cpu")
    st.save(str(tmp_path / "all-mpnet-base-v2"))
    enc = SentenceEncoder(tmp_path / "all-mpnet-base-v2")
    assert enc.backend == "sentence-transformers" and enc.describe()["paper_model"] is True
    ours = SentenceEncoder(tmp_path / "all-mpnet-base-v2", backend="transformers")
    texts = ["a red cube", "a blue cube next to a cone"]
    np.testing.assert_allclose(enc.encode(texts), ours.encode(texts), atol=1e-5)


def test_text_model_absent_is_a_clear_error(tmp_path):
    from foilbench.analysis.text_encoders import SentenceEncoder

    with pytest.raises(ModelError, match="all-mpnet-base-v2"):
        SentenceEncoder(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        SentenceEncoder(tmp_path / "empty")


def pair_bench(tmp_path):
    from foilbench.data.format import Manifest, make_benchmark

    (tmp_path / "img").mkdir(parents=True)
    rng = np.random.default_rng(0)
    base = (rng.random((40, 40, 3)) * 255).astype(np.uint8)
    foil = base.copy()
    foil[10:20, 10:20] = 255
    Image.fromarray(base).save(tmp_path / "img/b.png")
    Image.fromarray(foil).save(tmp_path / "img/f.png")
    items = pd.DataFrame({"item_id": ["1", "2"], "image_base": ["img/b.png", "img/b.png"],
                          "image_foil": ["img/f.png", "img/b.png"],
                          "caption_base": ["a red cube", "a cube"],
                          "caption_foil": ["a blue cube", "a cube"], "tier": "short",
                          "scene_id": ["s1", "s2"]})
    return make_benchmark(Manifest(name="tiny", kind="pair"), items, tmp_path)


@pytest.fixture(scope="module")
def alexnet_features(tmp_path_factory):
    """torchvision AlexNet ``features`` with random weights, saved as safetensors."""
    import torch
    from safetensors.torch import save_file
    from torchvision.models import alexnet

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("lpips") / "alexnet-features.safetensors"
    state = {f"features.{k}": v.contiguous() for k, v in alexnet().features.state_dict().items()}
    save_file(state, str(path))
    return path


def test_lpips_from_local_backbone(tmp_path, alexnet_features):
    """App. F.1 lists "perceptual (LPIPS-AlexNet, LPIPS-VGG, DISTS)" metrics; LPIPS of an
    image with itself is 0 and grows with a planted change."""
    from foilbench.analysis.controls import audit_controls

    out = audit_controls(pair_bench(tmp_path), minilm=False, lpips=str(alexnet_features))
    items = out["items"].set_index("item_id")
    assert items.loc["2", "lpips_alex"] == pytest.approx(0.0, abs=1e-7)  # identical images
    assert items.loc["1", "lpips_alex"] > 0.0
    assert "lpips_alex" in out["summary"]["pixels"]


def test_lpips_without_weights_is_a_clear_error(tmp_path):
    from foilbench.analysis.image_distances import LpipsDistance

    with pytest.raises(ModelError, match="backbone weights not found.*alexnet-owt-7be5be79"):
        LpipsDistance(tmp_path / "missing.pth")
    (tmp_path / "d").mkdir()
    with pytest.raises(ModelError, match="no backbone weights in"):
        LpipsDistance(tmp_path / "d")
    import torch
    from safetensors.torch import save_file

    save_file({"features.0.weight": torch.zeros(1)}, str(tmp_path / "bad.safetensors"))
    with pytest.raises(ModelError, match="lacks features"):
        LpipsDistance(tmp_path / "bad.safetensors")


@pytest.fixture(scope="module")
def tiny_dinov2(tmp_path_factory):
    """A tiny Dinov2Model built from a config, saved with its image processor."""
    import torch
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("dinov2")
    Dinov2Model(Dinov2Config(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                             intermediate_size=32, image_size=32,
                             patch_size=8)).save_pretrained(folder)
    BitImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32},
                      image_mean=[0.485, 0.456, 0.406],
                      image_std=[0.229, 0.224, 0.225]).save_pretrained(folder)
    return folder


def test_dinov2_cls_cosine_by_hand(tmp_path, tiny_dinov2):
    """App. F.1: "semantic (DINOv2-base CLS cosine ...)": the cosine of the two images' CLS
    embeddings (pooler_output = the layer-normed CLS token), computed here by hand."""
    import torch
    from transformers import AutoImageProcessor, AutoModel

    from foilbench.analysis.controls import audit_controls
    from foilbench.analysis.image_distances import Dinov2Cosine
    from foilbench.analysis.pixel_controls import load_for_audit

    bench = pair_bench(tmp_path)
    out = audit_controls(bench, minilm=False, dinov2=str(tiny_dinov2))
    items = out["items"].set_index("item_id")
    assert items.loc["2", "dinov2_cosine"] == pytest.approx(1.0, abs=1e-6)
    proc = AutoImageProcessor.from_pretrained(tiny_dinov2)
    model = AutoModel.from_pretrained(tiny_dinov2).eval()
    arrays = [load_for_audit(Image.open(bench.image_path(p))) for p in ("img/b.png",
                                                                         "img/f.png")]
    images = [Image.fromarray(np.round(a * 255).astype(np.uint8)) for a in arrays]
    with torch.no_grad():
        out_h = model(**proc(images=images, return_tensors="pt"))
    cls = out_h.last_hidden_state[:, 0].numpy().astype(np.float64)
    want = cls[0] @ cls[1] / np.linalg.norm(cls[0]) / np.linalg.norm(cls[1])
    assert items.loc["1", "dinov2_cosine"] == pytest.approx(want, abs=1e-5)
    assert Dinov2Cosine(tiny_dinov2)(arrays[0], arrays[1]) == pytest.approx(want, abs=1e-5)


def test_dinov2_without_weights_is_a_clear_error(tmp_path, tiny_dinov2):
    import shutil

    from foilbench.analysis.image_distances import Dinov2Cosine

    with pytest.raises(ModelError, match="no config.json"):
        Dinov2Cosine(tmp_path / "nowhere")
    partial = tmp_path / "partial"
    shutil.copytree(tiny_dinov2, partial)
    (partial / "preprocessor_config.json").unlink()
    with pytest.raises(ModelError, match="preprocessor_config.json"):
        Dinov2Cosine(partial)


def test_audit_controls_labels_the_text_model(tmp_path):
    from foilbench.analysis.controls import audit_controls

    enc = tiny_bert_dir(tmp_path / "all-mpnet-base-v2")
    out = audit_controls(pair_bench(tmp_path / "b"), pixels=False, text_model=str(enc))
    assert out["summary"]["sentence_model"]["paper_model"] is True
    assert "sentence_cosine" in out["summary"]["text_by_tier"]["short"]
    assert out["items"].set_index("item_id").loc["2", "sentence_cosine"] == pytest.approx(1.0)
