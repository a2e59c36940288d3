"""Resource limits a user may set, read in one place (like :mod:`foilbench.paths` for folders).

``FOILBENCH_MAX_IMAGE_PIXELS`` (default 8192 x 8192 = 67,108,864) is the largest image, in
pixels, that validation accepts and a model decodes. Validation reads it from the image
*header*, so a decompression bomb (a small file that claims 20000 x 20000 pixels) or simply a
huge photograph is refused, naming the file, before anything is decoded: a 9000 x 9000 RGB
image would otherwise take about 240 MB as bytes and a gigabyte or more as floats. Nothing is
read at import time.
"""

from __future__ import annotations

import os

from foilbench.errors import FoilbenchError

MAX_DECODE_WORKERS = 4
MAX_IMAGE_PIXELS_ENV = "FOILBENCH_MAX_IMAGE_PIXELS"
DEFAULT_MAX_IMAGE_PIXELS = 8192 * 8192


def max_image_pixels() -> int:
    """The pixel limit: ``$FOILBENCH_MAX_IMAGE_PIXELS`` when set, else the default.

    >>> max_image_pixels() >= 1
    True
    """
    raw = os.environ.get(MAX_IMAGE_PIXELS_ENV, "").strip().replace("_", "")
    if not raw:
        return DEFAULT_MAX_IMAGE_PIXELS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise FoilbenchError(f"{MAX_IMAGE_PIXELS_ENV}={os.environ[MAX_IMAGE_PIXELS_ENV]!r}: "
                             "expected a whole number of pixels >= 1, e.g. 67108864")
    return value


def decode_workers() -> int:
    """Image decode threads (validation's pixel check, the engine's prefetch): the cores this
    process may use, at most :data:`MAX_DECODE_WORKERS`.

    >>> 1 <= decode_workers() <= MAX_DECODE_WORKERS
    True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_DECODE_WORKERS, cores))
