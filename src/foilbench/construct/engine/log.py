"""The construction log and the per-stage survival table.

Every candidate a pipeline creates (a scene, a foil instance, a caption x negative type, a
concept track) is *accounted for*: it ends with exactly one outcome,

    kept         in the written benchmark
    dropped      removed at a named stage, with the reason (never silently)
    expanded     fanned out into children (a scene into its foil instances)
    not reached  the run stopped first (``not reached: spend cap``): the survival tables are
                 still written, and a resume with a higher cap picks these up from the cache

and every stage it passes through appends an event with what went in, what came out, the
backend fingerprint and call key, and any validator verdicts. The log is JSON Lines
(``construction_log.jsonl``), rewritten from the start on every run: the stage cache, not the
log, is what makes a run resumable, and a resumed run replays cached calls into a fresh log.

A stage is run inside :meth:`ConstructionLog.stage`; when it ends, every candidate that entered
must have passed, been dropped or expanded, or the stage raises (an accounting bug, not data).
The survival table (Auto-Comp Table 3 style) is one row per stage: candidates in, passed,
dropped by reason. A check that could not run (no ``--detector``) passes its candidates with
:meth:`StageRun.unchecked`, and the table says ``not checked`` for them: a check that did not
run is never reported as 100% passed. Candidate ids must be unique within a run (a second
``created`` of one id is refused with the id: two input records that map to one id would
otherwise merge silently or crash the bookkeeping).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilbench.errors import FoilbenchError, SpendCapReached

LOG_FILE = "construction_log.jsonl"
NOT_REACHED = "not reached"
#: drop causes kept verbatim per (stage, reason) for the end-of-run report
DROP_EXAMPLES = 3


@dataclass
class Candidate:
    """One unit of construction. ``data`` accumulates stage outputs (any Python values);
    only what a stage logs is written to disk."""

    id: str
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None


@dataclass
class StageRow:
    stage: str
    unit: str
    entered: int = 0
    passed: int = 0
    expanded_into: int = 0
    dropped: Counter = field(default_factory=Counter)
    #: candidates passed without the check being made, by why (e.g. "no --detector")
    not_checked: Counter = field(default_factory=Counter)
    #: candidates passed with one part of the check not made, by "part (why)"
    part_unchecked: Counter = field(default_factory=Counter)
    #: why the stage ended before every candidate was decided (e.g. "spend cap")
    stopped: str | None = None

    def to_dict(self) -> dict:
        unchecked = sum(self.not_checked.values())
        checked = self.entered - unchecked
        status = ("stopped" if self.stopped else "not checked" if self.entered and not checked
                  else "partly checked" if unchecked or self.part_unchecked else "checked")
        return {"stage": self.stage, "unit": self.unit, "in": self.entered, "out": self.passed,
                "expanded_into": self.expanded_into, "dropped": sum(self.dropped.values()),
                "dropped_by_reason": dict(sorted(self.dropped.items())),
                "not_checked": unchecked,
                "not_checked_by_reason": dict(sorted(self.not_checked.items())),
                "part_not_checked": dict(sorted(self.part_unchecked.items())),
                "status": status, "stopped": self.stopped,
                # over the candidates the check was made on; None when it was made on none
                "survival": ((self.passed - unchecked) / checked)
                if checked > 0 and not self.stopped else None}


class AccountingError(AssertionError):
    """A stage ended with a candidate neither passed nor dropped (a pipeline bug)."""


class DuplicateIdError(FoilbenchError):
    """Two candidates of one run got the same id (two input records map to one id)."""


class StageRun:
    """Bookkeeping of one stage over its entering candidates."""

    def __init__(self, log: ConstructionLog, name: str, candidates: list[Candidate],
                 unit: str) -> None:
        self.log, self.name, self.unit = log, name, unit
        self.row = StageRow(name, unit, entered=len(candidates))
        self._open = {c.id: c for c in candidates}
        self.survivors: list[Candidate] = []
        self.children: list[Candidate] = []

    def event(self, cand: Candidate, **fields: Any) -> None:
        self.log.write({"item": cand.id, "stage": self.name, **fields})

    def passed(self, cand: Candidate, **fields: Any) -> None:
        self._close(cand)
        self.row.passed += 1
        self.survivors.append(cand)
        if fields:
            self.event(cand, **fields)

    def unchecked(self, cand: Candidate, why: str, part: str | None = None,
                  **fields: Any) -> None:
        """Pass ``cand`` on without this stage's check (it could not be made: ``why``, e.g.
        "no --detector"); counted as not checked, never as passed the check. With ``part``
        only that part of the check was not made (the rest passed): counted per part."""
        self._close(cand)
        self.row.passed += 1
        if part is None:
            self.row.not_checked[why] += 1
        else:
            self.row.part_unchecked[f"{part} ({why})"] += 1
        self.survivors.append(cand)
        self.event(cand, not_checked=why if part is None else f"{part}: {why}", **fields)

    def drop(self, cand: Candidate, reason: str, **fields: Any) -> None:
        """Remove ``cand`` here; ``reason`` is a short, countable phrase (details in fields)."""
        self._close(cand)
        self.row.dropped[reason] += 1
        self.log.note_drop(self.name, reason, fields.get("error"))
        self.log.outcome(cand, "dropped", stage=self.name, reason=reason, **fields)

    def expand(self, cand: Candidate, children: Iterable[Candidate], **fields: Any) -> None:
        """Replace ``cand`` by its children (they continue to the next stage)."""
        self._close(cand)
        kids = list(children)
        for kid in kids:
            kid.parent = cand.id
            self.log.created(kid, stage=self.name)
        self.row.expanded_into += len(kids)
        self.row.passed += 1
        self.children.extend(kids)
        self.log.outcome(cand, "expanded", stage=self.name, children=len(kids), **fields)

    def _close(self, cand: Candidate) -> None:
        if self._open.pop(cand.id, None) is None:
            raise AccountingError(f"stage {self.name}: {cand.id} was not open here (closed "
                                  "twice, or never entered)")

    def finish(self) -> None:
        if self._open:
            some = ", ".join(sorted(self._open)[:5])
            raise AccountingError(f"stage {self.name}: {len(self._open)} candidate(s) neither "
                                  f"passed nor dropped: {some}")


class ConstructionLog:
    """Writes ``construction_log.jsonl`` and keeps the survival rows (see module docstring)."""

    def __init__(self, out_dir: str | Path) -> None:
        self.path = Path(out_dir) / LOG_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.rows: list[StageRow] = []
        self.outcomes: Counter = Counter()
        self._open: dict[str, Candidate] = {}  # created, no outcome yet
        self._ids: set[str] = set()
        self.drops: dict[tuple[str, str], dict] = {}  # (stage, reason) -> count, examples

    def write(self, record: dict) -> None:
        self._file.write(json.dumps(record, sort_keys=True, default=_plain) + "\n")

    def created(self, cand: Candidate, stage: str = "", **fields: Any) -> None:
        if cand.id in self._ids:
            raise DuplicateIdError(
                f"two candidates share the id {cand.id!r} (stage {stage or 'input'}): two "
                "input records map to one id; make the input's ids (file names, keys) unique")
        self._ids.add(cand.id)
        self._open[cand.id] = cand
        self.write({"item": cand.id, "event": "created", "kind": cand.kind,
                    "parent": cand.parent, "stage": stage, **fields})

    def outcome(self, cand: Candidate, outcome: str, **fields: Any) -> None:
        self._open.pop(cand.id, None)
        self.outcomes[(cand.kind, outcome)] += 1
        self.write({"item": cand.id, "event": "outcome", "kind": cand.kind,
                    "outcome": outcome, **fields})

    def keep_all(self, candidates: Iterable[Candidate], **fields: Any) -> None:
        for cand in candidates:
            self.outcome(cand, "kept", **fields)

    def note_drop(self, stage: str, reason: str, error: Any = None) -> None:
        """Count a drop and keep its first few distinct causes verbatim (for the console)."""
        entry = self.drops.setdefault((stage, reason), {"n": 0, "examples": []})
        entry["n"] += 1
        if error and str(error) not in entry["examples"] \
                and len(entry["examples"]) < DROP_EXAMPLES:
            entry["examples"].append(str(error))

    def drop_causes(self) -> list[dict]:
        """Every (stage, reason) that dropped candidates, with counts and example causes."""
        return [{"stage": st, "reason": r, **v} for (st, r), v in self.drops.items()]

    def not_reached(self, why: str) -> int:
        """Give every candidate still without an outcome ``not reached: why``; how many."""
        open_now = list(self._open.values())
        for cand in open_now:
            self.outcome(cand, NOT_REACHED, reason=f"{NOT_REACHED}: {why}")
        return len(open_now)

    @contextmanager
    def stage(self, name: str, candidates: list[Candidate],
              unit: str | None = None) -> Iterator[StageRun]:
        run = StageRun(self, name, candidates, unit or (candidates[0].kind if candidates
                                                        else ""))
        try:
            yield run
        except SpendCapReached:  # the row is kept: the survival table shows where it stopped
            run.row.stopped = "spend cap"
            self.rows.append(run.row)
            self._file.flush()
            raise
        run.finish()
        self.rows.append(run.row)
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()

    def survival(self) -> list[dict]:
        return [r.to_dict() for r in self.rows]


def _plain(value: Any) -> Any:
    """JSON fallback for log fields: numpy scalars and arrays, tuples, anything else by repr."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return repr(value)


def read_log(path: str | Path) -> list[dict]:
    """All records of a construction log (for tests and the review app)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]


def account(records: list[dict]) -> dict[str, Any]:
    """Check a log: every created candidate has exactly one outcome. Returns per kind the
    counts ``{"created", "kept", "dropped", "expanded"}`` and ``problems`` (empty when the log
    accounts for every candidate)."""
    created = {r["item"]: r["kind"] for r in records if r.get("event") == "created"}
    outcomes: dict[str, list[str]] = {}
    for r in records:
        if r.get("event") == "outcome":
            outcomes.setdefault(r["item"], []).append(r["outcome"])
    problems = [f"{i}: no outcome" for i in created if i not in outcomes]
    problems += [f"{i}: {len(o)} outcomes {o}" for i, o in outcomes.items() if len(o) != 1]
    problems += [f"{i}: outcome but never created" for i in outcomes if i not in created]
    per_kind: dict[str, Counter] = {}
    for item, kind in created.items():
        c = per_kind.setdefault(kind, Counter())
        c["created"] += 1
        for o in outcomes.get(item, []):
            c[o] += 1
    return {"kinds": {k: dict(v) for k, v in per_kind.items()}, "problems": problems}


SURVIVAL_HEADERS = ("stage", "unit", "in", "out", "dropped", "survival", "why dropped")


def survival_cells(rows: list[dict]) -> list[tuple]:
    """The survival rows as table cells (headers :data:`SURVIVAL_HEADERS`); ``out`` reads
    ``passed -> children`` for a fan-out stage."""
    body = []
    for r in rows:
        reasons = "; ".join(f"{k} {v}" for k, v in r["dropped_by_reason"].items())
        out = r["out"] if not r["expanded_into"] else f"{r['out']} -> {r['expanded_into']}"
        body.append((r["stage"], r["unit"], r["in"], out, r["dropped"], survival_text(r),
                     reasons))
    return body


def survival_text(row: dict) -> str:
    """The survival cell: a rate over checked candidates, ``not checked (why)`` when the check
    ran on none, the unchecked count beside a partial rate, ``stopped (why)`` for a stage the
    run ended in (rows written before these fields read as before)."""
    why = "; ".join(f"{k}" for k in (row.get("not_checked_by_reason") or {}))
    unchecked = int(row.get("not_checked") or 0)
    if row.get("survival") is None:
        text = f"not checked ({why})" if unchecked else ""
    else:
        text = f"{100 * row['survival']:.1f}%"
        if unchecked:  # the rate is over the checked ones only: say how many that is
            checked = int(row.get("in") or 0) - unchecked
            text += f" of {checked} checked; {unchecked} passed unchecked ({why})"
    for part, n in (row.get("part_not_checked") or {}).items():
        text += f"; {n} without {part}"
    if row.get("stopped"):
        text = (text + " " if text else "") + f"stopped ({row['stopped']})"
    return text
