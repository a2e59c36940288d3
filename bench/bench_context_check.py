"""The context check's memo, side by side: ``past_context_problems`` on a CompoSET-shaped
release with each text's visible CLIP tokens remembered (as the run does, memo cleared before
each call) against the same check encoding every text at every comparison (the code before
the memo: ``visible_tokens`` unwrapped), alternating, pinned to ``--cores``, median of
``--repeats``. Both must find the same items.

    PYTHONPATH=src python bench/bench_context_check.py --cores 1 [--scenes 80]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import alternating  # noqa: E402


def main() -> None:
    args = alternating.parse_args(__doc__, repeats=5)
    from foilbench.data.context_check import past_context_problems
    from foilbench.data.validate import Problem
    from foilbench.world import token_budget as tb

    root, bench = alternating.composet_benchmark(args)
    remembered = tb.visible_tokens
    tb._bpe_tokenizer()  # built once, outside the timings

    def check(visible):
        tb.visible_tokens = visible
        remembered.cache_clear()
        try:
            return past_context_problems(bench, Problem)
        finally:
            tb.visible_tokens = remembered

    medians, found = alternating.alternate(
        {"before (no memo)": lambda: check(remembered.__wrapped__),
         "memo": lambda: check(remembered)}, args.repeats)
    before, memo = medians.values()
    same = found["memo"] == found["before (no memo)"]
    print(f"context check on {len(bench)} items ({root.name}), cores {args.cores}: before "
          f"{before:.2f} s, memo {memo:.2f} s -> {before / memo:.2f}x; saves "
          f"{before - memo:.2f} s per run; same items found: {same} "
          f"({len(found['memo'])} items)")


if __name__ == "__main__":
    main()
