"""How the runner reports progress: a ``log(level, message)`` callable chosen by the caller.

The runner never prints. The CLI passes a function that styles messages on stderr; the
Python API defaults to :func:`to_logging` (logger ``foilbench.runner``: warnings and errors
show through Python's last-resort handler, info only when logging is configured). Levels are
``"debug"`` (details a console does not show), ``"info"``, ``"warning"`` (the run continues, e.g. a dropped item or a skipped baseline) and
``"error"`` (one cell failed; the others go on).
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Iterator

Log = Callable[[str, str], None]
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def to_logging(level: str, message: str) -> None:
    logging.getLogger("foilbench.runner").log(LEVELS.get(level, logging.INFO), message)


def silent(level: str, message: str) -> None:
    """Discard every message."""


@contextlib.contextmanager
def contained_warnings(log: Log) -> Iterator[None]:
    """Python warnings raised inside go to ``log`` instead of the console: foilbench's own as
    ``"warning"`` (they say something about the run), those of dependencies (statsmodels'
    convergence notes, pandas' future changes, ...) as ``"debug"`` with where they came from,
    each distinct message once."""
    seen: set[tuple[str, str]] = set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                key = (w.category.__name__, str(w.message))
                if key in seen:
                    continue
                seen.add(key)
                ours = "foilbench" in str(w.filename).replace("\\", "/").split("/")
                if ours:
                    log("warning", str(w.message))
                else:
                    log("debug", f"{w.category.__name__} from {w.filename}:{w.lineno}: "
                                 f"{w.message}")
