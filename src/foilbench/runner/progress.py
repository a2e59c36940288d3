"""One progress display for a whole ``run`` or ``sweep``: cells done of all cells, and the stage
of the cell in flight (``foilbench-plain on world-pairs: texts 1,280/6,586``).

The engine reports each stage to this sink (:mod:`foilbench.scoring.progress`) instead of
opening a bar of its own, so three models on five benchmarks show one line, not thirty bars.
Log messages printed through :meth:`RunProgress.wrap` clear the line first and redraw it after,
so warnings never land inside the bar. The display opens before the benchmarks are loaded
(``total=None``: cells not known yet), so a first run's one-time build of the embedded suite
(:mod:`foilbench.construct.suite`) shows its parts on it too; :meth:`RunProgress.set_total`
then gives the number of cells.

Bars are for a terminal. ``enabled=None`` (the default setting, ``RunSettings.progress``)
draws them only when stderr is one (:func:`bars_wanted`); in a pipe, a CI log or a notebook
capture the display writes no ``\r`` frames and logs one plain line per cell and per stage
instead (at ``info``, through the run's ``log``). ``True`` asks for bars anyway; ``False``
shows neither (the cell lines stay).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from foilbench.display import MESSAGE_LIMIT, safe_text
from foilbench.runner.log import Log

REFRESH_S = 0.5  # at most two redraws a second


class _Stage:
    def __init__(self, owner: RunProgress, label: str, total: int) -> None:
        self.owner, self.total, self.done = owner, total, 0
        self.label = safe_text(label)
        owner.show(f"{label} 0/{total:,}", force=True)

    def update(self, n: int) -> None:
        self.done += n
        self.owner.show(f"{self.label} {self.done:,}/{self.total:,}")

    def close(self) -> None:
        self.owner.show("", force=True)


def bars_wanted(setting: bool | None) -> bool:
    """Whether to draw bars: ``setting`` when given, else whether stderr is a terminal."""
    if setting is not None:
        return bool(setting)
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


class _Line:
    """A stage in a pipe: one line when it starts, nothing after."""

    def __init__(self, log: Log, label: str, total: int) -> None:
        log("info", f"{label}: {total:,} to encode")

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


class RunProgress:
    """The run's display over ``total`` cells: bars on a terminal, lines through ``log`` in a
    pipe (module docstring; disabled: every call does nothing)."""

    def __init__(self, total: int | None, enabled: bool | None = True,
                 desc: str = "foilbench", log: Log | None = None) -> None:
        bars = bars_wanted(enabled)
        self._lines = log if (enabled is None and not bars) else None
        self.enabled = (bars or self._lines is not None) and (total is None or total > 0)
        self._bar = None
        self._last = 0.0
        if self.enabled and bars:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit="cell", file=sys.stderr,
                             bar_format="{desc}: {n_fmt}/{total_fmt} cells [{elapsed}]"
                                        "{postfix}", leave=False, dynamic_ncols=True)

    def set_total(self, total: int) -> None:
        """The number of cells, once known (0: nothing to show, the display closes)."""
        if self._bar is None:
            return
        if total <= 0:
            self.close()
            self.enabled = False
            return
        self._bar.total = total
        self._bar.refresh()

    def stage(self, label: str, total: int) -> _Stage | Any:
        """A handle the engine updates as it encodes ``total`` inputs (the sink protocol)."""
        if self._bar is None and self._lines is not None:
            return _Line(self._lines, label, total)
        return _Stage(self, label, total)

    def show(self, text: str, force: bool = False) -> None:
        if self._bar is None:
            return
        now = time.monotonic()
        if force or now - self._last >= REFRESH_S:
            self._bar.set_postfix_str(text, refresh=True)
            self._last = now

    def begin(self, what: str, log: Log) -> None:
        """A new cell: named on the display, or logged as a line when there is none (the
        names in ``what`` come from a benchmark and a model: escaped and capped)."""
        what = safe_text(what, MESSAGE_LIMIT)
        if self._bar is None:
            log("info", f"evaluating {what}")
        else:
            self._bar.set_description_str(what, refresh=True)

    def cell_done(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def wrap(self, log: Log) -> Log:
        """``log`` that clears the display while it prints."""
        if self._bar is None:
            return log

        def quiet_log(level: str, message: str) -> None:
            if level == "debug":
                log(level, message)
                return
            from tqdm import tqdm

            with tqdm.external_write_mode(file=sys.stderr):
                log(level, message)

        return quiet_log

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._lines = None

    def __bool__(self) -> bool:  # the engine's "show progress?" test
        return self.enabled
