"""The versions of the libraries that shape a run's numbers, and the device it ran on.

Read from the installed packages' metadata (:mod:`importlib.metadata`), so recording them
imports none of the heavy packages: a run that never touched transformers does not pay for
importing it to say which one is installed. The device is read from torch only when torch is
already imported (a local model ran); an API-only process records ``"none"``.
"""

from __future__ import annotations

import sys
from importlib import metadata
from typing import Any

# the distributions whose version can change a stored number or the stored bytes
LIBRARIES = ("torch", "open_clip_torch", "transformers", "numpy", "duckdb", "pillow")


def package_version(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None when it is not installed.

    >>> package_version("surely-not-a-distribution-xyz") is None
    True
    """
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def library_versions() -> dict[str, str | None]:
    """``{distribution: version or None}`` for :data:`LIBRARIES`."""
    return {name: package_version(name) for name in LIBRARIES}


def compute_device(device: str | None = None) -> dict[str, Any]:
    """``{"device": ..., "gpu": ...}``: ``device`` as the run asked for it (``auto`` resolved
    the way :func:`foilbench.models.device.select_device` does), and the GPU's name on CUDA.

    Without torch imported in this process no local model ran: ``{"device": "none"}``."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {"device": "none", "gpu": None}
    try:
        if device in (None, "", "auto"):
            mps = getattr(torch.backends, "mps", None)
            device = ("cuda" if torch.cuda.is_available()
                      else "mps" if mps is not None and mps.is_available() else "cpu")
        gpu = None
        if str(device).startswith("cuda") and torch.cuda.is_available():
            index = str(device).partition(":")[2]
            gpu = torch.cuda.get_device_name(int(index) if index else 0)
    except Exception:  # noqa: BLE001 - provenance never fails a finished run
        return {"device": str(device or "unknown"), "gpu": None}
    return {"device": str(device), "gpu": gpu}
