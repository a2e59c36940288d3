"""Checks before the first paid call of a construction run: every API key the chosen backends
need is set, every paid model can be priced, and each API backend pays into the run's ledger.

Why up front: a run that fails on its 200th call for a missing key or an unknown price has
already spent money on 199 calls it may not be able to use.
"""

from __future__ import annotations

from typing import Any

from foilbench.construct.backends.api_common import missing_keys
from foilbench.construct.backends.api_image import IMAGE_PROVIDERS, KEY_PROVIDER
from foilbench.errors import FoilbenchError


class PreflightError(FoilbenchError):
    """A construction run cannot start paying: a key or a price is missing."""


def api_parts(backends: dict[str, Any]) -> list[tuple[str, Any]]:
    """(role, the object holding ``provider``, ``model`` and ``caller``) per API backend."""
    out = []
    for role, b in backends.items():
        obj = getattr(b, "impl", b)
        if getattr(obj, "caller", None) is not None and getattr(obj, "provider", None):
            out.append((role, obj))
    return out


def preflight(backends: dict[str, Any], ledger: Any) -> None:
    """Raise :class:`PreflightError` naming what to set; bind ``ledger`` to every API backend."""
    parts = api_parts(backends)
    keys = missing_keys({KEY_PROVIDER.get(o.provider, o.provider) for _, o in parts})
    if keys:
        raise PreflightError(f"missing API key(s) for the chosen backends: set {', '.join(keys)} "
                             "in the environment before the run (nothing was spent)")
    for role, obj in parts:
        try:
            ledger.prices.require(obj.provider, obj.model, image=obj.provider in IMAGE_PROVIDERS)
        except FoilbenchError as e:
            raise PreflightError(f"--{role} {obj.spec}: {e}") from None
        obj.caller.bind_ledger(ledger)
