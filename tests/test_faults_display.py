"""Strings from a benchmark reach the terminal escaped and bounded (issue 42, item 1).

A manifest ``name`` or an ``edit_type`` holding an OSC (window title), a CSI (clear screen),
a right-to-left override or a NUL is printed by ``inspect``, ``run``, ``show`` as visible
escapes: no ESC, bidi or NUL byte of the benchmark's reaches the output, to a pipe or to a
terminal. A million-character name is refused by the manifest schema at once, and a
million-character column value is printed capped, quickly.
"""

from __future__ import annotations

import json
import time

import pytest

from _faults_cli import foilbench, no_traceback
from _hostile import HOSTILE_NAME, hostile_bytes, hostile_folder
from foilbench.display import ELLIPSIS, safe_markup, safe_message, safe_text


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")


def test_safe_text_escapes_controls_and_bidi_and_caps_the_length():
    assert safe_text("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert safe_text("\u202egnp") == "\\u202egnp"
    assert safe_text("x\x00\x9b\x7f\ty\nz") == "x\\x00\\x9b\\x7f\\x09y\\x0az"
    assert safe_message("line one\nline\x1b two") == "line one\nline\\x1b two"
    assert safe_text("n" * 500, 10) == "n" * 9 + ELLIPSIS
    assert safe_text("\x1b" * 10, 10) == "\\x1b\\x1b\\" + ELLIPSIS  # escapes count too
    assert len(safe_text("\x1b" * 10, 10)) == 10
    assert safe_text("short", 10) == "short"
    assert safe_markup("[bold]x[/bold]") == "\\[bold]x\\[/bold]"
    assert safe_text(42) == "42"


def test_safe_text_looks_only_at_what_it_shows():
    start = time.perf_counter()
    out = safe_text("\x1b" * 10_000_000, 120)
    assert time.perf_counter() - start < 0.5 and len(out) == 120


@pytest.mark.parametrize("tty", [False, True], ids=["pipe", "tty"])
def test_no_command_prints_a_benchmarks_escape_sequences(tmp_path, capsys, monkeypatch, tty):
    if tty:
        monkeypatch.setenv("FORCE_COLOR", "1")
        monkeypatch.setenv("TTY_COMPATIBLE", "1")
    root = hostile_folder(tmp_path / "b")
    out_dir = tmp_path / "out"
    outputs = {}
    outputs["inspect"] = foilbench(capsys, "inspect", str(root))
    outputs["run"] = foilbench(capsys, "run", "--model", "tiny-random", "--benchmark",
                               str(root), "--out", str(out_dir), "--no-report", "--no-cache")
    db = str(out_dir / "foilbench.duckdb")
    outputs["show"] = foilbench(capsys, "show", "--db", db)
    run_id = json.loads(foilbench(capsys, "show", "--db", db, "--json")[1])[0]["run_id"]
    outputs["show run"] = foilbench(capsys, "show", run_id, "--db", db, "--by", "edit_type")
    outputs["benchmarks"] = foilbench(capsys, "benchmarks")
    outputs["models"] = foilbench(capsys, "models")
    for command, (code, out, err) in outputs.items():
        no_traceback(err)
        assert code == 0, (command, err)
        assert hostile_bytes(out + err, tty=tty) == dict.fromkeys(
            hostile_bytes("", tty=tty), 0), command
    assert "\\x1b]0;PWNED" in outputs["inspect"][1]  # shown, as visible escapes
    assert "\\x1b]0;PWNED" in outputs["run"][1] and "\\u202e" in outputs["run"][1]
    assert "\\x1b[2J" in outputs["show run"][1]


def test_a_json_output_keeps_the_full_value(tmp_path, capsys):
    root = hostile_folder(tmp_path / "b")
    code, out, _ = foilbench(capsys, "inspect", str(root), "--json")
    assert json.loads(out)["benchmark"] == HOSTILE_NAME


def test_a_million_character_name_is_refused_at_once(tmp_path, capsys):
    root = hostile_folder(tmp_path / "b", name="n" * 1_000_000)
    for args in (["inspect", str(root)],
                 ["run", "--model", "tiny-random", "--benchmark", str(root), "--out",
                  str(tmp_path / "out"), "--no-report", "--no-cache"]):
        start = time.perf_counter()
        code, out, err = foilbench(capsys, *args)
        assert time.perf_counter() - start < 60
        no_traceback(err)
        assert code == 2 and "field 'name'" in err and "at most 200 characters" in err
        assert len(out + err) < 2000


def test_a_million_character_value_is_printed_capped_and_fast(tmp_path, capsys):
    root = hostile_folder(tmp_path / "b", name="ok", edit="e" * 1_000_000)
    start = time.perf_counter()
    code, out, err = foilbench(capsys, "inspect", str(root))
    assert time.perf_counter() - start < 60
    assert code == 0 and ELLIPSIS in out and len(out) < 10_000
