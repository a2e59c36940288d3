"""One aggregated progress display for a Ray run, on the driver.

Workers show no bars of their own (many processes writing bars to one terminal is noise);
the driver counts cells done / reused / running / failed, and items per second over the
cells (and shard inputs) finished so far, and reports a line through the run's
``log(level, message)``: at most every ``every_s`` seconds, and always when a cell ends.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from foilbench.runner.log import Log


@dataclass
class Progress:
    """Counters of a Ray run and the line they print (see the module docstring)."""

    total: int
    log: Log
    every_s: float = 10.0
    done: int = 0
    reused: int = 0
    failed: int = 0
    running: set = field(default_factory=set)
    items: int = 0
    inputs: int = 0
    start: float = field(default_factory=time.perf_counter)
    last: float = field(default_factory=time.perf_counter)

    def started(self, cell: tuple) -> None:
        self.running.add(cell)

    def finished(self, cell: tuple, n_items: int) -> None:
        self.running.discard(cell)
        self.done += 1
        self.items += n_items
        self.show(force=True)

    def reuse(self, cell: tuple) -> None:
        self.running.discard(cell)
        self.reused += 1

    def fail(self, cell: tuple) -> None:
        self.running.discard(cell)
        self.failed += 1
        self.show(force=True)

    def encoded(self, n_inputs: int) -> None:
        """A shard of ``n_inputs`` unique images or texts was encoded."""
        self.inputs += n_inputs
        self.show()

    def rate(self) -> float:
        elapsed = time.perf_counter() - self.start
        return self.items / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        left = self.total - self.done - self.reused - self.failed
        extra = f", {self.inputs} shard inputs encoded" if self.inputs else ""
        return (f"[ray] cells: {self.done + self.reused}/{self.total} done ({self.reused} "
                f"reused), {len(self.running)} running, {self.failed} failed, {left} left; "
                f"{self.rate():.1f} items/s{extra}")

    def show(self, force: bool = False) -> None:
        now = time.perf_counter()
        if force or now - self.last >= self.every_s:
            self.last = now
            self.log("info", self.line())
