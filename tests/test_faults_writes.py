"""A sentence, not a traceback (issue 27): a read-only ``--out`` (run, sweep, construct), a
read-only ``FOILBENCH_HOME`` (the run goes on without the cache, with a warning), and a disk
that fills up during a run, a sweep, the embedding cache or a construction: exit 2 with one
message saying what to do, nothing already stored lost, no empty or temporary file left, and
the same command after freeing space gives the output a clean run gives.

The file system's refusals are simulated where the code writes (``os.replace``, the store's
write, ``to_parquet``, the probe of a folder), raising the ``OSError`` (or DuckDB's
``IOException``) the kernel gives, so the tests need no mount and no root.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from _core_helpers import colour_pair_folder
from _faults_cli import foilbench, no_traceback

RUN = ["--model", "tiny-random", "--benchmark", "tiny-builtin", "--n-boot", "100", "--quiet"]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def refuse_under(monkeypatch, folder: Path, code: int) -> None:
    """Creating anything under ``folder`` fails with ``code`` (a read-only file system)."""
    real_mkstemp, real_mkdir = tempfile.mkstemp, Path.mkdir

    def mkstemp(*args, dir=None, **kwargs):
        if dir is not None and str(dir).startswith(str(folder)):
            raise OSError(code, os.strerror(code), str(dir))
        return real_mkstemp(*args, dir=dir, **kwargs)

    def mkdir(self, *args, **kwargs):
        if str(self).startswith(str(folder)):
            raise OSError(code, os.strerror(code), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(Path, "mkdir", mkdir)


def leftovers(folder: Path) -> list[str]:
    """Empty files and temporary files under ``folder``."""
    return [str(p) for p in folder.rglob("*") if p.is_file()
            and (p.stat().st_size == 0 or p.name.endswith(".tmp"))]


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_read_only_out_is_one_sentence(tmp_path, capsys, monkeypatch, command):
    refuse_under(monkeypatch, tmp_path / "ro", errno.EROFS)
    code, out, err = foilbench(capsys, command, *RUN, "--out", str(tmp_path / "ro" / "out"))
    no_traceback(out + err)
    assert code == 2
    assert f"cannot write to --out {tmp_path / 'ro' / 'out'}: Read-only file system" in err
    assert "choose a writable folder with --out DIR" in err
    assert "evaluating" not in out + err  # refused before any work


def test_a_read_only_out_for_construct_is_one_sentence(tmp_path, capsys, monkeypatch):
    refuse_under(monkeypatch, tmp_path / "ro", errno.EROFS)
    code, out, err = foilbench(capsys, "construct", "composet", "--n-scenes", "2",
                               "--foils-per-scene", "8", "--size", "64", "--min-foils", "0", "--no-progress",
                               "--out", str(tmp_path / "ro" / "c"))
    no_traceback(out + err)
    assert code == 2 and "Read-only file system" in err and "--out DIR" in err


def test_a_read_only_home_runs_without_the_cache_with_a_warning(tmp_path, capsys,
                                                                monkeypatch, home):
    refuse_under(monkeypatch, home, errno.EROFS)
    code, out, err = foilbench(capsys, "run", *RUN, "--no-report", "--out",
                               str(tmp_path / "out"))
    no_traceback(out + err)
    assert code == 0, err
    text = " ".join((out + err).split())
    assert f"FOILBENCH_HOME {home} cannot be written (Read-only file system)" in text
    assert "running without the cache" in text and "stored 1 run(s)" in text
    assert not home.exists()


def summaries(out: Path) -> list[dict]:
    """The records of every summary.json under ``out``, without ids and times."""
    found = []
    for path in sorted(out.glob("*/summary.json")):
        summary = json.loads(path.read_text())
        found.append([{k: v for k, v in r.items() if k in ("model", "benchmark", "metrics")}
                      for r in summary["runs"]])
    return found


def test_a_full_disk_while_writing_the_summary(tmp_path, capsys, monkeypatch):
    real = os.replace

    def full(src, dst, *a, **k):
        if str(dst).endswith("summary.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", full)
    out = tmp_path / "out"
    code, stdout, err = foilbench(capsys, "run", *RUN, "--out", str(out))
    no_traceback(stdout + err)
    assert code == 2 and "no space left writing" in err and "summary.json" in err
    assert "run the same command again" in err and "runs already stored are kept" in err
    assert leftovers(out) == [] and list(out.glob("*/")) == []  # no empty batch folder
    con = duckdb.connect(str(out / "foilbench.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1  # the cell is kept
    con.close()

    monkeypatch.setattr(os, "replace", real)  # space freed
    code, _, err = foilbench(capsys, "run", *RUN, "--no-report", "--out", str(out))
    assert code == 0, err
    code, _, err = foilbench(capsys, "run", *RUN, "--no-report", "--out", str(tmp_path / "c"))
    assert code == 0, err
    assert summaries(out) == summaries(tmp_path / "c") and len(summaries(out)) == 1


def test_a_full_disk_mid_sweep_keeps_the_stored_cells_and_resumes(tmp_path, capsys,
                                                                  monkeypatch):
    from foilbench.store.db import ResultsStore

    real, calls = ResultsStore.write_run, []

    def full_on_second(self, *a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise duckdb.IOException("IO Error: Could not write file \"x.wal\": No space left "
                                     "on device")
        return real(self, *a, **k)

    monkeypatch.setattr(ResultsStore, "write_run", full_on_second)
    second = colour_pair_folder(tmp_path / "colours")
    args = ["sweep", "--model", "tiny-random", "--benchmark", "tiny-builtin", "--benchmark",
            str(second), "--n-boot", "100", "--quiet"]
    out = tmp_path / "out"
    code, stdout, err = foilbench(capsys, *args, "--out", str(out))
    no_traceback(stdout + err)
    assert code == 2 and "no space left" in err
    assert "every cell already stored" in err and "reused when you run the same command" in err
    assert leftovers(out) == []

    monkeypatch.setattr(ResultsStore, "write_run", real)
    code, stdout, err = foilbench(capsys, *args, "--out", str(out))
    assert code == 0, err
    assert "1 run(s) computed, 1 reused" in " ".join((stdout + err).split())
    code, _, err = foilbench(capsys, *args, "--out", str(tmp_path / "clean"))
    assert code == 0, err
    resumed = pd.read_csv(next(out.glob("sweep-*/matrix.csv")))
    clean = pd.read_csv(next((tmp_path / "clean").glob("sweep-*/matrix.csv")))
    cols = [c for c in clean.columns if c != "run_id"]
    pd.testing.assert_frame_equal(resumed[cols], clean[cols])


def test_a_full_disk_in_the_embedding_cache_only_stops_caching(tmp_path, monkeypatch, home):
    import foilbench.store.cache as cache_mod
    from foilbench.runner import run

    def full(tensors, folder, prefix):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(folder))

    monkeypatch.setattr(cache_mod, "_atomic_save", full)
    lines = []
    outcome = run(["tiny-random"], ["tiny-builtin"], tmp_path / "out", report=False,
                  n_boot=100, progress=False, log=lambda level, msg: lines.append(msg))
    assert len(outcome.records) == 1
    assert sum("cannot be written (No space left on device)" in line for line in lines) == 1
    assert leftovers(home) == []


def test_a_full_disk_during_construct_resumes_to_the_same_benchmark(tmp_path, capsys,
                                                                    monkeypatch):
    args = ["construct", "composet", "--n-scenes", "2", "--foils-per-scene", "8", "--min-foils", "0", "--size",
            "64", "--no-progress"]
    real = pd.DataFrame.to_parquet

    def full(self, path, *a, **k):
        if str(path).endswith("items.parquet"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(self, path, *a, **k)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    out = tmp_path / "c"
    code, stdout, err = foilbench(capsys, *args, "--out", str(out))
    no_traceback(stdout + err)
    assert code == 2 and "No space left on device" in err and "run the same command" in err
    assert leftovers(out) == []

    monkeypatch.setattr(pd.DataFrame, "to_parquet", real)
    code, _, err = foilbench(capsys, *args, "--out", str(out))
    assert code == 0, err
    code, _, err = foilbench(capsys, *args, "--out", str(tmp_path / "clean"))
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_parquet(out / "items.parquet"),
                                  pd.read_parquet(tmp_path / "clean" / "items.parquet"))
