"""The context check with the adapters' shared token memory, side by side:
``past_context_problems`` on a CompoSET-shaped release after a model's forward passes have
encoded every caption (an open_clip tokenizer with ``share_encode``, as the adapter has),
its tokenizer built inside the timing, with open_clip's plain ``get_tokenizer("ViT-B-32")``
(before: its own tables, every text encoded again) against ``shared_tokenizer("ViT-B-32")``
(after: the shared memory), alternating, pinned to ``--cores``, median of ``--repeats``.
Both must find the same items.

    PYTHONPATH=src python bench/bench_shared_tokens.py --cores 1 [--scenes 80]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import alternating  # noqa: E402


def main() -> None:
    args = alternating.parse_args(__doc__, repeats=5)
    import open_clip

    from foilbench.data.context_check import past_context_problems
    from foilbench.data.validate import Problem
    from foilbench.models.openclip import tokens
    from foilbench.world import token_budget as tb

    root, bench = alternating.composet_benchmark(args)
    texts = set()
    for c in bench.spec.text_columns:
        texts.update(bench.items[c])
    for c in bench.spec.text_list_columns:
        for value in bench.items[c]:
            texts.update(value)
    forward = open_clip.get_tokenizer("ViT-B-32")  # the adapter's tokenizer
    tokens.share_encode(forward)
    forward([t for t in texts if isinstance(t, str)])  # the forward passes' encodes
    real = tb._bpe_tokenizer

    def check(make):
        tokens._TOKENIZERS.clear()
        tb.visible_tokens.cache_clear()
        tok = make()  # built inside the timing
        tb._bpe_tokenizer = lambda: tok
        try:
            return past_context_problems(bench, Problem)
        finally:
            tb._bpe_tokenizer = real

    medians, found = alternating.alternate(
        {"before (own tokenizer)": lambda: check(lambda: open_clip.get_tokenizer("ViT-B-32")),
         "shared memory": lambda: check(lambda: tokens.shared_tokenizer("ViT-B-32"))},
        args.repeats)
    before, after = medians.values()
    same = found["shared memory"] == found["before (own tokenizer)"]
    print(f"context check on {len(bench)} items ({root.name}), {len(texts)} texts, cores "
          f"{args.cores}: before {before:.2f} s, shared {after:.2f} s -> "
          f"{before / after:.2f}x; saves {before - after:.2f} s per run; same items found: "
          f"{same} ({len(found['shared memory'])} items)")


if __name__ == "__main__":
    main()
