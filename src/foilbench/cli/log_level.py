"""``--log-level``: how much ``foilbench run`` / ``sweep`` say, and the one place that
configures logging.

The library never configures logging: its modules log to loggers under ``foilbench``
(``foilbench.runner``, ``foilbench.models.openclip.adapter``, ...) and leave handlers to
the application. The command is an application, so it adds one stderr handler to the
``foilbench`` logger (never the root logger) at the chosen level, and shows the runner's
messages from that level up (``debug`` adds the thread choice, skipped cached stages and
dependency warnings; ``warning`` keeps only what needs attention).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

from foilbench.runner.log import LEVELS, Log

LOG_LEVELS = tuple(LEVELS)  # debug, info, warning, error
DEFAULT_LEVEL = "info"
_HANDLER_NAME = "foilbench-cli"


def configure_logger(level: str) -> logging.Logger:
    """The ``foilbench`` logger with one stderr handler at ``level`` (added once)."""
    logger = logging.getLogger("foilbench")
    logger.setLevel(LEVELS[level])
    if not any(h.get_name() == _HANDLER_NAME for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.set_name(_HANDLER_NAME)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    for handler in logger.handlers:
        if handler.get_name() == _HANDLER_NAME:
            handler.setLevel(LEVELS[level])
    return logger


def leveled_log(console: Console, level: str = DEFAULT_LEVEL) -> Log:
    """The runner's ``log`` for the command: the console's messages from ``level`` up."""
    from foilbench.cli.run_output import console_log

    threshold = LEVELS[level]
    shown = console_log(console)

    def log(kind: str, message: str) -> None:
        if LEVELS.get(kind, logging.INFO) < threshold:
            return
        if kind == "debug":
            console.print(f"[dim]debug: {escape(message)}[/dim]")
        else:
            shown(kind, message)

    return log


def log_from(options: dict[str, Any], console: Console) -> Log:
    """Pop ``log_level`` out of the parsed options; configure the logger; the runner's log."""
    level = options.pop("log_level", None) or DEFAULT_LEVEL
    configure_logger(level)
    return leveled_log(console, level)
