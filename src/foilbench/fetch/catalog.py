"""The releases ``foilbench fetch`` knows (``releases.json``, shipped with the package): title,
official source, licence or gating terms, files (plain URLs, or a GitHub / Hub listing read at
fetch time), the releases it needs, and the loader spec that reads it.

URLs name their host as ``{endpoint}``; :data:`ENDPOINTS` maps names to the official hosts, and
tests point them at a local server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from foilbench.errors import UnknownNameError
from foilbench.registry import unknown_message


@dataclass(frozen=True)
class Release:
    name: str
    title: str
    source: str
    licence: str
    files: list[dict] = field(default_factory=list)
    github: dict | None = None
    hub: dict | None = None
    gated: bool = False
    requires: list[str] = field(default_factory=list)
    spec: str | None = None
    also: str | None = None
    checksum: str | None = None
    dir: str | None = None

    def folder(self, root: Path) -> Path:
        """Where this release lives under the fetch root."""
        return root / (self.dir or self.name)

    def loader_spec(self, root: Path) -> str | None:
        """The ``--benchmark`` spec that reads the fetched release (None: a part only)."""
        if self.spec is None:
            return None
        return self.spec.format(dir=self.folder(root), root=root)


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    text = resources.files("foilbench.fetch").joinpath("releases.json").read_text("utf-8")
    return json.loads(text)


def endpoints() -> dict[str, str]:
    """Endpoint name -> base URL (a copy; :func:`foilbench.fetch.fetcher.fetch_release` takes
    overrides)."""
    return dict(_data()["endpoints"])


def releases() -> dict[str, Release]:
    return {name: Release(name=name, **{k: v for k, v in rec.items()})
            for name, rec in _data()["releases"].items()}


def get(name: str) -> Release:
    """The release called ``name``; an unknown name raises with close matches."""
    known = releases()
    if name not in known:
        raise UnknownNameError(unknown_message("release", name, sorted(known)))
    return known[name]
