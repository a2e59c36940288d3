"""The context check's pre-tokeniser, side by side: ``past_context_problems`` on a
CompoSET-shaped release with ``same_in_context`` as it was (pieces and the bound count in
two passes, per pair) against one remembered pass per text
(:func:`foilbench.world.token_budget.counted_pieces`), alternating, pinned to ``--cores``,
median of ``--repeats``; the BPE memory is warm for both. Both must find the same items.

    PYTHONPATH=src python bench/bench_context_pieces.py --cores 1 [--scenes 80]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import alternating  # noqa: E402


def main() -> None:
    args = alternating.parse_args(__doc__, repeats=7)
    from foilbench.data.context_check import past_context_problems
    from foilbench.data.validate import Problem
    from foilbench.world import token_budget as tb

    root, bench = alternating.composet_benchmark(args)
    one_pass = tb.same_in_context

    def two_passes(a, b, kind="auto"):
        pa, pb = tb.pieces(a), tb.pieces(b)
        if tb.token_count(a) <= tb.CONTEXT and tb.token_count(b) <= tb.CONTEXT:
            return pa == pb
        if kind == "bound" or tb.long_tier_counter(kind).name == tb.COUNTER_BOUND:
            return tb._same_by_bounds(pa, pb)
        return tb.visible_tokens(a) == tb.visible_tokens(b)

    def check(same):
        tb.counted_pieces.cache_clear()
        tb.same_in_context = same
        try:
            return past_context_problems(bench, Problem)
        finally:
            tb.same_in_context = one_pass

    check(one_pass)  # the BPE tokenizer and its memory, warm for both
    medians, found = alternating.alternate(
        {"before (two passes)": lambda: check(two_passes),
         "one remembered pass": lambda: check(one_pass)}, args.repeats, digits=3)
    before, after = medians.values()
    same = found["before (two passes)"] == found["one remembered pass"]
    print(f"context check on {len(bench)} items ({root.name}), cores {args.cores}: before "
          f"{before:.3f} s, after {after:.3f} s -> {before / after:.2f}x; saves "
          f"{before - after:.3f} s per run; same items found: {same} "
          f"({len(found['before (two passes)'])} items)")


if __name__ == "__main__":
    main()
