"""People compare two benchmarks' hard negatives side by side (SugarCrepe App. E.2).

SugarCrepe App. E.2: "For each example, a human user rates whether the hard negative in
ARO+CREPE or that in SugarCrepe is better (or tie) in terms of commonsense and grammatical
correctness, respectively." Table 9 reports "the counts (out of 100 sampled examples) that the
human user considers better or tie, w.r.t. both commonsense and grammatical correctness", and
the text reads them as e.g. "SugarCrepe has 68% more sensical and 46% more fluent hard
negatives than ARO+CREPE on Swap".

So each decision answers the paper's two questions, each with its three answers (the first
benchmark's negative better, tie, the second's better); the page shows the two negatives in
a seeded random left/right order without naming their benchmarks. The report gives, per
type family and overall, for each criterion: the counts, each of the three rates over the
decided pairs with its Wilson 95% interval (ties are their own answer, never split), and
``net`` = (second better - first better) / decided, our reading of the paper's "68% more
sensical" (the paper prints no interval for it and neither do we). Pairs not yet judged are
``pending`` and counted apart. Pairing: :mod:`foilbench.review.compare_pairs`.

Decisions are an append-only SQLite log (``DIR/compare_decisions.sqlite``), one transaction
each; the pairs are drawn once and stored there, so a later session resumes the same pairs
(and refuses benchmarks, ``n`` or seed that differ from those it drew them from).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from foilbench.data.format import Benchmark
from foilbench.review.choice import rate
from foilbench.review.compare_pairs import (
    MATCHES,
    ComparePair,
    Negative,
    draw_pairs,
    fingerprint,
    negatives,
)
from foilbench.review.event_log import immediate, open_event_db, standing, utc_now
from foilbench.review.units import ReviewError

DB_NAME = "compare_decisions.sqlite"
CRITERIA = {"commonsense": "Which hard negative is better in terms of commonsense?",
            "grammar": "Which hard negative is better in terms of grammatical correctness?"}
ANSWERS = ("a", "tie", "b")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pairs (
    pair_id TEXT PRIMARY KEY, family TEXT NOT NULL, match TEXT NOT NULL, left TEXT NOT NULL,
    a_item TEXT, a_image TEXT, a_positive TEXT, a_negative TEXT,
    b_item TEXT, b_image TEXT, b_positive TEXT, b_negative TEXT, ord INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, pair_id TEXT NOT NULL,
    commonsense TEXT, grammar TEXT, reverts INTEGER REFERENCES events(seq), created TEXT NOT NULL
);
"""


class CompareStore:
    """The pairs and the append-only decision log (module docstring)."""

    def __init__(self, path: str | Path, *, read_only: bool = False):
        self.path = Path(path)
        if read_only:
            if not self.path.is_file():
                raise ReviewError(f"{self.path}: no comparison was started here (no "
                                  f"{DB_NAME}); start one with `foilbench review compare A B "
                                  f"--out {self.path.parent}`")
            self.db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True,
                                      isolation_level=None, check_same_thread=False)
            return
        self.db = open_event_db(self.path, _SCHEMA)

    def close(self) -> None:
        self.db.close()

    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    def secret(self, default: str) -> str:
        """The stored CSRF secret, storing ``default`` the first time."""
        self.db.execute("INSERT OR IGNORE INTO meta VALUES ('csrf_secret', ?)", (default,))
        return self.db.execute("SELECT value FROM meta WHERE key = 'csrf_secret'").fetchone()[0]

    def init_pairs(self, meta: dict[str, str], pairs: list[ComparePair]) -> None:
        """Store the drawn pairs and what they were drawn from, in one transaction."""
        with immediate(self.db):
            self.db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            self.db.executemany(
                "INSERT INTO pairs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(p.pair_id, p.family, p.match, p.left, p.a.item_id, p.a.image, p.a.positive,
                  p.a.negative, p.b.item_id, p.b.image, p.b.positive, p.b.negative, i)
                 for i, p in enumerate(pairs)])

    def pairs(self) -> list[ComparePair]:
        rows = self.db.execute("SELECT pair_id, family, match, left, a_item, a_image, "
                               "a_positive, a_negative, b_item, b_image, b_positive, "
                               "b_negative FROM pairs ORDER BY ord").fetchall()
        return [ComparePair(r[0], r[1], r[2], Negative(r[4], r[1], *r[5:8]),
                            Negative(r[8], r[1], *r[9:12]), left=r[3]) for r in rows]

    def decide(self, pair_id: str, commonsense: str, grammar: str) -> int:
        for name, value in (("commonsense", commonsense), ("grammar", grammar)):
            if value not in ANSWERS:
                raise ReviewError(f"pair {pair_id!r}: unknown {name} answer {value!r}; "
                                  f"expected one of {', '.join(ANSWERS)}")
        cur = self.db.execute("INSERT INTO events (pair_id, commonsense, grammar, created) "
                              "VALUES (?, ?, ?, ?)", (pair_id, commonsense, grammar, utc_now()))
        return int(cur.lastrowid)

    def _standing(self) -> list[tuple[int, str, str, str]]:
        return standing(self.db.execute("SELECT seq, pair_id, commonsense, grammar, reverts "
                                        "FROM events ORDER BY seq"))

    def undo(self) -> str | None:
        """Revert the most recent standing decision; the pair it was about, or None."""
        with immediate(self.db):
            live = self._standing()
            if not live:
                return None
            seq, pair = live[-1][0], live[-1][1]
            self.db.execute("INSERT INTO events (pair_id, reverts, created) VALUES (?, ?, ?)",
                            (pair, seq, utc_now()))
        return pair

    def current(self) -> dict[str, tuple[str, str]]:
        """pair -> its latest standing (commonsense, grammar)."""
        return {pair: (cs, gr) for _, pair, cs, gr in self._standing()}

    def events(self) -> list[tuple]:
        return self.db.execute("SELECT seq, pair_id, commonsense, grammar, reverts, created "
                               "FROM events ORDER BY seq").fetchall()


def criterion_entry(answers: list[str]) -> dict:
    """Counts, the three rates (Wilson 95%) and the net of one criterion's answers."""
    d = len(answers)
    counts = {x: answers.count(x) for x in ANSWERS}
    return {"counts": counts, "decided": d,
            "a_better": rate(counts["a"], d), "tie": rate(counts["tie"], d),
            "b_better": rate(counts["b"], d),
            "net": (counts["b"] - counts["a"]) / d if d else None}


def summarize(pairs: list[ComparePair], current: dict[str, tuple[str, str]],
              meta: dict[str, str]) -> dict:
    """The report of the module docstring, per family and overall."""
    def entry(members: list[ComparePair]) -> dict:
        got = [current[p.pair_id] for p in members if p.pair_id in current]
        return {"pairs": len(members), "decided": len(got), "pending": len(members) - len(got),
                "matches": {m: sum(p.match == m for p in members) for m in MATCHES},
                **{c: criterion_entry([g[i] for g in got]) for i, c in enumerate(CRITERIA)}}

    families = sorted({p.family for p in pairs})
    return {"a": meta.get("a_name", "A"), "b": meta.get("b_name", "B"),
            "n_per_family": int(meta.get("n", 0)), "seed": int(meta.get("seed", 0)),
            "protocol": "SugarCrepe App. E.2 (side-by-side human comparison of hard "
                        "negatives; Table 9)",
            "questions": CRITERIA, "overall": entry(pairs),
            "by_family": {f: entry([p for p in pairs if p.family == f]) for f in families}}


class CompareSession:
    """Two benchmarks under comparison: their pairs (drawn once) and the decision log."""

    def __init__(self, a: Benchmark, b: Benchmark, out_dir: str | Path, *, n: int = 100,
                 seed: int = 0, aliases: dict[str, str] | None = None):
        aliases = {str(k).casefold(): str(v).casefold() for k, v in (aliases or {}).items()}
        neg_a, neg_b = negatives(a, seed, aliases), negatives(b, seed, aliases)
        want = {"a_name": a.name, "b_name": b.name, "n": str(n), "seed": str(seed),
                "aliases": json.dumps(aliases, sort_keys=True),
                "a_fingerprint": fingerprint(neg_a), "b_fingerprint": fingerprint(neg_b)}
        pairs = draw_pairs(neg_a, neg_b, n, seed)
        self.store = CompareStore(Path(out_dir) / DB_NAME)
        try:
            have = self.store.meta()
            if not have:
                self.store.init_pairs(want, pairs)
            else:
                differ = [k for k in want if have.get(k) != want[k]]
                if differ:
                    raise ReviewError(
                        f"{self.store.path} holds a comparison drawn from other inputs ("
                        + ", ".join(f"{k}: {have.get(k)!r} then, {want[k]!r} now"
                                    for k in differ)
                        + "); give the same benchmarks, --n and --seed, or a new --out")
        except BaseException:
            self.store.close()
            raise
        self.pairs = self.store.pairs()
        self.by_id = {p.pair_id: p for p in self.pairs}

    def close(self) -> None:
        self.store.close()

    def decide(self, pair_id: str, commonsense: str, grammar: str) -> None:
        """Record one decision, answers naming benchmarks: ``a``, ``tie`` or ``b``."""
        if pair_id not in self.by_id:
            raise ReviewError(f"no pair {pair_id!r} in this comparison")
        self.store.decide(pair_id, commonsense, grammar)

    def decide_shown(self, pair_id: str, commonsense: str, grammar: str) -> None:
        """Record answers as the page shows them: ``left``, ``tie`` or ``right``."""
        pair = self.by_id.get(pair_id)
        if pair is None:
            raise ReviewError(f"no pair {pair_id!r} in this comparison")
        right = "b" if pair.left == "a" else "a"
        sides = {"left": pair.left, "tie": "tie", "right": right}
        for name, value in (("commonsense", commonsense), ("grammar", grammar)):
            if value not in sides:
                raise ReviewError(f"pair {pair_id!r}: unknown {name} answer {value!r}; "
                                  "expected left, tie or right")
        self.store.decide(pair_id, sides[commonsense], sides[grammar])

    def summary(self) -> dict:
        return summarize(self.pairs, self.store.current(), self.store.meta())


def compare_report(out_dir: str | Path) -> dict:
    """The report of the comparison kept in ``out_dir``, read without the benchmarks."""
    store = CompareStore(Path(out_dir) / DB_NAME, read_only=True)
    try:
        return summarize(store.pairs(), store.current(), store.meta())
    finally:
        store.close()
