"""The image checks' stat work (data/images): a plain image in a validation pass is found
with one ``lstat`` and no ``stat``; elsewhere one ``stat`` says both what the file is and
whether it is there, with the same answers and wording as the two calls it replaces."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from types import SimpleNamespace

import pytest
from PIL import Image

from foilbench import regular_files
from foilbench.data import images, validate
from foilbench.data.images import check_image
from foilbench.regular_files import not_regular_reason, regular_status


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    (root / "a").mkdir(parents=True)
    Image.new("RGB", (4, 3), (9, 8, 7)).save(root / "a" / "one.png")
    (root / "a" / "file.txt").write_text("x")
    (root / "folder").mkdir()
    os.mkfifo(root / "pipe.png")
    os.symlink(root / "loop.png", root / "loop.png")
    os.symlink(root / "nowhere.png", root / "dangling.png")
    os.symlink(root / "a" / "one.png", root / "linked.png")
    return root


def _counting(monkeypatch) -> dict[str, int]:
    calls = {"stat": 0, "lstat": 0}

    def counted(name):
        def call(*args, **kwargs):
            calls[name] += 1
            return getattr(os, name)(*args, **kwargs)
        return call

    fake = SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    fake.stat, fake.lstat = counted("stat"), counted("lstat")
    monkeypatch.setattr(images, "os", fake)
    monkeypatch.setattr(regular_files, "os", fake)
    return calls


def test_a_plain_image_in_a_pass_costs_one_lstat_and_no_stat(tree, monkeypatch):
    folders: dict[str, Path] = {}
    base = tree.resolve()
    assert check_image(tree, "a/one.png", resolved_root=base, resolved_dirs=folders) is None
    calls = _counting(monkeypatch)
    assert check_image(tree, "a/one.png", resolved_root=base, resolved_dirs=folders) is None
    assert calls == {"stat": 0, "lstat": 1}


def test_outside_a_pass_one_stat_says_kind_and_presence(tree, monkeypatch):
    calls = _counting(monkeypatch)
    assert check_image(tree, "a/one.png") is None
    assert calls["stat"] == 1


@pytest.mark.parametrize("rel", ["a/one.png", "a/missing.png", "folder", "pipe.png",
                                 "loop.png", "dangling.png", "linked.png", "a/file.txt/x.png",
                                 "a/./one.png", "a//one.png"])
def test_one_stat_answers_as_the_two_calls(tree, rel):
    path = tree / rel
    assert regular_status(path) == (not_regular_reason(path), path.is_file())


@pytest.mark.parametrize("rel,reason,wording", [
    ("a/missing.png", images.MISSING, "image missing: {shown}"),
    ("folder", images.NOT_REGULAR,
     "image {shown} is a folder; only regular files are read as images"),
    ("pipe.png", images.NOT_REGULAR,
     "image {shown} is a FIFO (named pipe); only regular files are read as images"),
    ("loop.png", images.NOT_REGULAR,
     "image {shown} is a symlink loop; only regular files are read as images"),
    ("dangling.png", images.MISSING, "image missing: {shown}"),
])
def test_each_problem_keeps_its_wording_in_and_out_of_a_pass(tree, rel, reason, wording):
    want = images.ImageProblem(reason, wording.format(shown=tree / rel))
    assert check_image(tree, rel) == want
    assert check_image(tree, rel, resolved_root=tree.resolve(), resolved_dirs={}) == want


def _escapes_by_parts(rel: str) -> bool:  # the rule, walked part by part for every path
    p = PurePosixPath(rel.replace("\\", "/"))
    if p.is_absolute() or (len(rel) > 1 and rel[1] == ":"):
        return True
    depth = 0
    for part in p.parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return True
    return False


@pytest.mark.parametrize("rel", ["a.png", "a/b.png", "/a.png", "//a.png", "\\a.png",
                                 "C:a.png", "c:/a.png", "", ".", "./a.png", "a/../b.png",
                                 "../a.png", "a/../../b.png", "a\\..\\..\\b.png", "..a.png",
                                 "a..b/c.png", "a/b..", "x:", ":x"])
def test_escape_rule_is_the_part_by_part_one(rel):
    assert validate._escapes_root.__wrapped__(rel) == _escapes_by_parts(rel)


def test_a_stat_refused_by_permissions_is_no_reason_and_costs_one_stat(tree, monkeypatch):
    """``not_regular_reason`` leaves a failed ``stat`` to the caller's open: it neither raises
    (``Path.is_file`` raises for EACCES) nor stats a second time; ``regular_status`` raises
    as ``is_file`` does."""
    import errno
    import os

    real, calls = os.stat, []

    def refusing(path, *args, **kwargs):
        calls.append(path)
        if str(path).endswith("one.png"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", refusing)
    assert not_regular_reason(tree / "a" / "one.png") is None and len(calls) == 1
    with pytest.raises(PermissionError):
        (tree / "a" / "one.png").is_file()
    with pytest.raises(PermissionError):
        regular_status(tree / "a" / "one.png")
