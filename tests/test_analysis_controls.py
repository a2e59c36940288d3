"""Dataset-control audits: hand-computed pixel metrics, planted changes, token edit distances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from foilbench.analysis import pixel_controls as px
from foilbench.analysis.controls import audit_controls, similarity_gap
from foilbench.analysis.text_controls import fraction_changed, levenshtein
from foilbench.data.format import Manifest, make_benchmark


def test_basic_differences_by_hand():
    a = np.zeros((2, 2, 1))
    b = np.array([[[0.0], [0.5]], [[1.0], [0.0]]])
    got = px.basic_differences(a, b)
    assert got["mae"] == pytest.approx(1.5 / 4)
    assert got["l2"] == pytest.approx(np.sqrt((0.25 + 1.0) / 4))
    assert got["linf"] == pytest.approx(1.0)


def test_fraction_affected_planted_square():
    a = np.full((64, 64, 3), 0.5)
    b = a.copy()
    b[16:32, 16:32, 1] = 1.0  # a 16 x 16 square, one channel, a large change
    frac = px.fraction_affected(a, b)
    # blur spreads a sharp 0.5 step: inside and a 2-pixel rim stay above 10/255, farther not
    assert 256 / 4096 < frac < 24 * 24 / 4096
    assert px.fraction_affected(a, a) == 0.0


def test_fraction_affected_threshold_is_strict():
    a = np.zeros((8, 8, 3))
    b = np.full((8, 8, 3), 10 / 255)  # uniform, so blurring leaves exactly the threshold
    assert px.fraction_affected(a, b) == 0.0
    assert px.fraction_affected(a, b + 1e-6) == 1.0


def test_single_scale_ms_ssim_equals_ssim():
    rng = np.random.default_rng(0)
    a = rng.random((48, 48))
    b = np.clip(a + 0.1 * rng.standard_normal(a.shape), 0, 1)
    assert px.ms_ssim_channel(a, b, weights=(1.0,)) == pytest.approx(px.ssim(a, b), abs=1e-12)


def test_ms_ssim_identity_and_order():
    rng = np.random.default_rng(1)
    a = rng.random((192, 192, 3))
    small = np.clip(a + 0.02 * rng.standard_normal(a.shape), 0, 1)
    large = np.clip(a + 0.2 * rng.standard_normal(a.shape), 0, 1)
    assert px.ms_ssim(a, a) == pytest.approx(1.0)
    assert 1.0 > px.ms_ssim(a, small) > px.ms_ssim(a, large)
    with pytest.raises(ValueError, match="at least 176 pixels"):
        px.ms_ssim(a[:100, :100], a[:100, :100])


@pytest.mark.parametrize("a,b,d", [
    ([], [], 0), ([1, 2, 3], [], 3), ([1, 2, 3], [1, 2, 3], 0), ([1, 2, 3], [1, 9, 3], 1),
    ([1, 2, 3], [2, 3], 1), ([1, 2], [2, 1], 2), (list("kitten"), list("sitting"), 3),
    (list("flaw"), list("lawn"), 2),
])
def test_levenshtein_known_lists(a, b, d):
    assert levenshtein(a, b) == d
    assert levenshtein(b, a) == d


def test_fraction_changed():
    assert fraction_changed([5, 6, 7, 8], [5, 9, 7, 8]) == 0.25
    assert fraction_changed([1, 2], [1, 2, 3, 4]) == 0.5
    assert fraction_changed([], []) == 0.0


def test_similarity_gap_by_hand():
    # two scenes; base embeddings orthogonal, each foil at 60 degrees from its base
    c, s = 0.5, np.sqrt(3) / 2
    base = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]])
    foil = np.array([[c, 0, s], [1.0, 0, 0], [0, c, s]])
    got = similarity_gap(base, foil, ["s1", "s1", "s2"])
    assert got["within"] == pytest.approx((0.5 + 1.0 + 0.5) / 3)
    assert got["across"] == pytest.approx(0.0)
    assert got["gap"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="two scenes"):
        similarity_gap(base, foil, ["s", "s", "s"])


def _tiny_pair_bench(tmp_path):
    (tmp_path / "img").mkdir()
    base = np.full((40, 40, 3), 200, np.uint8)
    foil = base.copy()
    foil[10:20, 10:20] = (0, 0, 255)
    other = np.full((40, 40, 3), 30, np.uint8)
    for name, arr in (("b.png", base), ("f.png", foil), ("o.png", other)):
        Image.fromarray(arr).save(tmp_path / "img" / name)
    items = pd.DataFrame({
        "item_id": ["1", "2", "3"],
        "image_base": ["img/b.png", "img/b.png", "img/o.png"],
        "image_foil": ["img/f.png", "img/f.png", "img/o.png"],
        "caption_base": ["a red cube", "a red cube next to a cone", "a cube"],
        "caption_foil": ["a blue cube", "a blue cube next to a cone", "a cube"],
        "tier": ["short", "medium", "short"],
        "scene_id": ["s1", "s1", "s2"],
    })
    return make_benchmark(Manifest(name="tiny", kind="pair"), items, tmp_path)


class _FakeDual:
    family = "dual"

    def embed_images(self, images):
        return np.stack([np.asarray(im, np.float64).mean(axis=(0, 1)) for im in images])


def test_audit_controls_end_to_end(tmp_path):
    bench = _tiny_pair_bench(tmp_path)
    out = audit_controls(bench, model=_FakeDual(), minilm=False)
    items, summary = out["items"], out["summary"]
    assert len(items) == 3 and summary["pixels"]["n_pairs"] == 2
    planted = items.loc[items.item_id == "1", "fraction_affected"].item()
    assert 100 / 1600 <= planted < 0.2  # the 10 x 10 square of 40 x 40, a little blur rim
    assert items.loc[items.item_id == "3", "fraction_affected"].item() == 0.0
    # "red" -> "blue" is one BPE token of 3 (short) and of 7 (medium)
    assert summary["text_by_tier"]["short"]["token_levenshtein"] == pytest.approx(0.5)
    assert items.loc[items.item_id == "1", "token_change_fraction"].item() == pytest.approx(1 / 3)
    assert items.loc[items.item_id == "2", "token_change_fraction"].item() == pytest.approx(1 / 7)
    assert set(summary["similarity_gap"]) >= {"within", "across", "gap"}


def test_local_ssim_equals_full_maps():
    """The changed-box shortcut must give the same numbers as the full-image maps."""
    from skimage.metrics import structural_similarity

    rng = np.random.default_rng(2)
    a = rng.random((200, 200, 3))
    b = a.copy()
    b[20:60, 150:200] = 0.3  # touches the right border
    b[190:200, 0:5, 0] = 0.9  # a corner
    ref = structural_similarity(a, b, data_range=1.0, gaussian_weights=True, sigma=1.5,
                                use_sample_covariance=False, channel_axis=2)
    assert px.ssim(a, b) == pytest.approx(ref, abs=1e-12)
    expected = []
    for c in range(3):
        x, y, total = a[..., c], b[..., c], 1.0
        for j, w in enumerate(px.MS_SSIM_WEIGHTS):
            lum, cs = px._ssim_terms(x, y)
            last = j == len(px.MS_SSIM_WEIGHTS) - 1
            total *= max(float((lum * cs).mean() if last else cs.mean()), 0.0) ** w
            x, y = px._downsample(x), px._downsample(y)
        expected.append(total)
    assert px.ms_ssim(a, b) == pytest.approx(np.mean(expected), abs=1e-12)
