"""Helper scripts leave no trace: the screenshot script writes the tracked pictures in docs/
only with --update-docs, and the default-run bench removes its temporary homes (each holds a
built suite of ~170 MB)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load(relative: str):
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_screenshots_go_to_a_temp_folder_unless_update_docs(monkeypatch, tmp_path):
    shots = load("docs/report_screenshots.py")
    seen = []

    def fake_shoot(db, out_dir):
        seen.append(out_dir)
        return ()

    monkeypatch.setattr(shots, "shoot", fake_shoot)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    for argv, want in ((["db"], None), (["db", "--update-docs"], "docs"),
                       (["db", "--out-dir", str(tmp_path / "o")], str(tmp_path / "o"))):
        monkeypatch.setattr(sys, "argv", ["report_screenshots.py", *argv])
        shots.main()
        if want is None:
            assert Path(seen[-1]).parent == tmp_path and Path(seen[-1]).is_dir()
        else:
            assert seen[-1] == want
    monkeypatch.setattr(sys, "argv", ["x", "db", "--update-docs", "--out-dir", "elsewhere"])
    with pytest.raises(SystemExit):
        shots.main()


@pytest.mark.parametrize("kept", [False, True])
def test_the_bench_removes_its_temp_homes(monkeypatch, tmp_path, kept):
    bench = load("bench/bench_default_run.py")
    used = []

    def fake_measure(src, cores, workdir, label, run_args):
        used.append(workdir)
        (workdir / label / "home" / "suite").mkdir(parents=True)
        (workdir / label / "home" / "suite" / "big.bin").write_bytes(b"x" * 1000)
        return {"wall": 1.0, "phases": {"evaluation": (1.0, 1.0)}}

    monkeypatch.setattr(bench, "measure", fake_measure)
    monkeypatch.setattr(bench, "print_run", lambda title, run: None)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    argv = ["bench_default_run.py"] + (["--workdir", str(tmp_path / "keep")] if kept else [])
    monkeypatch.setattr(sys, "argv", argv)
    bench.main()
    assert len(used) == 1
    assert used[0].exists() == kept
    if not kept:
        assert list(tmp_path.iterdir()) == []
