"""Benchmarks that changed, and inputs that pass but should not (issue 27).

- a benchmark edited after its manifest was written (captions swapped): ``inspect`` reports
  it, ``sweep`` never reuses the old contents' run; an unchanged one is verified from the
  size+mtime index without hashing again;
- two benchmarks whose manifests share a name: the sweep names them apart and writes the
  matrix;
- manifest fields of the wrong type fail ``inspect`` naming the field;
- a NaN ``unit_chance``, identical captions or images in an item: ``inspect`` problems;
  identical candidates are run warnings (a bad ``unit_chance`` is refused since issue 42).
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pandas as pd
import pytest

from _core_helpers import colour_pair_folder
from _faults_cli import foilbench, no_traceback
from foilbench.data.benchmark import Benchmark
from foilbench.data.format import load_benchmark, write_benchmark
from foilbench.runner import run, sweep
from foilbench.runner.settings import DB_FILE

FAST = {"n_boot": 100, "progress": False, "use_cache": False}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))


def written(tmp_path, name="b", keep=4):
    """A colour-pair benchmark written by foilbench (so its manifest has a checksum), with its
    first ``keep`` items."""
    bench = load_benchmark(colour_pair_folder(tmp_path / f"src-{name}"))
    bench.items = bench.items.head(keep)
    return write_benchmark(bench, tmp_path / name)


def swap_captions(root):
    items = pd.read_parquet(root / "items.parquet")
    items[["caption_base", "caption_foil"]] = items[["caption_foil", "caption_base"]].values
    items.to_parquet(root / "items.parquet", index=False)


def stored_runs(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT benchmark_checksum FROM runs").fetchall()
    finally:
        con.close()


def test_an_edited_benchmark_is_reported_and_its_old_run_never_reused(tmp_path, capsys):
    root = written(tmp_path)
    first = sweep(["tiny-random"], [str(root)], tmp_path / "out", **FAST)
    assert first.computed == 1
    code, out, err = foilbench(capsys, "inspect", str(root))
    assert code == 0 and "valid: no problems found" in out

    swap_captions(root)
    code, out, err = foilbench(capsys, "inspect", str(root))
    assert code == 1 and "checksum_mismatch" in out and "changed after its manifest" in out
    lines = []
    again = sweep(["tiny-random"], [str(root)], tmp_path / "out",
                  log=lambda level, msg: lines.append(f"{level}: {msg}"), **FAST)
    assert again.computed == 1 and again.reused == 0
    assert any("changed after its manifest was written" in line for line in lines)
    checksums = [c for (c,) in stored_runs(tmp_path / "out" / DB_FILE)]
    assert len(checksums) == 2 and len(set(checksums)) == 2
    third = sweep(["tiny-random"], [str(root)], tmp_path / "out", **FAST)
    assert third.reused == 1  # the edited contents' own run is reused


def test_an_unchanged_benchmark_is_verified_from_the_index_not_hashed_again(tmp_path,
                                                                           monkeypatch):
    root = written(tmp_path)
    calls = []
    real = Benchmark.compute_checksum

    def counting(self, include_images=True):
        calls.append(include_images)
        return real(self, include_images)

    monkeypatch.setattr(Benchmark, "compute_checksum", counting)
    assert load_benchmark(root).checksum_note is None and len(calls) == 1
    assert load_benchmark(root).checksum_note is None and len(calls) == 1  # size+mtime held
    (root / "red.png").write_bytes((root / "blue.png").read_bytes())  # an image replaced
    assert "changed after its manifest" in load_benchmark(root).checksum_note
    assert len(calls) == 2


def test_two_benchmarks_that_share_a_name_get_a_matrix(tmp_path):
    a, b = written(tmp_path / "v1", "data"), written(tmp_path / "v2", "data", keep=3)
    for root in (a, b):
        manifest = json.loads((root / "manifest.json").read_text())
        assert manifest["name"] == "src-data"
    lines = []
    out = sweep(["tiny-random"], [str(a), str(b)], tmp_path / "out",
                log=lambda level, msg: lines.append(msg), **FAST)
    assert out.benchmarks == ["src-data [v1/data]", "src-data [v2/data]"]
    assert out.computed == 2 and out.failures == []
    table = pd.read_csv(next(p for p in out.paths if p.suffix == ".csv"))
    assert table["benchmark"].tolist() == out.benchmarks
    markdown = next(p for p in out.paths if p.suffix == ".md").read_text()
    assert all(name in markdown for name in out.benchmarks)
    assert any("2 benchmarks are named 'src-data'" in line for line in lines)


@pytest.mark.parametrize("field,value", [("name", ["x"]), ("partial", "yes"),
                                         ("version", 1.5), ("n_items", -1)])
def test_a_manifest_field_of_the_wrong_type_fails_inspect_naming_it(tmp_path, capsys, field,
                                                                    value):
    root = written(tmp_path)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest[field] = value
    (root / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = foilbench(capsys, "inspect", str(root))
    no_traceback(out + err)
    assert code == 2 and f"field {field!r}" in err and "manifest.json" in err


def test_nan_unit_chance_and_identical_candidates_are_flagged(tmp_path, capsys):
    root = written(tmp_path)
    items = pd.read_parquet(root / "items.parquet")
    items.loc[items["item_id"] == "a", "caption_foil"] = items.loc[
        items["item_id"] == "a", "caption_base"]
    shutil.copyfile(root / "red.png", root / "red-copy.png")  # same bytes, another name
    items.loc[items["item_id"] == "b", "image_foil"] = "red-copy.png"
    items.to_parquet(root / "items.parquet", index=False)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["extras"]["unit_chance"] = float("nan")
    manifest["checksum"] = ""  # the edit is intended: no stale checksum in this test
    (root / "manifest.json").write_text(json.dumps(manifest))

    code, out, err = foilbench(capsys, "inspect", "--json", str(root))
    assert code == 1
    found = {(p["item_id"], p["reason"]) for p in json.loads(out)["problems"]}
    assert found == {(None, "bad_unit_chance"), ("a", "identical_captions"),
                     ("b", "identical_images")}
    # a bad unit_chance is refused by the run (issue 42: tests/test_faults_validation.py);
    # the identical candidates are still run, with a warning
    del manifest["extras"]["unit_chance"]
    (root / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    run(["tiny-random"], [str(root)], tmp_path / "out", report=False,
        log=lambda level, msg: lines.append(f"{level}: {msg}"), **FAST)
    warned = [line for line in lines if "suspicious benchmark contents" in line]
    assert len(warned) == 1 and warned[0].startswith("warning:")
    assert "1 identical_captions (a)" in warned[0] and "1 identical_images (b)" in warned[0]
