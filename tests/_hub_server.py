"""A strict stand-in for the Hugging Face Hub on 127.0.0.1: only the endpoints
``huggingface_hub.snapshot_download`` / ``hf_hub_download`` call for a dataset repo, written
from the library's source (hf_api.py ``dataset_info``/``list_repo_tree``, file_download.py
``get_hf_file_metadata``):

- ``GET /api/datasets/{repo}/revision/{rev}`` -> ``{"id", "sha", "siblings"}``
- ``GET /api/datasets/{repo}/tree/{rev}[/{path}]?recursive=..`` -> ``[{"type": "file",
  "path", "size", "oid", "lfs": {"oid", "size", "pointerSize"}}]`` (one page, no ``Link``)
- ``HEAD``/``GET /datasets/{repo}/resolve/{rev}/{path}`` with ``X-Repo-Commit``, ``ETag``
  (``X-Linked-Etag`` = the LFS SHA-256), ``Content-Length`` and ``X-Linked-Size``

Anything else is a 404; an unknown revision answers 404 with ``X-Error-Code:
RevisionNotFound``, an unknown file ``EntryNotFound``, an unknown repository 401 with
``RepoNotFound`` (as the Hub does), a gated repository 401 ``GatedRepo`` without the token.
Every request is logged, so a test can assert what was (not) asked.
"""

from __future__ import annotations

import hashlib
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

TOKEN = "hf_hub_test_token"


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()  # noqa: S324


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str
    branches: tuple[str, ...] = ("main",)
    gated: bool = False


@dataclass
class Hub:
    repos: dict[str, Repo] = field(default_factory=dict)
    log: list[dict] = field(default_factory=list)

    def add(self, repo_id: str, files: dict[str, bytes], *, commit: str | None = None,
            branches: tuple[str, ...] = ("main",), gated: bool = False) -> str:
        commit = commit or hashlib.sha1(repo_id.encode() + b"".join(  # noqa: S324
            sorted(files.values()))).hexdigest()
        self.repos[repo_id] = Repo(files, commit, branches, gated)
        return commit


def _split_repo_rev(rest: str, hub: Hub) -> tuple[str, Repo | None, str]:
    """``ORG/NAME/<after>`` -> (repo id, repo, after)."""
    parts = rest.split("/", 2)
    repo_id = "/".join(parts[:2])
    return repo_id, hub.repos.get(repo_id), parts[2] if len(parts) > 2 else ""


def _handler(hub: Hub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None,
                  code: str | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            if code:
                self.send_header("X-Error-Code", code)
                self.send_header("X-Error-Message", code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, data) -> None:
            self._send(200, json.dumps(data).encode(), {"Content-Type": "application/json"})

        def _revision(self, repo: Repo, rev: str) -> bool:
            return rev in repo.branches or rev == repo.commit

        def _route(self) -> None:
            url = urlsplit(self.path)
            path = url.path
            hub.log.append({"method": self.command, "path": path, "query": url.query,
                            "auth": self.headers.get("Authorization")})
            if path.startswith("/api/datasets/"):
                repo_id, repo, after = _split_repo_rev(path[len("/api/datasets/"):], hub)
                if self.command != "GET" or not self._allowed(repo):
                    return
                kind, _, tail = after.partition("/")
                rev, _, sub = tail.partition("/")
                rev = unquote(rev)
                if kind not in ("revision", "tree") or (kind == "revision" and sub):
                    return self._send(404)
                if not self._revision(repo, rev):
                    return self._send(404, code="RevisionNotFound")
                if kind == "revision":
                    return self._json({"_id": "x" * 24, "id": repo_id, "sha": repo.commit,
                                       "private": False, "gated": repo.gated,
                                       "siblings": [{"rfilename": p} for p in repo.files]})
                prefix = unquote(sub).strip("/")
                listed = [p for p in sorted(repo.files)
                          if not prefix or p.startswith(prefix + "/")]
                if prefix and not listed:
                    return self._send(404, code="EntryNotFound")
                return self._json([{"type": "file", "path": p, "size": len(repo.files[p]),
                                    "oid": git_blob_sha1(repo.files[p]),
                                    "lfs": {"oid": hashlib.sha256(repo.files[p]).hexdigest(),
                                            "size": len(repo.files[p]), "pointerSize": 130}}
                                   for p in listed])
            if path.startswith("/datasets/"):
                repo_id, repo, after = _split_repo_rev(path[len("/datasets/"):], hub)
                if not self._allowed(repo):
                    return
                kind, _, tail = after.partition("/")
                rev, _, file = tail.partition("/")
                rev, file = unquote(rev), unquote(file)
                if kind != "resolve":
                    return self._send(404)
                if not self._revision(repo, rev):
                    return self._send(404, code="RevisionNotFound")
                if file not in repo.files:
                    return self._send(404, code="EntryNotFound")
                body = repo.files[file]
                sha = hashlib.sha256(body).hexdigest()
                self.send_response(200)
                for k, v in {"X-Repo-Commit": repo.commit, "ETag": f'"{sha}"',
                             "X-Linked-Etag": f'"{sha}"', "X-Linked-Size": str(len(body)),
                             "Content-Length": str(len(body)),
                             "Content-Type": "application/octet-stream"}.items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command == "GET":
                    self.wfile.write(body)
                return
            self._send(404)

        def _allowed(self, repo: Repo | None) -> bool:
            if repo is None:
                self._send(401, code="RepoNotFound")
                return False
            if repo.gated and self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._send(401, code="GatedRepo")
                return False
            return True

        def do_GET(self) -> None:  # noqa: N802
            self._route()

        def do_HEAD(self) -> None:  # noqa: N802
            self._route()

    return Handler


@contextmanager
def serve_hub(hub: Hub):
    """The fake Hub's base URL while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
