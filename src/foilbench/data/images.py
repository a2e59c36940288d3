"""What validation asks of one image file: inside the folder, present, not too large, decodable.

Three levels, cheapest first, each naming the file in its message:

1. **Where** it is and **what**: the path, with every symlink resolved, must lie inside the resolved
   benchmark root. A symlink that points out of the folder is refused here, and ``run``,
   ``report`` and ``serve`` all apply this same rule (docs/format.md), so an image is never
   scored by one command and hidden by another. Only a regular file is an image: a FIFO, a
   device, a socket or a symlink loop is refused by name before any byte is read
   (:mod:`foilbench.regular_files`).
2. **Header**: the file opens as an image and its width x height is within
   :func:`foilbench.limits.max_image_pixels`. Only the header is read, so a decompression
   bomb or a 9000 x 9000 photograph is refused before any pixel is decoded.
3. **Pixels** (``decode=True``): the pixel data decodes completely. A file whose header is
   valid but whose data is corrupt or truncated passes 1 and 2 and would otherwise stop a run
   midway; JPEGs are decoded at reduced scale (``draft``), which still reads every byte of
   the compressed stream. Inside :func:`pixels_checked_by` (a run or sweep whose models share
   their image preparation) the decode is instead the engine's own, full one: the image is
   decoded and prepared for the models there, once (:mod:`foilbench.scoring.prepared`), so a
   run never decodes an image twice. There the file is also opened once and its header
   parsed once: the check reads the bytes of the file opened for the header, for the
   sha256 (remembered for the run's checksum, duplicate check and engine), and decodes the
   image opened for the header.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import stat
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from foilbench.limits import MAX_IMAGE_PIXELS_ENV, max_image_pixels
from foilbench.regular_files import not_regular_reason, open_regular, regular_status

OUTSIDE_ROOT = "image_outside_root"
MISSING = "missing_image"
UNREADABLE = "unreadable_image"
TOO_LARGE = "image_too_large"
CORRUPT = "corrupt_image"
NOT_REGULAR = "not_a_regular_file"  # a FIFO, device, socket or symlink loop


# decode(path, opened, image) -> True when it decoded the pixels in full (a failure raises),
# False when it leaves the check to check_image's own reduced decode. ``opened``: the regular
# file check_image opened for the header (read it from its start; check_image closes it);
# ``image``: the PIL image opened on it, its header read and its pixels not yet decoded
# (``load()`` seeks to them itself). The header, the hash and the decode are one open of the
# file and one parse of its header, not three opens and two parses
PixelCheck = Callable[[Path, "BinaryIO | None", Any], bool]
_PIXEL_CHECK: contextvars.ContextVar[PixelCheck | None] = contextvars.ContextVar(
    "foilbench_pixel_check", default=None)


@contextlib.contextmanager
def pixels_checked_by(check: PixelCheck | None) -> Iterator[None]:
    """Inside the block, level 3 of :func:`check_image` calls ``check(path, opened, image)``
    (:data:`PixelCheck`; None: the reduced decode, as outside any block). A run passes the
    decode that prepares each image for its models, so validating the pixels is the
    engine's decode done early, not a second one."""
    token = _PIXEL_CHECK.set(check)
    try:
        yield
    finally:
        _PIXEL_CHECK.reset(token)


@dataclass(frozen=True)
class ImageProblem:
    reason: str
    message: str


def resolved_inside(root: Path, rel: str, resolved_root: Path | None = None,
                    resolved_dirs: dict[str, Path] | None = None) -> Path | None:
    """``root / rel`` with symlinks resolved, or None when that lies outside the resolved root.
    ``resolved_dirs`` (a caller checking many images, for one pass): folders resolved so far,
    so an image's folder is resolved once (:func:`_resolved_in_folder`).

    >>> import tempfile; d = Path(tempfile.mkdtemp())
    >>> resolved_inside(d, "a/b.png") == d.resolve() / "a" / "b.png"
    True
    >>> resolved_inside(d, "../x.png") is None
    True
    """
    base = root.resolve() if resolved_root is None else resolved_root  # callers checking many
    full = root / rel  # images of one folder resolve it once
    path = full.resolve() if resolved_dirs is None else _resolved_in_folder(full, resolved_dirs)
    return path if path.is_relative_to(base) else None


def _resolved_in_folder(full: Path, resolved_dirs: dict[str, Path]) -> Path:
    """``full.resolve()``, with its folder's resolution taken from ``resolved_dirs`` (and kept
    there): a file that exists and is no symlink resolves to its resolved folder plus its
    name, as ``os.path.realpath`` finds it one component at a time, with one ``lstat``
    instead of one per component. Anything else (a symlink, a missing file, a loop, a name
    ``..``) is resolved in full, as before."""
    name = full.name
    if name in ("", ".", ".."):
        return full.resolve()
    try:
        mode = os.lstat(full).st_mode
    except (OSError, ValueError):  # missing, a loop, a NUL byte: the full resolve says what
        return full.resolve()
    if stat.S_ISLNK(mode):
        return full.resolve()
    folder = str(full.parent)
    resolved = resolved_dirs.get(folder)
    if resolved is None:
        resolved = resolved_dirs.setdefault(folder, full.parent.resolve())
    return resolved / name


def servable_root(root: str | Path) -> Path | None:
    """The resolved ``root`` when images may be shown from it, or None when it is a file
    system root, the home folder or a folder above it: no benchmark is rooted there, and a
    crafted results database naming one would otherwise reach every file below it.

    >>> servable_root("/") is None
    True
    >>> servable_root(Path.home()) is None
    True
    """
    path = Path(root).resolve()
    home = Path.home().resolve()
    if path == Path(path.anchor) or path == home or path in home.parents:
        return None
    return path


def check_image(root: Path, rel: str, *, decode: bool = True, max_pixels: int | None = None,
                resolved_root: Path | None = None,
                resolved_dirs: dict[str, Path] | None = None) -> ImageProblem | None:
    """The first problem of image ``rel`` under ``root``, or None when it passes
    (``resolved_root``: ``root.resolve()``, when the caller has it; ``resolved_dirs``: see
    :func:`resolved_inside`)."""
    path = None if resolved_dirs is None else _plain_regular(root, rel, resolved_root,
                                                              resolved_dirs)
    if path is not None:  # a regular file inside the folder: no other stat to ask
        return _header_and_pixels(root, rel, path, decode, max_pixels)
    shown = root / rel
    try:
        path = resolved_inside(root, rel, resolved_root, resolved_dirs)
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError before Python 3.13)
        return ImageProblem(NOT_REGULAR, f"image {shown} is a symlink loop; only regular files "
                                         "are read as images")
    except ValueError:  # a NUL byte in the name (validation names it first)
        return ImageProblem(UNREADABLE, f"image path {rel!r} holds a NUL byte")
    if path is None:
        return ImageProblem(OUTSIDE_ROOT, f"image {shown} resolves to {(root / rel).resolve()}, "
                                          f"outside the benchmark folder {root.resolve()} "
                                          "(symlinks out of the folder are refused)")
    not_regular, present = regular_status(path)
    if not_regular:  # a FIFO would block the read below forever: refused before any read
        return ImageProblem(NOT_REGULAR, f"image {shown} is {not_regular}; only regular files "
                                         "are read as images")
    if not present:
        return ImageProblem(MISSING, f"image missing: {shown}")
    return _header_and_pixels(root, rel, path, decode, max_pixels)


def _plain_regular(root: Path, rel: str, resolved_root: Path | None,
                   resolved_dirs: dict[str, Path]) -> Path | None:
    """What :func:`resolved_inside` gives for ``rel``, found with one ``lstat`` and string
    work, when ``rel`` is plain (``/``-separated names, none empty, ``.`` or ``..``) and
    names a regular file (no symlink) whose resolved folder lies inside the resolved root;
    else None, and the caller takes the general path, which words every problem. A regular
    file needs no other stat: it is no FIFO, no loop, and present."""
    if os.sep != "/" or os.altsep:
        return None
    parts = rel.split("/")
    if "" in parts or "." in parts or ".." in parts or "\x00" in rel:
        return None
    top = str(root)
    full = f"{top}/{rel}" if top != "/" else f"/{rel}"
    try:
        mode = os.lstat(full).st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return None
    folder = full.rpartition("/")[0] or "/"  # str(Path(full).parent)
    resolved = resolved_dirs.get(folder)
    if resolved is None:
        resolved = resolved_dirs.setdefault(folder, Path(folder).resolve())
    base = str(root.resolve() if resolved_root is None else resolved_root)
    inside = str(resolved)
    if inside != base and not inside.startswith(base.rstrip("/") + "/"):
        return None
    return resolved / parts[-1]


def _header_and_pixels(root: Path, rel: str, path: Path, decode: bool,
                       max_pixels: int | None) -> ImageProblem | None:
    """Levels 2 and 3 of :func:`check_image` for the regular file at resolved ``path``
    (``root / rel`` is made only for a message)."""
    from PIL import Image, UnidentifiedImageError

    limit = max_image_pixels() if max_pixels is None else max_pixels
    try:
        with warnings.catch_warnings():  # PIL's own bomb warning: our limit decides below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            check = _PIXEL_CHECK.get() if decode else None
            fp = open_regular(path)
            try:
                im = Image.open(fp)
            except BaseException:
                fp.close()
                raise
        with fp, im:
            width, height = im.size
            if width * height > limit:
                return ImageProblem(TOO_LARGE, _too_large(root / rel, width, height, limit))
            if check is not None and check(path, fp, im):
                pass  # decoded in full (and prepared for the run's models)
            elif decode:
                if im.format == "JPEG":
                    im.draft("RGB", (max(1, width // 8), max(1, height // 8)))
                im.load()
    except Image.DecompressionBombError as e:  # beyond PIL's own limit: still from the header
        claimed = re.search(r"\((\d+) pixels\)", str(e))
        size = f"{int(claimed.group(1)):,} pixels" if claimed else "too many pixels"
        return ImageProblem(TOO_LARGE, f"image {root / rel} claims {size}, over the limit of "
                                       f"{limit:,} (read from its header, nothing decoded; a "
                                       "possible decompression bomb)")
    except UnidentifiedImageError:
        return ImageProblem(UNREADABLE, f"image unreadable (not an image file PIL knows): "
                                        f"{root / rel}")
    except MemoryError:
        raise
    except Exception as e:  # a corrupt stream raises OSError, SyntaxError, ValueError, ...
        if not decode:
            return ImageProblem(UNREADABLE, f"image unreadable: {root / rel} ({e})")
        return ImageProblem(CORRUPT, f"image data corrupt or truncated (the header is valid): "
                                     f"{root / rel} ({e})")
    return None


def _too_large(shown: Path, width: int, height: int, limit: int) -> str:
    return (f"image {shown} is {width} x {height} = {width * height:,} pixels, over the limit "
            f"of {limit:,} (read from its header, nothing decoded; set {MAX_IMAGE_PIXELS_ENV} "
            "to change the limit)")


# files looked at for several frames: GIF, APNG, WebP, TIFF, MPO. Not .png or .jpg: opening
# every still image's header again would cost a large benchmark seconds per run, for the rare
# APNG (and a phone's MPO, whose first picture is the photograph)
MULTI_FRAME_SUFFIXES = (".gif", ".apng", ".webp", ".tif", ".tiff", ".mpo")


def frame_count(path: Path) -> int:
    """How many frames the image at ``path`` holds (1 for a still image, or when it cannot
    be read: validation names that). Reads the header, and for a GIF up to its second frame.

    Every model is given the first frame, as ``PIL.Image.open`` decodes it (the papers'
    pipelines open images the same way); the run says so in a note
    (:func:`foilbench.runner.notes.image_note`)."""
    from PIL import Image

    if path.suffix.lower() not in MULTI_FRAME_SUFFIXES or not_regular_reason(path):
        return 1
    try:
        with open_regular(path) as fp, Image.open(fp) as im:
            if not getattr(im, "is_animated", False):
                return 1
            return int(getattr(im, "n_frames", 2))
    except Exception:  # unreadable: validation names it
        return 1
