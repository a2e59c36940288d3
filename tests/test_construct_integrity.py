"""Construction you can trust (issue 24, integrity and failure reporting): up-front checks,
drop causes on the console, "not checked" stages, runs stopped by the spend cap, --out
ownership, unique candidate ids, damaged call-cache entries, prompt hashes in provenance.
Each test first builds the fault the issue names, then checks what the user now gets."""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace

import pandas as pd
import pytest
from click.testing import CliRunner
from PIL import Image

from _construct_helpers import FlakyText, caption_set
from foilbench.cli.main import cli
from foilbench.construct.backends.base import EditBackend, ImageBackend, TextBackend
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.engine.log import account, read_log, survival_cells
from foilbench.construct.engine.runner import run_pipeline
from foilbench.construct.engine.stages import ConstructError
from foilbench.errors import FoilbenchError, SpendCapReached

# tiny builds: fewer foils per scene than CompoSET's floor of 15, so the floor is off here
SMALL = ["--n-scenes", "1", "--foils-per-scene", "4", "--size", "64", "--min-foils", "0",
         "--no-progress"]


def invoke(*args: str):
    return CliRunner().invoke(cli, ["construct", *args])


def refused(res, *says: str) -> None:
    """A FoilbenchError (which `foilbench` prints as one line and exits 2), saying ``says``."""
    assert isinstance(res.exception, FoilbenchError), res.output
    for text in says:
        assert text in str(res.exception), str(res.exception)


def composet_config(**kw):
    from foilbench.construct.composet.spec import ComposetConfig

    return ComposetConfig(**{"n_scenes": 1, "foils_per_scene": 4, "size": 64, "min_foils_per_scene": 0,
                              **kw})


def world(*roles: str) -> dict:
    specs = {"text": "template"} | {r: "world" for r in roles}
    return {r: resolve_backend(r, s) for r, s in specs.items()}


class Counting:
    """Counts calls into any backend (to show that a refusal happened before the first)."""

    def __init__(self) -> None:
        self.n = 0


# -- 1. up-front checks ----------------------------------------------------------------------


class InpaintAsGenerator(ImageBackend):
    """What ``diffusers:DIR`` of an inpainting pipeline resolves to as --image."""

    spec = "diffusers:./sd-inpaint"
    pipeline = SimpleNamespace(class_name="StableDiffusionInpaintPipeline")
    fingerprint = "diffusers:inpaint"

    def __init__(self, counter: Counting) -> None:
        self.counter = counter

    def generate(self, request):
        self.counter.n += 1
        raise AssertionError("no call may be made")


class ApiEditor(EditBackend):
    """An editor resolved from an API spec: its images carry no world scene."""

    spec = "api:openai-image:gpt-image-1"
    fingerprint = "openai-image:gpt-image-1"

    def __init__(self, counter: Counting) -> None:
        self.counter = counter

    def edit(self, request):
        self.counter.n += 1
        raise AssertionError("no call may be made")


def test_an_inpainting_pipeline_as_image_generator_is_refused_before_any_call(tmp_path):
    counter = Counting()
    backends = world("edit") | {"image": InpaintAsGenerator(counter)}
    with pytest.raises(ConstructError, match=r"--image diffusers:./sd-inpaint is an inpainting "
                                             r"pipeline.*text-to-image pipeline as --image"):
        run_pipeline("composet", composet_config(), backends, tmp_path / "cs", progress=False)
    assert counter.n == 0 and not (tmp_path / "cs").exists()


def test_the_world_detector_with_a_non_world_editor_is_refused_with_the_fix(tmp_path):
    counter = Counting()
    backends = world("image", "detector") | {"edit": ApiEditor(counter)}
    with pytest.raises(ConstructError) as err:
        run_pipeline("composet", composet_config(), backends, tmp_path / "cs", progress=False,
                     dry_run=True)
    text = str(err.value)
    assert "--detector world" in text and "--edit api:openai-image:gpt-image-1" in text
    assert "hf-det:DIR (or none)" in text and "--edit world" in text
    assert counter.n == 0


class ApiImage(ImageBackend):
    """A base-image generator resolved from an API spec: its images carry no world scene."""

    spec = "api:gemini-image:gemini-2.5-flash-image"
    fingerprint = "gemini-image:gemini-2.5-flash-image"

    def __init__(self, counter: Counting) -> None:
        self.counter = counter

    def generate(self, request):
        self.counter.n += 1
        raise AssertionError("no call may be made")


def test_the_world_editor_with_a_non_world_base_image_is_refused_before_any_call(tmp_path):
    """Issue 40: `--edit world` under a paid base render was paid for, then every foil failed
    ("the input image is not the render of the edit's base scene"); it is refused up front."""
    counter = Counting()
    backends = world("edit") | {"image": ApiImage(counter)}
    with pytest.raises(ConstructError) as err:
        run_pipeline("composet", composet_config(), backends, tmp_path / "cs", progress=False)
    text = str(err.value)
    assert "--edit world" in text and "cannot edit images from --image api:gemini-image" in text
    assert "api:openai-image:MODEL or diffusers:DIR" in text and "--image world" in text
    assert counter.n == 0 and not (tmp_path / "cs").exists()


@pytest.mark.parametrize(("option", "value", "says"), [
    ("--size", "0", "'--size': 0 is not in the range 32<=x<=2048"),
    ("--size", "-5", "'--size'"),
    ("--n-scenes", "0", "'--n-scenes': 0 is not in the range x>=1"),
    ("--retries", "-1", "'--retries': -1 is not in the range 0<=x<=20"),
    ("--max-drift", "2", "'--max-drift': 2.0 is not in the range 0<=x<=1"),
    ("--max-drift", "nan", "'--max-drift': nan is not a finite number"),
])
def test_out_of_range_options_are_usage_errors_naming_the_option(tmp_path, option, value, says):
    res = invoke("composet", "--out", str(tmp_path / "cs"), *SMALL, option, value)
    assert res.exit_code == 2 and says in res.output, res.output
    assert not (tmp_path / "cs").exists()


@pytest.mark.parametrize(("command", "option", "value"), [
    ("autocomp", "--concepts", "0"), ("compass", "--per-level", "0"),
    ("compass", "--limit", "0"),  # was read as "no limit": every scene graph
    ("compass", "--n-scenes", "0"),
])
def test_counts_below_one_are_usage_errors(tmp_path, command, option, value):
    res = invoke(command, "--out", str(tmp_path / "o"), "--no-progress", option, value)
    assert res.exit_code == 2 and f"'{option}': {value} is not in the range x>=1" in \
        res.output, res.output
    assert not (tmp_path / "o").exists()


def test_sugarcrepe_counts_below_one_are_usage_errors(tmp_path):
    path = caption_set(tmp_path / "coco")
    for option in ("--limit", "--captions-per-image"):
        res = invoke("sugarcrepe", str(path), "--out", str(tmp_path / "o"), option, "0")
        assert res.exit_code == 2 and f"'{option}': 0 is not in the range x>=1" in res.output
    # --grid takes "auto" or a whole number of bins >= 2 (a 1 x 1 grid refines nothing)
    for value in ("0", "1", "x"):
        res = invoke("sugarcrepe", str(path), "--out", str(tmp_path / "o"), "--grid", value)
        assert res.exit_code == 2 and "is neither auto nor a whole number >= 2" in res.output
    assert not (tmp_path / "o").exists()


def test_negative_retries_are_refused_by_the_engine_too(tmp_path):
    with pytest.raises(ConstructError, match="--retries must be 0 or more"):
        run_pipeline("composet", composet_config(), world("image", "edit", "detector"),
                     tmp_path / "cs", retries=-1, progress=False)


# -- 2. drop causes on the console -------------------------------------------------------------


def test_the_console_shows_each_drop_cause_verbatim(tmp_path, monkeypatch):
    import foilbench.construct.engine.resolve as resolve

    path = caption_set(tmp_path / "coco")
    # every first attempt times out; with --retries 0 each call fails once and is dropped
    monkeypatch.setattr(resolve, "resolve_backends", lambda specs, **kw: {"text": FlakyText()})
    res = invoke("sugarcrepe", str(path), "--out", str(tmp_path / "sc"), "--retries", "0",
                 "--no-refine", "--no-progress")
    refused(res, "no candidate survived")  # a clear error, after the report
    assert "why candidates were dropped:" in res.output
    assert "locate concept (T=0): call failed x50" in res.output
    assert "swap, one step (T=0): call failed x20" in res.output
    # the first causes verbatim: the timeouts and the giraffe caption's broken server
    assert "      Transient: first attempt times out" in res.output
    assert "      Transient: server unavailable" in res.output
    prov = json.loads((tmp_path / "sc" / "construction.json").read_text())
    causes = {(c["stage"], c["reason"]): c for c in prov["drop_causes"]}
    first = causes[("locate concept (T=0)", "call failed")]
    assert first["n"] == 50 and sorted(first["examples"]) == [
        "Transient: first attempt times out", "Transient: server unavailable"]


def test_drop_causes_keep_the_first_three_distinct_errors(tmp_path):
    from foilbench.construct.engine.log import Candidate, ConstructionLog

    log = ConstructionLog(tmp_path)
    cands = [Candidate(f"c{i}", "x") for i in range(6)]
    for c in cands:
        log.created(c)
    with log.stage("s", cands) as st:
        for i, c in enumerate(cands):
            st.drop(c, "call failed", error=f"E{min(i, 4)}")
    log.close()
    assert log.drop_causes() == [{"stage": "s", "reason": "call failed", "n": 6,
                                  "examples": ["E0", "E1", "E2"]}]


# -- 3. not checked; stopped by the cap -------------------------------------------------------


def test_a_stage_without_its_detector_is_not_checked_never_100_percent(tmp_path):
    summary = run_pipeline("composet", composet_config(), world("image", "edit"),
                           tmp_path / "cs", progress=False)
    rows = {r["stage"]: r for r in summary.survival}
    base = rows["base check (detector)"]
    assert base["status"] == "not checked" and base["survival"] is None
    assert base["not_checked_by_reason"] == {"no --detector": 1}
    verify = rows["verify: drift and counts"]  # drift from the world editor's mask: checked
    assert verify["status"] == "partly checked"
    assert verify["part_not_checked"] == {"count check (no --detector)": verify["in"]}
    cells = {c[0]: c for c in survival_cells(summary.survival)}
    assert cells["base check (detector)"][5] == "not checked (no --detector)"
    assert cells["verify: drift and counts"][5].endswith(
        f"{verify['in']} without count check (no --detector)")
    on_disk = json.loads((tmp_path / "cs" / "survival.json").read_text())
    assert {r["stage"]: r["status"] for r in on_disk}["base check (detector)"] == "not checked"
    md = (tmp_path / "cs" / "survival.md").read_text()
    assert "not checked (no --detector)" in md and "| base check (detector) | scene | 1 | 1 | " \
        "0 | 100.0%" not in md
    # the QC report's construction section reads the same rows
    from foilbench.data.format import load_benchmark
    from foilbench.review.construction import construction_markdown, construction_summary

    report = "\n".join(construction_markdown(
        construction_summary(load_benchmark(tmp_path / "cs")), [], 0, 0))
    assert "not checked (no --detector)" in report
    # and the review app shows the instance's count check as not checked
    from foilbench.review.app import open_session
    from foilbench.review.views import DriftCache, instance_view

    session = open_session(tmp_path / "cs", tmp_path / "rv")
    key = session.units.instances[0].key
    view = instance_view(session.units, session.snapshot(), key, DriftCache(session.units))
    assert view["checks"]["count check"] == "not checked"
    session.store.close()


def test_a_fully_checked_stage_still_reads_as_a_rate(tmp_path):
    summary = run_pipeline("composet", composet_config(), world("image", "edit", "detector"),
                           tmp_path / "cs", progress=False)
    rows = {r["stage"]: r for r in summary.survival}
    assert rows["base check (detector)"]["status"] == "checked"
    assert rows["base check (detector)"]["survival"] == 1.0


class OwnCap(SpendCapReached):
    """A cap error of some other layer: caught through the shared base class alone."""


class CappedText(TextBackend):
    """The template text backend behind a cap that refuses the call after ``paid`` calls, as
    an API backend's spend guard does (whichever layer keeps the money)."""

    def __init__(self, paid: int, error: type = OwnCap) -> None:
        self.inner = resolve_backend("text", "template")
        self.paid, self.error, self.calls = paid, error, 0

    @property
    def fingerprint(self) -> str:
        return "capped:" + self.inner.fingerprint

    def complete(self, request):
        if self.calls >= self.paid:
            raise self.error("spend cap reached: the next text call would pass --max-spend")
        self.calls += 1
        return self.inner.complete(request)


def test_a_run_stopped_by_the_cap_writes_its_tables_and_every_outcome(tmp_path):
    from foilbench.construct.sugarcrepe.pipeline import SugarcrepeConfig

    path = caption_set(tmp_path / "coco")
    out = tmp_path / "sc"
    with pytest.raises(OwnCap) as err:
        run_pipeline("sugarcrepe", SugarcrepeConfig(captions=path, refine=False),
                     {"text": CappedText(24)}, out, progress=False, backoff_s=0)
    assert err.value.not_reached == 70  # 10 captions x 7 types, none through every stage
    records = read_log(out / "construction_log.jsonl")
    acct = account(records)
    assert acct["problems"] == []
    assert acct["kinds"]["negative"] == {"created": 70, "not reached": 70}
    reasons = {r["reason"] for r in records if r.get("outcome") == "not reached"}
    assert reasons == {"not reached: spend cap"}
    rows = json.loads((out / "survival.json").read_text())
    assert rows[-1]["stopped"] == "spend cap" and rows[-1]["survival"] is None
    assert "run stopped: spend cap" in (out / "survival.md").read_text()
    assert json.loads((out / "construction.json").read_text())["stopped"] == "spend cap"


def test_the_cli_reports_a_cap_stop_with_the_tables(tmp_path, monkeypatch):
    import foilbench.construct.engine.resolve as resolve

    path = caption_set(tmp_path / "coco")
    from foilbench.models.api.spend import SpendCapError

    monkeypatch.setattr(resolve, "resolve_backends",
                        lambda specs, **kw: {"text": CappedText(10, SpendCapError)})
    res = invoke("sugarcrepe", str(path), "--out", str(tmp_path / "sc"),
                 "--no-refine", "--no-progress")
    refused(res, "spend cap reached")
    assert "stopped (spend cap)" in res.output
    assert "70 candidate(s) not reached: spend cap" in res.output
    assert "Traceback" not in res.output


def test_every_cap_error_shares_the_base_class():
    from foilbench.models.api.spend import SpendCapError

    assert issubclass(SpendCapError, SpendCapReached)
    assert issubclass(SpendCapReached, FoilbenchError)


# -- 4. --out belongs to one build ------------------------------------------------------------


def test_out_refuses_a_folder_it_did_not_make(tmp_path):
    out = tmp_path / "cs"
    out.mkdir()
    (out / "thesis.txt").write_text("mine")
    res = invoke("composet", "--out", str(out), *SMALL)
    refused(res, "is not empty and was not made by `foilbench construct composet`")
    assert sorted(p.name for p in out.iterdir()) == ["thesis.txt"]  # nothing written


def test_out_resumes_the_same_build_and_refuses_other_options_or_pipelines(tmp_path):
    out = tmp_path / "cs"
    assert invoke("composet", "--out", str(out), *SMALL).exit_code == 0
    items = pd.read_parquet(out / "items.parquet")
    again = invoke("composet", "--out", str(out), *SMALL, "--max-spend", "1")  # a resume
    assert again.exit_code == 0, again.output
    assert pd.read_parquet(out / "items.parquet").equals(items)
    other = invoke("composet", "--out", str(out), *SMALL, "--seed", "1")
    refused(other, "holds a composet build with other options (seed 0 there, 1 now)",
            "To resume it, rerun with its options")
    pipeline = invoke("autocomp", "--out", str(out), "--tasks", "color", "--n", "2",
                      "--concepts", "1", "--size", "64", "--no-progress")
    refused(pipeline, "pipeline 'composet' there, 'autocomp' now")
    assert pd.read_parquet(out / "items.parquet").equals(items)


def test_out_adopts_a_folder_of_an_older_foilbench_run_of_the_same_pipeline(tmp_path):
    out = tmp_path / "cs"
    assert invoke("composet", "--out", str(out), *SMALL).exit_code == 0
    (out / ".construct" / "run.json").unlink()  # as written before the record existed
    assert invoke("composet", "--out", str(out), *SMALL).exit_code == 0
    assert (out / ".construct" / "run.json").is_file()
    (out / ".construct" / "run.json").unlink()
    res = invoke("autocomp", "--out", str(out), "--no-progress")
    refused(res, "was not made by `foilbench construct autocomp`")


# -- 5. unique candidate ids --------------------------------------------------------------


def test_two_caption_records_on_one_image_get_distinct_ids(tmp_path):
    Image.new("RGB", (16, 16), (200, 10, 10)).save(tmp_path / "a.png")
    Image.new("RGB", (16, 16), (10, 10, 200)).save(tmp_path / "b.png")
    (tmp_path / "sub").mkdir()
    Image.new("RGB", (16, 16), (10, 200, 10)).save(tmp_path / "sub" / "a.png")
    records = [{"image": "a.png", "caption": "A man riding a brown horse next to a red barn."},
               {"image": "a.png", "caption": "A cat sleeping on a black couch."},
               {"image": "sub/a.png", "caption": "A red car parked in front of a building."},
               {"image": "b.png", "caption": "Two dogs playing with a ball on the grass."}]
    (tmp_path / "caps.json").write_text(json.dumps(records))
    res = invoke("sugarcrepe", str(tmp_path / "caps.json"), "--out", str(tmp_path / "sc"),
                 "--no-refine", "--no-progress")
    assert res.exit_code == 0, res.output
    created = [r["item"] for r in read_log(tmp_path / "sc" / "construction_log.jsonl")
               if r.get("event") == "created"]
    assert len(created) == len(set(created)) == 4 * 7
    assert {i.rsplit("/", 1)[0] for i in created} == {"a/0", "a/1", "a/2", "b/0"}


def test_a_duplicate_candidate_id_is_a_clear_error(tmp_path):
    from foilbench.construct.engine.log import Candidate, ConstructionLog, DuplicateIdError

    log = ConstructionLog(tmp_path)
    log.created(Candidate("x/0", "scene"))
    with pytest.raises(DuplicateIdError, match="two candidates share the id 'x/0'"):
        log.created(Candidate("x/0", "scene"), stage="scene graphs")
    log.close()


# -- 6. damaged call-cache entries ------------------------------------------------------------


def _build(out):
    return run_pipeline("composet", composet_config(), world("image", "edit", "detector"),
                        out, progress=False)


def _damage_and_rebuild(out, damage):
    damage(out / ".construct")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = _build(out)
    return summary, [str(w.message) for w in caught if "call-cache" in str(w.message)]


def _blob(cache, suffix):
    return sorted(p for p in (cache / "blobs").iterdir() if p.name.endswith(suffix))[0]


def test_damaged_cache_entries_are_misses_recomputed_with_a_warning(tmp_path):
    out = tmp_path / "cs"
    first = _build(out).benchmark.items
    calls = sum(v.get("called", 0) for v in _build(out).calls.values())
    assert calls == 0  # a clean rerun repeats nothing

    def missing(cache):
        _blob(cache, ".mask.png").unlink()

    def truncated(cache):
        blob = next(p for p in sorted((cache / "blobs").iterdir())
                    if not p.name.endswith(".mask.png"))
        blob.write_bytes(blob.read_bytes()[:100])

    def unknown(cache):
        calls_file = cache / "calls.jsonl"
        key = json.loads(calls_file.read_text().splitlines()[0])["key"]
        with open(calls_file, "a") as f:
            f.write(json.dumps({"key": key, "type": "hologram"}) + "\n")

    def bad_bytes(cache):
        calls_file = cache / "calls.jsonl"
        lines = calls_file.read_bytes().split(b"\n")
        lines[0] = b"\xff\xfe" + lines[0][2:]
        calls_file.write_bytes(b"\n".join(lines))

    for damage, says in ((missing, "FileNotFoundError"), (truncated, "OSError"),
                         (unknown, "unknown record type 'hologram'"),
                         (bad_bytes, "line 1 unreadable (UnicodeDecodeError)")):
        summary, warned = _damage_and_rebuild(out, damage)
        assert warned and says in warned[0], (damage.__name__, warned)
        assert summary.cache_damaged and says in summary.cache_damaged[0]
        prov = json.loads((out / "construction.json").read_text())
        assert prov["cache_damaged"] == summary.cache_damaged
        made = sum(v.get("called", 0) for v in summary.calls.values())
        assert made <= 1  # only the damaged call is made again
        assert summary.benchmark.items.equals(first), damage.__name__


def test_a_torn_last_line_does_not_swallow_the_next_record(tmp_path):
    from foilbench.construct.engine.cache import CallCache

    cache = CallCache(tmp_path)
    cache.put("a", "first")
    with open(cache.path, "a") as f:
        f.write('{"key": "b", "ty')  # killed mid-append
    again = CallCache(tmp_path)
    assert again.torn_lines == 1 and again.damaged == []  # the expected crash leftover: silent
    again.put("c", "third")
    from foilbench.construct.engine.cache import CacheDamageWarning

    with pytest.warns(CacheDamageWarning, match="line 2 unreadable"):  # now mid-file: said
        third = CallCache(tmp_path)
    assert third.lookup("c") == (True, "third") and third.lookup("a") == (True, "first")


def test_the_cli_prints_a_damage_warning_once_and_no_traceback(tmp_path):
    out = tmp_path / "cs"
    assert invoke("composet", "--out", str(out), *SMALL).exit_code == 0
    _blob(out / ".construct", ".mask.png").unlink()
    res = invoke("composet", "--out", str(out), *SMALL)
    assert res.exit_code == 0, res.output
    assert res.output.count("damaged call-cache entry") == 1
    assert "treated as a miss" in res.output


# -- 8. prompt hashes -------------------------------------------------------------------------


def test_provenance_records_each_prompt_content_hash(tmp_path):
    from importlib.resources import files

    from foilbench.hashing import sha256_text

    _build(tmp_path / "cs")
    prov = json.loads((tmp_path / "cs" / "construction.json").read_text())
    assert set(prov["prompt_hashes"]) == set(prov["prompts"]) and prov["prompts"]
    for pid, digest in prov["prompt_hashes"].items():
        name = pid.split("@")[0]
        text = files("foilbench.construct.composet").joinpath("prompts", f"{name}.txt") \
            .read_text(encoding="utf-8")
        assert digest == sha256_text(text)


def test_the_real_command_prints_one_line_and_exits_2(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "cs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    res = subprocess.run([sys.executable, "-m", "foilbench", "construct", "composet", "--out",
                          str(out), *SMALL], capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.strip().startswith("error: --out") and "not empty" in res.stderr


def test_a_tailing_cache_keeps_reading_lines_appended_before_its_own_put(tmp_path):
    """Process B answers a request and appends it; process A then appends its own answer. A
    must still find B's line (its put used to jump its read offset to the end of the file,
    past B's line, so A paid for B's request again)."""
    from foilbench.construct.backends.api_common import TailingResponseCache
    from foilbench.models.api.wire import Reply

    path = tmp_path / "construct_text_responses.jsonl"
    a, b = TailingResponseCache(path), TailingResponseCache(path)
    b.put("k-b", Reply("from b", 3, 2))
    a.put("k-a", Reply("from a", 4, 1))
    assert a.get("k-b") == Reply("from b", 3, 2)
    assert b.get("k-a") == Reply("from a", 4, 1)
    assert a.get("k-a") == Reply("from a", 4, 1)  # its own line, reread harmlessly


def test_a_partial_rate_says_how_many_were_checked():
    """Issue 40: a verify row read "0.0% (6 not checked)" when 6 of 8 passed unchecked and the
    2 checked were dropped; the rate is over the checked ones, and the cell says so."""
    from foilbench.construct.engine.log import survival_text

    row = {"in": 8, "out": 6, "survival": 0.0, "not_checked": 6,
           "not_checked_by_reason": {"no --detector": 6}}
    assert survival_text(row) == "0.0% of 2 checked; 6 passed unchecked (no --detector)"
    assert survival_text({"in": 8, "survival": 0.5}) == "50.0%"


def test_ctrl_c_leaves_the_survival_tables_and_every_candidate_an_outcome(tmp_path):
    """Issue 40: Ctrl-C wrote no survival tables. A text backend interrupted at the self-check
    (step 5) stands in for the key press."""
    from foilbench.construct.backends.base import TextBackend

    template = resolve_backend("text", "template")

    class Interrupted(TextBackend):
        reads_structure, accepts_images = True, False
        fingerprint = "interrupted:1"

        def complete(self, request):
            if request.task["kind"] == "composet.self_check":
                raise KeyboardInterrupt
            return template.complete(request)

    backends = world("image", "edit", "detector") | {"text": Interrupted()}
    out = tmp_path / "cs"
    with pytest.raises(KeyboardInterrupt):
        run_pipeline("composet", composet_config(), backends, out, progress=False, retries=0)
    md = (out / "survival.md").read_text()
    assert "(run stopped: interrupted;" in md and "| foil enumeration (step 4) |" in md
    prov = json.loads((out / "construction.json").read_text())
    assert prov["stopped"] == "interrupted"
    outcomes = [json.loads(x) for x in (out / "construction_log.jsonl").read_text().splitlines()]
    assert any(r.get("reason") == "not reached: interrupted" for r in outcomes)
