"""Many processes, one results store: open it for each call, never for a whole run.

Two ``foilbench run`` on the same ``--out``, or ``show``/``report``/``serve`` while a run
evaluates, all need the one DuckDB file, which a writing process holds exclusively. A
:class:`SharedStore` therefore keeps no connection: every store method called on it opens the
store, does that one thing (writing a finished run is one transaction), and closes it, so the
file is locked only for the moments a finished run is written or a stored row is read. A call
that finds the file locked waits with a message (:func:`foilbench.store.connect.open_connection`).

Why not keep each run in a staging file and merge at the end: a run killed midway would then
lose every finished cell unless something merged orphaned staging files later; written per
cell, a finished cell is in the store at once and a resumed sweep finds it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from foilbench.store.connect import Notify
from foilbench.store.db import ResultsStore


class SharedStore:
    """Looks like a :class:`ResultsStore` (its methods), opens one per call.

    >>> import tempfile, pathlib
    >>> store = SharedStore(pathlib.Path(tempfile.mkdtemp()) / "s.duckdb")
    >>> len(store.list_runs())
    0
    """

    def __init__(self, path: str | Path, *, notify: Notify | None = None,
                 wait_s: float | None = None) -> None:
        self.path = Path(path)
        self._notify = notify
        self._wait_s = wait_s

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(ResultsStore, name, None)
        if name.startswith("_") or not callable(method):
            raise AttributeError(f"SharedStore has no {name!r} (only ResultsStore methods; "
                                 "open a ResultsStore for its connection)")

        def call(*args: Any, **kwargs: Any) -> Any:
            with ResultsStore(self.path, notify=self._notify, wait_s=self._wait_s) as store:
                return getattr(store, name)(*args, **kwargs)

        call.__name__ = name
        call.__doc__ = method.__doc__
        return call
