"""Images prepared once per preprocessing and shared across models: bit-identical tensors,
equal embeddings and outcomes, one decode per image, fingerprints that separate transforms."""

from __future__ import annotations

import json
import warnings

import numpy as np
import open_clip
import pandas as pd
import pytest
import torch
from PIL import Image

from _models_tiny import TINY_OPENCLIP_CFG, tiny_images
from foilbench.data.format import Manifest, make_benchmark
from foilbench.models.registry import resolve_model
from foilbench.scoring import prepared
from foilbench.scoring.encode import open_image
from foilbench.scoring.engine import evaluate
from foilbench.store.prepared_cache import PreparedImageCache


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    torch.set_num_threads(1)


def openclip_model(folder, name: str, seed: int = 0, vision: dict | None = None,
                   extra: dict | None = None):
    from safetensors.torch import save_file

    cfg = json.loads(json.dumps(TINY_OPENCLIP_CFG))
    cfg["vision_cfg"].update(vision or {})
    cfg.update(extra or {})
    path = folder / f"{name}.json"
    path.write_text(json.dumps(cfg))
    open_clip.add_model_config(path)
    torch.manual_seed(seed)
    model = open_clip.create_model(name)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(folder / f"{name}.safetensors"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return resolve_model(f"openclip:{path}:{folder / f'{name}.safetensors'}?batch=4",
                             device="cpu")


def pair_bench(root, n_items: int = 6):
    root.mkdir(exist_ok=True)
    rng = np.random.default_rng(1)
    rows = []
    for k in range(n_items):
        for side in ("base", "foil"):
            arr = rng.integers(0, 256, (40 + 3 * k, 48, 3), dtype=np.uint8)
            Image.fromarray(arr).save(root / f"{k}_{side}.jpg", quality=90)
        rows.append({"item_id": f"i{k}", "image_base": f"{k}_base.jpg",
                     "image_foil": f"{k}_foil.jpg", "caption_base": f"a red cube {k}",
                     "caption_foil": f"a blue cube {k}", "scene_id": f"s{k}"})
    return make_benchmark(Manifest(name="share-pairs", kind="pair"), pd.DataFrame(rows), root)


def _modes():
    base = tiny_images(1, size=50)[0]
    return {"RGB": base, "L": base.convert("L"), "RGBA": base.convert("RGBA"),
            "P": base.convert("P"), "wide": base.resize((80, 40)), "tall": base.resize((30, 90))}


@pytest.mark.parametrize("mode", list(_modes()))
def test_shared_pixels_then_tail_are_bit_identical_to_the_models_own_transform(tmp_path, mode):
    adapter = openclip_model(tmp_path, f"fb-share-{mode.lower()}")
    prep = adapter.image_preparer()
    assert prep is not None
    image = open_rgb_of(tmp_path, _modes()[mode])
    pixels = prep.pixels(image)
    assert pixels.dtype == np.uint8 and pixels.shape == (32, 32, 3)
    got = prep.finish(pixels)
    want = adapter.preprocess(image)  # open_clip's own transform on what the engine decodes
    assert got.dtype == want.dtype and torch.equal(got, want)
    assert torch.equal(got, adapter.prepare_image(image, 0))


def open_rgb_of(folder, image):
    """The file as a sweep's shared preparation decodes it (own mode: each preparer converts
    as its model does; open_clip's own path decodes the same way)."""
    path = folder / f"img-{image.mode}-{image.width}x{image.height}.png"
    image.save(path)
    return open_image(path)


def test_fingerprint_equal_for_same_preprocessing_and_split_by_size_and_interpolation(tmp_path):
    a = openclip_model(tmp_path, "fb-fp-a", seed=0)
    b = openclip_model(tmp_path, "fb-fp-b", seed=1)  # other weights, same transform
    c = openclip_model(tmp_path, "fb-fp-c", vision={"image_size": 48, "patch_size": 8})
    assert a.info.fingerprint != b.info.fingerprint
    fa, fb, fc = (m.image_preparer().fingerprint for m in (a, b, c))
    assert fa == fb and fa != fc
    steps = list(a.preprocess.transforms)[:-2]
    from torchvision.transforms import InterpolationMode, Resize

    other = [Resize(32, interpolation=InterpolationMode.BILINEAR), *steps[1:]]
    assert prepared.head_fingerprint(other, source="own-mode") != fa
    assert prepared.head_fingerprint(steps, source="own-mode") == fa
    assert prepared.head_fingerprint(steps) != fa  # what the steps receive is named
    # a lambda's behaviour has no name: no fingerprint, that model prepares its own images
    assert prepared.head_fingerprint([*steps, lambda im: im]) is None


def test_mean_std_differ_but_pixels_are_shared_and_each_tail_is_exact(tmp_path):
    a = openclip_model(tmp_path, "fb-ms-a")
    b = openclip_model(tmp_path, "fb-ms-b", seed=3)
    from torchvision.transforms import Compose, Normalize

    from foilbench.models.openclip.fast import tensor_tail

    # a model normalised with other statistics (as SigLIP's 0.5/0.5), same resize and crop
    b.preprocess = Compose([*list(b.preprocess.transforms)[:-1],
                            Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    b._tail = tensor_tail(b.preprocess)
    pa, pb = a.image_preparer(), b.image_preparer()
    assert pa.fingerprint == pb.fingerprint
    image = open_rgb_of(tmp_path, _modes()["wide"])
    pixels = pa.pixels(image)
    assert torch.equal(pb.finish(pixels), b.preprocess(image))
    assert not torch.equal(pa.finish(pixels), pb.finish(pixels))


def test_engine_shares_one_decode_and_gives_the_same_embeddings_and_outcomes(tmp_path):
    bench = pair_bench(tmp_path / "bench")
    a = openclip_model(tmp_path, "fb-eng-a", seed=0)
    b = openclip_model(tmp_path, "fb-eng-b", seed=1)
    own = [evaluate(m, bench, batch_size=4, progress=False) for m in (a, b)]
    shared = prepared.SharedPreparation.for_adapters([a, b])
    with prepared.sharing(shared):
        got = [evaluate(m, bench, batch_size=4, progress=False) for m in (a, b)]
    n_images = len(set(bench.unique_images()))
    assert got[0].stats["prepare_decoded"] == n_images
    assert got[1].stats["prepare_decoded"] == 0
    assert got[1].stats["prepare_memory_hits"] == n_images
    for before, after in zip(own, got, strict=True):
        for x, y in zip(before.scores, after.scores, strict=True):
            assert np.array_equal(x, y)  # same bits, not merely close
        for metric in before.outcomes:
            assert np.array_equal(before.outcomes[metric], after.outcomes[metric])


def test_decode_is_done_once_for_every_registered_preprocessing(tmp_path):
    a = openclip_model(tmp_path, "fb-two-a")
    c = openclip_model(tmp_path, "fb-two-c", vision={"image_size": 48, "patch_size": 8})
    shared = prepared.SharedPreparation.for_adapters([a, c])
    image = open_rgb_of(tmp_path, _modes()["RGB"])
    calls = []

    def decode():
        calls.append(1)
        return image

    h = "ab" * 32
    first = shared.pixels(a.image_preparer().fingerprint, h, decode)
    second = shared.pixels(c.image_preparer().fingerprint, h, decode)
    assert len(calls) == 1 and first.shape == (32, 32, 3) and second.shape == (48, 48, 3)
    assert shared.counts == {"decoded": 1, "prepared": 2, "memory_hits": 1, "disk_hits": 0}


def test_memory_is_bounded_least_recently_used_first():
    prep = prepared.Preparer("fp", lambda image: np.full((2, 2, 3), image, np.uint8),
                             lambda px: px)
    shared = prepared.SharedPreparation([prep], max_memory_bytes=24)  # two 12-byte arrays
    for k in range(3):
        shared.pixels("fp", f"{k:064x}", lambda k=k: k)
    assert shared.counts["decoded"] == 3
    assert list(shared._memory) == [("fp", f"{1:064x}"), ("fp", f"{2:064x}")]
    shared.pixels("fp", f"{2:064x}", lambda: pytest.fail("2 is held in memory"))
    got = shared.pixels("fp", f"{0:064x}", lambda: 7)  # 0 was dropped: decoded again
    assert shared.counts["decoded"] == 4 and int(got[0, 0, 0]) == 7
    assert list(shared._memory) == [("fp", f"{2:064x}"), ("fp", f"{0:064x}")]


def test_validations_pixel_check_prepares_once_and_declines_when_nothing_would_keep_it(
        tmp_path):
    """check_pixels (validation's decode inside a run): decodes and prepares for every
    preprocessing, a second check of the same bytes decodes nothing, a corrupt file raises as
    PIL does; with no preparer, or no disk and a memory that has had to drop an array, it
    declines (validation then decodes the reduced way and the cell decodes in full)."""
    import hashlib

    prep = prepared.Preparer("fp", lambda image: np.asarray(image.convert("RGB"))[:2, :2],
                             lambda px: px)
    paths = []
    for k in range(3):
        paths.append(tmp_path / f"{k}.png")
        Image.new("RGB", (4, 4), (k, 0, 0)).save(paths[-1])
    assert not prepared.SharedPreparation([]).check_pixels(paths[0])
    shared = prepared.SharedPreparation([prep], max_memory_bytes=24)  # two 12-byte arrays
    assert shared.check_pixels(paths[0]) and shared.check_pixels(paths[0])
    assert shared.counts["decoded"] == 1 and shared.check_cpu_seconds > 0
    key = hashlib.sha256(paths[0].read_bytes()).hexdigest()
    assert int(shared.pixels("fp", key, lambda: pytest.fail("held"))[0, 0, 0]) == 0
    assert shared.check_pixels(paths[1]) and shared.check_pixels(paths[2])  # drops paths[0]
    assert not shared.check_pixels(paths[0]) and shared.counts["decoded"] == 3
    (tmp_path / "bad.png").write_bytes(paths[0].read_bytes()[:40])
    disk = PreparedImageCache(tmp_path / "prepared")
    with pytest.raises(OSError):
        prepared.SharedPreparation([prep], disk).check_pixels(tmp_path / "bad.png")
    warm = prepared.SharedPreparation([prep], disk)
    assert warm.check_pixels(paths[1]) and warm.counts["decoded"] == 1  # written to disk
    again = prepared.SharedPreparation([prep], disk)
    assert again.check_pixels(paths[1]) and again.counts == {
        "decoded": 0, "prepared": 0, "memory_hits": 0, "disk_hits": 1}


def test_two_files_with_the_same_bytes_checked_at_once_are_decoded_once(tmp_path):
    """Validation checks paths on several threads; two paths holding the same bytes are one
    image. The first thread's preparation is slowed so that, without the per-image lock, the
    second would find nothing kept and decode again."""
    import threading
    import time

    started = threading.Event()

    def slow_pixels(image):
        started.set()
        time.sleep(0.3)
        return np.asarray(image.convert("RGB"))[:2, :2]

    prep = prepared.Preparer("fp", slow_pixels, lambda px: px)
    first, second = tmp_path / "a.png", tmp_path / "copy-of-a.png"
    Image.new("RGB", (4, 4), (9, 0, 0)).save(first)
    second.write_bytes(first.read_bytes())
    shared = prepared.SharedPreparation([prep])
    worker = threading.Thread(target=shared.check_pixels, args=(first,))
    worker.start()
    assert started.wait(5)  # the first check is preparing
    assert shared.check_pixels(second)
    worker.join()
    assert shared.counts["decoded"] == 1 and shared.counts["prepared"] == 1
    assert shared._checking == {}  # nothing left behind


def test_a_second_sweep_with_a_new_model_decodes_nothing(tmp_path):
    bench = pair_bench(tmp_path / "bench")
    a = openclip_model(tmp_path, "fb-disk-a", seed=0)
    b = openclip_model(tmp_path, "fb-disk-b", seed=1)
    disk = PreparedImageCache(tmp_path / "prepared")
    with prepared.sharing(prepared.SharedPreparation.for_adapters([a], disk)):
        first = evaluate(a, bench, batch_size=4, progress=False)
    assert first.stats["prepare_decoded"] > 0
    with prepared.sharing(prepared.SharedPreparation.for_adapters([a, b], disk)):
        second = evaluate(b, bench, batch_size=4, progress=False)
    assert second.stats["prepare_decoded"] == 0
    assert second.stats["prepare_disk_hits"] == len(set(bench.unique_images()))
    own = evaluate(b, bench, batch_size=4, progress=False)
    for x, y in zip(own.scores, second.scores, strict=True):
        assert np.array_equal(x, y)


@pytest.fixture
def hf_clip(tmp_path):
    from _models_tiny import clip_tokenizer, save_tiny_hf_dual

    tok = tmp_path / "tok"
    tok.mkdir()
    clip_tokenizer(tok)
    path = save_tiny_hf_dual(tmp_path / "hfclip", "clip", tok)
    return resolve_model(f"hf:{path}?batch=4", device="cpu")


def test_hf_processor_split_is_bit_identical_to_the_batch_call(tmp_path, hf_clip):
    prep = hf_clip.image_preparer()
    assert prep is not None and prep.fingerprint.startswith("hf-pixels-")
    images = [open_rgb_of(tmp_path, im) for im in _modes().values()]
    batch = hf_clip.image_processor(images=images, return_tensors="pt")["pixel_values"]
    for k, image in enumerate(images):
        pixels = prep.pixels(image)
        assert pixels.dtype == np.uint8 and pixels.shape == (32, 32, 3)
        assert torch.equal(prep.finish(pixels), batch[k])
        assert torch.equal(hf_clip.prepare_image(image, k), batch[k])
    with torch.no_grad():
        assert np.array_equal(hf_clip.embed_prepared([hf_clip.prepare_image(im, 0)
                                                      for im in images]),
                              hf_clip.embed_images(images))
    oc = openclip_model(tmp_path, "fb-hf-vs-oc")
    assert oc.image_preparer().fingerprint != prep.fingerprint  # other code, never shared


def test_hf_engine_with_sharing_gives_the_same_scores(tmp_path, hf_clip):
    bench = pair_bench(tmp_path / "bench")
    own = evaluate(hf_clip, bench, batch_size=4, progress=False)
    with prepared.sharing(prepared.SharedPreparation.for_adapters([hf_clip])):
        got = evaluate(hf_clip, bench, batch_size=4, progress=False)
    assert got.stats["prepare_decoded"] == len(set(bench.unique_images()))
    for x, y in zip(own.scores, got.scores, strict=True):
        assert np.array_equal(x, y)


def test_a_pool_thread_sees_the_open_block_and_sharing_none_turns_it_off():
    from concurrent.futures import ThreadPoolExecutor

    shared = prepared.SharedPreparation()
    assert prepared.current() is None
    with prepared.sharing(shared):
        with ThreadPoolExecutor(1) as pool:  # a fresh thread: no inherited context
            assert pool.submit(prepared.current).result() is shared
        with prepared.sharing(None):
            assert prepared.current() is None  # the old path, asked for explicitly
        assert prepared.current() is shared
    assert prepared.current() is None
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(prepared.current).result() is None
