"""One file: downloaded resumably, then verified against the checksum its source publishes.

Resume: bytes already in ``<dest>.part`` are kept and the rest is asked for with
``Range: bytes=<have>-`` (RFC 9110 section 14.2); a ``206`` whose ``Content-Range`` starts at
``<have>`` is appended, a ``200`` (the server ignores ranges) starts over, a ``416`` means the
part already holds the whole file. The file is renamed into place only after it verified.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from foilbench.fetch.listing import FetchError

CHUNK = 1 << 20


def file_hashes(path: Path) -> dict[str, str]:
    """SHA-256 of the file and its git blob SHA-1 (``sha1(b"blob <size>\\0" + content)``)."""
    size = path.stat().st_size
    sha256, git = hashlib.sha256(), hashlib.sha1(f"blob {size}\0".encode())  # noqa: S324
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            sha256.update(block)
            git.update(block)
    return {"sha256": sha256.hexdigest(), "git_sha1": git.hexdigest(), "bytes": size}


def check(path: Path, expected: dict) -> tuple[str, dict]:
    """Compare ``path`` with the published checksum in ``expected`` (``sha256`` or
    ``git_sha1``); return how it was verified and the file's hashes (read once), or raise
    naming the file and both values."""
    got = file_hashes(path)
    for key, label in (("sha256", "SHA-256"), ("git_sha1", "git blob SHA-1")):
        want = expected.get(key)
        if want:
            if got[key] != want.lower():
                raise FetchError(f"{path.name}: {label} {got[key]} does not match the "
                                 f"published {want}; the download is corrupt or the source "
                                 "changed (it was removed; run fetch again)")
            return f"{label} published by the source", got
    if expected.get("size") is not None and got["bytes"] != int(expected["size"]):
        raise FetchError(f"{path.name}: {got['bytes']} bytes, the source lists "
                         f"{expected['size']}; run fetch again")
    return "no published checksum (SHA-256 recorded)", got


def _start(url: str, headers: dict[str, str], have: int):
    ask = dict(headers)
    if have:
        ask["Range"] = f"bytes={have}-"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=ask),  # noqa: S310
                                      timeout=60)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:
            return None
        hint = (" (a gated file: accept the conditions on its Hub page and set HF_TOKEN)"
                if e.code in (401, 403) else "")
        raise FetchError(f"download failed: HTTP {e.code} from {url}{hint}") from None
    except (urllib.error.URLError, OSError) as e:
        raise FetchError(f"download failed: {e} ({url}); run fetch again to resume") from None


def _total(response, have: int, appended: bool) -> int | None:
    """The full size the server announced (Content-Range total, else Content-Length plus what
    a resumed part already held); None when it announced none."""
    match = re.match(r"bytes \d+-\d+/(\d+)", response.headers.get("Content-Range", ""))
    if match:
        return int(match.group(1))
    length = response.headers.get("Content-Length")
    if length is None or not length.isdigit():
        return None
    return int(length) + (have if appended else 0)


def download(url: str, dest: Path, expected: dict, *, headers: dict[str, str] | None = None,
             progress: Callable[[int], None] | None = None) -> dict:
    """Fetch ``url`` into ``dest`` (resuming ``dest.part``), verify, and return
    ``{sha256, git_sha1, bytes, verified, resumed_from}``. An existing ``dest`` that verifies
    is kept without a request."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_file():
        try:
            how, got = check(dest, expected)
            return {**got, "verified": how, "resumed_from": None, "kept": True}
        except FetchError:
            dest.unlink()
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.is_file() else 0
    resumed = have or None
    response = _start(url, headers or {}, have)
    if response is not None:
        with response:
            mode = "ab"
            if have and response.status == 206:
                match = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
                if not match or int(match.group(1)) != have:
                    raise FetchError(f"{url}: the server resumed at the wrong offset "
                                     f"({response.headers.get('Content-Range')!r}); delete "
                                     f"{part} and run fetch again")
            elif have:
                mode, resumed = "wb", None  # no range support: start over
            with part.open(mode) as fh:
                try:
                    for block in iter(lambda: response.read(CHUNK), b""):
                        fh.write(block)
                        if progress is not None:
                            progress(len(block))
                except (http.client.HTTPException, OSError) as e:
                    fh.flush()
                    raise FetchError(f"{url}: interrupted after {fh.tell()} bytes ({e}); run "
                                     "fetch again to resume from there") from None
                fh.flush()
                os.fsync(fh.fileno())
                total = _total(response, have, mode == "ab")
                if total is not None and fh.tell() < total:
                    raise FetchError(f"{url}: interrupted after {fh.tell()} of {total} bytes; "
                                     "run fetch again to resume from there")
    try:
        how, got = check(part, expected)
    except FetchError:
        part.unlink(missing_ok=True)
        raise
    part.replace(dest)
    return {**got, "verified": how, "resumed_from": resumed, "kept": False}
