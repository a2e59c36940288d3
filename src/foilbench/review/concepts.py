"""Human validation of Auto-Comp's automatic validator on a seeded sample of concepts.

Auto-Comp §6, Human Validation: "four graduate-level evaluators assessed 200 concepts balanced
across all configurations. (1) Concordance: our automated VLM judge achieved >94% agreement
with humans on every task family and complexity"; App. A.10: "Each evaluator assessed a
balanced subset of 200 concepts (resulting in 400 images across Minimal and Contextual
settings)". (The issue cites A.8; in our copy A.8 is the blind-LLM check and the human study
is §6 / A.10.)

A unit is one validated image of an ``autocomp`` benchmark (a concept in one condition); the
reviewer sees the image and the concept (its objects with their colours, or its relation
chain) and answers "match" (every object there, in its number, with its attribute or
relation), "mismatch", or "unsure". Every sampled image passed the automatic checks, so the
agreement rate is matches / (matches + mismatches), unsure answers counted apart, with a
Wilson 95% interval, overall and per task family x N x condition (Table 11's breakdown).
The paper does not say how its 200 were balanced; ours: the images are grouped by (task, N,
condition), each group shuffled with the seed, then taken round-robin until the sample size.

Decisions live in their own SQLite file (``concept_checks.sqlite`` in the review folder), one
transaction each, history kept (the latest decision per unit counts); the sample (seed, size,
unit keys) is fixed in it on first use, so a resumed review sees the same images.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from foilbench.data.format import Benchmark
from foilbench.review.units import ReviewError
from foilbench.stats.intervals import wilson_ci

DB_FILE = "concept_checks.sqlite"
VERDICTS = ("match", "mismatch", "unsure")
SAMPLE_SIZE = 200  # Auto-Comp A.10: "a balanced subset of 200 concepts"
NEEDED = ("concept_id", "condition", "image", "task", "objects", "values", "n_objects")


@dataclass(frozen=True)
class ConceptUnit:
    key: str  # "<concept_id>/<condition>"
    image: str
    task: str
    n_objects: int
    condition: str
    objects: tuple[str, ...]
    values: tuple[str, ...]
    caption: str

    def concept_text(self) -> str:
        """The concept as the reviewer reads it: "cup: red; lamp: blue" or "cup under lamp"."""
        if len(self.values) == len(self.objects):
            return "; ".join(f"{o}: {v}" for o, v in zip(self.objects, self.values, strict=True))
        parts = [self.objects[0]]
        for i, rel in enumerate(self.values):
            parts.append(f"{rel} {self.objects[i + 1]}")
        return " ".join(parts)

    @property
    def group(self) -> str:
        return f"{self.task} N={self.n_objects} {self.condition}"


def concept_units(bench: Benchmark) -> list[ConceptUnit]:
    """One unit per validated image (concept x condition) of an ``autocomp`` benchmark."""
    items = bench.items
    missing = [c for c in NEEDED if c not in items.columns]
    if missing:
        raise ReviewError(f"{bench.name}: not an Auto-Comp benchmark built by `foilbench "
                          f"construct autocomp` (items lack {', '.join(missing)})")
    out: dict[str, ConceptUnit] = {}
    for row in items.itertuples(index=False):
        key = f"{row.concept_id}/{row.condition}"
        if key not in out:
            out[key] = ConceptUnit(key, str(row.image), str(row.task), int(row.n_objects),
                                   str(row.condition), tuple(row.objects), tuple(row.values),
                                   str(row.captions[0]))
    return sorted(out.values(), key=lambda u: u.key)


def balanced_sample(units: list[ConceptUnit], n: int, seed: int) -> list[ConceptUnit]:
    """Up to ``n`` units, round-robin over (task, N, condition) groups, each shuffled with
    ``seed`` (module docstring)."""
    if n < 1:
        raise ReviewError(f"the sample size must be at least 1, got {n}")
    groups: dict[str, list[ConceptUnit]] = {}
    for u in units:
        groups.setdefault(u.group, []).append(u)
    rng = np.random.default_rng(seed)
    queues = [[g[int(i)] for i in rng.permutation(len(g))] for _, g in sorted(groups.items())]
    out: list[ConceptUnit] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out


class ConceptChecks:
    """The sample and the decisions of one reviewer (SQLite, one transaction per decision)."""

    def __init__(self, bench: Benchmark, folder: str | Path, n: int = SAMPLE_SIZE,
                 seed: int = 0) -> None:
        self.bench = bench
        self.path = Path(folder) / DB_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # the web app answers from worker threads: one connection, serialised by a lock
        self.db = sqlite3.connect(self.path, check_same_thread=False)
        self.lock = threading.Lock()
        with self.db:
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self.db.execute("CREATE TABLE IF NOT EXISTS decisions (seq INTEGER PRIMARY KEY "
                            "AUTOINCREMENT, unit TEXT NOT NULL, verdict TEXT NOT NULL, "
                            "at TEXT NOT NULL)")
        by_key = {u.key: u for u in concept_units(bench)}
        stored = self._meta("sample")
        if stored is None:
            sample = balanced_sample(list(by_key.values()), n, seed)
            with self.db:
                self.db.execute("INSERT INTO meta VALUES ('sample', ?)", (json.dumps(
                    {"seed": seed, "n": n, "benchmark": bench.name,
                     "keys": [u.key for u in sample]}),))
        else:
            meta = json.loads(stored)
            if (meta["seed"], meta["n"]) != (seed, n):
                raise ReviewError(f"{self.path} holds a sample drawn with seed {meta['seed']} "
                                  f"and size {meta['n']}; pass those, or use another "
                                  "--review-dir for a new sample")
            gone = [k for k in meta["keys"] if k not in by_key]
            if gone:
                raise ReviewError(f"{self.path}: the benchmark no longer has sampled image "
                                  f"{gone[0]!r}; use another --review-dir")
            sample = [by_key[k] for k in meta["keys"]]
        self.units = sample
        self.unit_by_key = {u.key: u for u in sample}

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def decide(self, key: str, verdict: str) -> None:
        if key not in self.unit_by_key:
            raise ReviewError(f"{key!r} is not an image of this sample")
        if verdict not in VERDICTS:
            raise ReviewError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        with self.lock, self.db:
            self.db.execute("INSERT INTO decisions (unit, verdict, at) VALUES (?, ?, ?)",
                            (key, verdict, datetime.now(timezone.utc).isoformat(timespec="seconds")))

    def current(self) -> dict[str, str]:
        """The latest verdict per unit."""
        with self.lock:
            rows = self.db.execute("SELECT unit, verdict FROM decisions ORDER BY seq").fetchall()
        return {unit: verdict for unit, verdict in rows}

    def report(self) -> dict:
        """Agreement of the human verdicts with the validator (module docstring)."""
        return agreement(self.units, self.current())

    def close(self) -> None:
        self.db.close()


def _rate(k: int, n: int) -> dict:
    if n == 0:
        return {"k": k, "n": n, "rate": None, "ci_low": None, "ci_high": None}
    lo, hi = wilson_ci(k, n)
    return {"k": k, "n": n, "rate": k / n, "ci_low": lo, "ci_high": hi}


def agreement(units: list[ConceptUnit], verdicts: dict[str, str]) -> dict:
    """Overall and per-group agreement: matches / (matches + mismatches)."""

    def tally(us: list[ConceptUnit]) -> dict:
        got = [verdicts.get(u.key) for u in us]
        match, mismatch = got.count("match"), got.count("mismatch")
        return {"images": len(us), "match": match, "mismatch": mismatch,
                "unsure": got.count("unsure"), "pending": got.count(None),
                "agreement": _rate(match, match + mismatch)}

    groups: dict[str, list[ConceptUnit]] = {}
    for u in units:
        groups.setdefault(u.group, []).append(u)
    return {"overall": tally(units), "by_group": {g: tally(us) for g, us in sorted(groups.items())},
            "validator": "every sampled image passed the automatic checks (objects and "
                         "counts, background, VQA)"}
