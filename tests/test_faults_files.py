"""Hostile files in a benchmark folder (issue 42, item 2): each one sentence, never a hang.

A FIFO named as an image made ``inspect`` hang forever (hashing it blocked on the open) and
``run`` call it "image missing"; a socket, a symlink loop, a NUL byte in a path, an integer
path, a manifest in another encoding and a text file given as open_clip weights each met the
user as a hang, a traceback or a wrong name. Only regular files are read, before any byte.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket

import pandas as pd
import pytest

from _core_helpers import colour_pair_folder
from _faults_cli import foilbench, no_traceback
from foilbench.regular_files import NotRegularFile, not_regular_reason, open_regular


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "300")  # one problem, one line


@contextlib.contextmanager
def deadline(seconds: int):
    """Fail instead of hanging: a blocked open() is interrupted by the alarm's exception."""
    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s (a blocking read?)")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_args(root, tmp_path):
    return ["run", "--model", "tiny-random", "--benchmark", str(root), "--out",
            str(tmp_path / "out"), "--no-report", "--no-cache"]


def one_sentence_exit_2(capsys, args, *needles):
    code, out, err = foilbench(capsys, *args)
    no_traceback(err)
    assert code == 2, (code, out, err)
    message = err[err.index("error:"):]  # one error (an invalid benchmark lists its items)
    for needle in needles:
        assert needle in message, (needle, message)


def test_open_regular_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    with deadline(20), pytest.raises(NotRegularFile, match="FIFO"):
        open_regular(fifo)
    loop = tmp_path / "loop.png"
    loop.symlink_to(loop)
    assert not_regular_reason(fifo) == "a FIFO (named pipe)"
    assert not_regular_reason(loop) == "a symlink loop"
    assert not_regular_reason(tmp_path / "absent.png") is None
    (tmp_path / "ok.png").write_bytes(b"x")
    assert not_regular_reason(tmp_path / "ok.png") is None
    with open_regular(tmp_path / "ok.png") as f:
        assert f.read() == b"x"


def _make(kind, path):
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
        return None
    if kind == "loop":
        path.symlink_to(path.name)
        return None
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    return sock


@pytest.mark.parametrize("kind,named", [("fifo", "is a FIFO (named pipe)"),
                                        ("loop", "is a symlink loop"),
                                        ("socket", "is a socket")])
def test_a_special_file_named_as_an_image_is_refused_by_name(tmp_path, capsys, kind, named):
    root = colour_pair_folder(tmp_path / "b")
    held = _make(kind, root / "red.png")
    try:
        with deadline(120):
            code, out, err = foilbench(capsys, "inspect", str(root))
            no_traceback(err)
            assert code == 1 and "not_a_regular_file" in out and named in out
            one_sentence_exit_2(capsys, run_args(root, tmp_path), "red.png", named)
    finally:
        if held is not None:
            held.close()


def _set_paths(root, values):
    items = pd.read_parquet(root / "items.parquet")
    items["image_base"] = pd.Series(values, dtype=object)
    items.to_parquet(root / "items.parquet", index=False)


def test_a_nul_byte_in_an_image_path_is_named(tmp_path, capsys):
    root = colour_pair_folder(tmp_path / "b")
    _set_paths(root, ["red.png\x00.txt", "red.png", "green.png", "blue.png"])
    code, out, err = foilbench(capsys, "inspect", str(root))
    no_traceback(err)
    assert code == 1 and "nul_in_path" in out and "holds a NUL byte" in out
    one_sentence_exit_2(capsys, run_args(root, tmp_path), "item 'a'", "holds a NUL byte")


def test_an_integer_image_path_is_not_called_empty(tmp_path, capsys):
    root = colour_pair_folder(tmp_path / "b")
    items = pd.read_parquet(root / "items.parquet")
    items["image_base"] = [3, 4, 5, 6]
    items.to_parquet(root / "items.parquet", index=False)
    code, out, err = foilbench(capsys, "inspect", str(root))
    no_traceback(err)
    assert code == 1 and "path_not_text" in out and "must be text, got int 3" in out
    assert "empty_path" not in out
    one_sentence_exit_2(capsys, run_args(root, tmp_path), "must be text, got int")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-32"])
def test_a_manifest_with_a_byte_order_mark_is_decoded(tmp_path, capsys, encoding):
    root = colour_pair_folder(tmp_path / "b")
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["description"] = "caf\u00e9"
    (root / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False),
                                        encoding=encoding)
    code, out, err = foilbench(capsys, "inspect", str(root), "--json")
    no_traceback(err)
    assert code == 0 and json.loads(out)["n_items"] == 4


def test_a_manifest_in_another_encoding_is_refused_in_one_sentence(tmp_path, capsys):
    root = colour_pair_folder(tmp_path / "b")
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["description"] = "caf\u00e9"
    (root / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False),
                                        encoding="latin-1")
    for args in (["inspect", str(root)], run_args(root, tmp_path)):
        one_sentence_exit_2(capsys, args, "manifest.json", "not UTF-8 text", "0xe9")


def test_a_fifo_named_manifest_is_refused(tmp_path, capsys):
    root = colour_pair_folder(tmp_path / "b")
    (root / "manifest.json").unlink()
    os.mkfifo(root / "manifest.json")
    with deadline(60):
        one_sentence_exit_2(capsys, ["inspect", str(root)], "manifest.json",
                            "FIFO (named pipe), not a regular file")


def test_a_text_file_given_as_open_clip_weights_is_one_sentence(tmp_path, capsys):
    pytest.importorskip("open_clip")
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    one_sentence_exit_2(capsys, ["run", "--model", f"openclip:ViT-B-32:{text}", "--benchmark",
                                 "tiny-builtin", "--out", str(tmp_path / "out"), "--no-report"],
                        str(text), "not a PyTorch checkpoint or a safetensors file")
