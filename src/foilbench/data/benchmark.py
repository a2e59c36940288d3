"""The in-memory benchmark and its manifest: the types every layer passes around.

They live apart from :mod:`foilbench.data.format` (reading, writing) so that validation can
use them while format calls validation, with no import circle.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from foilbench.errors import BenchmarkError
from foilbench.hashing import sha256_file
from foilbench.kinds import KINDS, ItemKind, kind_of
from foilbench.table_records import table_records

MANIFEST_FILE = "manifest.json"


FORMAT_VERSION = 1  # version 0: manifests written before the field existed


@dataclass
class Manifest:
    name: str
    kind: str
    version: str = "1"
    protocol: str = ""  # defaults to the kind's protocol name
    license: str = "unknown"
    source: str = ""
    checksum: str = ""
    description: str = ""
    primary_metric: str = ""  # defaults to the kind's default metric
    partial: bool = False  # True when items were dropped (--allow-partial); shown in every output
    extras: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    def __post_init__(self) -> None:
        check_format_version(self.format_version)
        if self.kind not in KINDS:
            raise BenchmarkError(
                f"manifest: unknown kind {self.kind!r}; expected one of {', '.join(KINDS)}"
            )
        if not self.protocol:
            self.protocol = self.kind
        if not self.primary_metric:
            self.primary_metric = KINDS[self.kind].default_metric
        if self.primary_metric not in KINDS[self.kind].metrics:
            raise BenchmarkError(
                f"manifest: primary_metric {self.primary_metric!r} is not a metric of kind "
                f"{self.kind!r} ({', '.join(KINDS[self.kind].metrics)})"
            )

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = MANIFEST_FILE) -> Manifest:
        """A manifest read from disk: required fields present, every known field of its type
        (:mod:`foilbench.data.manifest_schema`), unknown ones kept in ``extras``."""
        from foilbench.data.manifest_schema import check_manifest

        missing = [k for k in ("name", "kind") if k not in data] if isinstance(data, dict) \
            else []
        if missing:
            raise BenchmarkError(f"{where}: missing field(s) {', '.join(missing)}")
        if isinstance(data, dict):
            data = {"format_version": 0, **data}  # absent: written before the field existed
            check_format_version(data["format_version"], where)
        check_manifest(data, where)
        known = {f for f in cls.__dataclass_fields__}
        extras = dict(data.get("extras", {}))
        extras.update({k: v for k, v in data.items() if k not in known})
        kwargs = {k: v for k, v in data.items() if k in known and k != "extras"}
        return cls(**kwargs, extras=extras)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_format_version(value: Any, where: str = "manifest") -> None:
    """Refuse a ``format_version`` that is not a whole number >= 0 or is newer than ours.

    >>> try:
    ...     check_format_version(2, "m.json")
    ... except BenchmarkError as e:
    ...     print(str(e)[:60])
    m.json: format_version 2 is newer than the format this foilb
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BenchmarkError(f"{where}: format_version must be a whole number >= 0, got "
                             f"{value!r}")
    if value > FORMAT_VERSION:
        raise BenchmarkError(f"{where}: format_version {value} is newer than the format this "
                             f"foilbench reads (format_version {FORMAT_VERSION}); upgrade "
                             "foilbench to read it")


@dataclass
class Dropped:
    """What ``on_invalid="drop"`` removed: counts by reason plus the problems themselves."""

    n: int
    by_reason: dict[str, int]
    problems: list[Any]


@dataclass
class Benchmark:
    """An in-memory benchmark: manifest, items table, and the root image paths are under."""

    manifest: Manifest
    items: pd.DataFrame
    root: Path
    dropped: Dropped | None = None
    # image ref -> where a loader derives it from (embedded bytes, a crop) while the file is
    # not written yet; validation checks the source (see data/loaders/sources.py)
    image_sources: dict[str, Any] | None = field(default=None, repr=False)
    # set when the manifest's checksum was not true of the files (data/checksum_index.py)
    checksum_note: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def kind(self) -> str:
        return self.manifest.kind

    @property
    def item_kind(self) -> ItemKind:
        """The kind object: columns, layout, outcomes, margins, API questions."""
        return kind_of(self.manifest.kind)

    @property
    def spec(self) -> ItemKind:
        """The kind object (older name of :attr:`item_kind`)."""
        return self.item_kind

    def __len__(self) -> int:
        return len(self.items)

    def image_path(self, rel: str) -> Path:
        return self.root / rel

    def image_refs(self) -> Iterator[str]:
        """Every image reference in item order (with repeats)."""
        spec = self.spec
        for col in spec.image_columns:
            yield from self.items[col].tolist()
        for col in spec.image_list_columns:
            for paths in self.items[col]:
                yield from list(paths)

    def text_refs(self) -> Iterator[str]:
        spec = self.spec
        for col in spec.text_columns:
            yield from self.items[col].tolist()
        for col in spec.text_list_columns:
            for texts in self.items[col]:
                yield from list(texts)

    def unique_images(self) -> list[str]:
        return list(dict.fromkeys(self.image_refs()))

    def unique_texts(self) -> list[str]:
        return list(dict.fromkeys(self.text_refs()))

    def metadata(self) -> pd.DataFrame:
        """The items table without the kind's payload columns (for breakdowns)."""
        payload = set(self.spec.required) - {"item_id"}
        return self.items[[c for c in self.items.columns if c not in payload]]

    def compute_checksum(self, include_images: bool = True) -> str:
        """sha256 over the canonical items table, the scoring unit when the manifest names one
        (it changes every metric: see :mod:`foilbench.scoring.aggregate`) and, optionally,
        every image file's bytes."""
        h = hashlib.sha256()
        h.update(canonical_table_bytes(self.items))
        if self.manifest.extras.get("score_unit"):
            h.update(f"score_unit={self.manifest.extras['score_unit']};chance="
                     f"{self.manifest.extras.get('unit_chance')}".encode())
        if include_images:
            for rel in sorted(set(self.image_refs())):
                h.update(rel.encode())
                path = self.image_path(rel)
                h.update(_file_digest(path))
        return "sha256:" + h.hexdigest()


def _file_digest(path: Path) -> bytes:
    """An image's part of the checksum: its sha256, or what stands in its place (validation
    names the problem: missing, a FIFO, a symlink loop)."""
    from foilbench.regular_files import NotRegularFile

    try:
        return sha256_file(path).encode()
    except FileNotFoundError:
        return b"<missing>"
    except NotRegularFile:
        return b"<not a regular file>"
    except OSError:  # a symlink loop, a path the system refuses
        return b"<unreadable>"
    except ValueError:  # a NUL byte in the name
        return b"<invalid path>"


def canonical_table_bytes(items: pd.DataFrame) -> bytes:
    """Deterministic bytes of a table: sorted columns, item order kept, JSON records."""
    cols = sorted(items.columns)
    records = table_records(items[cols])
    return json.dumps(records, sort_keys=True, default=_json_default, ensure_ascii=False).encode()


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or (isinstance(obj, float) and np.isnan(obj)):
        return None
    return str(obj)
