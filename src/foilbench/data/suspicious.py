"""Items that validate but make numbers meaningless: two captions or two images of one item
that are the same, and captions CLIP can only tie on (:mod:`foilbench.data.context_check`).

``inspect`` lists these as problems; a run prints them as warnings and stores them with its
notes (:func:`foilbench.runner.notes.data_note`). A run scans every item, so the scan reads
each column once and compares the fixed columns of all items at once (a whole-column
comparison per pair of columns); only list columns (a caption list, an image list) are
looked at item by item. The problems come out in the order an item-by-item scan gives:
by item, its captions before its images, columns in the kind's order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from foilbench.data.benchmark import Benchmark
from foilbench.data.validate import Problem, _escapes_root, _item_id
from foilbench.hashing import sha256_file
from foilbench.table_records import table_columns

SAME_CAPTIONS = ("identical_captions",
                 "two captions of this item are identical: a model can only tie on it")
SAME_IMAGES = ("identical_images",
               "two images of this item are identical: a model can only tie on it")


def suspicious(bench: Benchmark, *, check_images: bool = True) -> list[Problem]:
    """Items whose two captions or two images are the same (by text; by path, and with
    ``check_images`` by file bytes), which a model can only tie on, then the items
    :func:`foilbench.data.context_check.past_context_problems` finds."""
    spec, items = bench.spec, bench.items
    if any(c not in items.columns for c in spec.required):
        return []
    cells = dict(zip(spec.required, table_columns(items, list(spec.required)), strict=True))
    n = len(items)
    digests: dict[str, str | None] = {}

    def same_bytes(refs: Sequence[str]) -> bool:
        return _repeats([_digest(bench, r, digests) or r for r in refs])

    flagged: list[tuple[tuple[str, str], str, np.ndarray]] = [
        (SAME_CAPTIONS, "+".join(spec.text_columns),
         _fixed_repeats([cells[c] for c in spec.text_columns], n))]
    flagged += [(SAME_CAPTIONS, c, _list_repeats(cells[c], None)) for c in spec.text_list_columns]
    flagged.append((SAME_IMAGES, "+".join(spec.image_columns), _fixed_repeats(
        [cells[c] for c in spec.image_columns], n, same_bytes if check_images else None)))
    flagged += [(SAME_IMAGES, c, _list_repeats(cells[c], same_bytes if check_images else None))
                for c in spec.image_list_columns]
    found = []
    hit = np.logical_or.reduce([flags for *_, flags in flagged]) if n else np.zeros(0, bool)
    for row_no in np.flatnonzero(hit).tolist():
        item_id = _item_id(cells["item_id"][row_no])
        found += [Problem(item_id, col, reason, message, row_no)
                  for (reason, message), col, flags in flagged if flags[row_no]]
    from foilbench.data.context_check import past_context_problems

    return found + past_context_problems(bench, Problem)


def _fixed_repeats(columns: list[list], n: int,
                   same_bytes: Callable[[Sequence[str]], bool] | None = None) -> np.ndarray:
    """Per item: do two of ``columns`` hold the same text (cells that are not text left
    aside)? With ``same_bytes``, items with two or more texts and no repeated one are also
    asked whether two name files with the same bytes."""
    if len(columns) < 2:
        return np.zeros(n, bool)
    # the text cells only (anything else as None): a 1-D array whatever the other cells hold
    values = [np.array([v if isinstance(v, str) else None for v in col] + [None], object)[:-1]
              for col in columns]
    texts = [np.fromiter((isinstance(v, str) for v in col), bool, n) for col in columns]
    same = np.zeros(n, bool)
    for i in range(len(columns)):
        for j in range(i + 1, len(columns)):
            both = np.flatnonzero(texts[i] & texts[j])
            same[both] |= values[i][both] == values[j][both]
    if same_bytes is not None:
        for row_no in np.flatnonzero(~same & (np.sum(texts, axis=0) > 1)).tolist():
            same[row_no] = same_bytes([v[row_no] for v, t in zip(values, texts, strict=True)
                                       if t[row_no]])
    return same


def _list_repeats(column: list, same_bytes: Callable[[Sequence[str]], bool] | None
                  ) -> np.ndarray:
    """Per item: does its list (of captions or image paths) repeat a text; with
    ``same_bytes``, or name two files with the same bytes?"""
    out = np.zeros(len(column), bool)
    for row_no, value in enumerate(column):
        texts = [v for v in _as_list(value) if isinstance(v, str)]
        same = _repeats(texts)
        if not same and same_bytes is not None and len(texts) > 1:
            same = same_bytes(texts)
        out[row_no] = same
    return out


def _as_list(value: object) -> list:
    return list(value) if isinstance(value, (list, tuple, np.ndarray)) else []


def _repeats(values: list) -> bool:
    return len(values) > 1 and len(set(values)) < len(values)


def _digest(bench: Benchmark, rel: str, seen: dict[str, str | None]) -> str | None:
    """sha256 of an image file's bytes (None when it cannot be read), once per path."""
    if rel not in seen:
        try:
            seen[rel] = "sha256:" + sha256_file(bench.image_path(rel)) if not _escapes_root(
                rel) else None
        except (OSError, ValueError):  # unreadable, not a regular file, a NUL in the name
            seen[rel] = None
    return seen[rel]
