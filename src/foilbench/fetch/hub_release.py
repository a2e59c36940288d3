"""A release published on the Hugging Face Hub, fetched through ``huggingface_hub``: the
files land in the Hub cache (shared with ``hf://`` benchmark specs, ``datasets`` and every
other Hub client, honouring ``HF_ENDPOINT``, ``HF_HUB_CACHE``/``HF_HOME``, ``HF_TOKEN`` and
``HF_HUB_OFFLINE``), are linked into the release folder (hard links, else copies), and each
is verified against the checksum the Hub's tree listing publishes for the resolved commit
(LFS SHA-256, or git blob SHA-1). Used when ``huggingface_hub`` is installed
(``foilbench[hub]``); otherwise :mod:`foilbench.fetch.listing` reads the same listing over
plain HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from foilbench.fetch.download import check
from foilbench.fetch.listing import FetchError


def published_checksums(repo: str, commit: str, env: dict[str, Any]) -> dict[str, dict]:
    """path -> ``{"sha256" | "git_sha1", "size"}`` from the Hub's tree listing at ``commit``."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=env["endpoint"], token=env["token"])
    out: dict[str, dict] = {}
    for entry in api.list_repo_tree(repo, repo_type="dataset", revision=commit,
                                    recursive=True):
        if not isinstance(entry, RepoFile):
            continue
        lfs = getattr(entry, "lfs", None)
        sha256 = lfs.get("sha256") if isinstance(lfs, dict) else getattr(lfs, "sha256", None)
        out[entry.path] = ({"sha256": sha256} if sha256 else {"git_sha1": entry.blob_id}) | \
            {"size": entry.size}
    return out


def fetch_hub_release(name: str, hub: dict, folder: Path, endpoint: str, token: str | None,
                      say: Callable[[str], None]) -> tuple[list[dict], dict[str, Any]]:
    """Fetch ``hub`` (the release's ``{"repo", "ref", "include", "type"}``) into ``folder``
    through the Hub cache; returns the files' index entries and ``{"repo", "revision",
    "commit", "endpoint"}``."""
    from foilbench.data.hub import download_snapshot, hub_environment, materialise

    if hub.get("type", "dataset") != "dataset" or hub.get("strip"):
        raise FetchError(f"{name}: only dataset repositories without 'strip' are fetched "
                         "through the Hub cache")
    repo, ref = hub["repo"], hub.get("ref", "main")
    env = {**hub_environment(), "endpoint": endpoint.rstrip("/"), "token": token}
    patterns = [f"{prefix}*{suffix}" for prefix, suffix in hub["include"]]
    local = download_snapshot(repo, ref, patterns, f"{name} ({repo}@{ref})", env)
    commit = local.name
    files = sorted(p for p in local.rglob("*") if p.is_file())
    if not files:
        raise FetchError(f"{repo}@{ref} lists no file under {hub['include']}")
    published = {} if env["local_files_only"] else published_checksums(repo, commit, env)
    materialise(local, local.parents[1], folder, name)
    done = []
    for path in files:
        rel = path.relative_to(local).as_posix()
        if published and rel not in published:
            raise FetchError(f"{name}: {rel} is not in {repo}@{commit}'s listing")
        how, got = check(folder / rel, published.get(rel, {}))
        if not published:
            how = "offline (HF_HUB_OFFLINE): the cached file, as downloaded before"
        say(f"  {rel}: via the Hub cache, commit {commit[:12]}; {how}")
        done.append({"path": rel, "url": f"{env['endpoint']}/datasets/{repo}/resolve/{commit}/"
                                         f"{rel}", "sha256": got["sha256"],
                     "bytes": got["bytes"], "verified": how})
    return done, {"repo": f"datasets/{repo}", "revision": ref, "commit": commit,
                  "endpoint": env["endpoint"]}
