"""Releases published as Hugging Face Parquet shards with images embedded as bytes.

Why a separate step: the foilbench format addresses images as files under a root, while these
releases keep each image inside the table (``{"bytes": ..., "path": ...}``). The loader writes
each embedded image once to a folder (``?images=DIR``, default ``<release>/_foilbench_images``)
under a deterministic name, so text-only inspection and evaluation see the same paths.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from foilbench.data.loaders.common import materialise_embedded, read_table, require_columns
from foilbench.errors import BenchmarkError

IMAGES_DIRNAME = "_foilbench_images"


def shard_files(folder: Path, split: str | None, loader: str) -> list[Path]:
    """``data/<split>-*.parquet`` (or any ``*.parquet``) under the release folder."""
    if folder.is_file():
        return [folder]
    patterns = [f"data/{split}-*.parquet", f"{split}-*.parquet", f"{split}/*.parquet"] \
        if split else []
    patterns += ["data/*.parquet", "*.parquet", "**/*.parquet"]
    for pattern in patterns:
        files = sorted(p for p in folder.glob(pattern) if IMAGES_DIRNAME not in p.parts)
        if files:
            return files
    raise BenchmarkError(f"{loader}: no Parquet shards in {folder} (expected data/"
                         f"{split or '<split>'}-*.parquet as on the Hugging Face Hub)")


def read_shards(files: list[Path]) -> pd.DataFrame:
    tables = [read_table(f).assign(_shard=f.name) for f in files]
    return pd.concat(tables, ignore_index=True)


def read_split(folder: Path, split: str | None, loader: str,
               columns: tuple[str, ...]) -> tuple[list[Path], pd.DataFrame]:
    """A split's shards as one table, checked for ``columns`` (an error names the first
    shard). The files come back too: loaders name them in the manifest."""
    files = shard_files(folder, split, loader)
    table = read_shards(files)
    require_columns(table, columns, files[0])
    return files, table


def images_root(folder: Path, options: dict[str, str]) -> Path:
    base = folder if folder.is_dir() else folder.parent
    return Path(options["images"]).expanduser() if options.get("images") else \
        base / IMAGES_DIRNAME


def embedded_paths(table: pd.DataFrame, columns: tuple[str, ...], root: Path, stem: str,
                   check_images: bool, sources: dict | None = None) -> dict[str, list[str]]:
    """Relative paths of the embedded images; written to ``root`` only when evaluating.
    ``sources`` collects each path's embedded origin (what ``foilbench inspect`` checks)."""
    return materialise_embedded(table, columns, root, stem, write=check_images,
                                sources=sources)
