"""Auto-Comp's solvability study: people pick the true caption among an item's options.

Auto-Comp §6, Human Validation: "(2) Solvability: humans scored ~96% on both Swap and
Confusion across all tasks. The stable human performance, contrasted with the steep VLM
accuracy drop, indicates that the Confusion Gap reflects a model-specific weakness rather than
inherent task ambiguity." App. A.10: "Each evaluator assessed a balanced subset of 200
concepts (resulting in 400 images across Minimal and Contextual settings). 1. Swap Task:
Identifying the correct caption against a hard negative where attributes or objects were
swapped. 2. Confusion Task: Identifying the correct caption against a set of low-entropy
distractors (limited to 50 options for feasibility)." Table 20 gives raw scores "out of 50"
per task x N x condition and negative set.

A unit is one item of an Auto-Comp benchmark (one image, its true caption and its Swap or
Confusion negatives). The person sees the image and the options and picks one. The options
are the true caption and the item's false negatives; with more than 50, 49 negatives are
drawn with the seed (per item), the true caption always included; the order is shuffled with
the seed. Both are fixed in the sample on first use, so a resumed study shows the same options
in the same order. Then, per task x N x negative set x condition and overall,

    accuracy = #(pick = true caption) / #decided        (Wilson 95% interval)
    chance   = mean over decided items of 1 / #options

Where the paper is silent or we choose otherwise: (a) the negatives the benchmark flags as true
of the image (column ``true_negatives``: paraphrases and chains the drawn scene also
satisfies, :mod:`foilbench.construct.autocomp.truth`) are left out of the options, as
``r1_valid`` leaves them out, since a person cannot tell two true captions apart; their count
is kept per unit; (b) the Swap task is scored against all its negatives too (N! - 1; one at
N = 2), capped at 50 options like Confusion, where the paper names "a hard negative";
(c) the sample is ``n`` concepts balanced over task x N (:mod:`foilbench.review.study_sample`),
each bringing all its items (both conditions, both negative sets); the paper's "/50" per cell
is reached with ``n`` large enough to hold 50 concepts per (task, N).

Answers live in ``solvability.sqlite`` in the review folder
(:class:`foilbench.review.study_log.StudyLog`), one transaction each, the latest per unit
counting.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.hashing import sha256_text
from foilbench.review.study_log import LoggedStudy
from foilbench.review.study_sample import SAMPLE_SIZE, rate, sample_concepts
from foilbench.review.units import ReviewError

DB_FILE = "solvability.sqlite"
MAX_OPTIONS = 50  # App. A.10: "limited to 50 options for feasibility"
NEEDED = ("item_id", "image", "captions", "concept_id", "task", "n_objects", "condition",
          "negative_set")


@dataclass(frozen=True)
class SolvabilityUnit:
    key: str  # the item id
    image: str
    concept_id: str
    task: str
    n_objects: int
    condition: str
    negative_set: str
    options: tuple[str, ...]  # shown in this order
    answer: int  # position of the true caption in ``options``
    negatives: int  # false negatives the item has (before the 50-option cap)
    true_left_out: int  # negatives true of the image, not offered

    @property
    def group(self) -> str:
        return f"{self.task} N={self.n_objects} {self.negative_set} {self.condition}"

    def to_json(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_json(cls, d: dict) -> SolvabilityUnit:
        return cls(**{**d, "options": tuple(d["options"])})


def _true_indices(value, item_id: str) -> set[int]:
    try:
        return {int(v) for v in (value if value is not None else [])}
    except (TypeError, ValueError):
        raise ReviewError(f"item {item_id!r}: column 'true_negatives' must be a list of "
                          f"caption indices, got {value!r}") from None


def item_options(item_id: str, captions: list[str], true_negatives: set[int], seed: int,
                 cap: int = MAX_OPTIONS) -> tuple[tuple[str, ...], int, int]:
    """``(options, answer, false negatives)`` of one item (module docstring): the true
    caption and the false negatives, at most ``cap`` options, shuffled; seeded per item."""
    if cap < 2:
        raise ReviewError(f"at most {cap} option(s) leaves no negative to choose against")
    false = [c for k, c in enumerate(captions[1:], start=1) if k not in true_negatives]
    rng = np.random.default_rng([seed, int(sha256_text(item_id)[:15], 16)])
    shown = false
    if len(false) + 1 > cap:
        shown = [false[int(i)] for i in sorted(rng.choice(len(false), cap - 1, replace=False))]
    options = [captions[0], *shown]
    order = rng.permutation(len(options))
    return tuple(options[int(i)] for i in order), int(np.flatnonzero(order == 0)[0]), len(false)


def solvability_units(bench: Benchmark, seed: int = 0) -> list[SolvabilityUnit]:
    """One unit per item that has a false negative, sorted by key."""
    items = bench.items
    missing = [c for c in NEEDED if c not in items.columns]
    if missing:
        raise ReviewError(f"{bench.name}: not an Auto-Comp benchmark (items lack "
                          f"{', '.join(missing)}); the solvability study needs `foilbench "
                          "construct autocomp` or the suite's autocomp-* benchmarks")
    has_true = "true_negatives" in items.columns
    out = []
    for row in items.itertuples(index=False):
        key = str(row.item_id)
        caps = [str(c) for c in row.captions]
        true = _true_indices(row.true_negatives, key) if has_true else set()
        options, answer, false = item_options(key, caps, true, seed)
        if false == 0:
            continue
        out.append(SolvabilityUnit(key, str(row.image), str(row.concept_id), str(row.task),
                                   int(row.n_objects), str(row.condition),
                                   str(row.negative_set), options, answer, false,
                                   len(caps) - 1 - false))
    if not out:
        raise ReviewError(f"{bench.name}: no item has a negative false of its image")
    return sorted(out, key=lambda u: u.key)


def sample_units(units: list[SolvabilityUnit], n: int, seed: int) -> list[SolvabilityUnit]:
    """``n`` concepts round-robin over (task, N), each with all its items (module docstring)."""
    return [u for us in sample_concepts(units, n, seed) for u in us]


class SolvabilityStudy(LoggedStudy):
    """The sample and the picks of one person (module docstring)."""

    DB_FILE = DB_FILE

    def draw(self, n: int, seed: int) -> dict:
        units = sample_units(solvability_units(self.bench, seed), n, seed)
        return {"seed": seed, "n": n, "benchmark": self.bench.name,
                "max_options": MAX_OPTIONS, "units": [u.to_json() for u in units]}

    def units_of(self, meta: dict) -> list[SolvabilityUnit]:
        return [SolvabilityUnit.from_json(d) for d in meta["units"]]

    def decide(self, key: str, choice: object) -> None:
        """Record that the person picked option ``choice`` (its position) of item ``key``."""
        unit = self.unit_by_key.get(key)
        if unit is None:
            raise ReviewError(f"{key!r} is not an item of this sample")
        if isinstance(choice, bool) or not isinstance(choice, int) \
                or not 0 <= choice < len(unit.options):
            raise ReviewError(f"item {key!r}: the choice must be an option number from 0 to "
                              f"{len(unit.options) - 1}, got {str(choice)[:40]!r}")
        self.log.decide(key, str(choice))

    def current(self) -> dict[str, int]:
        """The latest pick (option position) per item."""
        return {k: int(v) for k, v in self.log.current().items() if k in self.unit_by_key}

    def progress(self) -> dict:
        done = len(self.current())
        return {"items": len(self.units), "decided": done, "pending": len(self.units) - done}

    def report(self) -> dict:
        rep = accuracy(self.units, self.current())
        rep["benchmark"], rep["max_options"] = self.bench.name, MAX_OPTIONS
        return rep



def accuracy(units: list[SolvabilityUnit], picks: dict[str, int]) -> dict:
    """Accuracy and chance, overall, per negative set and per task x N x set x condition."""

    def tally(us: list[SolvabilityUnit]) -> dict:
        decided = [u for u in us if u.key in picks]
        right = sum(picks[u.key] == u.answer for u in decided)
        return {"items": len(us), "decided": len(decided), "correct": right,
                "pending": len(us) - len(decided), "accuracy": rate(right, len(decided)),
                "chance": (sum(1 / len(u.options) for u in decided) / len(decided)
                           if decided else None),
                "options_max": max((len(u.options) for u in us), default=0)}

    def by(key) -> dict:
        groups: dict[str, list[SolvabilityUnit]] = {}
        for u in units:
            groups.setdefault(key(u), []).append(u)
        return {g: tally(us) for g, us in sorted(groups.items())}

    return {"overall": tally(units), "by_set": by(lambda u: u.negative_set),
            "by_group": by(lambda u: u.group)}


STEM = "solvability"  # solvability_report.json, solvability_decisions.parquet


def solvability_report(bench_dir: str | Path, review_dir: str | Path | None = None,
                       n: int = SAMPLE_SIZE, seed: int = 0) -> dict:
    """The study's report for a benchmark folder (the sample is fixed on first use)."""
    from foilbench.review.study_export import study_report

    return study_report(SolvabilityStudy, bench_dir, review_dir, n, seed)


def export_solvability(study: SolvabilityStudy, out_dir: str | Path) -> dict:
    """Write ``solvability_report.json`` and ``solvability_decisions.parquet`` (every pick in
    order, with its item's group, options and whether it was the true caption) to a new or
    empty ``out_dir``; returns the report."""
    from foilbench.review.study_export import export_study

    def row(seq: int, u: SolvabilityUnit, pick: str, at: str) -> dict:
        return {"seq": seq, "item_id": u.key, "task": u.task, "n_objects": u.n_objects,
                "negative_set": u.negative_set, "condition": u.condition,
                "options": len(u.options), "answer": u.answer, "pick": int(pick),
                "correct": int(pick) == u.answer, "picked_text": u.options[int(pick)],
                "at": at}

    return export_study(study, out_dir, STEM, row, ["seq", "item_id", "task", "n_objects",
                                                    "negative_set", "condition", "options",
                                                    "answer", "pick", "correct",
                                                    "picked_text", "at"])
