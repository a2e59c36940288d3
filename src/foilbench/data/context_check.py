"""Items a 77-token CLIP text encoder can only tie on: a negative (or foil caption) that
differs from its positive only past the encoder's context (issue 40's context guard).

Construction drops such negatives with the reason
(:data:`foilbench.world.token_budget.PAST_CONTEXT`); ``inspect`` and ``run`` warn on any
benchmark that still holds them, naming the tokenizer that decided. The rule is CLIP's
(open_clip's truncation to 77 tokens, the field's default text encoder); a model with a
longer context may still tell the texts apart, so these are warnings, not errors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from foilbench.table_records import table_records


def past_context_problems(bench: Any, problem: type) -> list:
    """One ``problem`` per item holding a caption its positive cannot be told from by CLIP."""
    from foilbench.world.token_budget import long_tier_counter, past_context

    spec, items = bench.spec, bench.items
    columns = [c for c in (*spec.text_columns, *spec.text_list_columns) if c in items.columns]
    if not columns or len(columns) != len(spec.text_columns) + len(spec.text_list_columns):
        return []
    found = []
    tokenizer = None
    for row_no, rec in enumerate(table_records(items[["item_id", *columns]])):
        texts = [rec[c] for c in spec.text_columns]
        for c in spec.text_list_columns:
            value = rec[c]
            texts += list(value) if isinstance(value, (list, tuple, np.ndarray)) else []
        texts = [t for t in texts if isinstance(t, str)]
        if len(texts) < 2 or not past_context(texts[0], texts[1:]):
            continue
        tokenizer = tokenizer or long_tier_counter("auto").name
        found.append(problem(
            str(rec["item_id"]), "+".join(columns), "identical_in_context",
            "a negative differs from the positive only past CLIP's 77-token context (counted "
            f"by {tokenizer}): a 77-token text encoder can only tie on it", row_no))
    return found
