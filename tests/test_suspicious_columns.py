"""The suspicious-items scan reads whole columns (:mod:`foilbench.data.suspicious`). Pinned
against the item-by-item scan it replaced (written out here as the reference): the same
problems, in the same order, on seeded random tables of each kind with repeated captions,
repeated paths, files with the same bytes under two names, missing files, null and
non-text cells, and ids of every sort."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from foilbench.data.benchmark import Benchmark, Manifest
from foilbench.data.suspicious import suspicious
from foilbench.data.validate import Problem, _escapes_root, _item_id
from foilbench.hashing import sha256_file


def _reference(bench: Benchmark, check_images: bool, records=None) -> list[Problem]:
    """The former scan: one record per item (``records(frame)``; pandas' own by default),
    its captions then its images. ``bench/bench_suspicious.py`` times it as the before."""
    spec, items = bench.spec, bench.items
    found, seen = [], {}

    def as_list(value):
        return list(value) if isinstance(value, (list, tuple, np.ndarray)) else []

    def repeats(values):
        return len(values) > 1 and len(set(values)) < len(values)

    def digest(rel):
        if rel not in seen:
            try:
                seen[rel] = None if _escapes_root(rel) else "sha256:" + sha256_file(
                    bench.image_path(rel))
            except (OSError, ValueError):
                seen[rel] = None
        return seen[rel]

    table = items[list(spec.required)]
    rows = records(table) if records else table.to_dict(orient="records")
    for row_no, rec in enumerate(rows):
        item_id = _item_id(rec["item_id"])
        texts = [("+".join(spec.text_columns), [rec[c] for c in spec.text_columns])]
        texts += [(c, as_list(rec[c])) for c in spec.text_list_columns]
        for col, values in texts:
            if repeats([v for v in values if isinstance(v, str)]):
                found.append(Problem(item_id, col, "identical_captions",
                                     "two captions of this item are identical: a model can "
                                     "only tie on it", row_no))
        images = [("+".join(spec.image_columns), [rec[c] for c in spec.image_columns])]
        images += [(c, as_list(rec[c])) for c in spec.image_list_columns]
        for col, refs in images:
            refs = [r for r in refs if isinstance(r, str)]
            same = repeats(refs)
            if not same and check_images and len(refs) > 1:
                same = repeats([digest(r) or r for r in refs])
            if same:
                found.append(Problem(item_id, col, "identical_images",
                                     "two images of this item are identical: a model can "
                                     "only tie on it", row_no))
    return found


def _folder(root):
    """a.png, b.png (different), a-copy.png (a's bytes); x.png is missing."""
    Image.new("RGB", (4, 4), "red").save(root / "a.png")
    Image.new("RGB", (4, 4), "blue").save(root / "b.png")
    shutil.copyfile(root / "a.png", root / "a-copy.png")
    return ["a.png", "b.png", "a-copy.png", "x.png", "../out.png", None, float("nan"), 7]


CAPTIONS = ["a red cube", "a blue cube", "a red cube", "", None, float("nan"), 3]


def _table(kind: str, rng: np.random.Generator, paths: list) -> pd.DataFrame:
    n = 60
    pick = lambda pool: pool[int(rng.integers(len(pool)))]  # noqa: E731
    ids = [pick(["i", None, float("nan"), 5]) if k % 7 == 0 else f"i{k}" for k in range(n)]
    cols: dict[str, list] = {"item_id": ids}
    if kind == "pair":
        for c in ("image_base", "image_foil"):
            cols[c] = [pick(paths) for _ in range(n)]
        for c in ("caption_base", "caption_foil"):
            cols[c] = [pick(CAPTIONS) for _ in range(n)]
    elif kind == "choice":
        cols["image"] = [pick(paths) for _ in range(n)]
        cols["captions"] = [[pick(CAPTIONS) for _ in range(int(rng.integers(0, 4)))]
                            if k % 9 else pick(["a red cube", None]) for k in range(n)]
    else:  # image_choice
        cols["caption"] = [pick(CAPTIONS) for _ in range(n)]
        cols["images"] = [[pick(paths) for _ in range(int(rng.integers(0, 4)))]
                          if k % 9 else pick(["a.png", None]) for k in range(n)]
    return pd.DataFrame(cols)


@pytest.mark.parametrize("kind", ["pair", "choice", "image_choice"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_column_scan_finds_what_the_item_scan_found(tmp_path, kind, seed):
    paths = _folder(tmp_path)
    items = _table(kind, np.random.default_rng(seed), paths)
    bench = Benchmark(Manifest(name="s", kind=kind), items, tmp_path)
    for check_images in (True, False):
        got = suspicious(bench, check_images=check_images)
        want = _reference(bench, check_images) + [
            p for p in got if p.reason == "identical_in_context"]
        assert [p.to_dict() for p in got] == [p.to_dict() for p in want]
    planted = {"pair": {"identical_captions", "identical_images"},  # one image, one caption:
               "choice": {"identical_captions"}, "image_choice": {"identical_images"}}[kind]
    assert planted <= {p.reason for p in suspicious(bench)}  # the case is not vacuous


def test_same_bytes_under_two_names_is_found_only_when_files_are_read(tmp_path):
    _folder(tmp_path)
    items = pd.DataFrame({"item_id": ["p", "q"], "image_base": ["a.png", "a.png"],
                          "image_foil": ["a-copy.png", "b.png"],
                          "caption_base": ["a red cube", "a red cube"],
                          "caption_foil": ["a blue cube", "a red cube"]})
    bench = Benchmark(Manifest(name="s", kind="pair"), items, tmp_path)
    assert [(p.item_id, p.field, p.reason, p.row) for p in suspicious(bench)] == [
        ("p", "image_base+image_foil", "identical_images", 0),
        ("q", "caption_base+caption_foil", "identical_captions", 1)]
    assert [(p.item_id, p.reason) for p in suspicious(bench, check_images=False)] == [
        ("q", "identical_captions")]
