"""The fetched-releases index, ``$FOILBENCH_HOME/releases/index.json``: per release, where it
was written, the loader spec that reads it, and every file's SHA-256 and how it was verified.
``--benchmark NAME`` looks a fetched release up here (:func:`fetched_spec`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def default_root() -> Path:
    """Where releases go without ``--to``."""
    from foilbench.paths import home

    return home() / "releases"


def index_path() -> Path:
    return default_root() / "index.json"


def read_index() -> dict[str, Any]:
    path = index_path()
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def record(name: str, entry: dict[str, Any]) -> Path:
    """Add or replace ``name``'s entry (written atomically)."""
    from foilbench.jsonio import write_json

    data = read_index()
    data[name] = entry
    path = index_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, data)
    return path


def fetched_spec(name: str) -> str | None:
    """The loader spec of fetched release ``name`` whose folder still exists, else None."""
    entry = read_index().get(name)
    if not entry or not entry.get("spec") or not Path(entry.get("folder", "")).is_dir():
        return None
    return entry["spec"]
