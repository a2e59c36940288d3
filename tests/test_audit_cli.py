"""``foilbench audit``: the blind JSON contract on a text-only choice benchmark, and refine."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from _core_helpers import write_folder
from foilbench.cli.main import cli

STAT_KEYS = {"accuracy", "n", "ci_low", "ci_high", "chance"}


def choice_folder(root):
    """30 choice items, images absent (the audit must not need them): 'add' negatives are
    longer, 'swap' negatives are re-orderings."""
    rows = []
    for i in range(15):
        pos = f"a dog {i} on a mat"
        rows.append({"item_id": f"add/{i}", "image": f"img{i}.jpg", "edit_type": "add",
                     "captions": [pos, f"a big dog {i} on a red mat"]})
        rows.append({"item_id": f"swap/{i}", "image": f"img{i}.jpg", "edit_type": "swap",
                     "captions": [pos, f"a mat {i} on a dog"]})
    return write_folder(root, "choice", pd.DataFrame(rows))


def test_blind_json_contract_and_table(tmp_path):
    bench = choice_folder(tmp_path / "bench")
    out = tmp_path / "blind.json"
    res = CliRunner().invoke(cli, ["audit", "blind", str(bench), "--json", str(out),
                                   "--scorer", "length", "--scorer", "ngram", "--folds", "3"])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert set(data) == {"scorers", "flags"}
    assert set(data["scorers"]) == {"length", "ngram"}
    for entry in data["scorers"].values():
        assert set(entry) == {"overall", "by_type", "rule"}
        assert entry["rule"] == "cross-fitted sign"
        assert set(entry["overall"]) == STAT_KEYS
        assert set(entry["by_type"]) == {"add", "swap"}
        assert all(set(s) == STAT_KEYS for s in entry["by_type"].values())
    assert data["scorers"]["length"]["by_type"]["add"]["accuracy"] == 1.0
    assert data["scorers"]["length"]["overall"]["n"] == 30
    assert data["flags"]["same_bag_of_words"] == {"add": 0, "swap": 15}
    assert "edit_type" in res.output and "same_bag" in res.output


def test_blind_rejects_pair_benchmarks(tmp_path):
    from foilbench.data.format import write_benchmark
    from foilbench.data.tiny import tiny_benchmark

    path = write_benchmark(tiny_benchmark(root=tmp_path / "t"), tmp_path / "pair")
    res = CliRunner().invoke(cli, ["audit", "blind", str(path), "--scorer", "length"])
    assert res.exit_code != 0
    assert "choice" in str(res.exception) or "choice" in res.output


def test_refine_writes_kept_ids(tmp_path):
    # lengths mirrored: half the negatives longer, half shorter, so cells have partners
    rows = []
    for i in range(40):
        short, long = f"a dog {i} on a mat", f"a big brown dog {i} on a red mat"
        rows.append({"item_id": f"add/{i}", "image": f"img{i}.jpg", "edit_type": "add",
                     "captions": [short, long] if i % 2 else [long, short]})
    bench = write_folder(tmp_path / "bench", "choice", pd.DataFrame(rows))
    out = tmp_path / "kept.json"
    res = CliRunner().invoke(cli, ["audit", "refine", str(bench), "--scorer", "length",
                                   "ngram", "--folds", "3", "--grid", "4", "--out", str(out)])
    assert res.exit_code == 0, res.output
    kept = json.loads(out.read_text())
    assert kept and all(k.startswith(("add/", "swap/")) for k in kept)
    assert "length_before" in res.output


@pytest.mark.slow  # about 15 s: the control audit imports its BPE tokenizer
def test_controls_wires_the_control_audit(tmp_path):
    from foilbench.data.format import write_benchmark
    from foilbench.data.tiny import tiny_benchmark

    path = write_benchmark(tiny_benchmark(root=tmp_path / "t"), tmp_path / "pair")
    out = tmp_path / "controls.json"
    res = CliRunner().invoke(cli, ["audit", "controls", str(path), "--no-minilm",
                                   "--no-pixels", "--json", str(out)])
    assert res.exit_code == 0, res.output
    summary = json.loads(out.read_text())["tiny-builtin"]
    assert summary["n_items"] == 12 and "pixels" not in summary
    assert summary["text_by_tier"]["short"]["token_levenshtein"] == 1.0
    assert "token_levenshtein" in res.output


def test_refine_that_keeps_nothing_says_why_and_fails(tmp_path):
    """Every negative is longer: the length scorer prefers every positive, no cell has a
    reflected partner, so nothing survives; the command says why and what to change."""
    rows = [{"item_id": f"add/{i}", "image": f"img{i}.jpg", "edit_type": "add",
             "captions": [f"a dog {i} on a mat", f"a big brown dog {i} on a red mat"]}
            for i in range(15)]
    bench = write_folder(tmp_path / "bench", "choice", pd.DataFrame(rows))
    res = CliRunner().invoke(cli, ["audit", "refine", str(bench), "--scorer", "length",
                                   "ngram", "--folds", "3"])
    assert res.exit_code != 0
    said = " ".join(res.output.split())
    assert "the refinement kept 0 of 15 items" in said and "--grid 10" in said
    assert "audit blind" in said


def test_minilm_named_by_a_missing_folder_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    import sys

    from foilbench.cli.main import main
    from foilbench.models import text_models

    bench = choice_folder(tmp_path / "bench")
    monkeypatch.setenv("FOILBENCH_MINILM", str(tmp_path / "no-minilm-here"))
    monkeypatch.setattr(sys, "argv", ["foilbench", "audit", "blind", str(bench),
                                      "--scorer", "minilm", "--folds", "3"])
    text_models._minilm.cache_clear()
    with pytest.raises(SystemExit) as stop:
        main()
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert "no-minilm-here is not a folder" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_controls_records_the_minilm_it_loaded(tmp_path):
    from foilbench.data.format import write_benchmark
    from foilbench.data.tiny import tiny_benchmark
    from foilbench.models.text_models import minilm_name

    path = write_benchmark(tiny_benchmark(root=tmp_path / "t"), tmp_path / "pair")
    out = tmp_path / "controls.json"
    res = CliRunner().invoke(cli, ["audit", "controls", str(path), "--no-pixels",
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    model = json.loads(out.read_text())["tiny-builtin"]["sentence_model"]
    assert model["name"] == minilm_name() and model["column"] == "minilm_cosine"
