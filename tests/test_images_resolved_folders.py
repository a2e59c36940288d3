"""An image's folder resolved once per validation pass (data/images._resolved_in_folder)
gives every path, and every image problem, that resolving each path in full gives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image

from foilbench.data.images import check_image, resolved_inside

RELS = [
    "a/one.png", "a/two.png", "a/b/three.png", "a/missing.png", "a/../a/one.png",
    "a/./two.png", "linked_dir/one.png", "linked_dir/b/three.png", "to_outside.png",
    "outside_dir/x.png", "loop.png", "a/loop_dir/one.png", "../escape.png", "a/..",
    "a/to_one.png", "a/b/../../a/two.png", "dangling.png", "not_a_file", "nul\x00.png",
    "linked_dir/../a/one.png",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    (root / "a" / "b").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    for path in (root / "a" / "one.png", root / "a" / "two.png",
                 root / "a" / "b" / "three.png", outside / "x.png"):
        Image.new("RGB", (4, 3), (9, 8, 7)).save(path)
    (root / "not_a_file").mkdir()
    os.symlink(root / "a", root / "linked_dir")
    os.symlink(outside / "x.png", root / "to_outside.png")
    os.symlink(outside, root / "outside_dir")
    os.symlink(root / "loop.png", root / "loop.png")
    os.symlink(root / "a" / "loop_dir", root / "a" / "loop_dir")
    os.symlink("one.png", root / "a" / "to_one.png")
    os.symlink(root / "nowhere.png", root / "dangling.png")
    return root


def _full(root: Path, rel: str):
    try:
        return ("ok", resolved_inside(root, rel, root.resolve()))
    except Exception as e:  # noqa: BLE001 - the same exception type is the point
        return ("raised", type(e))


def _by_folder(root: Path, rel: str, folders: dict):
    try:
        return ("ok", resolved_inside(root, rel, root.resolve(), folders))
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e))


def test_paths_resolved_through_kept_folders_are_the_full_resolutions(tree):
    folders: dict[str, Path] = {}
    for _ in range(2):  # a second pass reads the kept folders
        for rel in RELS:
            assert _by_folder(tree, rel, folders) == _full(tree, rel), rel
    assert folders  # the kept folders were used


def test_image_problems_are_those_of_full_resolution(tree):
    folders: dict[str, Path] = {}
    base = tree.resolve()
    for rel in RELS:
        want = check_image(tree, rel, decode=True, resolved_root=base)
        got = check_image(tree, rel, decode=True, resolved_root=base, resolved_dirs=folders)
        assert got == want, rel
    assert check_image(tree, "a/one.png", resolved_dirs=folders) is None
    assert check_image(tree, "to_outside.png", resolved_dirs=folders).reason == \
        check_image(tree, "to_outside.png").reason
