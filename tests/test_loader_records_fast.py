"""The CompoSET loader's items and validation's image list read the table's columns in one
pass each (``table_records``, ``Series.tolist``); the items and the problems found are
those of the row-by-row reads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from foilbench.data.loaders import composet

CAPS = json.dumps({t: {"base": f"a red {t} cube", "var": f"a blue {t} cube"}
                   for t in ("short", "medium", "long")})


def _variations() -> pd.DataFrame:
    """Ids and scenes as NumPy integers, Arrow-backed strings, a missing category, captions
    as JSON text and as a dict."""
    n = 5
    return pd.DataFrame({
        "id": np.arange(n, dtype=np.int64) + 10,
        "scene_id": np.array([1, 1, 2, 2, 3], dtype=np.int32),
        "edit_type": pd.Series(["swap", "replace", "swap", "add", "swap"], dtype="string"),
        "image_base": [f"img/b{i}.png" for i in range(n)],
        "image_var": pd.Series([f"img/v{i}.png" for i in range(n)], dtype="string"),
        "captions": [CAPS, json.loads(CAPS), CAPS, CAPS, CAPS],
        "category": pd.Series(["colour", None, "shape", "colour", np.nan], dtype=object),
    })


def test_pair_items_are_the_ones_from_to_dict(monkeypatch):
    tiers = ("short", "medium", "long")
    fast = composet.pair_items(_variations(), tiers, Path("variations.parquet"))
    monkeypatch.setattr(composet, "table_records", lambda f: f.to_dict(orient="records"))
    slow = composet.pair_items(_variations(), tiers, Path("variations.parquet"))
    pd.testing.assert_frame_equal(fast, slow, check_exact=True)
    for col in fast.columns:
        assert [type(v) for v in fast[col]] == [type(v) for v in slow[col]], col
    assert len(fast) == 15 and fast["item_id"].iloc[0] == "10/short"


@pytest.mark.parametrize("dtype", [object, "string"])
def test_validation_lists_each_image_once_whatever_the_column_type(tmp_path, dtype):
    from _core_helpers import solid, write_folder
    from foilbench.data.format import load_benchmark
    from foilbench.data.validate import validate

    for c in ("red", "blue"):
        solid(tmp_path / f"{c}.png", c)
    rows = [{"item_id": f"p{k}", "image_base": "red.png", "image_foil": "blue.png",
             "caption_base": "a red square", "caption_foil": "a blue square",
             "scene_id": f"s{k}"} for k in range(3)]
    bench = load_benchmark(write_folder(tmp_path, "pair", pd.DataFrame(rows)))
    items = bench.items.copy()
    items.loc[1, "image_foil"] = "gone.png"
    bench.items = items.astype({"image_base": dtype, "image_foil": dtype})
    assert bench.items["image_foil"].dtype == (np.dtype(object) if dtype is object
                                               else pd.StringDtype())
    problems = validate(bench)
    assert [(p.item_id, p.reason) for p in problems] == [("p1", "missing_image")]
