"""Safe extraction of the zip and tar archives releases ship: every member must land inside
the target folder (no absolute paths, no ``..``, no links), so a hostile archive cannot write
elsewhere."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

from foilbench.fetch.listing import FetchError


def _inside(target: Path, name: str, archive: Path) -> Path:
    out = (target / name).resolve()
    if target.resolve() not in (out, *out.parents):
        raise FetchError(f"{archive.name}: member {name!r} would be written outside {target}; "
                         "refusing to unpack it")
    return out


def unpack(archive: Path, target: Path) -> int:
    """Extract ``archive`` (.zip, .tar, .tar.gz, .tgz) into ``target``; returns the number of
    files written. A corrupt archive is named in a :class:`FetchError`."""
    try:
        return _unpack(archive, target)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as e:
        raise FetchError(f"{archive.name}: not a readable archive ({e}); delete it and run "
                         "fetch again") from None


def _unpack(archive: Path, target: Path) -> int:
    target.mkdir(parents=True, exist_ok=True)
    name = archive.name.lower()
    if name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if not m.is_dir()]
            for m in members:
                _inside(target, m.filename, archive)
            zf.extractall(target, members)
            return len(members)
    if name.endswith((".tar", ".tar.gz", ".tgz")):
        with tarfile.open(archive) as tf:
            members = tf.getmembers()
            for m in members:
                if m.issym() or m.islnk() or m.isdev():
                    raise FetchError(f"{archive.name}: member {m.name!r} is a link or device; "
                                     "refusing to unpack it")
                _inside(target, m.name, archive)
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12 / 3.11.4
                tf.extractall(target, members, filter="data")
            else:  # older: the checks above are the filter (no links, devices or escapes)
                for m in members:  # and, like "data", no setuid/setgid or others' write
                    m.mode &= 0o755
                tf.extractall(target, members)  # noqa: S202 (members checked above)
            return sum(1 for m in members if m.isfile())
    raise FetchError(f"{archive.name}: not a zip or tar archive")
