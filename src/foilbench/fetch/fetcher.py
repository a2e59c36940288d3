"""One release end to end: show its licence or gating terms, refuse a gated release without
the user's Hub token, list its files (with the checksums the source publishes), download each
resumably and verify it, unpack archives, record it in the fetched-releases index, and return
the loader spec that reads it. Releases it needs (COCO val2017 for SugarCrepe) come first."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from foilbench.extras import installed
from foilbench.fetch import catalog
from foilbench.fetch.download import download
from foilbench.fetch.index import default_root, record
from foilbench.fetch.listing import FetchError, github_files, hub_files
from foilbench.fetch.unpack import unpack

TOKEN_ENV = "HF_TOKEN"


@dataclass
class Fetched:
    """What one fetch did: per release, its folder, loader spec and files."""

    name: str
    folder: Path
    spec: str | None
    files: list[dict] = field(default_factory=list)
    needed: list[Fetched] = field(default_factory=list)


def terms(release: catalog.Release) -> str:
    """The text shown before anything is downloaded."""
    gate = " [gated: needs your Hugging Face token in HF_TOKEN]" if release.gated else ""
    return (f"{release.name}: {release.title}\n  source: {release.source}\n"
            f"  licence: {release.licence}{gate}")


def _files(release: catalog.Release, ends: dict[str, str], token: str | None) -> list[dict]:
    if release.github:
        return github_files(release.github, ends)
    if release.hub:
        return hub_files(release.hub, ends, token)
    return [{**f, "url": f["url"].format(**ends)} for f in release.files]


def require_token(release: catalog.Release) -> str | None:
    """The user's Hub token (``HF_TOKEN``); a gated release without one is refused, saying
    how to get access."""
    token = os.environ.get(TOKEN_ENV, "").strip() or None
    if release.gated and token is None:
        raise FetchError(f"{release.name} is gated on the Hugging Face Hub: accept its "
                         f"conditions at {release.source} while logged in, create a read token "
                         f"(Settings > Access Tokens) and set {TOKEN_ENV}=<token>")
    return token


def fetch_release(name: str, to: str | Path | None = None, *,
                  endpoints: dict[str, str] | None = None,
                  say: Callable[[str], None] = print, accept: bool = True,
                  _seen: set[str] | None = None) -> Fetched:
    """Fetch release ``name`` (and the releases it needs) under ``to`` (default
    ``$FOILBENCH_HOME/releases``). ``say`` receives the terms and progress lines; ``accept``
    False stops after showing the terms of a gated release (the CLI asks first)."""
    release = catalog.get(name)
    root = Path(to).expanduser().resolve() if to is not None else default_root()
    ends = {**catalog.endpoints(), **(endpoints or {})}
    seen = _seen if _seen is not None else set()
    seen.add(name)
    needed = [fetch_release(dep, root, endpoints=endpoints, say=say, accept=accept, _seen=seen)
              for dep in release.requires if dep not in seen]
    say(terms(release))
    token = require_token(release)
    if release.gated and not accept:
        raise FetchError(f"{name}: not fetched (its terms were not accepted)")
    folder = release.folder(root)
    hub_host = ends["hf"]
    done: list[dict] = []
    hub = None
    if release.hub and installed("huggingface_hub"):  # through the Hub cache (hub_release.py)
        from foilbench.fetch.hub_release import fetch_hub_release

        done, hub = fetch_hub_release(name, release.hub, folder, hub_host, token, say)
    for spec in _files(release, ends, token) if hub is None else []:
        dest = folder / spec["save"]
        _inside(folder, dest, name)
        headers = ({"Authorization": f"Bearer {token}"}
                   if token and spec["url"].startswith(hub_host) else {})
        started = time.monotonic()
        info = download(spec["url"], dest, spec, headers=headers,
                        progress=_ticker(spec["save"], say))
        note = ("already here" if info["kept"] else
                f"resumed from byte {info['resumed_from']}" if info["resumed_from"] else
                f"{info['bytes'] / 1e6:.1f} MB in {time.monotonic() - started:.1f} s")
        say(f"  {spec['save']}: {note}; {info['verified']}")
        entry = {"path": str(dest.relative_to(folder)), "url": spec["url"],
                 "sha256": info["sha256"], "bytes": info["bytes"], "verified": info["verified"]}
        if spec.get("unpack"):
            entry["unpacked_files"] = unpack(dest, folder)
        done.append(entry)
    spec = release.loader_spec(root)
    record(name, {"folder": str(folder), "spec": spec, "source": release.source,
                  "files": done, "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  **({"hub": hub} if hub else {})})
    return Fetched(name, folder, spec, done, needed)


def _ticker(label: str, say: Callable[[str], None], every_s: float = 10.0):
    """A download progress callback that reports the bytes so far every ``every_s`` seconds
    (a 1 GB archive is minutes of silence otherwise)."""
    state = {"bytes": 0, "last": time.monotonic()}

    def tick(n: int) -> None:
        state["bytes"] += n
        now = time.monotonic()
        if now - state["last"] >= every_s:
            state["last"] = now
            say(f"  {label}: {state['bytes'] / 1e6:.0f} MB so far")

    return tick


def _inside(folder: Path, dest: Path, name: str) -> None:
    """A listed path may not leave the release folder (a hostile listing)."""
    if folder.resolve() not in dest.resolve().parents:
        raise FetchError(f"{name}: listed file {dest} is outside {folder}; refusing it")
