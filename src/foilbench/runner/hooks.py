"""What a caller hands a run besides its settings: metadata stored with each run, and a
function called with each stored run (``on_result``, where a tracker logs it).

A training loop calls ``runner.run(models=[foilbench.from_open_clip(...)], ...,
metadata={"step": step}, on_result=tracker)`` every N steps (docs/training.md): the step
is stored with every run (``eval_stats["metadata"]``, provenance and summary.json), and the
tracker (:mod:`foilbench.tracking`) sees each run the moment it is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from foilbench.runner.settings import RunnerError
from foilbench.runner.setup import adapter_name


@dataclass(frozen=True)
class Hooks:
    """``metadata`` (checked JSON, or None) and ``on_result`` (or None) of one run/sweep."""

    metadata: dict[str, Any] | None = None
    on_result: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if self.on_result is not None and not callable(self.on_result):
            raise RunnerError(f"on_result must be a function of one stored run, got "
                              f"{type(self.on_result).__name__}")

    def deliver(self, record: Any) -> None:
        """Call ``on_result(record)``; what it raises propagates (the run is stored)."""
        if self.on_result is not None:
            self.on_result(record)


def specs_only(entries: Sequence[Any], hooks: Hooks) -> list[str]:
    """The model entries of a Ray run, which loads every model on its workers from its spec:
    a model held in memory, or metadata (stored by the in-process path), is refused."""
    for entry in entries:
        if not isinstance(entry, str):
            raise RunnerError(f"ray= builds each model on its workers from a spec string; "
                              f"{adapter_name(entry)!r} is held in memory: evaluate it "
                              "without ray=")
    if hooks.metadata:
        raise RunnerError("metadata= is stored by the in-process runner; leave out ray= "
                          "to store it")
    return list(entries)
