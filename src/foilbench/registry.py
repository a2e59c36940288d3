"""One registry pattern for models, benchmarks, loaders and protocols.

A name maps to a lazy ``"module:object"`` target string; nothing is imported until the
name is used. Duplicate built-in names raise. Third-party plugins register through the
entry-point group given at construction (for example ``foilbench.models``), one at a time:
a plugin whose name is a built-in's (built-ins always win), a second plugin of one name, a
target that is not ``module:object`` or a module that is not installed is skipped with a
:class:`PluginWarning` naming its distribution and the reason, and listed by
:meth:`Registry.skipped` (``foilbench models`` shows them). One broken plugin once broke every
command (``ValueError: model 'tiny-random' is already registered``). A plugin that loads but
whose target is not a factory fails when it is used, in one sentence.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import warnings
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from foilbench.errors import FoilbenchError, UnknownNameError


class PluginWarning(UserWarning):
    """A third-party plugin was skipped (the message names it, its distribution, the reason)."""


class PluginError(FoilbenchError):
    """A plugin's target could not be loaded or is not a factory."""


@dataclass(frozen=True)
class SkippedPlugin:
    name: str
    distribution: str
    target: str
    reason: str


@dataclass(frozen=True)
class Entry:
    name: str
    target: str
    description: str = ""
    requires: tuple[str, ...] = ()  # importable modules the entry needs (optional extras)
    plugin: str | None = None  # the distribution of a third-party entry; None: built in


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
        self._skipped: list[SkippedPlugin] = []

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
        try:
            found = list(metadata.entry_points(group=self._group))
        except Exception as e:  # broken distribution metadata: no plugins, said once
            warnings.warn(f"{self.kind} plugins not loaded: reading entry points failed "
                          f"({type(e).__name__}: {e})", PluginWarning, stacklevel=3)
            return
        for ep in found:
            self._add_plugin(ep)

    def _add_plugin(self, ep: Any) -> None:
        """Register one entry point, or skip it with a warning saying why."""
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an unknown distribution"
        name, target = str(ep.name), str(ep.value)
        reason = self._refusal(name, target)
        if reason is None:
            self._entries[name] = Entry(name, target, f"plugin from {dist}", plugin=dist)
            return
        self._skipped.append(SkippedPlugin(name, dist, target, reason))
        from foilbench.display import safe_text

        warnings.warn(f"{self.kind} plugin {safe_text(name)!r} from {safe_text(dist)} skipped: "
                      f"{safe_text(reason, 300)}", PluginWarning, stacklevel=4)

    def _refusal(self, name: str, target: str) -> str | None:
        """Why a plugin entry cannot be registered (None: it can). Imports nothing but the
        parent packages of the target's module (to find it)."""
        known = self._entries.get(name)
        if known is not None:
            return (f"its name is a built-in {self.kind}'s (built-ins win)" if known.plugin is None
                    else f"{known.plugin} registered {name!r} first")
        module, _, attr = target.partition(":")
        if not module or not attr:
            return f"its target {target!r} is not 'module:object'"
        try:
            spec = importlib.util.find_spec(module)
        except Exception as e:  # a parent package that fails to import, a bad name
            return f"its module {module!r} cannot be found ({type(e).__name__}: {e})"
        if spec is None:
            return f"its module {module!r} is not installed"
        return None

    def skipped(self) -> list[SkippedPlugin]:
        """The plugins of this registry's group that were skipped, and why."""
        self._load_plugins()
        return list(self._skipped)

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
        entry = self.entry(name)
        if entry.plugin is None:
            return load_target(entry.target)
        try:
            obj = load_target(entry.target)
        except Exception as e:  # the plugin's own import error, a missing attribute
            raise PluginError(f"{self.kind} {name!r} (plugin from {entry.plugin}) could not be "
                              f"loaded from {entry.target!r}: {type(e).__name__}: {e}") from None
        if not callable(obj):
            raise PluginError(f"{self.kind} {name!r} (plugin from {entry.plugin}): its target "
                              f"{entry.target!r} is a {type(obj).__name__}, not a factory")
        return obj


def unknown_message(kind: str, name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    listing = ", ".join(known) if known else "(none registered)"
    return f"unknown {kind} {name!r}.{hint} Known: {listing}"
