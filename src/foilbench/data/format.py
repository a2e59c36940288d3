"""A benchmark is data: ``manifest.json`` + ``items.parquet`` + image files under one root.

Image paths in the table are relative to the root and may not escape it. Loading validates
everything (see :mod:`foilbench.data.validate`) and never drops an item silently: it refuses,
or with ``on_invalid="drop"`` drops and records how many and why in ``Benchmark.dropped``.

The manifest carries ``format_version`` (:data:`FORMAT_VERSION`), written by
:func:`write_benchmark`, the one writer every builder goes through. A manifest without it was
written before the field existed (version 0) and reads unchanged; a newer one is refused with
both versions named, since a newer format may mean something this code would misread.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from foilbench.data.benchmark import (
    FORMAT_VERSION,
    MANIFEST_FILE,
    Benchmark,
    Dropped,
    Manifest,
    canonical_table_bytes,
    check_format_version,
)
from foilbench.data.checksum_index import verify_checksum
from foilbench.data.kinds import METADATA_COLUMNS
from foilbench.data.validate import apply_validation
from foilbench.errors import BenchmarkError
from foilbench.hashing import sha256_bytes, sha256_file, sha256_text
from foilbench.jsonio import write_json
from foilbench.kinds import KINDS, ItemKind

ITEMS_FILE = "items.parquet"

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "Dropped",
    "canonical_table_bytes",
    "check_format_version",
    "KINDS",
    "METADATA_COLUMNS",
    "Benchmark",
    "Manifest",
    "load_benchmark",
    "write_benchmark",
    "sha256_bytes",
    "sha256_file",
    "sha256_text",
]


def normalise_lists(items: pd.DataFrame, spec: ItemKind) -> pd.DataFrame:
    """Parquet gives numpy arrays for list columns; make them plain lists. Anything that is not
    a sequence (a string above all, which ``list`` would split into letters) is kept as it is,
    so validation refuses it naming the item and the column."""
    items = items.copy()
    for col in (*spec.image_list_columns, *spec.text_list_columns):
        if col in items.columns:
            items[col] = pd.Series([list(v) if isinstance(v, (list, tuple, np.ndarray)) else v
                                    for v in items[col]], index=items.index, dtype=object)
    return items


def make_benchmark(
    manifest: Manifest,
    items: pd.DataFrame,
    root: str | Path,
    *,
    on_invalid: str = "raise",
    check_images: bool = True,
) -> Benchmark:
    """Validate a table against its kind and wrap it; the path every loader goes through.

    Args:
        manifest: The benchmark's manifest (its ``kind`` says which columns are required).
        items: One row per item (docs/format.md); image paths relative to ``root``.
        root: The folder the image paths are relative to.
        on_invalid: ``"raise"`` refuses a benchmark with any invalid item; ``"drop"``
            removes them (counted in ``Benchmark.dropped``) and marks it partial.
        check_images: Open and decode every image (False: text-only checks).

    Returns:
        The validated :class:`Benchmark`.

    Raises:
        BenchmarkError: An invalid item with ``on_invalid="raise"``, naming item and field.
    """
    items = normalise_lists(items.reset_index(drop=True), KINDS[manifest.kind])
    bench = Benchmark(manifest=manifest, items=items, root=Path(root))
    return apply_validation(bench, on_invalid=on_invalid, check_images=check_images)


def read_benchmark_folder(path: str | Path) -> Benchmark:
    """Read a foilbench-format folder WITHOUT validating its items (for inspection tools that
    must count and report every row); :func:`load_benchmark` is the validating entry point."""
    root = Path(path)
    if not root.is_dir():
        raise BenchmarkError(f"benchmark folder not found: {root}")
    mpath = root / MANIFEST_FILE
    ipath = root / ITEMS_FILE
    for p in (mpath, ipath):
        if not p.exists():
            raise BenchmarkError(f"{root}: missing {p.name} (a foilbench benchmark folder holds "
                                 f"{MANIFEST_FILE} and {ITEMS_FILE})")
    manifest = Manifest.from_dict(read_manifest_json(mpath), where=str(mpath))
    try:
        items = pd.read_parquet(ipath)
    except Exception as e:  # pyarrow raises several types for corrupt files
        raise BenchmarkError(f"{ipath}: cannot read Parquet ({e})") from None
    declared = manifest.extras.get("n_items")
    if declared is not None and declared != len(items):
        raise BenchmarkError(f"{mpath}: n_items says {declared} but {ipath.name} holds "
                             f"{len(items)} rows (a truncated or replaced table?); write "
                             "the benchmark again with foilbench, or correct n_items")
    items = normalise_lists(items.reset_index(drop=True), KINDS[manifest.kind])
    return Benchmark(manifest=manifest, items=items, root=root)


def read_manifest_json(path: Path) -> Any:
    """The JSON in ``path``: UTF-8 (RFC 8259), or UTF-16/32 as its byte order mark or its
    first bytes say (``json.loads`` on bytes detects them); any other encoding is refused in
    one sentence naming the file. Only a regular file is read."""
    from foilbench.regular_files import open_regular

    try:
        with open_regular(path) as f:
            data = f.read()
    except OSError as e:
        raise BenchmarkError(f"{path}: cannot read the manifest ({e.strerror or e})") from None
    try:
        return json.loads(data)
    except UnicodeDecodeError as e:
        raise BenchmarkError(f"{path}: not UTF-8 text (byte {e.start} is {data[e.start]:#04x}); "
                             "write the manifest as UTF-8") from None
    except json.JSONDecodeError as e:
        raise BenchmarkError(f"{path}: not valid JSON ({e})") from None


def load_benchmark(
    path: str | Path, *, on_invalid: str = "raise", check_images: bool = True
) -> Benchmark:
    """Read and validate a foilbench-format folder.

    With ``check_images`` the manifest's checksum is verified against the files first
    (:func:`foilbench.data.checksum_index.verify_checksum`): an edited benchmark is keyed by
    its contents and carries a ``checksum_note``.

    Args:
        path: The folder holding ``manifest.json``, ``items.parquet`` and the images.
        on_invalid: ``"raise"`` or ``"drop"`` (see :func:`make_benchmark`).
        check_images: Verify the checksum and decode every image.

    Returns:
        The validated :class:`Benchmark`.

    Raises:
        BenchmarkError: A missing or malformed manifest or table, or an invalid item.
    """
    raw = read_benchmark_folder(path)
    note = checked_checksum(raw) if check_images else None
    bench = make_benchmark(raw.manifest, raw.items, raw.root, on_invalid=on_invalid,
                           check_images=check_images)
    bench.checksum_note = note
    return bench


def checked_checksum(bench: Benchmark) -> str | None:
    """The note of a checksum that is not true of the files (None: true, or no checksum);
    a file that cannot be read leaves it to validation to say so."""
    try:
        return verify_checksum(bench)
    except OSError:
        return None


def write_benchmark(bench: Benchmark, out_dir: str | Path, *, copy_images: bool = True) -> Path:
    """Write ``bench`` as a foilbench folder; the manifest's checksum is (re)computed.

    Args:
        bench: The benchmark to write.
        out_dir: The folder to write (created).
        copy_images: Copy the images under ``out_dir`` (skipped when the benchmark already
            lives there).

    Returns:
        ``out_dir`` as a :class:`~pathlib.Path`.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if copy_images and out.resolve() != bench.root.resolve():
        for rel in bench.unique_images():
            dst = out / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bench.image_path(rel), dst)
    written = Benchmark(bench.manifest, bench.items, out, bench.dropped)
    bench.manifest.checksum = written.compute_checksum()
    bench.items.to_parquet(out / ITEMS_FILE, index=False)
    bench.manifest.format_version = FORMAT_VERSION  # what this writer writes
    manifest = bench.manifest.to_dict()
    manifest["n_items"] = len(bench.items)
    write_json(out / MANIFEST_FILE, manifest)
    return out
