"""CompoSET's plan counts the fields an earlier step wrote at their most, and the stages drop
a scene or proposal whose field is longer (issue 40: a bound a provider cannot exceed), so
each rendered prompt fits its stage's planned size."""

from __future__ import annotations

import pytest

from foilbench.construct.composet.plan import (
    BASE_CAPTION_BYTES,
    INSTANCES_BYTES,
    RECENT_BYTES,
    SPEC_BYTES,
    composet_plan,
    instances_text,
    too_long,
)
from foilbench.construct.composet.spec import ComposetConfig, spec_text
from foilbench.construct.engine.prompts import load_prompt


def rendered(name: str, **fields) -> int:
    prompt = load_prompt(name)
    return len((prompt.system + prompt.render(**fields)).encode("utf-8"))


def test_the_recent_scenes_block_at_its_most_fits_the_plan():
    from foilbench.construct.composet.pipeline import recent_block

    block = recent_block(["c" * BASE_CAPTION_BYTES] * 5)
    assert len(block.encode("utf-8")) <= RECENT_BYTES


def test_a_spec_at_its_most_and_instances_at_theirs_fit_step_4s_plan():
    """The largest spec and instance captions too_long lets through, rendered into step 4's
    prompt (with the taxonomy), are within the plan's prompt size."""
    from foilbench.construct.composet.spec import IMAGE_NOTE
    from foilbench.construct.composet.taxonomy import taxonomy_text

    spec = {"base_caption": "a mug", "objects": [{"name": "mug"}]}
    pad = SPEC_BYTES - len(spec_text({**spec, "pad": ""}).encode())
    spec["pad"] = "p" * pad
    assert len(spec_text(spec).encode()) == SPEC_BYTES and too_long(spec=spec) is None
    instances = {"mug": "m" * (INSTANCES_BYTES - len("- mug: "))}
    assert too_long(instances=instances) is None
    plan = composet_plan(ComposetConfig(n_scenes=1, foils_per_scene=3))
    calls = plan["foil enumeration (step 4)"]["text"]
    size = rendered("composet.foils", spec=spec_text(spec), instances=instances_text(instances),
                    taxonomy=taxonomy_text(), n_foils=3, image_note=IMAGE_NOTE)
    assert size <= calls.prompt_bytes


@pytest.mark.parametrize("field,value,why", [
    ("spec", {"base_caption": "a mug", "objects": [{"name": "m" * SPEC_BYTES}]},
     f"spec longer than {SPEC_BYTES} bytes"),
    ("spec", {"base_caption": "b" * (BASE_CAPTION_BYTES + 1), "objects": []},
     f"base caption longer than {BASE_CAPTION_BYTES} bytes"),
    ("instances", {"mug": "m" * INSTANCES_BYTES},
     f"instance captions longer than {INSTANCES_BYTES} bytes"),
])
def test_a_field_past_its_most_is_named(field, value, why):
    assert too_long(**{field: value}) == why


def test_steps_3_and_5_at_their_most_fit_the_plan():
    from foilbench.construct.composet.plan import FOIL_BYTES
    from foilbench.construct.composet.spec import IMAGE_NOTE

    spec = {"base_caption": "a mug", "objects": [{"name": "mug"}]}
    spec["pad"] = "p" * (SPEC_BYTES - len(spec_text({**spec, "pad": ""}).encode()))
    plan = composet_plan(ComposetConfig(n_scenes=1, foils_per_scene=3))
    step3 = plan["instance captions (step 3)"]["text"]
    assert rendered("composet.instance_captions", spec=spec_text(spec),
                    image_note=IMAGE_NOTE) <= step3.prompt_bytes
    listing = "\n".join("l" * FOIL_BYTES for _ in range(3))
    step5 = plan["self-check (step 5)"]["text"]
    assert rendered("composet.self_check", spec=spec_text(spec), foils=listing) \
        <= step5.prompt_bytes


def test_the_vqa_caption_qc_counts_at_most_the_planned_names_in_the_specs_order():
    """Issue 40 (a stage asks no more than its plan): names past qc_names are kept as the
    spec states them, not counted, and listed."""
    from foilbench.construct.composet.caption_qc import count_rewrite, counted_names
    from foilbench.construct.composet.plan import qc_names

    config = ComposetConfig(subjects=(1, 2))
    assert qc_names(config) == 2 + 4
    spec = {"objects": [{"name": f"o{k}", "id": str(k)} for k in range(8)] + [{"name": "O0"}]}
    asked, rest = counted_names(spec, qc_names(config))
    assert asked == [f"o{k}" for k in range(6)] and rest == ["o6", "o7"]
    kept, edits = count_rewrite(spec, {**{n: 1 for n in asked}, "o6": 1, "o7": 1})
    assert [o["name"] for o in kept["objects"]] == [f"o{k}" for k in range(8)]  # o0 once
    assert edits == [{"where": "objects", "field": "cardinality", "target": "o0",
                      "from": "2", "to": "1", "applied": True}]
