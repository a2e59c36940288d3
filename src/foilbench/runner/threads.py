"""How many torch threads a run uses, chosen from the CPUs it may use and the machine's load.

Why: torch's default is one OpenMP thread per core, and its OpenMP runtime (GNU libgomp in the
pip wheels) lets an idle thread spin on its core before it sleeps. Next to another busy
process on two cores the threads then wait for each other while spinning against the
neighbour: measured on the shared 2-core machine, 4,000 Auto-Comp texts through the embedded
text tower took 0.7 CPU s with one thread and 4.4-4.7 CPU s (25-39 s wall) with two spinning
threads, 0.7 CPU s (3.6-4.3 s wall) with two sleeping ones (``OMP_WAIT_POLICY=PASSIVE``).

So:

- the ``foilbench`` command (and only it: :func:`foilbench.cli.main._main`, before anything
  imports torch) sets ``OMP_WAIT_POLICY=PASSIVE`` (idle threads sleep) unless the user chose
  a policy; libgomp reads it once, when torch loads. The Python API writes no environment
  variable: a caller who wants sleeping threads sets it before importing torch;
- a run (:func:`run_threads`, a ``with`` block around the whole run or sweep) calls
  ``torch.set_num_threads(n)`` with n from :func:`choose_threads`: the CPUs this process may
  run on (``os.sched_getaffinity``, so ``taskset`` and container CPU sets count) minus the
  load other processes put on them (1-minute load average), at least one, and sets the
  caller's count back when the block ends. An explicit count (``--threads N``,
  ``RunSettings(threads=N)``) or ``OMP_NUM_THREADS`` wins.

The embedded models' embeddings are bit-identical with one or two threads (checked when this
was written), so the choice changes time, not numbers.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator

WAIT_POLICY = "OMP_WAIT_POLICY"


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; ``os.cpu_count`` elsewhere)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def machine_load() -> float | None:
    """The 1-minute load average, or None where the platform has none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def choose_threads(cpus: int | None = None, load: float | None = None,
                   total_cpus: int | None = None) -> int:
    """Threads for a run: the usable CPUs minus the load others put on them, at least one.

    ``load`` is the machine's load average over ``total_cpus`` CPUs; the share falling on our
    ``cpus`` is ``load * cpus / total_cpus`` (load spreads over all CPUs), rounded to the
    nearest whole CPU (a neighbour at 0.4 of a core leaves the core usable).

    >>> choose_threads(cpus=2, load=0.1, total_cpus=2)
    2
    >>> choose_threads(cpus=2, load=1.0, total_cpus=2)   # one busy neighbour on 2 cores
    1
    >>> choose_threads(cpus=2, load=12.0, total_cpus=2)
    1
    >>> choose_threads(cpus=4, load=2.0, total_cpus=8)   # a 4-CPU affinity mask of 8 cores
    3
    """
    cpus = usable_cpus() if cpus is None else int(cpus)
    total = max(cpus, os.cpu_count() or cpus) if total_cpus is None else int(total_cpus)
    if load is None:
        return max(1, cpus)
    busy = load * cpus / max(1, total)
    return max(1, min(cpus, cpus - math.floor(busy + 0.5)))


def env_threads() -> int | None:
    """``OMP_NUM_THREADS`` as a positive integer, or None when unset or not a number."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def sleeping_threads() -> bool:
    """Whether idle OpenMP threads sleep (``OMP_WAIT_POLICY=PASSIVE``); read, never set."""
    return os.environ.get(WAIT_POLICY, "").upper() == "PASSIVE"


def configure_threads(requested: int = 0,
                      log: Callable[[str, str], None] | None = None) -> int:
    """Apply the thread choice to torch (see the module docstring); returns the count.

    ``requested`` > 0 is used as given; 0 means choose (``OMP_NUM_THREADS`` if set, else
    :func:`choose_threads`). The choice is logged at debug level with its inputs.
    """
    passive = sleeping_threads()
    import torch

    if requested and requested > 0:
        n, why = int(requested), "as requested"
    elif (from_env := env_threads()) is not None:
        n, why = from_env, "OMP_NUM_THREADS"
    else:
        cpus, load = usable_cpus(), machine_load()
        n = choose_threads(cpus, load)
        why = f"{cpus} usable CPU(s), load {load:.1f}" if load is not None else \
            f"{cpus} usable CPU(s)"
    if torch.get_num_threads() != n:
        torch.set_num_threads(n)
    if log is not None:
        log("debug", f"torch threads: {n} ({why}; idle threads "
                     f"{'sleep' if passive else 'may spin'})")
    return n


@contextlib.contextmanager
def run_threads(requested: int = 0,
                log: Callable[[str, str], None] | None = None) -> Iterator[int]:
    """:func:`configure_threads` for the ``with`` block; torch's thread count is set back to
    the caller's when it ends (even on error), so the Python API leaves it as it found it."""
    import torch

    before = torch.get_num_threads()
    try:
        yield configure_threads(requested, log)
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
