"""What the local web apps accept and serve, bounded: the review apps and ``serve``.

- **Images only, by their bytes.** ``/file`` served a benchmark file with the type its name
  suggested, so a file named ``.html`` in a downloaded benchmark ran as a page on the app's
  origin (with its CSRF token in reach). :func:`image_response` serves a file only when Pillow
  recognises its bytes as a raster image, with that format's type (never SVG, never HTML),
  ``X-Content-Type-Options: nosniff`` and ``Content-Disposition: inline``.
- **Bodies bounded before they are read.** :class:`Guards` refuses a request whose
  ``Content-Length`` is over :data:`MAX_BODY` (64 KiB, far above any decision) with 413, and
  counts the bytes of one sent without a length (chunked), stopping at the limit: a 1 GiB
  body never reaches memory.
- **A full disk is a JSON answer.** A decision the disk cannot take (SQLite's "database or disk
  is full") reaches the page as ``507 {"error": ...}`` naming what to do, not a 500 text page.
- **Each app's security headers, one mechanism.** :class:`SecurityHeaders` puts an app's
  :class:`HeaderPolicy` (its CSP and the rest, as data) on every response; the names a request
  may address are :func:`trusted_hosts`, and :func:`is_loopback` says whether a host
  is reachable from other machines (the CLI warns when it is).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from starlette.datastructures import MutableHeaders
from starlette.responses import FileResponse, JSONResponse, Response

MAX_BODY = 64 * 1024
LOOPBACK = ("127.0.0.1", "localhost", "::1")
# Pillow format -> the type a browser shows as an image (formats browsers do not show, like
# TIFF, are still images: downloaded, never run)
IMAGE_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "MPO": "image/jpeg",
               "GIF": "image/gif", "WEBP": "image/webp", "BMP": "image/bmp",
               "TIFF": "image/tiff", "ICO": "image/x-icon"}


def image_type(path: Path) -> str | None:
    """The MIME type of the raster image at ``path`` read from its header, or None when its
    bytes are no image Pillow knows (HTML, SVG, text, a FIFO)."""
    from PIL import Image

    from foilbench.regular_files import open_regular

    try:
        with open_regular(path) as fp, Image.open(fp) as im:
            return IMAGE_TYPES.get(im.format or "")
    except Exception:
        return None


def image_response(path: Path, headers: dict[str, str] | None = None) -> Response:
    """``path`` as an image response, or 415 when its bytes are not an image."""
    ctype = image_type(path)
    if ctype is None:
        return JSONResponse({"error": "not an image file (only images are served)"},
                            status_code=415)
    return FileResponse(path, media_type=ctype,
                        headers={**(headers or {}), "X-Content-Type-Options": "nosniff",
                                 "Content-Disposition": "inline"})


class BodyTooLarge(Exception):
    """A request body passed :data:`MAX_BODY` while it was read."""


class Guards:
    """Pure ASGI middleware: request bodies bounded (413), a full disk answered in JSON (507)."""

    def __init__(self, app, max_body: int = MAX_BODY) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None:
            try:
                too_long = int(length) > self.max_body
            except ValueError:
                too_long = True
            if too_long:
                return await self._refuse(send, self._too_large())
        received = 0
        started = False

        async def counted():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge()
            return message

        async def tracked(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except BodyTooLarge:
            if not started:
                await self._refuse(send, self._too_large())
        except Exception as e:
            from foilbench.staged import disk_errno

            if started or disk_errno(e) is None:
                raise
            await self._refuse(send, JSONResponse(
                {"error": f"the review cannot be saved: the disk is full or read-only ({e}); "
                          "free space, then make the decision again"}, status_code=507))

    def _too_large(self) -> JSONResponse:
        return JSONResponse({"error": f"request body over {self.max_body:,} bytes refused"},
                            status_code=413)

    @staticmethod
    async def _refuse(send, response: Response) -> None:
        body = response.body
        await send({"type": "http.response.start", "status": response.status_code,
                    "headers": response.raw_headers})
        await send({"type": "http.response.body", "body": body})



def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only.

    >>> is_loopback("127.0.0.2"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    return host in LOOPBACK or host.startswith("127.")


def trusted_hosts(host: str) -> list[str]:
    """Names a request may address (against DNS rebinding): loopback and the bound host, or
    any on 0.0.0.0/:: (where the user chose the network and was warned).

    >>> trusted_hosts("127.0.0.1")
    ['127.0.0.1', '::1', 'localhost']
    >>> trusted_hosts("::")
    ['*']
    """
    return ["*"] if host in ("0.0.0.0", "::") else sorted({*LOOPBACK, host})


@dataclass(frozen=True)
class HeaderPolicy:
    """One app's security headers: ``headers`` on every response (over any the response
    set itself), and ``Cache-Control: no-store`` on the paths matching a ``no_store``
    pattern (:func:`fnmatch.fnmatchcase`, so ``"/api/*"`` is everything under ``/api/``)."""

    headers: Mapping[str, str]
    no_store: tuple[str, ...] = field(default=())

    def apply(self, path: str, headers: MutableHeaders) -> None:
        for name, value in self.headers.items():
            headers[name] = value
        if any(fnmatchcase(path, pattern) for pattern in self.no_store):
            headers["Cache-Control"] = "no-store"


class SecurityHeaders:
    """Pure ASGI middleware putting an app's :class:`HeaderPolicy` on every HTTP response:
    ``Middleware(SecurityHeaders, policy=POLICY)``."""

    def __init__(self, app, policy: HeaderPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                self.policy.apply(path, MutableHeaders(scope=message))
            await send(message)

        await self.app(scope, receive, send_with_headers)
