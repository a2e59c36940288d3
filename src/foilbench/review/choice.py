"""Human validation of text negatives (SugarCrepe §4.1, Stage 2) for ``choice`` benchmarks.

SugarCrepe §4.1: "Stage 2: Filtering false negatives. ... we employ human validation to
filter out false negatives ... and to ensure the generated negative texts are fluent".
App. D.2 / §4.1 count what was removed per type. The reviewer sees the image, the positive
and the negative, and gives one of three verdicts (keyboard 1/2/3 in the app):

- ``false``: the negative is false of the image (a valid hard negative; kept);
- ``true_or_ambiguous``: the negative is true of the image, or it cannot be told (removed);
- ``not_fluent``: the negative is not a fluent sentence (removed).

Decisions are an append-only SQLite log (``DIR/review/choice_decisions.sqlite``), one
transaction each, the latest standing verdict per item counting; undo appends an event that
reverts the most recent standing decision. Separate from the pair review's
``decisions.sqlite`` on purpose (its phases and verdicts are CompoSET's). Discard rates are
strict proportions over decided items with Wilson 95% intervals, overall and per
``edit_type``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from foilbench.data.format import Benchmark, load_benchmark
from foilbench.kinds import kinds_where
from foilbench.review.event_log import immediate, open_event_db, standing, utc_now
from foilbench.review.units import ReviewError

DB_NAME = "choice_decisions.sqlite"
KEEP = "false"
VERDICTS: dict[str, tuple[str, str]] = {  # verdict -> (key, label)
    "false": ("1", "negative is false of the image"),
    "true_or_ambiguous": ("2", "negative is true or ambiguous"),
    "not_fluent": ("3", "not fluent"),
}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item TEXT NOT NULL,
    verdict TEXT,
    reverts INTEGER REFERENCES events(seq),
    created TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class ChoiceUnit:
    item_id: str
    image: str
    positive: str
    negative: str
    edit_type: str


def choice_units(bench: Benchmark) -> list[ChoiceUnit]:
    """One unit per item of a benchmark whose items are one image with ranked captions
    (a ``choice`` benchmark) with exactly one negative."""
    kind = bench.item_kind
    candidates = kind.candidate_captions(bench.items)
    if candidates is None or not kind.image_columns:
        wanted = " or ".join(kinds_where(
            lambda k: k.has_caption_candidates and bool(k.image_columns)))
        raise ReviewError(f"{bench.root}: negative validation needs a {wanted} benchmark; "
                          f"this one is of kind {bench.kind!r}")
    image_column = kind.image_columns[0]
    out = []
    for caps, row in zip(candidates, bench.items.itertuples(index=False), strict=True):
        if len(caps) != 2:
            raise ReviewError(f"item {row.item_id!r}: negative validation shows one positive "
                              f"and one negative; it has {len(caps) - 1} negatives")
        out.append(ChoiceUnit(str(row.item_id), str(getattr(row, image_column)), str(caps[0]),
                              str(caps[1]), str(getattr(row, "edit_type", "") or "(none)")))
    if not out:
        raise ReviewError(f"{bench.root}: the benchmark has no items to validate")
    return out


class ChoiceStore:
    """The append-only verdict log (module docstring)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.db = open_event_db(self.path, _SCHEMA)

    def close(self) -> None:
        self.db.close()

    def meta(self, key: str, default: str) -> str:
        """The stored value of ``key``, storing ``default`` the first time."""
        self.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, default))
        return self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]

    def decide(self, item: str, verdict: str) -> int:
        if verdict not in VERDICTS:
            raise ReviewError(f"unknown verdict {verdict!r} for item {item!r}; expected one of "
                              f"{', '.join(VERDICTS)}")
        cur = self.db.execute("INSERT INTO events (item, verdict, created) VALUES (?, ?, ?)",
                              (item, verdict, utc_now()))
        return int(cur.lastrowid)

    def _standing(self) -> list[tuple[int, str, str]]:
        return standing(self.db.execute("SELECT seq, item, verdict, reverts FROM events "
                                        "ORDER BY seq"))

    def undo(self) -> tuple[str, str] | None:
        """Revert the most recent standing decision; ``(item, verdict)`` reverted or None."""
        with immediate(self.db):
            live = self._standing()
            if not live:
                return None
            seq, item, verdict = live[-1]
            self.db.execute("INSERT INTO events (item, verdict, reverts, created) "
                            "VALUES (?, NULL, ?, ?)", (item, seq, utc_now()))
        return item, verdict

    def current(self) -> dict[str, str]:
        """item -> its latest standing verdict."""
        out: dict[str, str] = {}
        for _, item, verdict in self._standing():
            out[item] = verdict
        return out

    def events(self) -> list[tuple]:
        return self.db.execute("SELECT seq, item, verdict, reverts, created FROM events "
                               "ORDER BY seq").fetchall()


def rate(k: int, n: int) -> dict:
    """``k / n`` with its Wilson 95% interval; ``None`` values when nothing is decided."""
    from foilbench.stats.intervals import wilson_ci

    if n <= 0:
        return {"k": k, "n": n, "rate": None, "ci_low": None, "ci_high": None}
    lo, hi = wilson_ci(k, n)
    return {"k": k, "n": n, "rate": k / n, "ci_low": lo, "ci_high": hi}


class ChoiceSession:
    """A choice benchmark under validation: its units and the verdict store."""

    def __init__(self, bench_dir: str | Path, review_dir: str | Path | None = None):
        self.bench = load_benchmark(bench_dir)
        self.units = choice_units(self.bench)
        self.by_id = {u.item_id: u for u in self.units}
        folder = Path(review_dir) if review_dir else Path(bench_dir) / "review"
        self.store = ChoiceStore(folder / DB_NAME)

    def decide(self, item: str, verdict: str) -> None:
        if item not in self.by_id:
            raise ReviewError(f"no item {item!r} in {self.bench.name}")
        self.store.decide(item, verdict)

    def summary(self) -> dict:
        """Counts per verdict and discard rates (Wilson 95%), overall and per edit type."""
        current = self.store.current()
        types = sorted({u.edit_type for u in self.units})
        out: dict = {"n_items": len(self.units), "decided": len(current),
                     "pending": len(self.units) - len(current), "by_edit_type": {}}
        for group, members in [("all", self.units)] + [
                (t, [u for u in self.units if u.edit_type == t]) for t in types]:
            verdicts = [current[u.item_id] for u in members if u.item_id in current]
            counts = {v: verdicts.count(v) for v in VERDICTS}
            entry = {"n": len(members), "counts": counts,
                     "discard": rate(len(verdicts) - counts[KEEP], len(verdicts)),
                     **{f"rate_{v}": rate(counts[v], len(verdicts))
                        for v in VERDICTS if v != KEEP}}
            if group == "all":
                out["overall"] = entry
            else:
                out["by_edit_type"][group] = entry
        return out
