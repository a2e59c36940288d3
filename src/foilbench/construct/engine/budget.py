"""The spend bound printed before a construction run (and all that ``--dry-run`` does).

Each pipeline states the most calls each stage may make per role (``plan(config)`` returns
``{stage: {role: calls}}``, stage names as the run's log and call counters name them); each
backend states the most one call can cost (``cost_per_call_usd``: 0 for local models, templates
and the world; for API backends the same worst-case rule the ledger reserves with, including
the one longer retry of a cut reply, at the largest request the pipelines send). The product
is an upper bound per stage and backend; its sum is the run's bound, and the per-role totals
are the sums over stages.

The cap itself is held by the output folder's ledger (:mod:`.ledger`), per paid request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from foilbench.construct.backends.base import Backend

#: the stage name a flat ``{role: calls}`` plan is filed under
ALL_STAGES = "(all stages)"


@dataclass(frozen=True)
class Row:
    """One (stage, role) line of the bound: most calls, their price bound, the backend."""

    stage: str
    role: str
    calls: int
    usd: float
    backend: str


@dataclass
class Estimate:
    """Upper bound of calls per (stage, role) and their price (NaN: a backend with no price)."""

    rows: list[Row] = field(default_factory=list)
    #: what the folder's ledger already holds (billed + open reservations)
    committed_usd: float = 0.0

    @property
    def calls(self) -> dict[str, int]:
        """Most calls per role (summed over stages)."""
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.role] = out.get(r.role, 0) + r.calls
        return out

    @property
    def usd(self) -> dict[str, float]:
        """Price bound per role (summed over stages)."""
        out: dict[str, float] = {}
        for r in self.rows:
            out[r.role] = out.get(r.role, 0.0) + r.usd
        return out

    @property
    def backend(self) -> dict[str, str]:
        return {r.role: r.backend for r in self.rows}

    @property
    def stage_usd(self) -> dict[str, float]:
        """Price bound per stage (summed over its roles)."""
        out: dict[str, float] = {}
        for r in self.rows:
            out[r.stage] = out.get(r.stage, 0.0) + r.usd
        return out

    @property
    def total_usd(self) -> float:
        return sum(r.usd for r in self.rows)

    @property
    def total_calls(self) -> int:
        return sum(r.calls for r in self.rows)

    def lines(self) -> list[str]:
        """The per-stage table, then one line per role and backend, then the total."""
        def usd(v: float) -> str:
            return "unpriced" if math.isnan(v) else f"${v:.4f}"

        width = max([len(r.stage) for r in self.rows] + [5])
        out = [f"  {'stage':<{width}}  {'role':<9} {'calls':>7}  {'at most':>10}  backend"]
        out += [f"  {r.stage:<{width}}  {r.role:<9} {r.calls:>7}  {usd(r.usd):>10}  {r.backend}"
                for r in self.rows]
        out.append("  per role and backend:")
        out += [f"  {role:<9} at most {n:>6} calls  at most {usd(self.usd[role])}  "
                f"({self.backend.get(role, '')})" for role, n in self.calls.items()]
        out.append(f"  total     at most {self.total_calls:>6} calls  at most "
                   f"{usd(self.total_usd)} (cached calls are free)")
        if self.committed_usd:
            out.append(f"  already committed into this folder: ${self.committed_usd:.4f}")
        return out


def estimate(plan: dict, backends: dict[str, Backend]) -> Estimate:
    """``plan`` maps a stage to ``{role: most calls}`` (a flat ``{role: calls}`` counts as one
    stage, :data:`ALL_STAGES`); stages and roles with no backend or no call are left out.

    >>> class B:
    ...     cost_per_call_usd, spec = 0.25, "api:x:y"
    >>> est = estimate({"a": {"text": 10, "image": 3}, "b": {"text": 2}}, {"text": B()})
    >>> est.usd, est.stage_usd
    ({'text': 3.0}, {'a': 2.5, 'b': 0.5})
    """
    if plan and all(isinstance(v, int) for v in plan.values()):
        plan = {ALL_STAGES: plan}
    est = Estimate()
    for stage, roles in plan.items():
        for role, n in roles.items():
            if role not in backends or n <= 0:
                continue
            b = backends[role]
            est.rows.append(Row(stage, role, int(n), int(n) * float(b.cost_per_call_usd),
                                str(getattr(b, "spec", "") or getattr(b, "fingerprint", ""))))
    return est
