"""Spend estimate and hard cap for a construction run.

A backend states what one call costs (``cost_per_call_usd``; 0 for local models, templates and
the world). Before a run, each pipeline states an upper bound on the calls each role may make
(:meth:`Budget.estimate`: calls x cost per call); the estimate is printed and, with
``--dry-run``, nothing else happens. During the run every call that is not answered from the
stage cache first *reserves* its cost: a reservation that would take the total past the cap
raises :class:`~foilbench.models.api.spend.SpendCapError` and the run stops. What finished is
in the cache, so rerunning with a higher cap (``--max-spend``, default
``FOILBENCH_API_SPEND_CAP`` or $5) resumes without paying twice. Cached calls cost nothing.

The cap is for the output folder, across resumes: every cached call records what it cost
(``usd``), and a resumed run starts from that sum (``prior``), so rerunning a stopped or killed
command with the same ``--max-spend`` cannot spend the cap a second time.

The API backends may keep their own token-based tracker (``models/api/spend.py``); this cap is
per run and per call, and the stricter of the two stops first.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from foilbench.construct.backends.base import Backend
from foilbench.models.api.spend import SpendCapError, cap_from_env


@dataclass
class Estimate:
    """Upper bound of calls per role and their price."""

    calls: dict[str, int] = field(default_factory=dict)
    usd: dict[str, float] = field(default_factory=dict)

    @property
    def total_usd(self) -> float:
        return sum(self.usd.values())

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def lines(self) -> list[str]:
        out = [f"  {role:<9} at most {n:>6} calls  ~${self.usd[role]:.4f}"
               for role, n in self.calls.items()]
        out.append(f"  total     at most {self.total_calls:>6} calls  "
                   f"~${self.total_usd:.4f} (cached calls are free)")
        return out


class Budget:
    """Per-run spend: reservation before each uncached call, hard stop at ``cap_usd``."""

    def __init__(self, cap_usd: float | None = None) -> None:
        self.cap = cap_from_env() if cap_usd is None else float(cap_usd)
        if self.cap < 0:
            raise ValueError(f"spend cap must be >= 0 USD, got {self.cap}")
        self.spent = 0.0  # by this process
        self.prior = 0.0  # by earlier runs into the same folder (set from the stage cache)
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def total(self) -> float:
        return self.prior + self.spent

    @staticmethod
    def estimate(plan: dict[str, int], backends: dict[str, Backend]) -> Estimate:
        """``plan`` maps a role to the most calls the run may make in it."""
        est = Estimate()
        for role, n in plan.items():
            if role not in backends or n <= 0:
                continue
            est.calls[role] = int(n)
            est.usd[role] = int(n) * float(backends[role].cost_per_call_usd)
        return est

    def reserve(self, backend: Backend) -> None:
        cost = float(backend.cost_per_call_usd)
        with self._lock:
            if self.prior + self.spent + cost > self.cap:
                before = f" (${self.prior:.4f} of it by earlier runs)" if self.prior else ""
                raise SpendCapError(
                    f"construction spend cap reached: ${self.prior + self.spent:.4f} spent into "
                    f"this folder{before}, ${self.spent:.4f} in {self.calls} call(s) now; "
                    f"the next {backend.role} call (${cost:.4f}, {backend.fingerprint}) would "
                    f"pass the cap of ${self.cap:.2f}. Rerun with a higher --max-spend to go "
                    "on: finished calls are cached and cost nothing again.")
            self.spent += cost
            self.calls += 1
