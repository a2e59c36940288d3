"""Which image an adapter gets from the engine, per file mode (issue 30's open_rgb question).

- open_clip's eval transform resizes and crops in the image's own mode and converts to RGB last
  (``open_clip/transform.py``: ``Resize``/``CenterCrop`` then ``MaybeConvertMode()``). The
  engine, the sweep's shared pixels and Ray workers must therefore hand an open_clip model the
  decoded file unconverted: a run scores what ``preprocess(Image.open(path))`` gives. Before
  this, the engine composited RGBA and palette files on white first, which the adapter's
  docstring said it did not.
- transformers' ``image_transforms.convert_to_rgb`` composites transparency on white before its
  processors resize; :func:`foilbench.models.base.to_rgb` (what every other adapter gets) must
  give the same pixels for the alpha modes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from foilbench.models.base import to_rgb
from foilbench.scoring import prepared
from foilbench.scoring.encode import image_decoder, open_image, open_rgb
from foilbench.scoring.engine import evaluate
from test_prepared_share import openclip_model, pair_bench


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    torch.set_num_threads(1)


def _transparent_rgba() -> Image.Image:
    """40x28 RGBA, left half fully transparent with red under it (white if composited on
    white, black after open_clip's premultiplied resize and plain convert)."""
    rng = np.random.default_rng(3)
    arr = np.concatenate([rng.integers(0, 256, (28, 40, 3), dtype=np.uint8),
                          np.full((28, 40, 1), 255, np.uint8)], axis=2)
    arr[:, :20, :3] = (255, 0, 0)
    arr[:, :20, 3] = 0
    return Image.fromarray(arr, "RGBA")


def _files() -> dict[str, Image.Image]:
    rgba = _transparent_rgba()
    rgb = rgba.convert("RGB")
    palette = rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
    keyed = palette.copy()
    keyed.info["transparency"] = 0
    la = rgba.convert("LA")
    return {"RGBA": rgba, "P": palette, "P-transparency": keyed, "LA": la, "L": rgb.convert("L")}


@pytest.mark.parametrize("mode", list(_files()))
def test_open_clip_gets_each_file_as_its_own_transform_would(tmp_path, mode):
    adapter = openclip_model(tmp_path, f"fb-mode-{mode.lower().replace('-', '')}")
    path = tmp_path / f"{mode}.png"
    _files()[mode].save(path)
    decode = image_decoder(adapter)
    assert decode is open_image
    with Image.open(path) as raw:
        want = adapter.preprocess(raw)  # open_clip on the file as opened (SugarCrepe's call)
    assert torch.equal(adapter.prepare_image(decode(path), 0), want)
    prep = adapter.image_preparer()  # the sweep's shared pixels, decoded once for all models
    assert torch.equal(prep.finish(prep.pixels(open_image(path))), want)
    if mode in ("RGBA", "P-transparency", "LA"):  # the old engine input differs here
        assert not torch.equal(adapter.preprocess(open_rgb(path)), want)


def test_a_run_scores_rgba_files_as_open_clip_does_with_and_without_sharing(tmp_path):
    bench = pair_bench(tmp_path / "bench", n_items=3)
    for rel in bench.unique_images():  # every image becomes RGBA with a transparent half
        path = bench.root / rel
        arr = np.asarray(Image.open(path).convert("RGBA")).copy()
        arr[:, : arr.shape[1] // 2, 3] = 0
        Image.fromarray(arr, "RGBA").save(path.with_suffix(".png"))
    items = bench.items.copy()
    for col in ("image_base", "image_foil"):
        items[col] = items[col].str.replace(".jpg", ".png")
    from foilbench.data.format import Manifest, make_benchmark

    bench = make_benchmark(Manifest(name="rgba-pairs", kind="pair"), items, bench.root)
    adapter = openclip_model(tmp_path, "fb-mode-run")

    def own(rel: str) -> np.ndarray:
        with Image.open(bench.root / rel) as im:
            pixels = adapter.preprocess(im).unsqueeze(0)
        with torch.no_grad():
            emb = adapter.model.encode_image(pixels)
        return torch.nn.functional.normalize(emb, dim=-1).numpy()[0]

    texts = bench.unique_texts()
    text_emb = dict(zip(texts, adapter.embed_texts(texts), strict=True))
    want = []
    for row in items.itertuples():
        ib, if_ = own(row.image_base), own(row.image_foil)
        tb, tf = text_emb[row.caption_base], text_emb[row.caption_foil]
        want.append([tb @ ib, tb @ if_, tf @ ib, tf @ if_])  # s(c0,i0) s(c0,i1) s(c1,i0) ...
    plain = evaluate(adapter, bench, batch_size=4, progress=False)
    with prepared.sharing(prepared.SharedPreparation.for_adapters([adapter])):
        shared = evaluate(adapter, bench, batch_size=4, progress=False)
    for result in (plain, shared):
        got = np.stack(result.scores)
        np.testing.assert_allclose(got, np.array(want), atol=1e-6)
    assert shared.stats["prepare_decoded"] == len(bench.unique_images())


@pytest.mark.parametrize("mode", ["RGBA", "LA", "P-transparency", "P", "L"])
def test_to_rgb_equals_transformers_convert_to_rgb_on_alpha_and_plain_modes(mode):
    from transformers.image_transforms import convert_to_rgb

    image = _files()[mode]
    assert np.array_equal(np.asarray(to_rgb(image)), convert_to_rgb(image, return_numpy=True))


def test_to_rgb_departs_from_transformers_only_on_a_colour_key_as_documented():
    """transformers also composites an L/RGB image that carries a ``transparency`` colour key;
    to_rgb converts it plainly (stated in its docstring). This pins that statement."""
    from transformers.image_transforms import convert_to_rgb

    grey = _files()["L"]
    keyed = grey.copy()
    keyed.info["transparency"] = int(np.asarray(grey)[0, 0])
    assert np.array_equal(np.asarray(to_rgb(keyed)), np.asarray(grey.convert("RGB")))
    assert not np.array_equal(np.asarray(to_rgb(keyed)),
                              convert_to_rgb(keyed, return_numpy=True))


def test_other_adapters_still_get_rgb_composited_on_white():
    class Plain:
        pass

    assert image_decoder(Plain()) is open_rgb
