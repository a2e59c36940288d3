"""The benchmark folder a ``foilbench review`` command was given, checked before anything
opens it. The folder most often given by mistake is a suite folder, one level above the
benchmarks: the error names it and, so the next try is right, the benchmarks inside that this
command can review (pair benchmarks for the pair review, Auto-Comp ones for its studies)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

MANIFEST_FILE = "manifest.json"  # foilbench.data.format's, not imported: the CLI starts fast

def checked_bench_dir(path: Path, fits: Callable[[Path], bool], what: str,
                      command: str) -> Path:
    """``path`` when it holds a manifest; else one :class:`ReviewError` naming it and the
    folders inside for which ``fits`` holds (``what`` they are, and ``command`` on the first
    as the thing to try)."""
    from foilbench.review.units import ReviewError

    if not (path / MANIFEST_FILE).is_file():
        found = sorted(p.parent.name for p in path.glob(f"*/{MANIFEST_FILE}")
                       if fits(p.parent))
        hint = (f"; it holds the {what} {', '.join(found)}: try "
                f"`{command} {path / found[0]}`") if found else ""
        raise ReviewError(f"{path} is not a benchmark folder (no {MANIFEST_FILE}){hint}")
    return path


def has_columns(folder: Path, columns: Iterable[str]) -> bool:
    """Whether the items table of the benchmark in ``folder`` has every one of ``columns``
    (only its schema is read); False when there is no readable table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from foilbench.data.format import ITEMS_FILE

    try:
        names = set(pq.read_schema(folder / ITEMS_FILE).names)
    except (OSError, pa.ArrowException):
        return False
    return set(columns) <= names
