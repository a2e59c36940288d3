"""``validate`` of two revisions side by side: each repeat loads a CompoSET-shaped release in
a fresh process on ``--cores`` with one revision's ``src`` first on the path and times
``validate(bench)`` as a run calls it (image headers checked), alternating, median of
``--repeats``. Both must find the same problems.

    python bench/bench_validate.py --base-src /tmp/fb_bench_peers/rev-BASE/src --cores 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peer_data  # noqa: E402

CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
from foilbench.data.registry import resolve_benchmark
from foilbench.data.validate import validate
bench = resolve_benchmark("composet:" + sys.argv[1], check_images=False)
t0 = time.perf_counter()
found = validate(bench)
took = time.perf_counter() - t0
print(json.dumps({"s": took, "problems": [str(p) for p in found]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-src", required=True)
    ap.add_argument("--head-src", default=str(HERE.parent / "src"))
    ap.add_argument("--cores", default="1")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scenes", type=int, default=80)
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "fb_bench_peers"))
    args = ap.parse_args()
    root = peer_data.composet_release(Path(args.work), 1.0, subset=args.scenes * 66)
    srcs = {"base": args.base_src, "head": args.head_src}
    times: dict[str, list[float]] = {k: [] for k in srcs}
    found: dict[str, list] = {}
    for r in range(args.repeats):
        for who in (list(srcs) if r % 2 == 0 else list(srcs)[::-1]):
            env = {**os.environ, "PYTHONPATH": srcs[who], "OMP_NUM_THREADS": "1"}
            out = subprocess.run(["taskset", "-c", args.cores, sys.executable, "-c", CHILD,
                                  str(root)], env=env, check=True, capture_output=True,
                                 text=True).stdout
            got = json.loads(out.strip().splitlines()[-1])
            times[who].append(got["s"])
            found[who] = got["problems"]
            print(f"  repeat {r + 1}: {who} validate {got['s']:6.3f} s "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    before, after = (statistics.median(v) for v in times.values())
    print(f"validate on {root.name}, cores {args.cores}: base {before:.3f} s, head "
          f"{after:.3f} s -> {before / after:.2f}x; saves {before - after:.3f} s per run; "
          f"same problems: {found['base'] == found['head']} ({len(found['head'])})")


if __name__ == "__main__":
    main()
