"""Validation of a benchmark table: every problem names the item and the field.

Checks: required columns for the kind, duplicate or empty item ids, empty captions, list
columns with fewer than two entries, image paths that are absolute or escape the root,
missing or unreadable images (optional, since text-only inspection must work without them).
An image a loader derives (embedded bytes, a crop: ``Benchmark.image_sources``) and has not
written yet is checked at its source instead of as a file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from foilbench.data.format import Benchmark, Dropped
from foilbench.errors import BenchmarkError

SHOW_AT_MOST = 10


@dataclass(frozen=True)
class Problem:
    item_id: str | None
    field: str
    reason: str  # short machine-readable reason, e.g. "missing_image"
    message: str

    def __str__(self) -> str:
        where = f"item {self.item_id!r}" if self.item_id is not None else "table"
        return f"{where}, field {self.field!r}: {self.message}"

    def to_dict(self) -> dict:
        return {"item_id": self.item_id, "field": self.field, "reason": self.reason,
                "message": self.message}


def _escapes_root(rel: str) -> bool:
    p = PurePosixPath(rel.replace("\\", "/"))
    if p.is_absolute() or (len(rel) > 1 and rel[1] == ":"):
        return True
    depth = 0
    for part in p.parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return True
    return False


def _image_problem(root: Path, rel: str, check_readable: bool) -> str | None:
    path = root / rel
    if not path.is_file():
        return "missing_image"
    if check_readable:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(path) as im:
                im.verify()
        except (UnidentifiedImageError, OSError, SyntaxError):
            return "unreadable_image"
    return None


def validate(bench: Benchmark, *, check_images: bool = True,
             check_readable: bool = False) -> list[Problem]:
    """All problems found in ``bench``; an empty list means valid."""
    spec = bench.spec
    items = bench.items
    missing_cols = [c for c in spec.required if c not in items.columns]
    if missing_cols:
        return [Problem(None, c, "missing_column",
                        f"column required by kind {spec.name!r} is missing "
                        f"(have: {', '.join(map(str, items.columns))})") for c in missing_cols]
    problems: list[Problem] = []
    ids = items["item_id"].astype(str).tolist()
    for item_id, n in Counter(ids).items():
        if n > 1:
            problems.append(Problem(item_id, "item_id", "duplicate_id",
                                    f"duplicate item id ({n} rows)"))
    image_status: dict[str, str | None] = {}
    for row, item_id in zip(items.itertuples(index=False), ids, strict=True):
        rec = row._asdict()
        if not item_id or item_id.lower() in {"nan", "none"}:
            problems.append(Problem(item_id, "item_id", "empty_id", "empty item id"))
        for col in spec.text_columns:
            _check_text(problems, item_id, col, rec[col])
        for col in spec.text_list_columns:
            texts = rec[col]
            if not _check_list(problems, item_id, col, texts):
                continue
            for k, t in enumerate(texts):
                _check_text(problems, item_id, f"{col}[{k}]", t)
        refs: list[tuple[str, object]] = [(c, rec[c]) for c in spec.image_columns]
        for col in spec.image_list_columns:
            paths = rec[col]
            if _check_list(problems, item_id, col, paths):
                refs.extend((f"{col}[{k}]", p) for k, p in enumerate(paths))
        for col, rel in refs:
            if not isinstance(rel, str) or not rel.strip():
                problems.append(Problem(item_id, col, "empty_path", "empty image path"))
                continue
            if _escapes_root(rel):
                problems.append(Problem(item_id, col, "path_escapes_root",
                                        f"image path {rel!r} escapes the benchmark root"))
                continue
            if check_images:
                if rel not in image_status:
                    image_status[rel] = _image_problem(bench.root, rel, check_readable)
                    source = (bench.image_sources or {}).get(rel)
                    if image_status[rel] == "missing_image" and source is not None:
                        image_status[rel] = _source_problem(source, check_readable)
                reason = image_status[rel]
                if reason:
                    problems.append(Problem(item_id, col, _reason(reason),
                                            _image_message(bench, rel, reason)))
    return problems


def _source_problem(source, check_readable: bool) -> str | None:
    """A derived image (not written yet) is checked at its source: ``"source:<reason>"``."""
    reason = source.problem(check_readable)
    return f"source:{reason}" if reason else None


def _reason(status: str) -> str:
    return status.removeprefix("source:")


def _image_message(bench: Benchmark, rel: str, status: str) -> str:
    if status.startswith("source:"):
        return bench.image_sources[rel].describe(_reason(status))
    what = "missing" if status == "missing_image" else "unreadable"
    return f"image {what}: {bench.root / rel}"


def _check_text(problems: list[Problem], item_id: str, col: str, text: object) -> None:
    if not isinstance(text, str) or not text.strip():
        problems.append(Problem(item_id, col, "empty_caption", "empty caption"))


def _check_list(problems: list[Problem], item_id: str, col: str, values: object) -> bool:
    if values is None or not hasattr(values, "__len__") or isinstance(values, str):
        problems.append(Problem(item_id, col, "not_a_list", "expected a list (positive first)"))
        return False
    if len(values) < 2:
        problems.append(Problem(item_id, col, "too_few_candidates",
                                f"needs a positive and at least one negative, got {len(values)}"))
        return False
    return True


def format_problems(problems: list[Problem], limit: int = SHOW_AT_MOST) -> str:
    counts = Counter(p.reason for p in problems)
    head = "; ".join(f"{n} {reason}" for reason, n in counts.most_common())
    lines = [f"{len(problems)} problem(s) ({head}):"]
    lines += [f"  - {p}" for p in problems[:limit]]
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
    table_level = [p for p in problems if p.item_id is None]
    if on_invalid == "raise" or table_level:
        raise BenchmarkError(f"benchmark {bench.name!r} at {bench.root} is invalid: "
                             + format_problems(problems)
                             + ("" if table_level else
                                "\n(pass --allow-partial to drop these items and continue)"))
    bad = {p.item_id for p in problems}
    keep = ~bench.items["item_id"].astype(str).isin(bad)
    by_reason = Counter(p.reason for p in problems)
    bench.items = bench.items[keep].reset_index(drop=True)
    bench.dropped = Dropped(n=int((~keep).sum()), by_reason=dict(by_reason), problems=problems)
    bench.manifest.partial = True
    return bench
