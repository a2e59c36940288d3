"""The suspicious-items scan of a run's notes, side by side: the item-by-item scan it was
(one record per item; kept as the reference in ``tests/test_suspicious_columns.py``) against
the column scan (:func:`foilbench.data.suspicious.suspicious`), on a CompoSET-shaped release
with its files' hashes remembered as in a run, alternating, pinned to ``--cores``, median of
``--repeats``. Both include the same context check; both must give the same problems.

    PYTHONPATH=src python bench/bench_suspicious.py --cores 1 [--scenes 80]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import alternating  # noqa: E402


def main() -> None:
    args = alternating.parse_args(__doc__, repeats=7)
    from foilbench.data.context_check import past_context_problems
    from foilbench.data.suspicious import suspicious
    from foilbench.data.validate import Problem
    from foilbench.hashing import remembered_file_hashes
    from foilbench.table_records import table_records
    from test_suspicious_columns import _reference

    with remembered_file_hashes():
        root, bench = alternating.composet_benchmark(args)  # validation hashes every file
        medians, got = alternating.alternate({
            "item by item": lambda: (_reference(bench, True, table_records)
                                     + past_context_problems(bench, Problem)),
            "by column": lambda: suspicious(bench)}, args.repeats, digits=3)
    a, b = got.values()
    before, after = medians.values()
    print(f"suspicious-items scan of {len(bench.items)} items ({root.name}), cores "
          f"{args.cores}: item by item {before:.3f} s, by column {after:.3f} s -> "
          f"{before / after:.2f}x; saves {before - after:.3f} s per run; same problems: "
          f"{[p.to_dict() for p in a] == [p.to_dict() for p in b]}")


if __name__ == "__main__":
    main()
