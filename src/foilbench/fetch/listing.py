"""File lists with checksums, as the sources publish them.

GitHub, "Get a tree" (REST API, ``GET /repos/{owner}/{repo}/git/trees/{ref}?recursive=1``):
``{"sha", "tree": [{"path", "type": "blob", "sha", "size"}], "truncated"}``, where ``sha`` is
the git blob SHA-1 of the file (``sha1(b"blob <size>\\0" + content)``). Files are read from
``raw.githubusercontent.com/{owner}/{repo}/{ref}/{path}``.

Hugging Face Hub, the tree API (``GET /api/{type}s/{repo}/tree/{ref}/{path}?recursive=true``):
a list of ``{"type": "file", "path", "size", "oid", "lfs": {"oid", "size"}}``; ``lfs.oid`` is
the SHA-256 of an LFS file, ``oid`` the git blob SHA-1 of a small one. Files are read from
``/{type}s/{repo}/resolve/{ref}/{path}`` with ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from foilbench.errors import FoilbenchError


class FetchError(FoilbenchError):
    """A release could not be listed, downloaded or verified; the message says what to do."""


def _get_json(url: str, headers: dict[str, str], what: str):
    request = urllib.request.Request(url, headers={"Accept": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (http/https)
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        hint = (" (a gated repository: accept its conditions on the Hub and set HF_TOKEN)"
                if e.code in (401, 403) else "")
        raise FetchError(f"listing {what} failed: HTTP {e.code} from {url}{hint}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise FetchError(f"listing {what} failed: {e} ({url}); check the network") from None


def _wanted(path: str, include: list) -> bool:
    return any(path.startswith(prefix) and path.endswith(suffix) for prefix, suffix in include)


def _target(path: str, strip: str) -> str:
    return path[len(strip):] if strip and path.startswith(strip) else path


def github_files(spec: dict, ends: dict[str, str]) -> list[dict]:
    """``[{url, save, git_sha1, size}]`` of the repository files ``spec['include']`` names."""
    repo, ref = spec["repo"], spec.get("ref", "main")
    url = f"{ends['github_api']}/repos/{repo}/git/trees/{ref}?recursive=1"
    tree = _get_json(url, {"Accept": "application/vnd.github+json"}, repo)
    if tree.get("truncated"):
        raise FetchError(f"GitHub truncated the file list of {repo}@{ref}; fetch it with git "
                         "clone instead")
    files = [{"url": f"{ends['github_raw']}/{repo}/{ref}/{e['path']}",
              "save": _target(e["path"], spec.get("strip", "")), "git_sha1": e["sha"],
              "size": e.get("size")}
             for e in tree.get("tree", []) if e.get("type") == "blob"
             and _wanted(e["path"], spec["include"])]
    if not files:
        raise FetchError(f"{repo}@{ref} lists no file under {spec['include']}; the release "
                         "layout changed: open an issue")
    return files


def hub_files(spec: dict, ends: dict[str, str], token: str | None) -> list[dict]:
    """``[{url, save, sha256 | git_sha1, size}]`` of the Hub repository files ``include``
    names, listed with the user's token (gated repositories need it)."""
    kind, repo, ref = spec.get("type", "dataset"), spec["repo"], spec.get("ref", "main")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    files = []
    for prefix in sorted({p for p, _ in spec["include"]}):
        url = f"{ends['hf']}/api/{kind}s/{repo}/tree/{ref}/{prefix.rstrip('/')}?recursive=true"
        for e in _get_json(url, headers, repo):
            if e.get("type") != "file" or not _wanted(e["path"], spec["include"]):
                continue
            entry = {"url": f"{ends['hf']}/{kind}s/{repo}/resolve/{ref}/{e['path']}",
                     "save": _target(e["path"], spec.get("strip", "")), "size": e.get("size")}
            lfs = e.get("lfs")
            if lfs and lfs.get("oid"):
                entry["sha256"] = lfs["oid"]
            else:
                entry["git_sha1"] = e.get("oid")
            files.append(entry)
    if not files:
        raise FetchError(f"{repo}@{ref} lists no file under {spec['include']}")
    return files
