"""One registry pattern for models, benchmarks, loaders and protocols.

A name maps to a lazy ``"module:object"`` target string; nothing is imported until the
name is used. Duplicate names raise. Third-party plugins register through the entry-point
group given at construction (for example ``foilbench.models``).
"""

from __future__ import annotations

import difflib
import importlib
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from foilbench.errors import UnknownNameError


@dataclass(frozen=True)
class Entry:
    name: str
    target: str
    description: str = ""
    requires: tuple[str, ...] = ()  # importable modules the entry needs (optional extras)


def load_target(target: str) -> Any:
    """Import ``"package.module:attr.sub"`` and return the object."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError(f"registry target must look like 'module:object', got {target!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry:
    """Name -> lazy ``"module:object"`` target, plus the names plugins add.

    Args:
        kind: What the names are, for messages (``"model"``, ``"benchmark"``).
        entry_point_group: The entry-point group plugins register in
            (``foilbench.models``); read once, on the first lookup.
    """

    def __init__(self, kind: str, entry_point_group: str | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, Entry] = {}
        self._group = entry_point_group
        self._plugins_loaded = entry_point_group is None

    def register(self, name: str, target: str, description: str = "",
                 requires: tuple[str, ...] = ()) -> None:
        """Add ``name``.

        Args:
            name: The name users type.
            target: ``"module:object"``, imported on first use.
            description: One line for ``foilbench models`` / ``benchmarks``.
            requires: Modules the target needs (an extra's); listed as missing otherwise.

        Raises:
            ValueError: The name is already registered.
        """
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = Entry(name, target, description, tuple(requires))

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in metadata.entry_points(group=self._group):
            self.register(ep.name, ep.value, f"plugin from {ep.dist.name if ep.dist else '?'}")

    def __contains__(self, name: str) -> bool:
        self._load_plugins()
        return name in self._entries

    def entries(self) -> list[Entry]:
        """Every entry, plugins' included, sorted by name."""
        self._load_plugins()
        return sorted(self._entries.values(), key=lambda e: e.name)

    def names(self) -> list[str]:
        """Every name, plugins' included, sorted."""
        return [e.name for e in self.entries()]

    def entry(self, name: str) -> Entry:
        """The entry called ``name``.

        Raises:
            UnknownNameError: No such name (the message lists close matches).
        """
        self._load_plugins()
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(unknown_message(self.kind, name, self.names())) from None

    def get(self, name: str) -> Any:
        """The object ``name`` refers to, imported now.

        Args:
            name: A registered name.

        Returns:
            The target object (a factory, loader or class).
        """
        return load_target(self.entry(name).target)


def unknown_message(kind: str, name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listing = ", ".join(known) if known else "(none registered)"
    return f"unknown {kind} {name!r}.{hint} Known: {listing}"
