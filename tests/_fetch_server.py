"""A local HTTP server standing in for the release hosts in `foilbench fetch` tests (no
network): GitHub's "Get a tree" API and raw files, the Hugging Face tree API and resolve URLs
(401 without the right Bearer token), plain file hosts; Range requests answered with 206 and
Content-Range as RFC 9110 says; a route can be made to drop the connection halfway once."""

from __future__ import annotations

import hashlib
import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "hf_test_token"


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()  # noqa: S324


class Routes:
    """path (with query) -> bytes; ``cut_once`` paths send half their body once, then close;
    ``auth`` path prefixes need the Bearer token; every request is logged."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.cut_once: set[str] = set()
        self.auth: tuple[str, ...] = ()
        self.log: list[dict] = []

    def github(self, repo: str, ref: str, files: dict[str, bytes]) -> None:
        tree = [{"path": p, "mode": "100644", "type": "blob", "sha": git_blob_sha1(b),
                 "size": len(b)} for p, b in files.items()]
        self.files[f"/gh-api/repos/{repo}/git/trees/{ref}?recursive=1"] = json.dumps(
            {"sha": "0" * 40, "tree": tree, "truncated": False}).encode()
        for p, b in files.items():
            self.files[f"/gh-raw/{repo}/{ref}/{p}"] = b

    def hub(self, repo: str, ref: str, prefix: str, files: dict[str, bytes]) -> None:
        listing = [{"type": "file", "path": p, "size": len(b), "oid": git_blob_sha1(b),
                    "lfs": {"oid": hashlib.sha256(b).hexdigest(), "size": len(b),
                            "pointerSize": 130}} for p, b in files.items()]
        self.files[f"/hf/api/datasets/{repo}/tree/{ref}/{prefix}?recursive=true"] = \
            json.dumps(listing).encode()
        for p, b in files.items():
            self.files[f"/hf/datasets/{repo}/resolve/{ref}/{p}"] = b
        self.auth += (f"/hf/api/datasets/{repo}", f"/hf/datasets/{repo}")


def _handler(routes: Routes):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802
            routes.log.append({"path": self.path, "range": self.headers.get("Range"),
                               "auth": self.headers.get("Authorization")})
            if self.path.startswith(routes.auth) and \
                    self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self.send_error(401)
                return
            body = routes.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            start, status = 0, 200
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes=") and rng.endswith("-"):
                start = int(rng[6:-1])
                if start >= len(body):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.end_headers()
                    return
                status = 206
            self.send_response(status)
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.send_header("Content-Length", str(len(body) - start))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            if self.path in routes.cut_once:
                routes.cut_once.discard(self.path)
                self.wfile.write(body[start:start + (len(body) - start) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body[start:])

    return Handler


@contextmanager
def serve(routes: Routes):
    """The server on 127.0.0.1 (a free port); yields the endpoint overrides for fetch."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(routes))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield {"hf": f"{base}/hf", "github_api": f"{base}/gh-api", "github_raw": f"{base}/gh-raw",
               "coco": f"{base}/coco", "gdrive": f"{base}/gdrive", "vg": f"{base}/vg"}
    finally:
        server.shutdown()
        server.server_close()
