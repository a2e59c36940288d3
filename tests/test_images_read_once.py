"""Validation inside a run reads each image file once: its bytes give the header, the
sha256 and the engine's decode. Pinned against the path that opened the file for each
(the check given no bytes and no opened image): the same problems, word for word, the same
remembered hashes and the same prepared pixels; and the file is opened once, not three
times, and its header parsed once, not twice."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from foilbench.data import images
from foilbench.data.images import check_image, pixels_checked_by
from foilbench.hashing import remembered_file_hashes, sha256_file
from foilbench.scoring import prepared


def _files(root: Path) -> list[str]:
    """Good, corrupt, foreign, too large, multi-frame and missing images."""
    rng = np.random.default_rng(3)
    Image.fromarray(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)).save(
        root / "good.jpg", quality=90)
    Image.fromarray(rng.integers(0, 256, (20, 24, 3), dtype=np.uint8)).save(root / "good.png")
    Image.new("L", (9, 7), 200).save(root / "gray.png")
    frames = [Image.new("P", (8, 8), k) for k in range(3)]
    frames[0].save(root / "anim.gif", save_all=True, append_images=frames[1:])
    jpeg = (root / "good.jpg").read_bytes()
    (root / "cut.jpg").write_bytes(jpeg[: len(jpeg) // 2])
    png = (root / "good.png").read_bytes()
    (root / "cut.png").write_bytes(png[:60])
    (root / "text.png").write_bytes(b"not an image at all")
    Image.new("RGB", (300, 300)).save(root / "big.png")
    (root / "same.png").write_bytes(png)  # the bytes of good.png under another name
    return ["good.jpg", "good.png", "gray.png", "anim.gif", "cut.jpg", "cut.png",
            "text.png", "big.png", "same.png", "nowhere.png"]


def _preparer():
    return prepared.Preparer("fp", lambda image: np.asarray(image.convert("RGB"))[:3, :3],
                             lambda px: px)


def _checked(root: Path, rels: list[str], check) -> tuple[list, dict]:
    with remembered_file_hashes(), pixels_checked_by(check):
        found = [check_image(root, rel, max_pixels=250 * 250) for rel in rels]
        hashes = {rel: sha256_file(root / rel) for rel in rels
                  if (root / rel).is_file() and found[rels.index(rel)] is None}
    return [(p.reason, p.message) if p else None for p in found], hashes


def test_one_read_gives_the_same_problems_hashes_and_pixels_as_separate_opens(tmp_path):
    rels = _files(tmp_path)
    new = prepared.SharedPreparation([_preparer()])
    old = prepared.SharedPreparation([_preparer()])
    got, got_hashes = _checked(tmp_path, rels, new.check_pixels)
    want, want_hashes = _checked(tmp_path, rels,
                                 lambda path, opened, image: old.check_pixels(path))
    assert got == want
    assert [p and p[0] for p in got] == [None, None, None, None, "corrupt_image",
                                         "corrupt_image", "unreadable_image",
                                         "image_too_large", None, "missing_image"]
    assert got_hashes == want_hashes == {
        rel: hashlib.sha256((tmp_path / rel).read_bytes()).hexdigest()
        for rel in ("good.jpg", "good.png", "gray.png", "anim.gif", "same.png")}
    assert new.counts == old.counts and new.counts["decoded"] == 4  # same.png: no decode
    for rel, digest in got_hashes.items():
        a = new.pixels("fp", digest, lambda: pytest.fail("kept"))
        b = old.pixels("fp", digest, lambda: pytest.fail("kept"))
        assert a.dtype == b.dtype and np.array_equal(a, b), rel


def test_a_file_is_opened_once_for_header_hash_and_decode(tmp_path, monkeypatch):
    _files(tmp_path)
    opened: list[str] = []
    real_open = images.open_regular

    def counting(path):
        opened.append(Path(path).name)
        return real_open(path)

    real_image_open = Image.open
    parsed: list[object] = []

    def image_open(fp, *args, **kwargs):
        assert not isinstance(fp, (str, Path)), f"a second open of {fp}"
        parsed.append(fp)
        return real_image_open(fp, *args, **kwargs)

    monkeypatch.setattr(images, "open_regular", counting)
    monkeypatch.setattr("foilbench.regular_files.open_regular", counting)
    monkeypatch.setattr(Image, "open", image_open)
    shared = prepared.SharedPreparation([_preparer()])
    with remembered_file_hashes(), pixels_checked_by(shared.check_pixels):
        assert check_image(tmp_path, "good.jpg") is None
        assert sha256_file(tmp_path / "good.jpg") == hashlib.sha256(
            (tmp_path / "good.jpg").read_bytes()).hexdigest()  # remembered: no open
    assert opened == ["good.jpg"] and shared.counts["decoded"] == 1
    assert len(parsed) == 1  # the header is parsed once: the decode loads that same image


def test_a_file_over_the_whole_read_limit_is_streamed_as_before(tmp_path, monkeypatch):
    """A file larger than READ_WHOLE_AT_MOST is never held whole: the check hashes it in
    blocks and decodes it from the file, as without the opened file."""
    _files(tmp_path)
    monkeypatch.setattr(prepared, "READ_WHOLE_AT_MOST", 100)
    reads: list[int] = []
    shared = prepared.SharedPreparation([_preparer()])

    class Counted:  # the opened file, its reads counted
        def __init__(self, f):
            self.fileno, self.seek, self._f = f.fileno, f.seek, f

        def read(self, *n):
            got = self._f.read(*n)
            reads.append(len(got))
            return got

    def check(path, opened, image):
        return shared.check_pixels(path, Counted(opened), image)

    with remembered_file_hashes(), pixels_checked_by(check):
        assert check_image(tmp_path, "good.jpg") is None
        assert not reads and shared.counts["decoded"] == 1  # streamed from its own open
        assert check_image(tmp_path, "cut.png").reason == "corrupt_image"
    assert reads == [60]  # 60 bytes: read whole from the file opened for the header
