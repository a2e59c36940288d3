"""Every item kind by name: the modules of this package that define a ``KIND``.

The registry looks for kinds on first use (never at import): each public module of
``foilbench.kinds`` with a module-level ``KIND`` (an :class:`ItemKind` instance) is one kind, so
adding a kind is adding one module. Kinds are listed in ``rank`` order (built-in kinds first),
then by name. :func:`register_kind` adds a kind from elsewhere (a test, a plugin).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Collection, Iterator, Mapping, Sequence

from foilbench.errors import BenchmarkError
from foilbench.kinds.base import ItemKind


class KindRegistry(Mapping[str, ItemKind]):
    """Name -> kind, found lazily; a ``Mapping`` so ``name in KINDS`` and ``KINDS[name]`` work."""

    def __init__(self, package: str) -> None:
        self._package = package
        self._kinds: dict[str, ItemKind] | None = None

    def _found(self) -> dict[str, ItemKind]:
        if self._kinds is None:
            pkg = importlib.import_module(self._package)
            found: dict[str, ItemKind] = {}
            for info in pkgutil.iter_modules(pkg.__path__):
                if info.name.startswith("_"):
                    continue
                kind = getattr(importlib.import_module(f"{self._package}.{info.name}"), "KIND",
                               None)
                if isinstance(kind, ItemKind):
                    _add(found, kind)
            self._kinds = _ordered(found)
        return self._kinds

    def __getitem__(self, name: str) -> ItemKind:
        return self._found()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._found())

    def __len__(self) -> int:
        return len(self._found())

    def register(self, kind: ItemKind) -> None:
        """Add ``kind``; a second kind of the same name raises."""
        kinds = dict(self._found())
        _add(kinds, kind)
        self._kinds = _ordered(kinds)

    def unregister(self, name: str) -> None:
        kinds = dict(self._found())
        kinds.pop(name, None)
        self._kinds = kinds


def _add(kinds: dict[str, ItemKind], kind: ItemKind) -> None:
    if not isinstance(kind, ItemKind):
        raise TypeError(f"a kind must be an ItemKind instance, got {type(kind).__name__}")
    if kind.name in kinds:
        raise ValueError(f"item kind {kind.name!r} is already registered")
    kinds[kind.name] = kind


def _ordered(kinds: dict[str, ItemKind]) -> dict[str, ItemKind]:
    return dict(sorted(kinds.items(), key=lambda kv: (kv[1].rank, kv[0])))


KINDS = KindRegistry("foilbench.kinds")


def kind_of(name: str | ItemKind) -> ItemKind:
    """The kind called ``name`` (a kind object is returned as is); unknown names raise."""
    if isinstance(name, ItemKind):
        return name
    try:
        return KINDS[name]
    except KeyError:
        raise BenchmarkError(f"unknown item kind {name!r}; expected one of "
                             f"{', '.join(KINDS)}") from None


def register_kind(kind: ItemKind) -> ItemKind:
    """Make ``kind`` known by its name (for kinds defined outside this package)."""
    KINDS.register(kind)
    return kind


def kind_of_frame(columns: Collection[str], score_lengths: Sequence[int]) -> ItemKind:
    """The kind a results frame holds, from its outcome columns and per-row score lengths:
    the first kind, in rank order, that recognises it."""
    for kind in KINDS.values():
        if kind.frame_fits(columns, score_lengths):
            return kind
    raise BenchmarkError(f"no item kind recognises a results frame with columns "
                         f"{', '.join(map(str, columns))}")


def kinds_where(test) -> list[str]:
    """Names of the kinds for which ``test(kind)`` holds (for messages: "needs a 'choice'
    benchmark")."""
    return [name for name, kind in KINDS.items() if test(kind)]
