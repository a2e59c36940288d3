"""Validation of a benchmark table: every problem names the item (or row) and the field.

Checks: required columns for the kind, duplicate, empty or null item ids, empty captions, list
columns that are not lists (a string where a list belongs would otherwise be read letter by
letter) or hold fewer than two entries, image paths that are absolute or escape the root, and
the images themselves (optional, since text-only inspection must work without them; see
:mod:`foilbench.data.images`): inside the folder after resolving symlinks, present, within the
pixel limit (from the header), and, unless ``check_readable=False``, fully decodable.
An image a loader derives (embedded bytes, a crop: ``Benchmark.image_sources``) and has not
written yet is checked at its source instead of as a file.
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from foilbench.data.benchmark import Benchmark, Dropped
from foilbench.data.images import MISSING, ImageProblem, check_image
from foilbench.data.readahead import ReadAhead
from foilbench.data.table_checks import table_problems
from foilbench.display import safe_text
from foilbench.errors import BenchmarkError

SHOW_AT_MOST = 10
_INVISIBLE = {"Cc", "Cf", "Zs", "Zl", "Zp"}  # controls, format characters, separators
PROBLEM_LIMIT = 400  # characters of one printed problem (item ids, captions are data)


@dataclass(frozen=True)
class Problem:
    item_id: str | None
    field: str
    reason: str  # short machine-readable reason, e.g. "missing_image"
    message: str
    row: int | None = None  # the table row (0-based), for items without a usable id

    def __str__(self) -> str:
        if self.item_id is not None:
            where = f"item {self.item_id!r}"
        else:
            where = f"row {self.row}" if self.row is not None else "table"
        return f"{where}, field {self.field!r}: {self.message}"

    @property
    def is_table_level(self) -> bool:
        return self.item_id is None and self.row is None

    def to_dict(self) -> dict:
        return {"item_id": self.item_id, "row": self.row, "field": self.field,
                "reason": self.reason, "message": self.message}


@functools.lru_cache(maxsize=1 << 16)
def _escapes_root(rel: str) -> bool:
    if ".." not in rel:  # no step up: only an absolute or drive path escapes
        return rel.replace("\\", "/").startswith("/") or (len(rel) > 1 and rel[1] == ":")
    p = PurePosixPath(rel.replace("\\", "/"))
    if p.is_absolute() or (len(rel) > 1 and rel[1] == ":"):
        return True
    depth = 0
    for part in p.parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return True
    return False


def _is_null(value: object) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or an array: not a null
        return False


def _item_id(value: object) -> str | None:
    """The id as text, or None when it is null (None, NaN, pandas NA)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return str(value)


def validate(bench: Benchmark, *, check_images: bool = True,
             check_readable: bool = False) -> list[Problem]:
    """All problems found in ``bench``; an empty list means valid. ``check_readable`` decodes
    every image (else only headers are read: position, existence and size)."""
    spec = bench.spec
    items = bench.items
    missing_cols = [c for c in spec.required if c not in items.columns]
    if missing_cols:
        return [Problem(None, c, "missing_column",
                        f"column required by kind {spec.name!r} is missing "
                        f"(have: {', '.join(map(str, items.columns))})") for c in missing_cols]
    problems: list[Problem] = [Problem(*found) for found in table_problems(bench)]
    ids = [_item_id(v) for v in items["item_id"].tolist()]
    for dup_id, n in Counter(i for i in ids if i is not None).items():
        if n > 1:
            problems.append(Problem(dup_id, "item_id", "duplicate_id",
                                    f"duplicate item id ({n} rows)"))
    image_status = _image_statuses(bench, spec) if check_images and check_readable else {}
    checked = list(dict.fromkeys((*spec.text_columns, *spec.text_list_columns,
                                  *spec.image_columns, *spec.image_list_columns)))
    rows = _column_rows(items, checked)
    for row_no, (row, item_id) in enumerate(zip(rows, ids, strict=True)):
        rec = dict(zip(checked, row, strict=True))
        if item_id is None:
            problems.append(Problem(None, "item_id", "null_id", "item_id is null", row_no))
            item_id = None
        elif not item_id.strip() or item_id.lower() in {"nan", "none"}:
            problems.append(Problem(item_id, "item_id", "empty_id", "empty item id", row_no))
        add = _adder(problems, item_id, row_no)
        for col in spec.text_columns:
            _check_text(add, col, rec[col])
        for col in spec.text_list_columns:
            texts = rec[col]
            if not _check_list(add, col, texts, "captions"):
                continue
            for k, t in enumerate(texts):
                _check_text(add, f"{col}[{k}]", t)
        refs: list[tuple[str, object]] = [(c, rec[c]) for c in spec.image_columns]
        for col in spec.image_list_columns:
            paths = rec[col]
            if _check_list(add, col, paths, "image paths"):
                refs.extend((f"{col}[{k}]", p) for k, p in enumerate(paths))
        for col, rel in refs:
            if rel is not None and not isinstance(rel, str) and not _is_null(rel):
                add(col, "path_not_text", f"image path must be text, got "
                                          f"{type(rel).__name__} {safe_text(rel, 40)}")
                continue
            if not isinstance(rel, str) or not rel.strip():
                add(col, "empty_path", "empty image path")
                continue
            if "\x00" in rel:
                add(col, "nul_in_path", f"image path {safe_text(rel)!r} holds a NUL byte")
                continue
            if _escapes_root(rel):
                add(col, "path_escapes_root", f"image path {rel!r} escapes the benchmark root")
                continue
            if check_images:
                if rel not in image_status:
                    image_status[rel] = _image_check(bench, rel, check_readable)
                found = image_status[rel]
                if found is not None:
                    add(col, found.reason, found.message)
    return problems


def _image_statuses(bench: Benchmark, spec) -> dict[str, ImageProblem | None]:
    """Every well-formed image path's problem (decoding each in full), on the decode threads
    the engine uses: PIL releases the GIL while it decodes and resizes, so on several cores
    validation (which, in a run, is the engine's own decode: :mod:`foilbench.data.images`)
    takes a fraction of the time. Each thread runs in the caller's context, so a run's pixel
    check and remembered file hashes reach it. The next files are read from disk while these
    decode (:mod:`foilbench.data.readahead`)."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    from foilbench.limits import decode_workers, max_image_pixels

    rels: dict[str, None] = {}
    for col in spec.image_columns:
        # tolist: the column's cells as Python objects in one pass (an Arrow-backed column
        # iterated cell by cell boxes each one slowly)
        rels.update(dict.fromkeys(v for v in bench.items[col].tolist() if isinstance(v, str)))
    for col in spec.image_list_columns:
        for paths in bench.items[col]:
            if isinstance(paths, (list, tuple, np.ndarray)):
                rels.update(dict.fromkeys(v for v in paths if isinstance(v, str)))
    todo = [r for r in rels if r.strip() and "\x00" not in r and not _escapes_root(r)]
    base = bench.root.resolve()
    folders: dict[str, Path] = {}  # each image folder resolved once in this pass
    top = os.path.join(bench.root, "")  # (the paths are only opened: strings will do)
    ahead = ReadAhead([top + r for r in todo])  # disk reads overlap the decoding
    limit = max_image_pixels() if todo else None  # read once for the pass

    def check(k: int) -> ImageProblem | None:
        ahead.reached(k)
        return _image_check(bench, todo[k], True, base, folders, limit)

    workers = decode_workers()
    if workers < 2 or len(todo) < 2:
        return {r: check(k) for k, r in enumerate(todo)}
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="foilbench-check") as pool:
        found = pool.map(lambda k: context.copy().run(check, k), range(len(todo)))
        return dict(zip(todo, found, strict=True))


def _image_check(bench: Benchmark, rel: str, check_readable: bool,
                 resolved_root: Path | None = None,
                 resolved_dirs: dict[str, Path] | None = None,
                 max_pixels: int | None = None) -> ImageProblem | None:
    """The file's problem; a derived image (not written yet) is checked at its source."""
    found = check_image(bench.root, rel, decode=check_readable, resolved_root=resolved_root,
                        resolved_dirs=resolved_dirs, max_pixels=max_pixels)
    source = (bench.image_sources or {}).get(rel)
    if found is None or found.reason != MISSING or source is None:
        return found
    reason = source.problem(check_readable)
    return ImageProblem(reason, source.describe(reason)) if reason else None


def _column_rows(items: pd.DataFrame, columns: list[str]) -> list[tuple]:
    """The cells of ``columns``, row by row, as ``itertuples`` gives them (no boxing; the
    first of duplicate names), read a column at a time: iterating a pyarrow-backed string
    column cell by cell was most of validation's own time."""
    if not columns:
        return [()] * len(items)
    first: dict[object, int] = {}
    for k, name in enumerate(items.columns):
        first.setdefault(name, k)
    return list(zip(*(_cells(items.iloc[:, first[c]]) for c in columns), strict=True))


def _cells(column: pd.Series) -> list:
    """A column's cells as iterating it gives them; ``tolist`` (one call) where that is the
    same: object columns (the objects themselves) and strings (``str`` or the missing value)."""
    if column.dtype == np.dtype(object) or isinstance(column.dtype, pd.StringDtype):
        return column.tolist()
    return list(column)


def _adder(problems: list[Problem], item_id: str | None, row: int):
    def add(field: str, reason: str, message: str) -> None:
        problems.append(Problem(item_id, field, reason, message, row))
    return add


def _check_text(add, col: str, text: object) -> None:
    if isinstance(text, str):
        if not visible(text):
            add(col, "empty_caption", "empty caption" if not text.strip() else
                f"empty caption (only invisible characters: {safe_text(text, 40)})")
    elif text is None or (not hasattr(text, "__len__") and pd.isna(text)):
        add(col, "empty_caption", "empty caption (null)")
    else:
        add(col, "not_text", f"expected text, got {type(text).__name__} {text!r:.60}")


def visible(text: str) -> bool:
    """Whether ``text`` shows anything: False when it holds only whitespace, format characters
    (zero-width space U+200B, joiners, bidi marks) and controls, which a tokenizer drops."""
    import unicodedata

    return any(not ch.isspace() and unicodedata.category(ch) not in _INVISIBLE
               for ch in text)


def _check_list(add, col: str, values: object, what: str) -> bool:
    if isinstance(values, str):
        add(col, "not_a_list", f"expected a list of {what} (positive first), got the string "
                               f"{values!r:.60}; a string is not split into candidates")
        return False
    if values is None or not isinstance(values, (list, tuple, np.ndarray)):
        shown = "null" if values is None else f"{type(values).__name__} {values!r:.60}"
        add(col, "not_a_list", f"expected a list of {what} (positive first), got {shown}")
        return False
    if len(values) < 2:
        add(col, "too_few_candidates",
            f"needs a positive and at least one negative, got {len(values)}")
        return False
    return True


def format_problems(problems: list[Problem], limit: int = SHOW_AT_MOST) -> str:
    """The problems, one line each: outside strings in them escaped and each line capped
    (:func:`foilbench.display.safe_text`); the full messages stay in ``to_dict``."""
    counts = Counter(p.reason for p in problems)
    head = "; ".join(f"{n} {reason}" for reason, n in counts.most_common())
    lines = [f"{len(problems)} problem(s) ({head}):"]
    lines += [f"  - {safe_text(p, PROBLEM_LIMIT)}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"  ... and {len(problems) - limit} more")
    return "\n".join(lines)


def apply_validation(bench: Benchmark, *, on_invalid: str = "raise",
                     check_images: bool = True) -> Benchmark:
    """Refuse an invalid benchmark, or (``on_invalid="drop"``) drop bad items and record it."""
    if on_invalid not in {"raise", "drop"}:
        raise ValueError("on_invalid must be 'raise' or 'drop'")
    problems = validate(bench, check_images=check_images, check_readable=check_images)
    if not problems:
        return bench
    table_level = [p for p in problems if p.is_table_level]
    if on_invalid == "raise" or table_level:
        raise BenchmarkError(f"benchmark {bench.name!r} at {bench.root} is invalid: "
                             + format_problems(problems)
                             + ("" if table_level else
                                "\n(pass --allow-partial to drop these items and continue)"))
    bad_ids = {p.item_id for p in problems if p.row is None}  # duplicates: every copy goes
    bad_rows = {p.row for p in problems if p.row is not None}
    ids = pd.Series([_item_id(v) for v in bench.items["item_id"].tolist()], dtype=object)
    keep = ~(ids.isin(bad_ids) | pd.Series(range(len(ids))).isin(bad_rows))
    keep = keep.to_numpy()
    by_reason = Counter(p.reason for p in problems)
    bench.items = bench.items[keep].reset_index(drop=True)
    bench.dropped = Dropped(n=int((~keep).sum()), by_reason=dict(by_reason), problems=problems)
    bench.manifest.partial = True
    return bench
