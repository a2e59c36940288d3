"""CompoSET App. B built as the paper and its released scripts state (issue 25): the long tier
counted with CLIP's BPE, the caption-vs-image QC rewrite, recent-scene diversity, the 15-foil
scene floor, and the bias-mitigation prompt variants. Each test quotes its passage."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

import _api_fake
from _construct_fake_api import ComposetResponder
from foilbench.cli.main import cli
from foilbench.construct.composet import template as cs_template
from foilbench.construct.composet.caption_qc import corrected_spec
from foilbench.construct.composet.variants import BIAS, MAIN, reconcile
from foilbench.construct.composet.verify import check_tiers
from foilbench.construct.engine.log import read_log
from foilbench.construct.engine.replies import ReplyError
from foilbench.world import token_budget as tb

fake = _api_fake.fake
PAPER_LONG = ("A round terracotta pot sits on the left side of a wooden display cart in a "
              "sculpture garden, with a red rectangular metal tin on the right side of the cart.")


def construct(*args: str):
    res = CliRunner().invoke(cli, ["construct", "composet", "--no-progress", "--size", "64",
                                   *args])
    assert res.exit_code == 0, res.output
    return res


def short_items(out) -> pd.DataFrame:
    items = pd.read_parquet(out / "items.parquet")
    return items[items.tier == "short"]


# -- 77 BPE tokens -----------------------------------------------------------------------------
def test_paper_long_caption_fits_77_clip_bpe_tokens():
    """App. B.3: "The long tier is constrained to 77 BPE tokens (the CLIP text-encoder cap)".
    §3's own long caption is 33 BPE tokens + start/end = 35 with open_clip's vocabulary; the
    old counter (one token per character outside the world's table) made it 96, over 77."""
    import open_clip

    bpe = tb.long_tier_counter("bpe")
    assert bpe.name == tb.COUNTER_BPE and bpe.exact
    assert bpe.count(PAPER_LONG) == len(open_clip.get_tokenizer("ViT-B-32").encode(PAPER_LONG)) + 2
    assert bpe.count(PAPER_LONG) == 35
    assert tb.long_tier_counter("bound").count(PAPER_LONG) == 96  # the old, conservative count
    short = ("a red rectangular metal tin", "a blue rectangular metal tin")
    tiers = {"medium": (f"{short[0]} on the right side of the cart.",
                        f"{short[1]} on the right side of the cart."),
             "long": (PAPER_LONG, PAPER_LONG.replace("a red", "a blue"))}
    assert check_tiers(short, tiers, bpe.count) is None
    assert check_tiers(short, tiers, tb.long_tier_counter("bound").count) == \
        "verbosity: long tier over 77 tokens"


def test_without_open_clip_the_counter_is_a_stated_bound(monkeypatch):
    """Without open_clip_torch the count falls back to the upper bound, named as such; asking
    for BPE then is a clear error naming the extra; an unknown counter names the choices."""
    monkeypatch.setitem(sys.modules, "open_clip", None)
    tb._bpe_tokenizer.cache_clear()
    try:
        auto = tb.long_tier_counter("auto")
        assert auto.name == tb.COUNTER_BOUND and not auto.exact
        assert "open_clip_torch not installed" in auto.name
        with pytest.raises(tb.TokenCounterError, match=r"foilbench\[openclip\]"):
            tb.long_tier_counter("bpe")
    finally:
        tb._bpe_tokenizer.cache_clear()
    with pytest.raises(tb.TokenCounterError, match="auto, bpe, bound"):
        tb.long_tier_counter("wordpiece")


def test_counter_is_recorded_in_provenance(tmp_path):
    out = tmp_path / "cs"
    construct("--out", str(out), "--n-scenes", "1", "--foils-per-scene", "6", "--min-foils", "0")
    extras = json.loads((out / "manifest.json").read_text())["extras"]
    assert extras["long_tier_token_counter"] == tb.COUNTER_BPE
    events = [r for r in read_log(out / "construction_log.jsonl")
              if r.get("event") == "token_counter"]
    assert events == [{"event": "token_counter", "stage": "verbosity (step 7)",
                       "counter": tb.COUNTER_BPE, "exact": True, "limit": 77}]
    out2 = tmp_path / "cs-bound"
    construct("--out", str(out2), "--n-scenes", "1", "--foils-per-scene", "6", "--min-foils",
              "0", "--token-counter", "bound")
    extras = json.loads((out2 / "manifest.json").read_text())["extras"]
    assert extras["long_tier_token_counter"] == tb.COUNTER_BOUND


# -- caption QC --------------------------------------------------------------------------------
def test_template_caption_qc_rewrites_to_the_drawn_scene():
    """Released scripts, step 3 "Auto-QC the caption against the image": the output is "the
    caption rewritten to match what the model actually drew". The template answers from the
    drawn world scene: a spec that matches gets no edit; a spec whose mug was said to be
    another colour, and which names an object that is not there, is rewritten."""
    task = {"kind": "composet.base_spec", "recent": [],
            "params": {"seed": 3, "n_subjects": 3, "setting": "living room", "scene_id": "s001"}}
    spec = json.loads(cs_template.base_spec(task, None))
    same = json.loads(cs_template.caption_qc({"spec": spec}, None))
    assert same["edits"] == [] and same["base_caption"] == spec["base_caption"]
    assert same["objects"] == spec["objects"]
    wrong = json.loads(json.dumps(spec))
    wrong["base_caption"] = "a quite different scene"
    wrong["objects"][0]["description"] = "a striped unicorn"
    wrong["objects"].append({"id": "o99", "name": "lamp", "description": "a lamp"})
    fixed = json.loads(cs_template.caption_qc({"spec": wrong}, None))
    assert [(e["where"], e["field"]) for e in fixed["edits"]] == [
        ("base_caption", "caption"), ("o1", "description"), ("o99", "presence")]
    assert fixed["base_caption"] == spec["base_caption"] and fixed["objects"] == spec["objects"]


def test_caption_qc_reply_errors_name_the_field():
    spec = {"base_caption": "x", "objects": [{"name": "mug"}], "details": {}}
    with pytest.raises(ReplyError, match="edits"):
        corrected_spec(spec, {"base_caption": "y", "objects": [{"name": "mug"}]})
    with pytest.raises(ReplyError, match="names no object"):
        corrected_spec(spec, {"edits": [], "base_caption": "y", "objects": []})
    with pytest.raises(ReplyError, match="details"):
        corrected_spec(spec, {"edits": [], "base_caption": "y", "objects": [{"name": "m"}],
                              "details": "oops"})


def test_caption_qc_through_the_api_is_a_rewrite_before_foils(fake, tmp_path):
    """App. B.4 Phase 1: "The base caption is reviewed before any foil is generated ...
    corrected at this point". Through the strict fake provider, the VLM sees the base image,
    its correction replaces the spec (the later steps' prompts carry it), and the scene is
    logged as rewritten, not dropped."""
    fake.responder = ComposetResponder()
    out = tmp_path / "cs"
    res = CliRunner().invoke(cli, [
        "construct", "composet", "--text", "api:anthropic:claude-haiku-4-5",
        "--image", "api:gemini-image:gemini-2.5-flash-image",
        "--edit", "api:openai-image:gpt-image-1", "--n-scenes", "2",
        "--foils-per-scene", "6", "--size", "64", "--retries", "0", "--min-foils", "0",
        "--max-spend", "10", "--no-progress", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert fake.responder.images_seen["caption_qc"] == 2
    texts = [r["body"] for r in fake.requests if r["path"] == "/v1/messages"]
    survival = {r["stage"]: r for r in json.loads((out / "survival.json").read_text())}
    qc = survival["caption QC vs base image"]
    assert qc["in"] == 2 and qc["out"] == 2 and qc["dropped_by_reason"] == {}
    rows = [r for r in read_log(out / "construction_log.jsonl")
            if r.get("stage") == "caption QC vs base image"]
    assert [r["verdicts"]["caption_qc"] for r in rows] == ["rewritten", "rewritten"]
    assert rows[0]["outputs"]["before"]["details"]["o1"] == "the mug is glossy"
    assert rows[0]["outputs"]["after"]["details"]["o1"] == "the mug is matte"
    later = [b for b in texts if "single out one object" in b["system"]]
    assert later and all("the mug is matte" in json.dumps(b) for b in later)
    extras = json.loads((out / "manifest.json").read_text())["extras"]
    assert extras["caption_qc"] == {"rewritten": 2, "unchanged": 0, "not_checked": 0}


# -- diversity ---------------------------------------------------------------------------------
def test_recent_scene_captions_go_back_into_the_spec_prompt(tmp_path):
    """Released scripts: step 1's prompt gets a "RECENT SCENES -- avoid reusing" block built
    from the last five scenes' captions. Ours: scene k's prompt lists scenes k-5..k-1."""
    out = tmp_path / "cs"
    construct("--out", str(out), "--n-scenes", "7", "--foils-per-scene", "1", "--min-foils", "0",
              "--no-caption-qc")
    rows = [r for r in read_log(out / "construction_log.jsonl")
            if r.get("stage") == "base spec (step 1)" and "inputs" in r]
    assert [r["inputs"]["recent_scenes"] for r in rows] == [0, 1, 2, 3, 4, 5, 5]
    captions = [r["outputs"]["base_caption"] for r in rows]
    assert len(set(captions)) == len(captions)


def test_template_redraws_a_scene_that_repeats_a_recent_one():
    params = {"seed": 11, "n_subjects": 2, "setting": "kitchen counter", "scene_id": "s002"}
    first = json.loads(cs_template.base_spec({"params": params, "recent": []}, None))
    again = json.loads(cs_template.base_spec({"params": params,
                                              "recent": [first["base_caption"]]}, None))
    assert again["base_caption"] != first["base_caption"]


# -- scene floor -------------------------------------------------------------------------------
def test_scenes_under_the_foil_floor_are_dropped_and_counted(tmp_path):
    """§3: "each scene contributes at least 15 foils". Scenes whose kept foils fall under the
    floor are dropped whole and counted; the floor is an option (0 keeps every scene). The
    template proposes every foil asked for, so a text model that proposes fewer for some
    scenes (every second scene here) stands in for the scenes a real model leaves short."""
    from foilbench.construct.backends.base import TextBackend
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.composet.spec import ComposetConfig
    from foilbench.construct.engine.runner import run_pipeline

    class ShortOnSomeScenes(TextBackend):
        reads_structure, accepts_images = True, False

        def __init__(self) -> None:
            self.inner = resolve_backend("text", "template")

        @property
        def fingerprint(self) -> str:
            return "short:" + self.inner.fingerprint

        def complete(self, request):
            reply = self.inner.complete(request)
            if request.task["kind"] == "composet.foils":
                scene = request.task["spec"]["world_scene"]["scene_id"]
                if int("".join(filter(str.isdigit, scene))) % 2:
                    got = json.loads(reply)
                    reply = json.dumps({"foils": got["foils"][:10]})
            return reply

    world = {r: resolve_backend(r, "world") for r in ("image", "edit", "detector")}

    # two scenes suffice (the assert below checks it): the first gets every foil the template
    # proposes, the second only 10, so one scene meets the floor and one is dropped
    n_scenes = 2

    def build(out, floor):
        config = ComposetConfig(n_scenes=n_scenes, foils_per_scene=22, size=64,
                                min_foils_per_scene=floor)
        run_pipeline("composet", config, {"text": ShortOnSomeScenes(), **world}, out,
                     progress=False)

    every = tmp_path / "all"
    build(every, 0)
    per_scene = short_items(every).groupby("scene_id").size()
    floor = 15
    under = per_scene[per_scene < floor]
    assert 0 < len(under) < len(per_scene)  # the test needs both kinds of scene
    kept = tmp_path / "floor"
    build(kept, floor)
    assert set(short_items(kept).scene_id) == set(per_scene[per_scene >= floor].index)
    extras = json.loads((kept / "manifest.json").read_text())["extras"]
    assert extras["scene_floor"] == {"min_foils": floor, "scenes_in": n_scenes,
                                     "scenes_dropped": len(under),
                                     "foils_by_dropped_scene": under.to_dict()}
    assert extras["config"]["min_foils_per_scene"] == floor


# -- bias-mitigation variants ------------------------------------------------------------------
def test_reconcile_prefers_main_then_bias():
    """App. B.3: "A bias-mitigation variant of each captioning prompt (*.bias.txt) is run in
    parallel as a sanity check; outputs from the two variants are reconciled by the
    verification pass." """
    a, b = {"long": ("x", "y")}, {"long": ("x", "z")}
    assert reconcile({MAIN: (None, a), BIAS: (None, a)}) == (
        MAIN, {"variants": {MAIN: "ok", BIAS: "ok"}, "kept": MAIN, "agree": True})
    assert reconcile({MAIN: (None, a), BIAS: (None, b)})[1]["agree"] is False
    assert reconcile({MAIN: ("verbosity: long tier over 77 tokens", a), BIAS: (None, b)}) == (
        BIAS, {"variants": {MAIN: "verbosity: long tier over 77 tokens", BIAS: "ok"},
               "kept": BIAS, "agree": False})
    assert reconcile({MAIN: ("bad", a), BIAS: ("worse", b)})[0] is None
    assert reconcile({MAIN: (None, a)}) == (MAIN, {"variants": {MAIN: "ok"}, "kept": MAIN})


def test_instance_captions_keep_the_variant_that_names_its_object():
    from foilbench.construct.composet.variants import reconcile_instances

    spec = {"objects": [{"id": "o1", "name": "mug"}, {"id": "o2", "name": "vase"},
                        {"id": "o3", "name": "book"}]}
    main = {"o1": "a red mug on the left", "o2": "a tall thing", "o3": "something blue"}
    bias = {"o1": "a red mug on the left", "o2": "a green vase", "o3": "a blue object"}
    caps, tally = reconcile_instances(spec, main, bias)
    assert caps == {"o1": "a red mug on the left", "o2": "a green vase",
                    "o3": "something blue"}
    assert tally == {"main": 1, "bias": 1, "neither": 1, "agree": 1}
    assert reconcile_instances(spec, main, None)[0] == main


def test_bias_variants_run_beside_the_main_prompts(tmp_path):
    out = tmp_path / "cs"
    construct("--out", str(out), "--n-scenes", "2", "--foils-per-scene", "8", "--min-foils", "0",
              "--bias-variants")
    prompts = json.loads((out / "construction.json").read_text())["prompts"]
    assert {"composet.foils.bias@1", "composet.verbosity.bias@1", "composet.foils@2",
            "composet.verbosity@1", "composet.instance_captions.bias@1"} <= set(prompts)
    log = read_log(out / "construction_log.jsonl")
    enum = [r for r in log if r.get("stage") == "foil enumeration (step 4)"
            and r.get("outcome") == "expanded"]
    assert [r["outputs"]["proposals_by_variant"] for r in enum] == [{"main": 8, "bias": 8}] * 2
    assert all(r["children"] == 16 for r in enum)
    inst = [r for r in log if r.get("stage") == "instance captions (step 3)" and "verdicts" in r]
    assert len(inst) == 2 and all(r["verdicts"]["variants"]["neither"] == 0 for r in inst)
    tiers = [r for r in log if r.get("stage") == "verbosity (step 7)" and "verdicts" in r]
    assert tiers and all(r["verdicts"]["kept"] == "main" and r["verdicts"]["agree"]
                         for r in tiers)


def test_build_synth_exits_0_without_open_clip(tmp_path, monkeypatch):
    """Issue 29: "`build synth` does not need open_clip, and exits 0 when it wrote the suite".
    The data-control audit's BPE counts are then a note, not an exit 2."""
    from foilbench.construct.suite import build_suite

    out = tmp_path / "synth"
    build_suite(out, size=32, parts=("pairs",), config={"pairs": {"n_scenes": 2}},
                progress=False)
    monkeypatch.setitem(sys.modules, "open_clip", None)
    from foilbench.models.text_models import clip_bpe

    clip_bpe.cache_clear()
    try:
        res = CliRunner().invoke(cli, ["build", "synth", "--out", str(out)])
    finally:
        clip_bpe.cache_clear()
    assert res.exit_code == 0, res.output
    assert "data-control audit unavailable: CLIP BPE token counts need" in res.output


def test_vqa_caption_qc_removes_what_the_image_does_not_hold(tmp_path):
    """The QC through a VQA model (``hf-vlm:``/``api:``/``world``), for a text backend that
    reads no images: the spec names a unicorn the renderer never drew; the VQA count is 0, so
    the unicorn and its detail sentence are removed (a presence rewrite, logged, not a drop)
    before foils are enumerated, and the detector's base check then passes. Without the QC,
    the base check drops the scene for the missing object."""
    from foilbench.construct.backends.base import TextBackend
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.composet.spec import ComposetConfig
    from foilbench.construct.engine.runner import run_pipeline

    class BlindText(TextBackend):
        reads_structure, accepts_images = True, False

        def __init__(self) -> None:
            self.inner = resolve_backend("text", "template")

        @property
        def fingerprint(self) -> str:
            return "unicorn:" + self.inner.fingerprint

        def complete(self, request):
            reply = self.inner.complete(request)
            if request.task["kind"] == "composet.base_spec":
                spec = json.loads(reply)
                spec["objects"].append({"id": "o9", "name": "unicorn",
                                        "description": "a white unicorn", "location": "left"})
                spec["details"]["o9"] = "There is a white unicorn on the left."
                reply = json.dumps(spec)
            return reply

    config = ComposetConfig(n_scenes=1, foils_per_scene=4, size=64, min_foils_per_scene=0)
    world = {r: resolve_backend(r, "world") for r in ("image", "edit", "detector", "vqa")}
    out = tmp_path / "qc"
    run_pipeline("composet", config, {"text": BlindText(), **world}, out, progress=False)
    log = read_log(out / "construction_log.jsonl")
    qc = next(r for r in log if r.get("stage") == "caption QC vs base image" and "outputs" in r)
    assert qc["verdicts"] == {"caption_qc": "rewritten"}
    assert {"where": "objects", "field": "presence", "target": "unicorn", "from": "1",
            "to": "0", "applied": True} in qc["outputs"]["edits"]
    assert "o9" not in qc["outputs"]["after"]["details"]
    assert all(o["name"] != "unicorn" for o in qc["outputs"]["after"]["objects"])
    survival = {r["stage"]: r for r in json.loads((out / "survival.json").read_text())}
    assert survival["base check (detector)"]["out"] == 1
    no_vqa = {k: v for k, v in world.items() if k != "vqa"}
    out2 = tmp_path / "noqc"
    with pytest.raises(Exception, match="no candidate survived"):
        run_pipeline("composet", config, {"text": BlindText(), **no_vqa}, out2, progress=False)
    survival = {r["stage"]: r for r in json.loads((out2 / "survival.json").read_text())}
    assert survival["base check (detector)"]["dropped_by_reason"] == {
        "base: spec object missing in the image": 1}


LLM_CONTEXT = (" sits on the left side of a wooden display cart in a sculpture garden, beside a "
               "round terracotta pot and a weathered bronze statue")


@pytest.mark.parametrize("counter, kept", [("bound", 0), ("bpe", 4)])
def test_long_tier_survival_through_the_api_by_counter(fake, tmp_path, counter, kept):
    """App. B.3's 77-token cap, through the strict fake provider whose long tier adds scene
    context in an LLM's words (the long base caption is 36 CLIP BPE tokens, 104 by the old
    bound): the old counter drops every long tier as "over 77 tokens"; CLIP's BPE keeps all 4
    foils that pass the other checks."""
    fake.responder = ComposetResponder(long_context=LLM_CONTEXT)
    out = tmp_path / counter
    res = CliRunner().invoke(cli, [
        "construct", "composet", "--text", "api:anthropic:claude-haiku-4-5",
        "--image", "api:gemini-image:gemini-2.5-flash-image",
        "--edit", "api:openai-image:gpt-image-1", "--n-scenes", "2",
        "--foils-per-scene", "6", "--size", "64", "--retries", "0", "--min-foils", "0",
        "--max-spend", "10", "--no-progress", "--token-counter", counter, "--out", str(out)])
    survival = {r["stage"]: r for r in json.loads((out / "survival.json").read_text())}
    v = survival["verbosity (step 7)"]
    assert v["in"] == 6 and v["out"] == kept
    over = v["dropped_by_reason"].get("verbosity: long tier over 77 tokens", 0)
    assert over == 4 - kept
    assert (res.exit_code == 0) == (kept > 0)
