"""Progress of one stage of scoring (images, texts, pairs, API items), shown where the caller
says.

``progress`` as the engine takes it is either a bool (a tqdm bar of its own per stage, the
library default) or a *sink*: an object with ``stage(label, total)`` returning a handle with
``update(n)`` and ``close()``. The runner passes one sink for a whole run
(:class:`foilbench.runner.progress.RunProgress`), so ``foilbench run`` shows one display
instead of a bar per model, benchmark and stage.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Stage(Protocol):
    def update(self, n: int) -> Any: ...

    def close(self) -> Any: ...


class _Nothing:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def stage(progress: Any, label: str, total: int, unit: str = "in") -> Stage:
    """A handle counting ``total`` units of one stage: nothing when ``progress`` is false or
    there is nothing to do, the sink's stage when ``progress`` is a sink, else a tqdm bar."""
    if not progress or total <= 0:
        return _Nothing()
    if hasattr(progress, "stage"):
        return progress.stage(label, total)
    from tqdm import tqdm

    return tqdm(total=total, desc=label, unit=unit, file=sys.stderr, leave=False)


def steps(progress: Any, items: Iterable[T], label: str, unit: str = "in") -> Iterator[T]:
    """``items``, each counted on one :func:`stage` once it is done (the suite builders' loops:
    inside ``foilbench run`` they show on the run's one display, not as bars of their own)."""
    items = list(items)
    handle = stage(progress, label, len(items), unit)
    try:
        for item in items:
            yield item
            handle.update(1)
    finally:
        handle.close()
