"""``foilbench report A B`` writes one file per comparison and never overwrites silently."""

from __future__ import annotations

from _reliability import fb
from foilbench import runner


def test_one_file_per_comparison_and_no_silent_overwrite(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    out = runner.run(["tiny-random"], ["tiny-builtin"], tmp_path / "runs", n_boot=100,
                     progress=False, report=False, log=lambda *a: None)
    again = runner.run(["tiny-random"], ["tiny-builtin"], tmp_path / "runs", n_boot=200,
                       progress=False, report=False, log=lambda *a: None)
    a, b = out.run_ids[0], again.run_ids[0]
    db = str(out.db_path)
    assert fb(["report", a, "--db", db], capsys)[0] == 0
    assert fb(["report", a, b, "--db", db], capsys)[0] == 0
    written = sorted(p.name for p in (tmp_path / "foilbench-runs").glob("report-*.html"))
    assert written == sorted([f"report-{a[:8]}.html", f"report-{a[:8]}-{b[:8]}.html"])
    code, _, err = fb(["report", a, "--db", db, "--out", tmp_path / "foilbench-runs" /
                       f"report-{a[:8]}.html"], capsys)
    assert code != 0 and "exists; pass --force to overwrite it" in err
    assert fb(["report", a, "--db", db, "--force"], capsys)[0] == 0
