"""Output budgets sized from a request's own inputs (issue 40): one token per two content
bytes when those inputs are all ASCII (English runs about 4 bytes a BPE token, so a
compliant answer has twice its room), one token a byte when any is not (such text can take a
token a byte). Hand-computed budgets, and the plans that bound the pipelines' requests."""

from __future__ import annotations

import json

from foilbench.construct.engine.replies import content_tokens, is_ascii, json_reply_tokens


def test_json_reply_tokens_halves_ascii_content_only():
    # 32 tokens of JSON frame, then the content: 101 ASCII bytes -> ceil(101 / 2) = 51
    assert json_reply_tokens(101, ascii=True) == 32 + 51
    assert json_reply_tokens(101) == 32 + 101
    assert content_tokens(0, ascii=True) == 0 and content_tokens(-5) == 0
    assert is_ascii("a red mug", "left of") and not is_ascii("a red mug", "caf\u00e9")


def _with_caption(path, caption: str) -> None:
    data = json.loads(path.read_text())
    data["annotations"][0]["caption"] = caption
    path.write_text(json.dumps(data))


def test_a_non_ascii_caption_keeps_sugarcrepes_plan_at_a_token_a_byte(tmp_path):
    from _construct_helpers import CAPTIONS, caption_set
    from foilbench.construct.sugarcrepe.pipeline import CONCEPT_BYTES, SugarcrepeConfig, plan

    path = caption_set(tmp_path / "a")
    longest = max(len(c.encode()) for c in CAPTIONS)
    ascii_plan = plan(SugarcrepeConfig(captions=path))
    # locate: twice the caption's bytes at one token per two bytes, + the 32-token frame
    assert ascii_plan["locate concept (T=0)"]["text"].max_tokens == 32 + longest
    # compose: (caption + 32 joining bytes) / 2, the new concept at a token a byte (the plan
    # cannot know its script)
    assert ascii_plan["compose (T=0)"]["text"].max_tokens == (
        32 + -(-(longest + 32) // 2) + CONCEPT_BYTES)
    cafe = "Un caf\u00e9 au lait sur une table en bois, pr\u00e8s d'une fen\u00eatre."
    assert len(cafe.encode()) > longest
    _with_caption(path, cafe)
    mixed = plan(SugarcrepeConfig(captions=path))
    assert mixed["locate concept (T=0)"]["text"].max_tokens == 32 + 2 * len(cafe.encode())
    assert mixed["new concept (T=1.5)"]["text"].max_tokens == 32 + CONCEPT_BYTES


def test_compass_budgets_follow_the_script_of_their_words():
    from foilbench.construct.compass.pipeline import CompassConfig
    from foilbench.construct.compass.plan import compass_plan, facts_bytes, run_graphs

    config = CompassConfig(n_scenes=2)
    planned = compass_plan(config)
    facts = max(facts_bytes(g) for g in run_graphs(config))
    # world scenes' words are ASCII: 12 candidates x 16 bytes / 2 + 32; the facts / 2 + 32
    assert planned["propose same-category replacements"]["text"].max_tokens == 32 + 96
    assert planned["realise positive (text backend)"]["text"].max_tokens == (
        32 + -(-facts // 2))
