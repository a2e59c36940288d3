"""Benchmarks published on the Hugging Face Hub, named by repository and revision.

Two spec forms, both read through ``huggingface_hub`` (its token, ``HF_ENDPOINT``,
``HF_HUB_CACHE``/``HF_HOME`` cache and ``HF_HUB_OFFLINE`` are honoured, read when the spec
is resolved, not when foilbench is imported):

- ``hf://datasets/ORG/NAME@REV[/PATH]``: a dataset repository holding a foilbench
  benchmark folder (``manifest.json`` + ``items.parquet`` + images) at its root or at PATH.
- ``LOADER:hf://datasets/ORG/NAME@REV[/PATH][?options]``: a published release in its own
  layout, read by that loader from the downloaded snapshot, e.g.
  ``winoground:hf://datasets/facebook/winoground@main`` or
  ``bivlc:hf://datasets/imirandam/BiVLC@<commit>``.

``@REV`` is a branch, tag or commit (default ``main``; ``%2F`` for a slash, as in
``@refs%2Fconvert%2Fparquet``). The commit it resolved to is recorded in the benchmark's
``manifest.extras["hub"]`` and from there in each run's provenance
(``provenance["benchmark_source"]``), so a run names the exact files it read even when it
asked for a branch. The snapshot's files are then linked (hard links, else copies) under
``$FOILBENCH_HOME/hub/<org>--<name>/<commit>/files/``, because the Hub cache's symlinks into
``blobs/`` would fail the benchmark folder's no-symlink-out check; embedded images a loader
writes go beside them in ``.../<commit>/_foilbench_images``, not into the Hub cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from foilbench.errors import BenchmarkError

if TYPE_CHECKING:
    from foilbench.data.benchmark import Benchmark

HUB_PREFIX = "hf://"
DEFAULT_REVISION = "main"
DEFAULT_ENDPOINT = "https://huggingface.co"
#: loaders that write a release's embedded images to ``?images=DIR``
EMBEDDED_IMAGE_LOADERS = ("winoground", "bivlc", "naturalbench", "colorbench", "colorswap")


class HubError(BenchmarkError):
    """A Hub benchmark spec is malformed, or its repository, revision or files are not there."""


@dataclass(frozen=True)
class HubRef:
    """One ``hf://datasets/ORG/NAME@REV/PATH`` reference."""

    repo_id: str
    revision: str = DEFAULT_REVISION
    path: str = ""

    @property
    def spec(self) -> str:
        tail = f"/{self.path}" if self.path else ""
        return f"{HUB_PREFIX}datasets/{self.repo_id}@{self.revision}{tail}"


def is_hub_spec(text: str) -> bool:
    """Whether ``text`` names a Hub location (``hf://...``)."""
    return isinstance(text, str) and text.startswith(HUB_PREFIX)


def parse_hub_spec(text: str) -> HubRef:
    """Parse ``hf://datasets/ORG/NAME[@REV][/PATH]``.

    Args:
        text: The location, without loader prefix or ``?options``.

    Returns:
        The repository id, revision (default ``main``) and path inside the repository.

    Raises:
        HubError: Not a dataset repository location, or a path leaving the repository.

    >>> parse_hub_spec("hf://datasets/org/bench@v1.0/sub/dir")
    HubRef(repo_id='org/bench', revision='v1.0', path='sub/dir')
    >>> parse_hub_spec("hf://datasets/org/bench@refs%2Fconvert%2Fparquet").revision
    'refs/convert/parquet'
    """
    if not is_hub_spec(text):
        raise HubError(f"{text!r} is not a Hub location (hf://datasets/ORG/NAME@REV)")
    kind, _, rest = text[len(HUB_PREFIX):].partition("/")
    parts = rest.split("/")
    if kind != "datasets" or len(parts) < 2 or not parts[0] or not parts[1]:
        raise HubError(f"{text}: a Hub benchmark is a dataset repository, written "
                       "hf://datasets/ORG/NAME@REVISION[/PATH]")
    name, at, revision = parts[1].partition("@")
    if not name or (at and not revision):
        raise HubError(f"{text}: empty repository name or revision after '@'")
    inner = [p for p in parts[2:] if p]
    if any(p in (".", "..") for p in inner):
        raise HubError(f"{text}: the path inside the repository may not contain . or ..")
    return HubRef(f"{parts[0]}/{name}", unquote(revision) if at else DEFAULT_REVISION,
                  "/".join(inner))


def hub_environment() -> dict[str, Any]:
    """``huggingface_hub`` arguments from the environment as it is now: ``endpoint``
    (``HF_ENDPOINT``), ``cache_dir`` (``HF_HUB_CACHE``, else ``HF_HOME/hub``; None: the
    library's default), ``token`` (``HF_TOKEN``; None: the library's stored login) and
    ``local_files_only`` (``HF_HUB_OFFLINE`` set to 1/true/yes/on)."""
    from foilbench.paths import hf_hub_cache

    cache = hf_hub_cache()
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    return {"endpoint": (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            "cache_dir": cache, "token": os.environ.get("HF_TOKEN") or None,
            "local_files_only": offline}


def _failure(ref: HubRef, error: Exception, env: dict[str, Any]) -> HubError:
    """One sentence for what ``huggingface_hub`` raised."""
    from huggingface_hub import errors

    where = f"{ref.spec} ({env['endpoint']})"
    if isinstance(error, errors.RevisionNotFoundError):
        return HubError(f"{where}: the repository has no revision {ref.revision!r}")
    if isinstance(error, errors.GatedRepoError):
        return HubError(f"{where}: the dataset is gated; accept its conditions on the Hub "
                        "while logged in and set HF_TOKEN (or `hf auth login`)")
    if isinstance(error, errors.RepositoryNotFoundError):
        return HubError(f"{where}: no such dataset repository, or it is private and no "
                        "valid token was given (HF_TOKEN)")
    if isinstance(error, errors.LocalEntryNotFoundError):
        return HubError(f"{where}: not in the Hub cache and the Hub cannot be reached "
                        "(HF_HUB_OFFLINE or no network); download it once online")
    text = " ".join(str(error).split())[:300]
    return HubError(f"{where}: download failed ({type(error).__name__}: {text})")


def download_snapshot(repo_id: str, revision: str, allow_patterns: list[str] | None,
                      spec: str, env: dict[str, Any] | None = None) -> Path:
    """``snapshot_download`` of a dataset repository into the Hub cache (or found there).

    Args:
        repo_id: ``ORG/NAME``.
        revision: Branch, tag or commit.
        allow_patterns: Only files matching these globs (None: all).
        spec: What the user named, for messages.
        env: :func:`hub_environment` (default: read now).

    Returns:
        The snapshot folder ``<cache>/datasets--ORG--NAME/snapshots/<commit>``.

    Raises:
        HubError: One sentence for a missing repository or revision, a gated dataset
            without a token, or no cached copy offline.
        MissingExtraError: ``huggingface_hub`` is not installed.
    """
    from foilbench.extras import require

    require("huggingface_hub", what=f"the Hub benchmark {spec}")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    env = env or hub_environment()
    ref = HubRef(repo_id, revision)
    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision,
                                      allow_patterns=allow_patterns, **env))
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError) as e:
        raise _failure(ref, e, env) from None


def snapshot(ref: HubRef) -> tuple[Path, dict[str, Any]]:
    """Download (or find in the Hub cache) the files under ``ref.path`` at ``ref.revision``.

    Args:
        ref: The parsed Hub location.

    Returns:
        The local folder (the resolved commit's files, linked from the Hub cache under
            ``$FOILBENCH_HOME/hub``) and the provenance record ``{"spec", "repo", "revision",
            "commit", "path", "endpoint"}``.

    Raises:
        HubError: Unknown repository, revision or path; gated without a token; offline
            without a cached copy.
    """
    env = hub_environment()
    allow = [f"{ref.path}/*"] if ref.path else None
    local = download_snapshot(ref.repo_id, ref.revision, allow, ref.spec, env)
    folder = local / ref.path if ref.path else local
    if not folder.is_dir() or not any(folder.iterdir()):
        raise HubError(f"{ref.spec}: the repository has no folder {ref.path!r} at "
                       f"{ref.revision} (commit {local.name})")
    record = {"spec": ref.spec, "repo": f"datasets/{ref.repo_id}", "revision": ref.revision,
              "commit": local.name, "path": ref.path, "endpoint": env["endpoint"]}
    return materialise(folder, local.parents[1], commit_folder(record) / "files" / ref.path,
                       ref.spec), record


def commit_folder(record: dict[str, Any]) -> Path:
    """foilbench's folder for one commit of a Hub repository, ``$FOILBENCH_HOME/hub/...``."""
    from foilbench.paths import home

    org_name = record["repo"].removeprefix("datasets/").replace("/", "--")
    return home() / "hub" / org_name / record["commit"]


def images_folder(record: dict[str, Any]) -> Path:
    """Where a loader writes the embedded images of a Hub snapshot (outside the Hub cache)."""
    return commit_folder(record) / "_foilbench_images"


def materialise(snapshot: Path, storage: Path, target: Path, spec: str) -> Path:
    """The snapshot's files as plain files under ``target`` (hard links to the cache's
    blobs where the file system allows, else copies). Why: the Hub cache's snapshot holds
    symlinks into ``blobs/``, and benchmark validation refuses images that resolve outside
    their folder (data/images.py); the commit names the content, so existing files are kept.
    A snapshot link resolving outside the repository's cache folder is refused."""
    import shutil

    storage = storage.resolve()
    for source in sorted(snapshot.rglob("*")):
        if source.is_dir():
            continue
        real = source.resolve()
        if storage not in real.parents or not real.is_file():
            raise HubError(f"{spec}: cached file {source} resolves to {real}, outside the "
                           f"Hub cache folder {storage}; refusing it")
        dest = target / source.relative_to(snapshot)
        if dest.is_file() and dest.stat().st_size == real.stat().st_size:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = dest.with_name(dest.name + ".part")
        part.unlink(missing_ok=True)
        try:
            os.link(real, part)
        except OSError:  # another file system, or links not allowed
            shutil.copyfile(real, part)
        part.replace(dest)
    return target


def load_hub_benchmark(spec: str, *, on_invalid: str = "raise",
                       check_images: bool = True) -> Benchmark:
    """The foilbench benchmark folder a ``hf://datasets/...`` spec names.

    Args:
        spec: ``hf://datasets/ORG/NAME@REV[/PATH]``.
        on_invalid: ``"raise"`` or ``"drop"`` (as :func:`foilbench.data.load_benchmark`).
        check_images: Decode every image while validating.

    Returns:
        The :class:`~foilbench.data.Benchmark`, its ``manifest.extras["hub"]`` naming the
            resolved commit.
    """
    from foilbench.data.format import MANIFEST_FILE, load_benchmark

    ref = parse_hub_spec(spec)
    folder, record = snapshot(ref)
    if not (folder / MANIFEST_FILE).is_file():
        raise HubError(f"{ref.spec}: no {MANIFEST_FILE} there, so it is not a foilbench "
                       "benchmark folder; for a release in its own layout use LOADER:"
                       f"{ref.spec} (loaders: foilbench benchmarks)")
    bench = load_benchmark(folder, on_invalid=on_invalid, check_images=check_images)
    bench.manifest.extras["hub"] = record
    return bench


def localise(loader: str, rest: str) -> tuple[str, dict[str, Any]]:
    """A loader's ``hf://...[?options]`` argument as a local path with the same options.

    The embedded-image loaders also get ``images=`` outside the Hub cache unless the spec
    names one.
    """
    location, sep, query = rest.partition("?")
    folder, record = snapshot(parse_hub_spec(location))
    options = query
    if loader in EMBEDDED_IMAGE_LOADERS and "images=" not in query:
        extra = f"images={images_folder(record)}"
        options = f"{query}&{extra}" if query else extra
    return str(folder) + (f"?{options}" if options else ""), record
