"""The built-in smoke-test model and benchmark: deterministic, valid, offline."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from foilbench.data.registry import resolve_benchmarks
from foilbench.data.tiny import tiny_benchmark
from foilbench.errors import ModelError
from foilbench.models.registry import resolve_model
from foilbench.models.tiny import TinyRandomEncoder


def test_tiny_random_is_deterministic_with_a_real_fingerprint():
    a, b = resolve_model("tiny-random", device="cpu"), TinyRandomEncoder()
    assert a.info.fingerprint == b.info.fingerprint
    assert a.info.fingerprint != TinyRandomEncoder(seed=1).info.fingerprint
    im = Image.new("RGB", (20, 30), (10, 200, 30))
    np.testing.assert_array_equal(a.embed_images([im]), b.embed_images([im]))
    emb = a.embed_texts(["a red circle", "a blue circle", "a red circle"])
    assert emb.shape == (3, 64)
    np.testing.assert_array_equal(emb[0], emb[2])
    assert not np.allclose(emb[0], emb[1])


def test_tiny_random_refuses_bad_dtype_and_device():
    with pytest.raises(ModelError, match="unknown dtype"):
        resolve_model("tiny-random", dtype="int8")
    with pytest.raises(ModelError, match="unknown device"):
        resolve_model("tiny-random", device="tpu")


def test_tiny_builtin_draws_once_and_validates(tmp_path, monkeypatch):
    monkeypatch.delenv("FOILBENCH_DATA_CACHE", raising=False)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path))
    [bench] = resolve_benchmarks("tiny-builtin")
    assert len(bench) == 12 and bench.kind == "pair" and bench.items["scene_id"].nunique() == 6
    first = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.png")}
    assert len(first) == 18
    again = tiny_benchmark()
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.png")} == first
    assert again.manifest.checksum == bench.manifest.checksum != ""
    # base and foil differ only by the shape's colour, and so do the captions
    row = bench.items.iloc[0]
    assert row["caption_base"].split()[-1] == row["caption_foil"].split()[-1]
    assert row["caption_base"] != row["caption_foil"]
