"""The items table turned into records, side by side: the four conversions a run makes (the
checksum's sorted columns, the suspicious-items scan's required columns, the context check's
id and text columns, the store's whole table) with pandas' ``to_dict(orient="records")``
(before) against :func:`foilbench.table_records.table_records` (after), on a CompoSET-shaped
release, alternating, pinned to ``--cores``, median of ``--repeats``. Both must give equal
records and the same checksum bytes.

    PYTHONPATH=src python bench/bench_table_records.py --cores 1 [--scenes 80]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import alternating  # noqa: E402


def main() -> None:
    args = alternating.parse_args(__doc__, repeats=7)
    from foilbench.data.benchmark import _json_default
    from foilbench.table_records import table_records

    root, bench = alternating.composet_benchmark(args, check_images=False)
    items, spec = bench.items, bench.spec
    texts = [c for c in (*spec.text_columns, *spec.text_list_columns) if c in items.columns]
    tables = [items[sorted(items.columns)], items[list(spec.required)],
              items[["item_id", *texts]], items]
    medians, got = alternating.alternate(
        {"before (to_dict)": lambda: [t.to_dict(orient="records") for t in tables],
         "table_records": lambda: [table_records(t) for t in tables]}, args.repeats, digits=3)
    a, b = got.values()
    dump = [json.dumps(x[0], sort_keys=True, default=_json_default, ensure_ascii=False)
            for x in (a, b)]
    same = all(x == y for x, y in zip(a[1:], b[1:], strict=True)) and dump[0] == dump[1]
    before, after = medians.values()
    print(f"four conversions of {len(items)} items x {len(items.columns)} columns "
          f"({root.name}), cores {args.cores}: before {before:.3f} s, after {after:.3f} s "
          f"-> {before / after:.2f}x; saves {before - after:.3f} s per run; "
          f"same records and checksum bytes: {same}")


if __name__ == "__main__":
    main()
