"""What ``foilbench run`` evaluates when no --model / --benchmark is given.

Models: the embedded defaults when :mod:`foilbench.models.embedded` is installed and its
weights load; otherwise ``tiny-random``. Benchmarks: the ``synth`` suite when
:mod:`foilbench.construct.suite` is installed and builds; otherwise ``tiny-builtin``. Each choice
comes with a sentence saying which was used and why, printed by the command.
"""

from __future__ import annotations

import importlib
import importlib.util

from foilbench.data.registry import resolve_benchmarks
from foilbench.models.registry import EMBEDDED_DEFAULTS, resolve_model

FALLBACK_MODEL = "tiny-random"
FALLBACK_BENCHMARK = "tiny-builtin"
DEFAULT_SUITE = "synth"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def default_models(device: str, dtype: str) -> tuple[list[tuple[str, object]], str]:
    """[(spec, adapter)] and a note. Adapters are loaded here so a missing weight file is
    detected before any work starts."""
    if _installed("foilbench.models.embedded"):
        embedded = importlib.import_module("foilbench.models.embedded")
        ready = getattr(embedded, "weights_available", None)
        if ready is None or ready():
            try:
                loaded = [(s, resolve_model(s, device=device, dtype=dtype))
                          for s in EMBEDDED_DEFAULTS]
                return loaded, f"models: embedded defaults ({', '.join(EMBEDDED_DEFAULTS)})"
            except Exception as e:  # shown to the user; the fallback keeps `run` working
                why = f"embedded models failed to load ({type(e).__name__}: {e})"
        else:
            why = "embedded model weights are not present"
    else:
        why = "foilbench.models.embedded is not installed"
    adapter = resolve_model(FALLBACK_MODEL, device=device, dtype=dtype)
    return [(FALLBACK_MODEL, adapter)], f"models: {FALLBACK_MODEL} ({why}; a smoke-test model)"


def default_benchmarks(on_invalid: str) -> tuple[list, str]:
    """The benchmarks of the default suite and a note."""
    if _installed("foilbench.construct.suite"):
        try:
            benches = resolve_benchmarks(DEFAULT_SUITE, on_invalid=on_invalid)
            names = ", ".join(b.name for b in benches)
            return benches, f"benchmarks: the embedded {DEFAULT_SUITE!r} suite ({names})"
        except Exception as e:  # an unfinished world module must not break `foilbench run`
            why = f"the {DEFAULT_SUITE!r} suite failed to build ({type(e).__name__}: {e})"
    else:
        why = "foilbench.construct.suite is not installed"
    benches = resolve_benchmarks(FALLBACK_BENCHMARK, on_invalid=on_invalid)
    return benches, f"benchmarks: {FALLBACK_BENCHMARK} ({why})"
