"""A full disk anywhere is one sentence naming the path, exit 2, with what was stored kept
and no unopenable store or partial file left (issue 42, item 6).

Portable fault injection (no root): the write that fails is replaced by one raising the error
the library gives on a full disk (safetensors' ``SafetensorError ... (os error 28)``, DuckDB's
``IOException``/``TransactionException``, ``OSError(ENOSPC)``). Where ``mount`` works (root in
a container), a 4 MiB tmpfs filled to a few KiB checks the real thing; else those tests skip.
"""

from __future__ import annotations

import errno
import os
import subprocess

import duckdb
import pytest

from _faults_cli import foilbench, no_traceback
from _review_fixtures import write_review_bench
from foilbench.staged import DiskWriteError, disk_errno, staged_folder

RUN = ["run", "--model", "tiny-random", "--benchmark", "tiny-builtin", "--n-boot", "100",
       "--quiet", "--no-report"]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "300")
    return tmp_path / "home"


def partial_files(folder):
    """Empty files, temporaries and staging folders under ``folder``."""
    return [str(p) for p in folder.rglob("*")
            if (p.is_file() and (p.stat().st_size == 0 or p.name.endswith((".tmp", ".part"))))
            or ".part-" in p.name]


def test_disk_errno_reads_what_libraries_say():
    assert disk_errno(OSError(errno.ENOSPC, "No space left on device")) == errno.ENOSPC
    assert disk_errno(OSError("[Errno 28] No space left on device")) == errno.ENOSPC  # pyarrow
    assert disk_errno(Exception("I/O error: No space left on device (os error 28)")) == 28
    assert disk_errno(Exception("database or disk is full")) == errno.ENOSPC
    assert disk_errno(OSError(errno.ENOENT, "No such file")) is None
    assert disk_errno(ValueError("bad")) is None


def test_a_staged_folder_is_whole_or_absent(tmp_path):
    out = tmp_path / "export"
    with pytest.raises(DiskWriteError, match=f"no space left writing the thing to {out}"):
        with staged_folder(out, "the thing") as staging:
            (staging / "half.parquet").write_bytes(b"x" * 10)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(staging / "b"))
    assert not out.exists() and partial_files(tmp_path) == []
    with pytest.raises(KeyboardInterrupt), staged_folder(out, "the thing") as staging:
        (staging / "half.parquet").write_bytes(b"x")
        raise KeyboardInterrupt
    assert not out.exists() and list(tmp_path.iterdir()) == []
    with staged_folder(out, "the thing") as staging:
        (staging / "whole.parquet").write_bytes(b"x")
    assert [p.name for p in out.iterdir()] == ["whole.parquet"]
    assert [p.name for p in tmp_path.iterdir()] == ["export"]


def test_a_cache_that_safetensors_cannot_write_falls_back_with_a_warning(
        tmp_path, capsys, monkeypatch, home):
    from safetensors import SafetensorError

    import foilbench.store.cache as cache_mod

    def full(tensors, filename, metadata=None):
        with open(filename, "wb") as f:  # what a full disk leaves: part of a file
            f.write(b"\0" * 100)
        raise SafetensorError("Error while serializing: I/O error: No space left on device "
                              "(os error 28)")

    monkeypatch.setattr(cache_mod, "save_file", full)
    code, out, err = foilbench(capsys, *RUN, "--out", str(tmp_path / "out"))
    no_traceback(err)
    assert code == 0 and "tiny-random" in out
    assert err.count("embedding cache") == 1 and "No space left on device" in err
    assert [p for p in home.rglob("*.tmp")] == []


def test_a_store_that_cannot_be_created_is_not_left_behind(tmp_path, capsys, monkeypatch):
    import foilbench.store.db as db_mod

    def full(con, path, **kwargs):
        raise duckdb.IOException(f'IO Error: Could not write file "{path}": No space left on '
                                 "device")

    monkeypatch.setattr(db_mod, "prepare_schema", full)
    out = tmp_path / "out"
    code, _, err = foilbench(capsys, *RUN, "--out", str(out))
    no_traceback(err)
    assert code == 2 and f"no space left writing the results store to {out / 'foilbench.duckdb'}" in err
    assert sorted(p.name for p in out.iterdir()) == []  # no store, no empty batch folder


def test_a_review_export_on_a_full_disk_names_the_destination(tmp_path, capsys, monkeypatch):
    import foilbench.review.export as export_mod
    from foilbench.review.app import open_session

    bench = write_review_bench(tmp_path / "bench")
    session = open_session(bench)
    for phase in ("base", "instance", "verbosity"):
        for key in session.units.keys(phase):
            session.decide(phase, key, "accept")
    session.store.close()

    def full(src, out):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "construction.json"))

    monkeypatch.setattr(export_mod, "copy_construction_files", full)
    dest = tmp_path / "exported"
    code, _, err = foilbench(capsys, "review", "export", str(bench), "--out", str(dest))
    no_traceback(err)
    assert code == 2, err
    assert f"no space left writing the reviewed benchmark to {dest}" in err
    assert not dest.exists() and partial_files(tmp_path) == []


# --- the real thing, where a small tmpfs can be mounted --------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs at tmp_path/disk; ``fill(kb)`` leaves about ``kb`` KiB free."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root): the injected tests cover this")

    def fill(kb):
        with open(mount / ".filler", "wb") as f:
            f.write(b"\0" * (4096 - kb) * 1024)
        return mount

    yield fill
    subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("free_kb", [4, 16, 24, 64])
def test_a_run_on_a_full_disk_leaves_an_openable_store(tmp_path, capsys, small_disk, free_kb):
    disk = small_disk(free_kb)
    out = disk / "out"
    code, _, err = foilbench(capsys, *RUN, "--out", str(out))
    no_traceback(err)
    assert code == 2 and "no space left writing" in err and str(out) in err
    assert [p for p in out.iterdir() if p.is_dir()] == []  # no empty batch folder
    db = out / "foilbench.duckdb"
    if db.exists():  # whatever was committed opens
        code, _, err = foilbench(capsys, "show", "--db", str(db))
        no_traceback(err)
        assert "not a DuckDB database" not in err and "Could not read" not in err
    assert [p for p in partial_files(out) if not p.endswith(".wal")] == []


def test_a_full_home_runs_without_the_cache(tmp_path, capsys, small_disk, monkeypatch):
    disk = small_disk(8)
    monkeypatch.setenv("FOILBENCH_HOME", str(disk / "home"))
    code, out, err = foilbench(capsys, *RUN, "--out", str(tmp_path / "out"))
    no_traceback(err)
    assert code == 0 and "embedding cache" in err
    assert partial_files(disk) == []


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_an_items_export_on_a_full_disk_names_the_file(tmp_path, capsys, monkeypatch, fmt):
    import pandas as pd

    code, _, err = foilbench(capsys, *RUN, "--out", str(tmp_path / "out"))
    assert code == 0, err
    db = tmp_path / "out" / "foilbench.duckdb"
    run_id = duckdb.connect(str(db), read_only=True).execute(
        "SELECT run_id FROM runs").fetchone()[0]

    def full(self, path, *args, **kwargs):
        with open(path, "wb") as f:
            f.write(b"PAR1")  # what a full disk leaves: the start of a file
        raise OSError("[Errno 28] Error writing bytes to file. No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet" if fmt == "parquet" else "to_csv", full)
    dest = tmp_path / "exports" / f"items.{fmt}"
    code, _, err = foilbench(capsys, "export", run_id, "--db", str(db), "--format", fmt,
                             "--out", str(dest))
    no_traceback(err)
    assert code == 2 and f"no space left writing the export to {dest}" in err
    assert list(dest.parent.iterdir()) == []
