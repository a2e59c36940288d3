"""The speed-ups change no answer: length-trimmed text batches, prepared image tensors.

Every adapter that trims its text batches (tiny open_clip and tiny HF CLIP, built from configs)
gives the full-length embeddings within 1e-5, and a benchmark's outcomes are identical; towers
where trimming is not exact (bidirectional, last-token pooling; SigLIP) do not trim. Prepared
image tensors are bit-identical to open_clip's own transform, and the engine decodes JPEGs at
full size (reduced-size "draft" decoding would change the pixels).
"""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import open_clip
import pandas as pd
import pytest
import torch
from PIL import Image

from _models_tiny import TINY_OPENCLIP_CFG, save_tiny_hf_dual, tiny_images
from foilbench.data.format import Manifest, make_benchmark
from foilbench.models.openclip import fast as openclip_fast
from foilbench.models.registry import resolve_model
from foilbench.scoring.encode import image_decoder
from foilbench.scoring.engine import evaluate

TEXTS = ["a", "two cats", "a red cube left of a blue sphere",
         "a small red cube sits to the left of a large blue sphere on a wooden table",
         "", "three green cones", "a blue cube left of a red sphere and two cats nearby",
         "one " * 30]


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    torch.set_num_threads(1)


def _openclip(folder, name: str, text_extra: dict | None = None, batch: int = 3):
    from safetensors.torch import save_file

    cfg = json.loads(json.dumps(TINY_OPENCLIP_CFG))
    cfg["text_cfg"].update(text_extra or {})
    path = folder / f"{name}.json"
    path.write_text(json.dumps(cfg))
    open_clip.add_model_config(path)
    torch.manual_seed(0)
    model = open_clip.create_model(name)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(folder / f"{name}.safetensors"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve_model(f"openclip:{path}:{folder / f'{name}.safetensors'}?batch={batch}",
                             device="cpu")


def _full_length(adapter, texts):
    with torch.no_grad():
        feats = adapter.model.encode_text(adapter.tokenizer(texts))
    return torch.nn.functional.normalize(feats, dim=-1).numpy()


def test_openclip_trimmed_text_equals_full_length(tmp_path):
    adapter = _openclip(tmp_path, "fb-trim-causal")
    assert adapter.trims_text and adapter.trim_blocker is None
    got = adapter.embed_texts(TEXTS)  # more texts than the batch: ordered by length inside
    want = _full_length(adapter, TEXTS)
    assert np.abs(got - want).max() < 1e-5
    # each batch really runs shorter than the context (the point of trimming)
    tokens = adapter.tokenizer(TEXTS[:3])
    assert int(openclip_fast.pooled_positions(adapter.model, tokens).max()) + 1 < 16


def test_openclip_bidirectional_tower_keeps_the_full_length(tmp_path):
    adapter = _openclip(tmp_path, "fb-trim-bidir", {"no_causal_mask": True, "pool_type": "last"})
    assert not adapter.trims_text
    assert "causal" in adapter.trim_blocker
    assert np.abs(adapter.embed_texts(TEXTS) - _full_length(adapter, TEXTS)).max() < 1e-6


def test_a_failed_first_batch_check_falls_back_to_full_length(tmp_path, monkeypatch):
    adapter = _openclip(tmp_path, "fb-trim-check")
    monkeypatch.setattr("foilbench.models.openclip.adapter.encode_text_trimmed",
                        lambda model, tokens: torch.zeros(len(tokens), 16))
    got = adapter.embed_texts(TEXTS[:3])
    assert not adapter.trims_text and "differed" in adapter.trim_blocker
    assert np.abs(got - _full_length(adapter, TEXTS[:3])).max() < 1e-6


def test_embedded_trimmed_text_equals_full_length():
    adapter = resolve_model("foilbench-plain", device="cpu")
    assert adapter.trims_text
    adapter.batch_size = 3  # several batches, each trimmed to its own longest text
    got = adapter.embed_texts(TEXTS)
    ids, _ = adapter.tokenizer.encode(TEXTS)
    assert int((ids != 0).sum(axis=1).max()) < ids.shape[1]  # trimming really shortens
    with torch.no_grad():
        want = adapter.net.encode_texts(torch.from_numpy(ids)).numpy()
    assert np.abs(got - want).max() < 1e-5


@pytest.mark.parametrize("kind,trims", [("clip", True), ("siglip", False)])
def test_hf_text_padding_equals_max_length(tmp_path, kind, trims):
    folder = save_tiny_hf_dual(tmp_path / "model", kind, tmp_path / "tok")
    adapter = resolve_model(f"hf:{folder}?batch=3", device="cpu")
    assert adapter.trims_text is trims
    texts = [t for t in TEXTS if t]
    got = adapter.embed_texts(texts)
    enc = adapter.tokenizer(texts, padding="max_length", truncation=True, return_tensors="pt")
    kwargs = {"input_ids": enc["input_ids"]}
    if kind == "clip":
        kwargs["attention_mask"] = enc["attention_mask"]
    with torch.no_grad():
        out = adapter.model.get_text_features(**kwargs)
    want = torch.nn.functional.normalize(
        out if hasattr(out, "dim") else out.pooler_output, dim=-1).numpy()
    assert np.abs(got - want).max() < 1e-5


def _pair_bench(root, n_items: int = 10):
    rng = np.random.default_rng(1)
    rows = []
    words = ["red", "blue", "green", "cube", "sphere", "left", "of", "a", "the", "big"]
    for k in range(n_items):
        for side in ("base", "foil"):
            arr = rng.integers(0, 256, (40, 48, 3), dtype=np.uint8)
            Image.fromarray(arr).save(root / f"{k}_{side}.png")
        length = int(rng.integers(1, 12))
        cap = " ".join(rng.choice(words, length))
        rows.append({"item_id": f"i{k}", "image_base": f"{k}_base.png",
                     "image_foil": f"{k}_foil.png", "caption_base": cap,
                     "caption_foil": cap + " " + str(rng.choice(words)), "scene_id": f"s{k % 3}"})
    return make_benchmark(Manifest(name="trim-pairs", kind="pair"), pd.DataFrame(rows), root)


def test_engine_outcomes_identical_with_and_without_trimming(tmp_path):
    (tmp_path / "bench").mkdir()
    bench = _pair_bench(tmp_path / "bench")
    adapter = _openclip(tmp_path, "fb-trim-engine", batch=4)
    trimmed = evaluate(adapter, bench, batch_size=4, progress=False)
    adapter.trims_text = False
    full = evaluate(adapter, bench, batch_size=4, progress=False)
    for metric in full.outcomes:
        assert np.array_equal(trimmed.outcomes[metric], full.outcomes[metric])
    diff = max(np.abs(a - b).max() for a, b in zip(trimmed.scores, full.scores, strict=True))
    assert diff < 1e-5


def _image_modes():
    base = tiny_images(1, size=50)[0]
    return {"RGB": base, "L": base.convert("L"), "RGBA": base.convert("RGBA"),
            "P": base.convert("P"), "wide": base.resize((80, 40))}


@pytest.mark.parametrize("mode", list(_image_modes()))
def test_prepared_tensor_is_bit_identical_to_open_clip_transform(tmp_path, mode):
    adapter = _openclip(tmp_path, f"fb-prep-{mode.lower()}")
    image = _image_modes()[mode]
    got = adapter.prepare_image(image, 0)
    # open_clip's own transform on the image as given: it resizes and crops in the image's own
    # mode and converts to RGB after (palette and RGBA images; see models/openclip/adapter.py's docstring)
    want = adapter.preprocess(image)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert torch.equal(got, want)
    # and the batched embeddings match open_clip's own call
    with torch.no_grad():
        direct = torch.nn.functional.normalize(
            adapter.model.encode_image(want.unsqueeze(0)), dim=-1).numpy()
    assert np.abs(adapter.embed_prepared([got]) - direct).max() < 1e-6


def test_jpeg_is_decoded_at_full_size_because_draft_changes_the_pixels(tmp_path):
    """What the model sees from a JPEG through the engine equals open_clip's own path
    (``Image.open(path).convert("RGB")`` then its transform). Draft mode (decoding at 1/2
    scale before the same resize) gives different pixels, which is why it is not used."""
    adapter = _openclip(tmp_path, "fb-prep-jpeg")
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 256, (120, 160, 3), dtype=np.uint8)
    path = tmp_path / "photo.jpg"
    Image.fromarray(arr).save(path, quality=90)
    engine_view = adapter.prepare_image(image_decoder(adapter)(path), 0)
    open_clip_view = adapter.preprocess(Image.open(path).convert("RGB"))
    assert torch.equal(engine_view, open_clip_view)
    with Image.open(io.BytesIO(path.read_bytes())) as im:
        im.draft("RGB", (80, 60))
        drafted = adapter.preprocess(im.convert("RGB"))
    assert not torch.equal(drafted, open_clip_view)


def test_jpeg_through_shared_preparation_and_disk_cache_is_bit_identical(tmp_path):
    """A sweep's shared path (uint8 pixels, stored on disk, read back, then the model's own
    tensor tail) gives the very tensor open_clip's transform gives the decoded JPEG."""
    from foilbench.store.prepared_cache import PreparedImageCache

    adapter = _openclip(tmp_path, "fb-prep-shared-jpeg")
    rng = np.random.default_rng(2)
    path = tmp_path / "photo2.jpg"
    Image.fromarray(rng.integers(0, 256, (90, 130, 3), dtype=np.uint8)).save(path, quality=90)
    prep = adapter.image_preparer()
    disk = PreparedImageCache(tmp_path / "prepared")
    disk.put(prep.fingerprint, "ab" * 32, prep.pixels(image_decoder(adapter)(path)))
    stored = disk.get(prep.fingerprint, "ab" * 32, (32, 32, 3))
    want = adapter.preprocess(Image.open(path).convert("RGB"))
    assert torch.equal(prep.finish(stored), want)
    assert torch.equal(prep.finish(stored),
                       adapter.prepare_image(image_decoder(adapter)(path), 0))


@pytest.mark.parametrize("stats", [((0.48145466, 0.4578275, 0.40821073),
                                    (0.26862954, 0.26130258, 0.27577711)),
                                   ((0.5,), (0.5,)), ((0.1, 0.2, 0.3), (0.9, 0.01, 3.0))])
def test_normalise_table_equals_the_three_float32_steps_for_every_value(stats):
    """Every 8-bit value in every channel: the look-up table gives the bits that ToTensor
    (uint8 -> float32, / 255) then Normalize (- mean, / std) give."""
    from torchvision.transforms import Normalize, ToTensor

    mean = np.asarray(stats[0], np.float32)
    std = np.asarray(stats[1], np.float32)
    arr = np.stack(np.meshgrid(np.arange(256), np.arange(3), indexing="ij"), -1)[..., 0]
    pixels = np.repeat(arr[:, :, None], 3, axis=2).astype(np.uint8)  # (256, 3, 3)
    pixels = np.ascontiguousarray(np.stack([np.roll(pixels[..., c], c, axis=0)
                                            for c in range(3)], -1))
    want = Normalize(stats[0], stats[1])(ToTensor()(Image.fromarray(pixels)))
    got = openclip_fast.to_normalised_tensor(pixels, mean, std)
    assert got.dtype == want.dtype and torch.equal(got, want)
    assert torch.equal(openclip_fast.to_normalised_tensor(Image.fromarray(pixels), mean, std),
                       want)
