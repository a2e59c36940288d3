"""Issue 13, what a run must say about itself: captions its model truncated and tokens it could
not represent (printed, stored with the run, in summary.json, shown by ``show`` and the
report), and why a null ``scene_id`` switched the intervals from the scene bootstrap."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from _core_helpers import write_folder
from _reliability import choice_items, fb
from foilbench.models.text_limits import text_report
from foilbench.store.db import ResultsStore


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path


def test_truncated_captions_and_unknown_tokens_are_counted_printed_stored_shown(env, capsys):
    items = choice_items(env / "bench", 6)
    items["captions"] = [[c.replace("square", "cube") for c in cs] for cs in items["captions"]]
    long = "a red cube left of a blue sphere " * 700  # about 5,600 words
    items.at[0, "captions"] = [long, "a zorblax cube"]  # "zorblax" is not in the vocabulary
    folder = write_folder(env / "bench", "choice", items)
    out = env / "out"
    code, _, err = fb(["run", "--model", "foilbench-plain", "--benchmark", folder, "--out", out,
                       "--n-boot", "100", "--quiet", "--no-cache", "--device", "cpu"], capsys)
    assert code == 0, err
    from foilbench.models.embedded import weights_dir

    limit = json.loads((weights_dir() / "foilbench-plain.json").read_text())["tokenizer"]["max_len"]
    assert limit == 80  # the shipped models' text length (0.3.0)
    assert f"1 of 5 unique captions truncated to the model's {limit} tokens" in " ".join(
        err.split())
    assert "1 unknown token(s) (zorblax x1)" in " ".join(err.split())
    [summary_path] = out.glob("*/summary.json")
    [run] = json.loads(summary_path.read_text())["runs"]
    text = run["eval_stats"]["text"]
    assert (text["n_texts"], text["n_truncated"], text["n_unknown"]) == (5, 1, 1)
    assert text["max_tokens"] == limit and text["longest"] > 5000
    assert run["provenance"]["text"] == text
    with ResultsStore(out / "foilbench.duckdb", read_only=True) as store:
        assert store.get_run(run["run_id"])["eval_stats"]["text"] == text
    code, shown, _ = fb(["show", run["run_id"], "--db", out / "foilbench.duckdb"], capsys)
    assert code == 0 and f"1 of 5 (limit {limit} tokens)" in shown and "zorblax x1" in shown
    html = next(out.glob("*/report.html")).read_text()
    assert "captions truncated" in html and "1 of 5" in html and "zorblax x1" in html


def test_text_report_reads_hf_and_open_clip_tokenizers(tmp_path):
    import open_clip

    from _models_tiny import clip_tokenizer

    texts = ["a red cube", "word " * 100]
    hf = type("HFLike", (), {"tokenizer": clip_tokenizer(tmp_path / "tok", max_length=16)})()
    report = text_report(hf, texts)
    assert (report["n_texts"], report["n_truncated"], report["max_tokens"]) == (2, 1, 16)
    oc = type("OpenClipLike", (), {"tokenizer": open_clip.get_tokenizer("ViT-B-32")})()
    report = text_report(oc, texts)
    assert (report["n_truncated"], report["max_tokens"], report["longest"]) == (1, 77, 102)
    assert text_report(object(), texts) is None  # no tokenizer: not measured


def test_a_null_scene_id_says_why_the_interval_is_wilson(env, capsys):
    items = choice_items(env / "bench", 8)
    items.loc[3, "scene_id"] = None
    folder = write_folder(env / "bench", "choice", items)
    out = env / "out"
    code, stdout, err = fb(["run", "--model", "tiny-random", "--benchmark", folder, "--out", out,
                            "--n-boot", "100", "--no-report", "--quiet", "--no-cache"], capsys)
    assert code == 0, err
    said = " ".join(err.split())
    assert ("scene_id is null for 1 of 8 items, so the intervals are Wilson intervals instead "
            "of the scene-clustered bootstrap") in said
    assert "CI: wilson" in stdout
    [summary_path] = out.glob("*/summary.json")
    [run] = json.loads(summary_path.read_text())["runs"]
    assert "null for 1 of 8 items" in run["eval_stats"]["interval_note"]
    # a complete scene_id: the bootstrap, and nothing to say
    items = choice_items(env / "full", 8)
    folder = write_folder(env / "full", "choice", pd.DataFrame(items))
    code, stdout, err = fb(["run", "--model", "tiny-random", "--benchmark", folder, "--out",
                            env / "out2", "--n-boot", "100", "--no-report", "--quiet",
                            "--no-cache"], capsys)
    assert code == 0 and "scene_id is null" not in err
    # 4 scenes: the few-cluster interval, named in the table's caption, and a warning
    assert "CI: cluster-wilson:scene_id (4 scenes < 30)" in " ".join(stdout.split())
    assert "few scenes: the intervals are cluster-wilson" in " ".join(err.split())
