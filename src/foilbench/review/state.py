"""A review in progress: the units of a benchmark plus the standing decisions, and what follows.

Rules (CompoSET App. B.4, see :mod:`foilbench.review.rubric` for the quotes and our choices):

- a scene is pending, accepted or rejected at base review;
- an instance of a rejected scene is *invalidated*, whatever was decided on it;
- verbosity review covers only kept instances (accepted at instance review) that have a medium
  or long tier; before that it is *waiting*, and after an instance reject it is not needed;
- an instance is *kept* when its scene and the instance are accepted and, if it has longer
  tiers, its verbosity review too; it is *discarded* when any of these is rejected.

Rates, all strict proportions over decided units only (pending units are in no denominator):

- phase discard rate = rejects / (accepts + rejects) of that phase; for the instance phase this
  is CompoSET's "phase-two discard rate" (22.4%), invalidated instances excluded;
- criterion rate = rejects naming the criterion / decided units of its phase (a reject may name
  several criteria, so these can sum above the phase rate);
- overall discard rate = discarded / (kept + discarded) instances, base invalidations included.

Each rate carries a Wilson 95% interval (CompoSET App. C uses Wilson for its audit rates).

A decision applies only to the unit it judged: one stored with a content hash that differs from
the unit's hash now (a rebuild changed its images or captions) is left out of every status and
rate, and the unit is pending again and listed for re-review (:meth:`ReviewSession.changed`).
Decisions stored before hashing (an empty hash) still apply: there is nothing to compare.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from foilbench.review.rubric import PHASE_KEYS, criterion_keys
from foilbench.review.store import Decision, DecisionStore
from foilbench.review.units import ReviewError, ReviewUnits
from foilbench.stats.intervals import wilson_ci

STATUSES = ("pending", "accept", "reject", "invalidated", "waiting", "not_needed")


def rate(k: int, n: int) -> dict:
    """``k / n`` with its Wilson 95% interval; ``None`` values when nothing is decided."""
    if n <= 0:
        return {"k": k, "n": n, "rate": None, "ci_low": None, "ci_high": None}
    lo, hi = wilson_ci(k, n)
    return {"k": k, "n": n, "rate": k / n, "ci_low": lo, "ci_high": hi}


@dataclass
class Snapshot:
    """Statuses of every unit at one moment (decisions read once, so all views agree)."""

    units: ReviewUnits
    decisions: dict[tuple[str, str], Decision]
    #: (phase, key) whose stored decision judged other content (listed for re-review)
    changed: frozenset = frozenset()

    def decision(self, phase: str, key: str) -> Decision | None:
        return self.decisions.get((phase, key))

    def scene_status(self, key: str) -> str:
        d = self.decision("base", key)
        return d.verdict if d else "pending"

    def instance_status(self, key: str) -> str:
        inst = self.units.instance_by_key[key]
        if self.scene_status(inst.scene) == "reject":
            return "invalidated"
        d = self.decision("instance", key)
        return d.verdict if d else "pending"

    def verbosity_status(self, key: str) -> str:
        inst = self.units.instance_by_key[key]
        if not inst.has_verbosity:
            return "not_needed"
        upstream = self.instance_status(key)
        if upstream in ("invalidated", "reject"):
            return "not_needed"
        d = self.decision("verbosity", key)
        if d:
            return d.verdict
        return "pending" if upstream == "accept" else "waiting"

    def status(self, phase: str, key: str) -> str:
        return {"base": self.scene_status, "instance": self.instance_status,
                "verbosity": self.verbosity_status}[phase](key)

    def outcome(self, key: str) -> str:
        """``kept``, ``discarded`` or ``pending`` for one instance (see module doc)."""
        inst = self.units.instance_by_key[key]
        stages = [self.scene_status(inst.scene), self.instance_status(key)]
        if inst.has_verbosity:
            stages.append(self.verbosity_status(key))
        if any(s in ("reject", "invalidated") for s in stages):
            return "discarded"
        if all(s in ("accept", "not_needed") for s in stages):
            return "kept"
        return "pending"

    def kept_keys(self) -> list[str]:
        return [i.key for i in self.units.instances if self.outcome(i.key) == "kept"]

    # -- queues and progress --------------------------------------------------------------

    def queue(self, phase: str, edit_type: str = "", verdict: str = "") -> list[dict]:
        """Units of a phase in table order, filtered by edit type and status."""
        if phase not in PHASE_KEYS:
            raise ReviewError(f"unknown review phase {phase!r}")
        out = []
        for key in self.units.keys(phase):
            if phase == "base":
                scene = self.units.scene_by_key[key]
                types = sorted({self.units.instance_by_key[k].edit_type
                                for k in scene.instance_keys})
            else:
                types = [self.units.instance_by_key[key].edit_type]
            status = self.status(phase, key)
            if edit_type and edit_type not in types:
                continue
            if verdict and status != verdict:
                continue
            out.append({"key": key, "status": status, "edit_types": types,
                        "changed": (phase, key) in self.changed})
        return out

    def pending(self) -> dict[str, int]:
        """Units still to decide per phase (verbosity counts waiting ones too)."""
        counts = {p: 0 for p in PHASE_KEYS}
        for phase in PHASE_KEYS:
            for key in self.units.keys(phase):
                if self.status(phase, key) in ("pending", "waiting"):
                    counts[phase] += 1
        return counts

    def resume_position(self) -> dict | None:
        """The first pending unit, phases in order: where a stopped review picks up."""
        for phase in PHASE_KEYS:
            for key in self.units.keys(phase):
                if self.status(phase, key) == "pending":
                    return {"phase": phase, "key": key}
        return None

    def progress(self) -> dict:
        done = total = 0
        for phase in PHASE_KEYS:
            for key in self.units.keys(phase):
                total += 1
                done += self.status(phase, key) not in ("pending", "waiting")
        return {"done": done, "total": total, "fraction": done / total if total else 1.0}

    # -- rates ----------------------------------------------------------------------------

    def phase_stats(self, phase: str, keys: list[str] | None = None) -> dict:
        keys = self.units.keys(phase) if keys is None else keys
        statuses = Counter(self.status(phase, k) for k in keys)
        decided = statuses["accept"] + statuses["reject"]
        failed = Counter(c for k in keys if self.status(phase, k) == "reject"
                         for c in self.decision(phase, k).failed)
        return {"units": len(keys), **{s: statuses[s] for s in STATUSES},
                "discard": rate(statuses["reject"], decided),
                "by_criterion": {c: rate(failed[c], decided) for c in criterion_keys(phase)}}

    def edit_type_stats(self) -> dict[str, dict]:
        out = {}
        for et in self.units.edit_types:
            keys = [i.key for i in self.units.instances if i.edit_type == et]
            outcomes = Counter(self.outcome(k) for k in keys)
            inst = self.phase_stats("instance", keys)
            verb = self.phase_stats("verbosity", [k for k in keys
                                                  if self.units.instance_by_key[k].has_verbosity])
            out[et] = {"instances": len(keys), "kept": outcomes["kept"],
                       "discarded": outcomes["discarded"], "pending": outcomes["pending"],
                       "invalidated": inst["invalidated"],
                       "instance_discard": inst["discard"],
                       "instance_by_criterion": inst["by_criterion"],
                       "verbosity_discard": verb["discard"],
                       "overall_discard": rate(outcomes["discarded"],
                                               outcomes["kept"] + outcomes["discarded"])}
        return out

    def summary(self) -> dict:
        outcomes = Counter(self.outcome(i.key) for i in self.units.instances)
        return {
            "progress": self.progress(),
            "pending": self.pending(),
            "phases": {p: self.phase_stats(p) for p in PHASE_KEYS},
            "by_edit_type": self.edit_type_stats(),
            "overall": {"instances": len(self.units.instances), "kept": outcomes["kept"],
                        "discarded": outcomes["discarded"], "pending": outcomes["pending"],
                        "discard": rate(outcomes["discarded"],
                                        outcomes["kept"] + outcomes["discarded"])},
            "resume": self.resume_position(),
            "rereview": [{"phase": p, "key": k} for p, k in sorted(self.changed)],
        }


class ReviewSession:
    """Units plus their decision store; every write checks the unit against the rules."""

    def __init__(self, units: ReviewUnits, store: DecisionStore):
        self.units = units
        self.store = store

    def snapshot(self) -> Snapshot:
        applied, changed = {}, set()
        for (phase, key), d in self.store.current().items():
            now = self.units.digest(phase, key)
            if d.unit_hash and now and d.unit_hash != now:
                changed.add((phase, key))
            else:
                applied[(phase, key)] = d
        return Snapshot(self.units, applied, frozenset(changed))

    def changed(self) -> list[tuple[str, str]]:
        """Decided units whose content changed since the decision (to review again)."""
        return sorted(self.snapshot().changed)

    def decide(self, phase: str, key: str, verdict: str, failed=(), note: str = "",
               session: str = "") -> Decision:
        if phase not in PHASE_KEYS:
            raise ReviewError(f"unknown review phase {phase!r}")
        if key not in set(self.units.keys(phase)):
            raise ReviewError(f"no {phase} unit {key!r} in this benchmark")
        snap = self.snapshot()
        status = snap.status(phase, key)
        if status == "invalidated":
            scene = self.units.instance_by_key[key].scene
            raise ReviewError(f"instance {key!r} is invalidated: its scene {scene!r} was "
                              "rejected at base review (change that decision first)")
        if phase == "verbosity" and status in ("waiting", "not_needed"):
            raise ReviewError(f"verbosity review of {key!r} needs the instance accepted first "
                              f"(instance status: {snap.instance_status(key)})")
        return self.store.decide(phase, key, verdict, failed, note, session=session,
                                 unit_hash=self.units.digest(phase, key))

    def undo(self, session: str | None = None) -> Decision | None:
        """Undo the latest decision of reviewer ``session`` (a :func:`session_tag`)."""
        return self.store.undo(session)
