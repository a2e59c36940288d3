"""Two ``foilbench run`` output folders hold the same results: exit 1 on any difference.

The store's ``metrics``, ``item_outcomes`` and ``item_results`` tables are compared row for
row (less ``run_id``, in a fixed order), and each folder's one ``report.html`` byte for byte
once what differs between any two runs of the same thing is masked: run and batch ids, times
and dates, seconds spent, and the git revision. Used before and after a speed change
(``docs/performance.md``).

    python bench/same_outputs.py OUT_A OUT_B
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TABLES = {"metrics": "metric, group_by, group_value, unit",
          "item_outcomes": "item_id, metric",
          "item_results": "item_index"}
MASKS = (
    (re.compile(r"\b[0-9]{8}-[0-9]{6}\.[0-9]{3}-[0-9a-f]{4}\b"), "BATCH"),  # batch ids
    (re.compile(r"\b[0-9a-f]{16}\b"), "RUNID"),  # run ids
    (re.compile(r"\b(?=[0-9]*[a-f])(?:[0-9a-f]{40}|[0-9a-f]{7,12})\b(?:[-+]dirty)?"),
     "REV"),  # revisions
    (re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)?"),
     "TIME"),
    (re.compile(r"\d+(?:\.\d+)? ?(?:s|seconds|ms)\b"), "SECONDS"),
)


def masked(html: str) -> str:
    """``html`` with every run-specific value (:data:`MASKS`) replaced by its kind."""
    for pattern, kind in MASKS:
        html = pattern.sub(kind, html)
    return html


def tables(out: Path) -> dict[str, list[tuple]]:
    import duckdb

    con = duckdb.connect(str(out / "foilbench.duckdb"), read_only=True)
    try:
        found = {}
        for table, order in TABLES.items():
            cols = [c[0] for c in con.execute(f"DESCRIBE {table}").fetchall()
                    if c[0] != "run_id"]
            found[table] = con.execute(f"SELECT {', '.join(cols)} FROM {table} "
                                       f"ORDER BY {order}").fetchall()
        return found
    finally:
        con.close()


def report(out: Path) -> str:
    found = sorted(out.glob("*/report.html"))
    if len(found) != 1:
        raise SystemExit(f"{out}: expected one */report.html, found {len(found)}")
    return found[0].read_text(encoding="utf-8")


def differences(a: Path, b: Path) -> list[str]:
    said = []
    ta, tb = tables(a), tables(b)
    for table in TABLES:
        if ta[table] != tb[table]:
            rows = sum(x != y for x, y in zip(ta[table], tb[table], strict=False))
            said.append(f"{table}: {len(ta[table])} vs {len(tb[table])} rows, {rows} differ")
    ha, hb = masked(report(a)), masked(report(b))
    if ha != hb:
        at = next(k for k, (x, y) in enumerate(zip(ha, hb, strict=False)) if x != y) \
            if any(x != y for x, y in zip(ha, hb, strict=False)) else min(len(ha), len(hb))
        said.append(f"report.html differs (masked) at character {at}: "
                    f"{ha[max(0, at - 60):at + 60]!r} vs {hb[max(0, at - 60):at + 60]!r}")
    return said


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    a, b = Path(sys.argv[1]), Path(sys.argv[2])
    said = differences(a, b)
    for line in said:
        print(line)
    n = {t: len(rows) for t, rows in tables(a).items()}
    print("different" if said else f"same: {n} rows, report.html equal once masked")
    sys.exit(1 if said else 0)


if __name__ == "__main__":
    main()
