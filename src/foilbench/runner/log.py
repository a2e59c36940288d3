"""How the runner reports progress: a ``log(level, message)`` callable chosen by the caller.

The runner never prints. The CLI passes a function that styles messages on stderr; the
Python API defaults to :func:`to_logging` (logger ``foilbench.runner``: warnings and errors
show through Python's last-resort handler, info only when logging is configured). Levels are
``"info"``, ``"warning"`` (the run continues, e.g. a dropped item or a skipped baseline) and
``"error"`` (one cell failed; the others go on).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

Log = Callable[[str, str], None]
LEVELS = {"info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def to_logging(level: str, message: str) -> None:
    logging.getLogger("foilbench.runner").log(LEVELS.get(level, logging.INFO), message)


def silent(level: str, message: str) -> None:
    """Discard every message."""
