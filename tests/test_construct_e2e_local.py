"""`foilbench construct autocomp` end to end with tiny random local models (hf-lm, diffusers,
hf-det, hf-vlm) built from configs once per session. Random models fail the paper's checks, so
these runs show the validators at work: every drop is counted with its reason in the survival
table (Auto-Comp Table 3 style) and the construction log accounts for every candidate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from _construct_tiny import save_tiny_gpt2, save_tiny_owlvit, save_tiny_sd
from _models_tiny import save_tiny_llava
from foilbench.cli.main import cli
from foilbench.construct.backends.base import UnanswerableError, VQABackend
from foilbench.construct.engine.log import account, read_log
from foilbench.construct.engine.stages import ConstructError
from foilbench.data.format import load_benchmark
from foilbench.errors import ModelError

SMALL = ["--tasks", "color", "--n", "2", "--concepts", "2", "--size", "64", "--no-progress"]


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("construct_e2e_models")
    return {"text": f"hf-lm:{save_tiny_gpt2(root / 'lm', n_positions=1024)}",
            "image": f"diffusers:{save_tiny_sd(root / 't2i', 't2i')}?steps=2",
            "detector": f"hf-det:{save_tiny_owlvit(root / 'owl')}",
            "vqa": f"hf-vlm:{save_tiny_llava(root / 'llava')}"}


def autocomp(out: Path, specs: dict[str, str], *extra: str):
    roles = [a for role, spec in specs.items() for a in (f"--{role}", spec)]
    return CliRunner().invoke(cli, ["construct", "autocomp", *roles, "--out", str(out),
                                    "--device", "cpu", *SMALL, *extra])


def survival(out: Path) -> dict[str, dict]:
    return {r["stage"]: r for r in json.loads((out / "survival.json").read_text())}


def test_all_tiny_models_every_drop_counted_with_its_reason(tmp_path, tiny):
    out = tmp_path / "ac"
    res = autocomp(out, tiny)
    # a random LM never keeps every binding, so no concept survives the first check
    assert isinstance(res.exception, ConstructError), res.output
    assert "no candidate survived" in str(res.exception)
    assert "semantic preservation failed after 3 tries 2" in res.output  # the table is shown
    rows = survival(out)
    first = rows["captions + semantic preservation"]
    assert first["in"] == 2 and first["out"] == 0
    assert first["dropped_by_reason"] == {"semantic preservation failed after 3 tries": 2}
    records = read_log(out / "construction_log.jsonl")
    assert account(records)["problems"] == []
    tries = [r for r in records if r.get("attempt") is not None]
    assert len(tries) == 6 and all(r["cached"] is False for r in tries)  # replies, not errors
    prov = json.loads((out / "construction.json").read_text())
    assert set(prov["backends"]) == {"text", "image", "detector", "vqa"}
    assert all(prov["backends"][r]["spec"] == tiny[r] for r in tiny)
    for role, scheme in (("text", "hf-lm"), ("image", "diffusers"), ("detector", "hf-det"),
                         ("vqa", "hf-vlm-vqa")):
        assert prov["backends"][role]["fingerprint"].startswith(f"{scheme}-sha256:")
        assert prov["backends"][role]["fingerprint"] in res.output
    assert prov["prompts"] == ["autocomp.contextual@3"]  # App. A.2 as printed (issue 25)
    assert prov["calls"]["captions + semantic preservation"]["called"] == 6


def test_tiny_generator_and_detector_drop_at_the_object_check(tmp_path, tiny):
    out = tmp_path / "ac"
    specs = {**tiny, "text": "template"}
    res = autocomp(out, specs)
    assert isinstance(res.exception, ConstructError), res.output
    rows = survival(out)
    for track in ("minimal", "contextual"):
        assert rows[f"text-to-image [{track}]"]["out"] == 2
        objects = rows[f"object presence and count [{track}]"]
        assert objects["in"] == 2 and objects["out"] == 0
        assert objects["dropped_by_reason"] == {"objects missing or miscounted": 2}
    records = read_log(out / "construction_log.jsonl")
    assert account(records)["problems"] == []
    verdicts = [r["verdicts"] for r in records if r.get("reason") == "objects missing or "
                                                                    "miscounted"]
    assert len(verdicts) == 4 and all(v["expected"] != v["detected"] for v in verdicts)
    assert len(list((out / "images").glob("*.png"))) == 4  # the generated images are kept


def test_tiny_vqa_drops_wrong_answers_and_the_rest_is_a_valid_benchmark(tmp_path, tiny):
    out = tmp_path / "ac"
    specs = {"text": "template", "image": "world", "detector": "world", "vqa": tiny["vqa"]}
    relations = ("--tasks", "position,relative_size", "--concepts", "4")
    res = autocomp(out, specs, *relations)
    assert res.exit_code == 0, res.output
    bench = load_benchmark(out)
    rows = survival(out)
    checks = [rows[f"attribute/relation check [{t}]"] for t in ("minimal", "contextual")]
    assert sum(r["dropped_by_reason"].get("VQA answer wrong", 0) for r in checks) > 0
    # the tiny tokenizer reads "bigger" and "smaller" as the same unknown word: a tie, which
    # is a failed check (not a failed call, not retried)
    assert sum(r["dropped_by_reason"].get("VQA answer names no single choice", 0)
               for r in checks) > 0
    assert sum(r["out"] for r in checks) > 0 and len(bench) > 0
    assert account(read_log(out / "construction_log.jsonl"))["problems"] == []
    assert bench.manifest.extras["construction"]["backends"]["vqa"]["spec"] == tiny["vqa"]
    again = autocomp(out, specs, *relations)
    assert again.exit_code == 0 and "calls: 0 made" in again.output


class Unsure(VQABackend):
    """The world's answers, except that every third question gets a tie (no answer)."""

    def __init__(self) -> None:
        from foilbench.construct.backends.registry import resolve_backend

        self.inner = resolve_backend("vqa", "world")
        self.calls = 0

    @property
    def fingerprint(self) -> str:
        return "unsure:" + self.inner.fingerprint

    def answer(self, image, question, choices):
        self.calls += 1
        if self.calls % 3 == 0:
            raise UnanswerableError(f"the top choices tie for {question!r}")
        return self.inner.answer(image, question, choices)


def test_an_unanswerable_vqa_reply_is_a_failed_check_asked_once(tmp_path):
    from foilbench.construct.autocomp.pipeline import AutocompConfig
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.engine.runner import run_pipeline

    vqa = Unsure()
    backends = {"text": resolve_backend("text", "template"),
                "image": resolve_backend("image", "world"),
                "detector": resolve_backend("detector", "world"), "vqa": vqa}
    config = AutocompConfig(tasks=("color",), ns=(2,), n_concepts=3, size=64)
    summary = run_pipeline("autocomp", config, backends, tmp_path / "ac", progress=False)
    dropped = {}
    for r in summary.survival:
        for reason, n in r["dropped_by_reason"].items():
            dropped[reason] = dropped.get(reason, 0) + n
    assert dropped.get("VQA answer names no single choice", 0) > 0
    assert "call failed" not in dropped
    asked = vqa.calls
    questions = sum(c.get("jobs", 0) for s, c in summary.calls.items() if "attribute" in s)
    assert asked == questions  # an unanswerable reply is an answer: never retried
    run_pipeline("autocomp", config, backends, tmp_path / "ac", progress=False)
    assert vqa.calls == asked  # and cached like any answer


def test_a_device_the_machine_lacks_fails_before_any_work(tmp_path, tiny):
    res = CliRunner().invoke(cli, ["construct", "autocomp", "--text", tiny["text"], "--out",
                                   str(tmp_path / "ac"), "--device", "cuda:7", *SMALL])
    assert isinstance(res.exception, ModelError) and "cuda" in str(res.exception)
    assert not (tmp_path / "ac").exists()


def test_composet_shows_the_base_image_only_to_a_text_backend_that_reads_images(tmp_path):
    from foilbench.construct.backends.base import TextBackend
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.composet.spec import ComposetConfig
    from foilbench.construct.engine.runner import run_pipeline

    class Recording(TextBackend):
        reads_structure = True  # template answers, so the world can draw them

        def __init__(self, accepts_images: bool) -> None:
            self.inner, self.accepts_images = resolve_backend("text", "template"), accepts_images
            self.with_images: list[str] = []

        @property
        def fingerprint(self) -> str:
            return f"recording-{self.accepts_images}:{self.inner.fingerprint}"

        def complete(self, request):
            if request.images:
                self.with_images.append(request.prompt_id)
            return self.inner.complete(request)

    config = ComposetConfig(n_scenes=1, foils_per_scene=4, size=64, min_foils_per_scene=0)
    for reads in (True, False):
        text = Recording(reads)
        backends = {"text": text, **{r: resolve_backend(r, "world")
                                     for r in ("image", "edit", "detector")}}
        out = tmp_path / str(reads)
        run_pipeline("composet", config, backends, out, progress=False)
        steps = {"composet.caption_qc@1", "composet.instance_captions@2", "composet.foils@2"}
        assert set(text.with_images) == (steps if reads else set())
        log = read_log(out / "construction_log.jsonl")
        shown = [r["inputs"]["base_image_shown"] for r in log
                 if isinstance(r.get("inputs"), dict) and "base_image_shown" in r["inputs"]]
        assert shown == ([True] * 3 if reads else [False, False])  # caption QC, steps 3-4
        qc = [r["verdicts"]["caption_qc"] for r in log
              if r.get("stage") == "caption QC vs base image" and "verdicts" in r]
        assert qc == (["unchanged"] if reads else
                      ["not checked (the text backend reads no images)"])
