"""CompoSET App. G.4 protocol with scripted choosers: hand-computed outcomes and bias stats."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from foilbench.data.format import Manifest, make_benchmark
from foilbench.errors import BenchmarkError, FoilbenchError
from foilbench.models.base import ApiChoiceModel, ModelInfo
from foilbench.scoring.api_protocol import evaluate

COLOURS = {"red": (255, 0, 0), "blue": (0, 0, 255), "green": (0, 255, 0)}


def colour_of(image: Image.Image) -> str:
    px = image.convert("RGB").getpixel((0, 0))
    return next(name for name, rgb in COLOURS.items() if rgb == px)


class Scripted(ApiChoiceModel):
    """Answers by a policy: "right", "first", "wrong", or a list of answers in call order."""

    def __init__(self, policy) -> None:
        self.policy = policy
        self.calls: list[tuple] = []
        self.info = ModelInfo(spec="scripted", fingerprint="scripted", family="api_choice",
                              score_kind="api_choice")

    def _answer(self, right: int):
        if isinstance(self.policy, list):
            return self.policy.pop(0)
        return {"right": right, "first": 0, "wrong": 1 - right}[self.policy]

    def choose_caption(self, image, captions):
        self.calls.append(("caption", colour_of(image), tuple(captions)))
        return self._answer(next(k for k, c in enumerate(captions) if colour_of(image) in c))

    def choose_image(self, images, caption):
        self.calls.append(("image", tuple(colour_of(i) for i in images), caption))
        return self._answer(next(k for k, i in enumerate(images) if colour_of(i) in caption))


@pytest.fixture
def root(tmp_path):
    for name, rgb in COLOURS.items():
        Image.new("RGB", (4, 4), rgb).save(tmp_path / f"{name}.png")
    return tmp_path


def pair_bench(root, n=1):
    rows = [{"item_id": f"p{k}", "image_base": "red.png", "image_foil": "blue.png",
             "caption_base": "a red cube", "caption_foil": "a blue cube"} for k in range(n)]
    return make_benchmark(Manifest(name="pairs", kind="pair"), pd.DataFrame(rows), root)


def test_pair_item_asks_four_choices_in_both_orders(root):
    model = Scripted("right")
    result = evaluate(model, pair_bench(root), progress=False)
    assert model.calls == [
        ("caption", "red", ("a red cube", "a blue cube")),
        ("caption", "red", ("a blue cube", "a red cube")),
        ("caption", "blue", ("a blue cube", "a red cube")),
        ("caption", "blue", ("a red cube", "a blue cube")),
        ("image", ("red", "blue"), "a red cube"),
        ("image", ("blue", "red"), "a red cube"),
        ("image", ("blue", "red"), "a blue cube"),
        ("image", ("red", "blue"), "a blue cube"),
    ]
    assert {m: v.tolist() for m, v in result.outcomes.items()} == {
        "i2t": [1.0], "t2i": [1.0], "group": [1.0]}
    assert result.stats["first_option_rate"] == 0.5 and result.stats["order_agreement"] == 1.0
    assert result.chance["group"].tolist() == [1 / 16] and result.chance["i2t"].tolist() == [0.25]
    assert not result.ties["group"].any()


def test_always_first_is_half_right_per_choice(root):
    result = evaluate(Scripted("first"), pair_bench(root, n=2), progress=False)
    np.testing.assert_allclose(result.scores[0], [0.5, 0.5, 0.5, 0.5])
    assert result.outcomes["i2t"].tolist() == [0.25, 0.25]  # 0.5 * 0.5
    assert result.outcomes["group"].tolist() == [0.0625, 0.0625]  # 0.5 ** 4
    s = result.stats
    assert s["first_option_rate"] == 1.0 and s["order_agreement"] == 0.0
    assert s["accuracy_original_order"] == 1.0 and s["accuracy_swapped_order"] == 0.0
    assert s["asks"] == 16 and s["unparseable"] == 0


def test_mixed_answers_and_unparseable_counted_wrong(root):
    # order of asks: img0 (orig, swap), img1 (orig, swap), cap0 (orig, swap), cap1 (orig, swap)
    # right positions:  0, 1,            0, 1,            0, 1,            0, 1
    answers = [0, 1,      # img0: both right -> a = 1
               0, None,   # img1: right, unparseable (wrong) -> 0.5
               1, 1,      # cap0: wrong, right -> 0.5
               1, 0]      # cap1: wrong, wrong -> 0
    result = evaluate(Scripted(answers), pair_bench(root), progress=False)
    np.testing.assert_allclose(result.scores[0], [1.0, 0.5, 0.5, 0.0])
    assert result.outcomes["i2t"].tolist() == [0.5]
    assert result.outcomes["t2i"].tolist() == [0.0]
    assert result.outcomes["group"].tolist() == [0.0]
    s = result.stats
    assert s["unparseable"] == 1 and s["asks"] == 8
    assert s["first_option_rate"] == pytest.approx(3 / 7)  # answers 0 among 7 parsed
    assert s["order_agreement"] == pytest.approx(2 / 3)  # img0 and cap1 consistent; cap0 not


def test_choice_and_image_choice_items(root):
    choice = make_benchmark(Manifest(name="c", kind="choice"), pd.DataFrame(
        [{"item_id": "c0", "image": "green.png", "captions": ["a green cone", "a red cone"]}]),
        root)
    res = evaluate(Scripted("wrong"), choice, progress=False)
    assert res.outcomes == {"r1": pytest.approx(np.array([0.0]))}
    assert res.chance["r1"].tolist() == [0.5]
    img_choice = make_benchmark(Manifest(name="ic", kind="image_choice"), pd.DataFrame(
        [{"item_id": "i0", "caption": "a blue cube", "images": ["blue.png", "red.png"]}]), root)
    res = evaluate(Scripted([0, 0]), img_choice, progress=False)
    assert res.outcomes["r1"].tolist() == [0.5]


def test_k_above_one_and_wrong_family_are_refused(root):
    bench = make_benchmark(Manifest(name="c", kind="choice"), pd.DataFrame(
        [{"item_id": "c0", "image": "green.png",
          "captions": ["a green cone", "a red cone", "a blue cone"]}]), root)
    with pytest.raises(BenchmarkError, match="c0.*exactly 2 captions"):
        evaluate(Scripted("right"), bench, progress=False)

    class Dual:
        family = "dual"

    with pytest.raises(FoilbenchError, match="api_choice"):
        evaluate(Dual(), bench, progress=False)
