"""A run's start-up without the cyclic garbage collector's full passes.

Why: importing torch, torchvision and open_clip and building a model create a few million
long-lived objects, and CPython runs a full (generation 2) collection each time the long-lived
set grows by a quarter. Measured on a single-model `foilbench run` of the CompoSET-shaped
release (one core): 7 full collections, about 0.8 CPU s, almost all of them traversing module
objects that live until the process ends; with collection paused during start-up and the
start-up objects frozen afterwards (``gc.freeze``: moved to a permanent generation no later
pass traverses), about 0.01 s. Collection only frees memory: no computed number depends on it.

- :func:`pause` (``run`` and ``sweep``: from before thread setup, model build and benchmark
  load until they are done) disables collection and its ``resume`` restores the previous
  state, in every process, the Python API included (cycles made meanwhile are collected
  later, as usual).
- The freeze is for a process foilbench owns and that ends with the command (the console
  script and ``python -m foilbench`` call :func:`own_process`; an in-process CLI call, as the
  tests make, does not): frozen objects are never collected, which a library must not decide
  for its caller's process.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_state = {"owned": False}


def own_process() -> None:
    """This process runs one foilbench command and then ends: start-up objects may be
    frozen."""
    _state["owned"] = True


def pause() -> Callable[[], None]:
    """Disable collection now; returns ``resume``, which (once; later calls do nothing)
    freezes the objects made so far in an owned process and restores the previous state.
    Call it when start-up is over, and in a ``finally`` so an error path resumes too."""
    was = gc.isenabled()
    gc.disable()
    done = [False]

    def resume() -> None:
        if done[0]:
            return
        done[0] = True
        if _state["owned"]:
            gc.freeze()
        if was:
            gc.enable()

    return resume


@contextmanager
def paused() -> Iterator[None]:
    """:func:`pause` around a block."""
    resume = pause()
    try:
        yield
    finally:
        resume()
