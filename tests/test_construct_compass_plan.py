"""COMPASS's and Auto-Comp's spend plans count the calls their stages make and bound each
request (issue 40): hand-computed fact sizes and question counts; the real requests of a run
through the strict Anthropic fake checked against the plan, stage by stage."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from foilbench.construct.compass.plan import compass_plan, facts_bytes, levels_of
from foilbench.construct.compass.scene_graph import SceneGraph, SGObject, SGRelation


def test_facts_bytes_is_the_longest_fact_lines_a_caption_can_state():
    cup_on_table = SceneGraph("g", (SGObject(0, "cup", ("red",)), SGObject(1, "table")),
                              (SGRelation(7, 0, "on", 1),))
    # "- object: cup" 13, "- object: table" 15, "- attribute: the cup is red" 27,
    # "- relation: the cup is on the table" 35, and three newlines between
    assert facts_bytes(cup_on_table) == 13 + 15 + 27 + 35 + 3
    # 14 objects "- object: oNN" (13 bytes each) and one long attribute line: a caption
    # states at most 12 facts (L2-OR, L2-OA and L3-OAR's n_max), so the 11 other longest
    many = SceneGraph("h", tuple(SGObject(i, f"o{i:02d}", ("x" * 40,) if i == 0 else ())
                                 for i in range(14)))
    long_line = len("- attribute: the o00 is " + "x" * 40)
    assert facts_bytes(many) == long_line + 11 * 13 + 11


def test_a_level_the_graph_cannot_fill_is_not_planned(monkeypatch):
    """L1 always; relations only over two distinct objects (a self-relation is not walked);
    L3-OAR needs an attribute on an object such a relation joins. Each level left out is
    one the sampler never fills (many seeds), and the plan counts one call fewer for it."""
    import numpy as np

    from foilbench.construct.compass.pipeline import CompassConfig
    from foilbench.construct.compass.sampling import sample_caption_spec

    bare = SceneGraph("a", (SGObject(0, "cup"), SGObject(1, "table")),
                      (SGRelation(1, 0, "on", 0),))
    apart = SceneGraph("b", (SGObject(0, "cup", ("red",)), SGObject(1, "table"),
                             SGObject(2, "lamp")), (SGRelation(1, 1, "near", 2),))
    full = SceneGraph("c", (SGObject(0, "cup", ("red",)), SGObject(1, "table")),
                      (SGRelation(1, 0, "on", 1),))
    assert levels_of(bare) == ["L1"]
    assert levels_of(apart) == ["L1", "L2-OA", "L2-OR"]
    assert levels_of(full) == ["L1", "L2-OA", "L2-OR", "L3-OAR"]
    for graph in (bare, apart, full):
        for level in set(["L1", "L2-OA", "L2-OR", "L3-OAR"]) - set(levels_of(graph)):
            assert all(sample_caption_spec(graph, level, np.random.default_rng(seed)) is None
                       for seed in range(200))
    import foilbench.construct.compass.plan as compass_plan_module

    calls = []
    for graph in (bare, apart, full):
        monkeypatch.setattr(compass_plan_module, "run_graphs", lambda _config, g=graph: [g])
        got = compass_plan(CompassConfig(per_level=2))["realise positive (text backend)"]
        calls.append(int(got["text"]))
    # per_level 2 captions a level
    assert calls == [2, 6, 8]


def test_the_vqa_stage_plans_the_questions_the_checks_ask():
    from foilbench.construct.autocomp.pipeline import AutocompConfig, plan

    color = plan(AutocompConfig(tasks=("color",), ns=(1, 2), n_concepts=3))
    # an attribute task asks one question per object: 3 concepts x (1 + 2) objects
    assert int(color["attribute/relation check [minimal]"]["vqa"]) == 9
    position = plan(AutocompConfig(tasks=("position",), ns=(2, 3), n_concepts=3))
    # a relation task asks one per relation (N - 1): 3 x (1 + 2)
    assert int(position["attribute/relation check [minimal]"]["vqa"]) == 9


def _user(request: dict) -> str:
    """The user text of one Anthropic Messages request."""
    return "".join(part.get("text", "") for m in json.loads(request["raw"])["messages"]
                   for part in (m["content"] if isinstance(m["content"], list)
                                else [{"text": m["content"]}]))


def _sent(request: dict) -> tuple[str, int, int]:
    """(which prompt, prompt bytes, max_tokens) of one Anthropic Messages request."""
    body = json.loads(request["raw"])
    system = body.get("system") or ""
    if isinstance(system, list):
        system = "".join(part.get("text", "") for part in system)
    user = "".join(part.get("text", "") for m in body["messages"]
                   for part in (m["content"] if isinstance(m["content"], list)
                                else [{"text": m["content"]}]))
    which = "propose" if "You propose replacement words" in system else "realise"
    return which, len((system + user).encode("utf-8")), body["max_tokens"]


def test_each_compass_request_fits_its_stages_plan(monkeypatch, tmp_path):
    from _strict_providers import StrictProviders
    from foilbench.cli.main import cli
    from foilbench.construct.compass.pipeline import CompassConfig

    server = StrictProviders(answer=lambda *a: json.dumps({"caption": "A plain picture."}))
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    try:
        res = CliRunner().invoke(cli, [
            "construct", "compass", "--text", "api:anthropic:claude-haiku-4-5", "--n-scenes",
            "3", "--no-progress", "--max-spend", "5", "--out", str(tmp_path / "o")])
        sent = [_sent(r) for r in server.requests]
        asked = [re.findall(r"Kind: (.*)\nWord: (.*)", _user(r))[-1] for r in server.requests
                 if _sent(r)[0] == "propose"]
    finally:
        server.close()
    assert sent, res.output
    planned = compass_plan(CompassConfig(n_scenes=3))
    stage = {"propose": planned["propose same-category replacements"]["text"],
             "realise": planned["realise positive (text backend)"]["text"]}
    made = {k: [s for s in sent if s[0] == k] for k in stage}
    print({k: (len(made[k]), int(stage[k]), max(b for _, b, _ in made[k]),
               stage[k].prompt_bytes) for k in stage})
    # one proposal per distinct word of the run's graphs: the plan's count, exactly
    assert len(made["propose"]) == int(stage["propose"])
    assert 0 < len(made["realise"]) <= int(stage["realise"])
    for k, calls in stage.items():
        assert all(b <= calls.prompt_bytes and t <= calls.max_tokens for _, b, t in made[k])
    # each realisation's budget is its own facts' (issue 40), the plan's the largest
    assert len({t for _, _, t in made["realise"]}) > 1
    # each proposal asks for one of its kind's known words (--count-tokens counts them)
    known = {(part.fixed[0].user.split("Kind: ")[-1].split()[0], w)
             for part in stage["propose"].parts for w in part.known}
    assert sorted(asked) == sorted(known) and len(asked) == len(set(asked))


def test_sugarcrepes_compose_bound_holds_a_concept_said_twice(tmp_path):
    """compose_add says ``$old`` twice: with each earlier concept at its most (the located one
    as long as the caption, the new one :data:`CONCEPT_BYTES`; the stages drop longer ones),
    the rendered request still fits the plan's bound."""
    from _construct_helpers import caption_set
    from foilbench.construct.engine.prompts import load_prompt
    from foilbench.construct.sugarcrepe.pipeline import (
        CONCEPT_BYTES,
        TYPES,
        SugarcrepeConfig,
        plan,
        read_captions,
    )

    config = SugarcrepeConfig(captions=caption_set(tmp_path))
    bound = plan(config)["compose (T=0)"]["text"].prompt_bytes
    caption = max((c["caption"] for c in read_captions(config)), key=len)
    prompt = load_prompt("sugarcrepe.compose_add")
    for concept in {v[2] for v in TYPES.values()}:
        text = prompt.system + prompt.render(caption=caption, old="o" * len(caption.encode()),
                                             new="n" * CONCEPT_BYTES, concept=concept)
        assert len(text.encode("utf-8")) <= bound


def test_each_autocomp_request_fits_its_stages_plan(monkeypatch, tmp_path):
    """The plan's concepts are the run's own (seeded), so the contextual prompts and the VQA
    questions it bounds are the ones sent (issue 40: no generic 16k or 600-byte guess)."""
    import foilbench.construct.backends.world as world
    from _strict_providers import StrictProviders
    from _strict_scripts import AutocompAnswers
    from foilbench.cli.main import cli
    from foilbench.construct.autocomp.pipeline import AutocompConfig, plan

    answer = AutocompAnswers()
    monkeypatch.setattr(world, "tag", answer.record(world.tag))
    server = StrictProviders(answer=answer)
    server.environ(monkeypatch)
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    try:
        res = CliRunner().invoke(cli, [
            "construct", "autocomp", "--text", "api:openai:gpt-5-mini", "--image", "world",
            "--detector", "world", "--vqa", "api:gemini:gemini-2.5-flash", "--tasks",
            "color,position", "--n", "2,3", "--concepts", "2", "--no-progress",
            "--max-spend", "5", "--out", str(tmp_path / "o")])
        bodies = [(r["path"], json.loads(r["raw"])) for r in server.requests]
    finally:
        server.close()
    assert bodies, res.output
    text = [len("".join(m["content"] if isinstance(m["content"], str) else
                        "".join(p.get("text", "") for p in m["content"])
                        for m in b["messages"]).encode()) for path, b in bodies
            if path.endswith("/chat/completions")]
    vqa = [len("".join(p.get("text", "") for c in b["contents"] for p in c["parts"]).encode())
           for path, b in bodies if "generateContent" in path]
    planned = plan(AutocompConfig(tasks=("color", "position"), ns=(2, 3), n_concepts=2))
    captions = planned["captions + semantic preservation"]["text"]
    checks = [planned[f"attribute/relation check [{t}]"]["vqa"]
              for t in ("minimal", "contextual")]
    print(f"text {len(text)} <= {int(captions)}, most {max(text)} <= {captions.prompt_bytes}; "
          f"vqa {len(vqa)} <= {sum(map(int, checks))}, most {max(vqa)} <= "
          f"{checks[0].prompt_bytes}")
    assert text and len(text) <= int(captions) and max(text) <= captions.prompt_bytes
    assert vqa and len(vqa) <= sum(map(int, checks))
    assert max(vqa) <= checks[0].prompt_bytes == checks[1].prompt_bytes
    # --count-tokens counts the plan's known texts: each one sent is one of them
    sent = ["".join(p.get("text", "") for c in b["contents"] for p in c["parts"])
            for path, b in bodies if "generateContent" in path]
    known = set(checks[0].known)
    assert checks[0].known_uses == 1 and checks[0].fixed[0].known == 1
    for t in sent:
        question, rest = t.split("\n", 1)
        block = "\n".join(x for x in rest.splitlines() if x.startswith("- "))
        assert question in known and block in known, t
    concepts = [m["content"] if isinstance(m["content"], str)
                else "".join(p.get("text", "") for p in m["content"])
                for path, b in bodies if path.endswith("/chat/completions")
                for m in b["messages"] if m["role"] == "user"]
    assert captions.known_uses == 3
    assert all(any(t.rstrip().endswith(k) for k in captions.known) for t in concepts)
