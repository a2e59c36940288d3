"""Import torchvision without importing torch's compiler, which no evaluation uses.

``import open_clip`` imports torchvision (its transforms and ``FrozenBatchNorm2d``), and
torchvision's package import reaches ``torchvision/ops/roi_align.py``, whose first lines run
``from torch._dynamo.utils import is_compile_supported``. That one name costs the whole of
``torch._dynamo`` (about a second of CPU on these machines, as much as ``import torch``), on
every process that loads an open_clip model, though an evaluation never compiles anything
and ``roi_align`` asks ``is_compile_supported`` only when it is called.

:func:`dynamo_deferred` puts two stand-in modules at ``torch._dynamo`` and
``torch._dynamo.utils`` while such an import runs, and removes them after. The stand-in of
``torch._dynamo.utils`` answers ``is_compile_supported`` with a function that imports the
real one at its first call; any other name asked of either stand-in imports the real module
there and then and answers from it, so a torchvision that needs more of the compiler gets it
(and saves nothing). After the block nothing of the stand-ins is left in ``sys.modules``:
``torch.compile`` and ``import torch._dynamo`` import the real compiler as usual.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

PACKAGE, UTILS = "torch._dynamo", "torch._dynamo.utils"


def _real(name: str) -> ModuleType:
    """The real module ``name``: the stand-ins leave ``sys.modules`` first."""
    for key in (UTILS, PACKAGE):
        if isinstance(sys.modules.get(key), _StandIn):
            del sys.modules[key]
    return importlib.import_module(name)


def is_compile_supported(device_type: Any) -> Any:
    """torch's ``is_compile_supported``, its module imported at the first call."""
    return _real(UTILS).is_compile_supported(device_type)


class _StandIn(ModuleType):
    """Holds a place in ``sys.modules``; every name but the deferred one comes from the real
    module, imported when first asked."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if self.__name__ == UTILS and name == "is_compile_supported":
            return is_compile_supported
        return getattr(_real(self.__name__), name)


@contextmanager
def dynamo_deferred() -> Iterator[None]:
    """Within the block, imports that reach ``torch._dynamo`` for ``is_compile_supported``
    alone do not import it; nothing changes when torch's compiler or torchvision is already
    imported (there is nothing left to save)."""
    torch = importlib.import_module("torch")  # before the stand-ins: torch's own import is whole
    if PACKAGE in sys.modules or "torchvision" in sys.modules:
        yield
        return
    package, utils = _StandIn(PACKAGE), _StandIn(UTILS)
    package.__path__ = []  # a package, so the submodule's name resolves through sys.modules
    package.utils = utils
    sys.modules[PACKAGE], sys.modules[UTILS] = package, utils
    try:
        yield
    finally:
        for key, stand_in in ((UTILS, utils), (PACKAGE, package)):
            if sys.modules.get(key) is stand_in:
                del sys.modules[key]
        if vars(torch).get("_dynamo") is package:  # torch's lazy attribute must find the real
            delattr(torch, "_dynamo")
