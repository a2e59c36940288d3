"""The items table turned into records, side by side: the four conversions a run makes (the
checksum's sorted columns, the suspicious-items scan's required columns, the context check's
id and text columns, the store's whole table) with pandas' ``to_dict(orient="records")``
(before) against :func:`foilbench.table_records.table_records` (after), on a CompoSET-shaped
release, alternating, pinned to ``--cores``, median of ``--repeats``. Both must give equal
records and the same checksum bytes.

    PYTHONPATH=src python bench/bench_table_records.py --cores 1 [--scenes 80]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peer_data  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", default="1")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--scenes", type=int, default=80)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    os.sched_setaffinity(0, [int(c) for c in args.cores.split(",")])
    from foilbench.data.benchmark import _json_default
    from foilbench.data.registry import resolve_benchmark
    from foilbench.table_records import table_records

    root = peer_data.composet_release(Path(args.work), 1.0, subset=args.scenes * 66)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = resolve_benchmark(f"composet:{root}", check_images=False)
    items, spec = bench.items, bench.spec
    texts = [c for c in (*spec.text_columns, *spec.text_list_columns) if c in items.columns]
    tables = [items[sorted(items.columns)], items[list(spec.required)],
              items[["item_id", *texts]], items]
    ways = {"before (to_dict)": lambda t: t.to_dict(orient="records"),
            "table_records": table_records}
    times: dict[str, list[float]] = {k: [] for k in ways}
    got: dict[str, list] = {}
    for r in range(args.repeats):
        order = list(ways) if r % 2 == 0 else list(ways)[::-1]
        for who in order:
            t0 = time.perf_counter()
            got[who] = [ways[who](t) for t in tables]
            times[who].append(time.perf_counter() - t0)
            print(f"  repeat {r + 1}: {who:17s} {times[who][-1]:6.3f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    a, b = got.values()
    dump = [json.dumps(x[0], sort_keys=True, default=_json_default, ensure_ascii=False)
            for x in (a, b)]
    same = all(x == y for x, y in zip(a[1:], b[1:], strict=True)) and dump[0] == dump[1]
    before, after = (statistics.median(v) for v in times.values())
    print(f"four conversions of {len(items)} items x {len(items.columns)} columns "
          f"({root.name}), cores {args.cores}: before {before:.3f} s, after {after:.3f} s "
          f"-> {before / after:.2f}x; saves {before - after:.3f} s per run; "
          f"same records and checksum bytes: {same}")


if __name__ == "__main__":
    main()
