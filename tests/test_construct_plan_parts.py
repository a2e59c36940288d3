"""What the plans give ``--dry-run`` (issue 40): a stage bounded by the sum of its groups
of calls (``Calls.parts``), fixed prompts with constant fields filled in (``fill``), and
COMPASS's facts bounded per level; hand-computed."""

from __future__ import annotations

import re

import pytest

from foilbench.construct.engine.budget import Calls, estimate, fixed_prompt


class PerToken:
    """A backend whose call costs its output budget in USD (1 USD a token), estimate half."""

    spec = "api:x:y"
    cost_per_call_usd = 99.0
    estimate_rule = "half"

    def call_bound(self, calls, count_tokens=False):
        return float(calls.max_tokens)

    def call_estimate(self, calls):
        return calls.max_tokens / 2


def test_a_stage_with_parts_is_bounded_by_their_sum():
    parts = (Calls(2, max_tokens=10), Calls(1, max_tokens=40))
    stage = Calls(3, max_tokens=40, parts=parts)
    est = estimate({"s": {"text": stage}}, {"text": PerToken()})
    # 2 x 10 + 1 x 40, not 3 x 40
    assert est.stage_usd == {"s": 60.0}
    assert est.rows[0].estimate_usd == 30.0 and est.rows[0].calls == 3
    with pytest.raises(ValueError, match="sum to 3, not 4"):
        Calls(4, parts=parts)


def test_fill_puts_a_constant_field_in_the_counted_part():
    from foilbench.construct.composet.taxonomy import taxonomy_text

    f = fixed_prompt("composet.foils", {"spec": 10, "image_note": 5, "instances": 20,
                                        "n_foils": 1}, fill={"taxonomy": taxonomy_text()})
    assert taxonomy_text() in f.user and not re.search(r"\$\{?[a-z_]+", f.user)
    assert (f.field_bytes, f.fields) == (10 + 5 + 20 + 1, 4)


def test_every_composet_text_stage_names_its_fixed_prompts():
    from foilbench.construct.composet.pipeline import ComposetConfig
    from foilbench.construct.composet.plan import composet_plan

    planned = composet_plan(ComposetConfig(n_scenes=2, bias_variants=True))
    texts = {s: r["text"] for s, r in planned.items() if "text" in r}
    assert len(texts) == 6 and all(c.fixed for c in texts.values())
    for calls in texts.values():
        for f in calls.fixed:
            assert not re.search(r"\$\{?[a-z_]+", f.system + f.user)
            # the fixed part and its fields are never more than the byte bound's prompt
            assert len((f.system + f.user).encode()) + f.field_bytes <= calls.prompt_bytes


def test_compass_facts_are_bounded_per_level():
    from foilbench.construct.compass.plan import facts_bytes
    from foilbench.construct.compass.scene_graph import SceneGraph, SGObject, SGRelation

    g = SceneGraph("g", (SGObject(0, "cup", ("red",)), SGObject(1, "table")),
                   (SGRelation(7, 0, "on", 1),))
    # "- object: cup" 13, "- object: table" 15, "- attribute: the cup is red" 27,
    # "- relation: the cup is on the table" 35, newlines between
    assert facts_bytes(g, "L1") == 13 + 15 + 1
    assert facts_bytes(g, "L2-OA") == 13 + 15 + 27 + 2
    assert facts_bytes(g, "L2-OR") == 13 + 15 + 35 + 2
    assert facts_bytes(g, "L3-OAR") == facts_bytes(g) == 13 + 15 + 27 + 35 + 3
