"""CallableDualEncoder: two functions evaluated like any dual encoder; bad outputs named."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.base import CallableDualEncoder, DualEncoder, family_of


def _images(n):
    return [Image.new("RGB", (4, 4), (40 * k, 0, 0)) for k in range(n)]


def test_scores_are_cosine_of_the_given_embeddings():
    model = CallableDualEncoder(lambda ims: np.array([[1.0, 0.0]] * len(ims)),
                                lambda txts: np.array([[3.0, 4.0]] * len(txts)), name="m")
    assert family_of(model) is DualEncoder
    im, tx = model.embed_images(_images(2)), model.embed_texts(["a", "b"])
    np.testing.assert_allclose(model.pair_scores(im, tx), [0.6, 0.6])  # 3 / 5 by hand
    assert model.info.spec == "m" and model.info.fingerprint == "callables:m:1"


def test_custom_pair_scores_and_version_change_the_fingerprint():
    dot = CallableDualEncoder(lambda ims: np.ones((len(ims), 2)),
                              lambda txts: np.full((len(txts), 2), 2.0), name="m", version="2",
                              pair_scores=lambda a, b: (a * b).sum(1), score_kind="dot")
    np.testing.assert_allclose(dot.pair_scores(np.ones((1, 2)), np.full((1, 2), 2.0)), [4.0])
    assert dot.info.fingerprint == "callables:m:2" and dot.info.score_kind == "dot"


@pytest.mark.parametrize("images,match", [
    (lambda ims: np.ones((len(ims) + 1, 2)), r"embed_images returned shape \(3, 2\) for 2"),
    (lambda ims: np.ones(len(ims)), r"expected \(2, d\)"),
    (lambda ims: np.full((len(ims), 2), np.nan), "NaN or infinite"),
])
def test_bad_outputs_are_named(images, match):
    model = CallableDualEncoder(images, lambda t: np.ones((len(t), 2)), name="bad-model")
    with pytest.raises(ModelError, match=match):
        model.embed_images(_images(2))


def test_refuses_what_is_not_a_function_or_unnamed():
    with pytest.raises(ModelError, match="embed_texts must be a function"):
        CallableDualEncoder(lambda x: x, "nope", name="m")
    with pytest.raises(ModelError, match="non-empty name"):
        CallableDualEncoder(lambda x: x, lambda x: x, name=" ")
