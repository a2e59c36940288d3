"""The spend bound printed before a construction run (and all that ``--dry-run`` does).

Each pipeline states the most calls each role may make (``plan(config)``); each backend states
the most one call can cost (``cost_per_call_usd``: 0 for local models, templates and the world;
for API backends the same worst-case rule the ledger reserves with, including the one longer
retry of a cut reply, at the largest request the pipelines send). The product is an upper
bound per role and backend; pipelines plan per role, so the bound is not split by stage.

The cap itself is held by the output folder's ledger (:mod:`.ledger`), per paid request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from foilbench.construct.backends.base import Backend


@dataclass
class Estimate:
    """Upper bound of calls per role and their price (NaN: a backend with no known price)."""

    calls: dict[str, int] = field(default_factory=dict)
    usd: dict[str, float] = field(default_factory=dict)
    backend: dict[str, str] = field(default_factory=dict)
    #: what the folder's ledger already holds (billed + open reservations)
    committed_usd: float = 0.0

    @property
    def total_usd(self) -> float:
        return sum(self.usd.values())

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def lines(self) -> list[str]:
        def usd(v: float) -> str:
            return "unpriced" if math.isnan(v) else f"${v:.4f}"

        out = [f"  {role:<9} at most {n:>6} calls  at most {usd(self.usd[role])}  "
               f"({self.backend.get(role, '')})" for role, n in self.calls.items()]
        out.append(f"  total     at most {self.total_calls:>6} calls  at most "
                   f"{usd(self.total_usd)} (cached calls are free)")
        if self.committed_usd:
            out.append(f"  already committed into this folder: ${self.committed_usd:.4f}")
        return out


def estimate(plan: dict[str, int], backends: dict[str, Backend]) -> Estimate:
    """``plan`` maps a role to the most calls the run may make in it.

    >>> class B:
    ...     cost_per_call_usd, spec = 0.25, "api:x:y"
    >>> estimate({"text": 10, "image": 0}, {"text": B()}).usd
    {'text': 2.5}
    """
    est = Estimate()
    for role, n in plan.items():
        if role not in backends or n <= 0:
            continue
        b = backends[role]
        est.calls[role] = int(n)
        est.usd[role] = int(n) * float(b.cost_per_call_usd)
        est.backend[role] = str(getattr(b, "spec", "") or getattr(b, "fingerprint", ""))
    return est
