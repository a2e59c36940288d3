"""Where a loader's derived images come from, so inspection checks what loading will read.

Some releases have no image files to point at: Hugging Face Parquet shards embed the bytes
(BiVLC, ColorSwap, NaturalBench, ColorBench, Winoground's current layout) and ARO's items are
crops the loader cuts from Visual Genome images. Loading writes those files once (only when
images are checked); text-only loading, which ``foilbench inspect`` uses, writes nothing. So
each such loader attaches one source per image reference (``Benchmark.image_sources``), and
:func:`foilbench.data.validate.validate` asks the source when the file is not there yet:
the embedded bytes must be present and decode, the crop's source image must exist, decode and
contain the box. A complete release therefore inspects clean; a broken cell or a missing
source image is reported by name.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MISSING, UNREADABLE, BAD_BOX = "missing_image", "unreadable_image", "bad_crop_box"


def _verify(opener) -> tuple[int, int] | None:
    """The image's (width, height) when it decodes, else None."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(opener()) as im:
            size = im.size
            im.verify()
        return size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        return None


@dataclass(frozen=True)
class EmbeddedImage:
    """An image stored as bytes in a table cell (``{"bytes", "path"}``)."""

    where: str  # shard file, column and row, for messages
    data: bytes | None

    def problem(self, check_readable: bool) -> str | None:
        if not self.data:
            return MISSING
        if check_readable and _verify(lambda: io.BytesIO(self.data)) is None:
            return UNREADABLE
        return None

    def describe(self, reason: str) -> str:
        what = {MISSING: "no embedded image bytes", UNREADABLE: "embedded image does not decode"}
        return f"{what.get(reason, reason)}: {self.where}"


@lru_cache(maxsize=4096)
def _image_size(path: Path) -> tuple[int, int] | None:
    return _verify(lambda: path)


@dataclass(frozen=True)
class CropSource:
    """A crop ``(x, y, x + w, y + h)`` of a source image, cut when images are checked."""

    source: Path
    box: tuple[float, float, float, float]  # x, y, w, h

    def problem(self, check_readable: bool) -> str | None:
        if not self.source.is_file():
            return MISSING
        if not check_readable:
            return None
        size = _image_size(self.source)
        if size is None:
            return UNREADABLE
        x, y, w, h = self.box  # PIL pads a box that overlaps the border, as the authors' crop
        overlaps = x < size[0] and y < size[1] and x + w > 0 and y + h > 0
        return None if w >= 1 and h >= 1 and overlaps else BAD_BOX

    def describe(self, reason: str) -> str:
        if reason == BAD_BOX:
            return f"crop box {self.box} (x, y, w, h) is empty or misses {self.source}"
        what = "missing" if reason == MISSING else "unreadable"
        return f"crop source image {what}: {self.source}"
