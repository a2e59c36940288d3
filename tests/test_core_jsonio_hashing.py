"""The one JSON writer (sorted, atomic) and the sha256 helpers every content key uses."""

from __future__ import annotations

import json

import pytest

from foilbench.hashing import sha256_bytes, sha256_file, sha256_text
from foilbench.jsonio import write_json


def test_write_json_is_sorted_ends_with_a_newline_and_round_trips(tmp_path):
    path = write_json(tmp_path / "sub" / "x.json", {"b": [1, 2], "a": "café"})
    text = path.read_text(encoding="utf-8")
    assert text == '{\n  "a": "caf\\u00e9",\n  "b": [\n    1,\n    2\n  ]\n}\n'
    assert json.loads(text) == {"a": "café", "b": [1, 2]}
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["x.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = write_json(tmp_path / "x.json", {"v": 1})
    with pytest.raises(TypeError):
        write_json(path, {"v": object()})
    assert json.loads(path.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_sha256_helpers_agree(tmp_path):
    data = "ünïcode caption".encode() * 1000
    (tmp_path / "f").write_bytes(data)
    assert sha256_file(tmp_path / "f", chunk=7) == sha256_bytes(data)
    assert sha256_text("ünïcode caption" * 1000) == sha256_bytes(data)
    assert sha256_bytes(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_a_file_is_read_once_inside_remembered_file_hashes_and_always_outside(tmp_path,
                                                                               monkeypatch):
    import hashlib

    from foilbench import hashing

    path = tmp_path / "a.bin"
    path.write_bytes(b"first")
    reads = []
    real = hashlib.sha256
    monkeypatch.setattr(hashing.hashlib, "sha256", lambda *a: reads.append(1) or real(*a))
    assert sha256_file(path) == sha256_file(path) == sha256_bytes(b"first")
    assert len(reads) == 2 + 1  # twice outside a block (sha256_bytes is the third)
    reads.clear()
    with hashing.remembered_file_hashes():
        first = sha256_file(path)
        with hashing.remembered_file_hashes():  # nested: the same memory
            assert sha256_file(path) == first
        assert len(reads) == 1
        path.write_bytes(b"other!")  # another size: a new key, read again
        assert sha256_file(path) == sha256_bytes(b"other!")
    reads.clear()
    assert sha256_file(path) == sha256_bytes(b"other!")  # outside: read, never remembered
    assert len(reads) == 2
