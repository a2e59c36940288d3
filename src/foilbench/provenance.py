"""Provenance of a run: package version, git revision, time, seed, tie policy, settings, the
versions of the libraries that shape the numbers (torch, open_clip, transformers, numpy,
duckdb, Pillow; :mod:`foilbench.versions`) and the device (with the GPU's name on CUDA).

Never fails: a missing git binary, a non-checkout install or a broken repository all give
``"unknown"`` for the revision. ``config_hash`` covers exactly the settings that change the
stored numbers, so a resumable sweep can recognise a finished (model, benchmark, config).
"""

from __future__ import annotations

import json
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from foilbench import __version__
from foilbench.hashing import sha256_bytes
from foilbench.scoring.protocols import TIE_POLICY
from foilbench.versions import compute_device, library_versions


def source_checkout() -> Path | None:
    """The git work tree holding this foilbench source (``src/foilbench`` -> repo), if any."""
    here = Path(__file__).resolve().parent
    for candidate in (here, *here.parents[:3]):
        if (candidate / ".git").exists():
            return candidate
    return None


def git_revision() -> str:
    """``<sha>`` or ``<sha>+dirty`` of the source checkout, else ``"unknown"``."""
    root = source_checkout()
    if root is None:
        return "unknown"
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError, ValueError):
        return "unknown"
    if not sha:
        return "unknown"
    return f"{sha}+dirty" if dirty else sha


def config_hash(config: dict[str, Any]) -> str:
    """sha256 (first 16 hex) of the canonical JSON of ``config``."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return sha256_bytes(blob)[:16]


def collect_provenance(*, seed: int, n_boot: int, ci_method: str,
                       tie_policy: str = TIE_POLICY, extra: dict[str, Any] | None = None,
                       revision: str | None = None, device: str | None = None
                       ) -> dict[str, Any]:
    """The provenance record stored with every run and written to ``summary.json``.
    ``device``: the one the model ran on (``auto`` or None: resolved here); neither it nor
    the library versions enter ``config_hash`` (they do not change what was asked for)."""
    config = {"seed": seed, "n_boot": n_boot, "ci_method": ci_method, "tie_policy": tie_policy,
              **(extra or {})}
    return {
        "package_version": __version__,
        "git_revision": revision if revision is not None else git_revision(),
        # to the microsecond: two runs of one key stored within a second keep their order
        "created": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        "seed": seed,
        "n_boot": n_boot,
        "ci_method": ci_method,
        "tie_policy": tie_policy,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "libraries": library_versions(),
        **compute_device(device),
        "config": config,
        "config_hash": config_hash(config),
    }


def subset_record(extras: dict[str, Any] | None) -> dict[str, Any] | None:
    """The G.4 subset a benchmark was drawn as (``manifest.extras["stratified_subset"]``, written by
    :func:`foilbench.data.subset.stratified_subset`), for the run's provenance: sample size,
    strata, seed, parent name/checksum/size and the allocation per stratum. The item ids stay
    in the benchmark (its checksum covers them); None for a full benchmark."""
    record = (extras or {}).get("stratified_subset")  # "subset" is some loaders' own option
    if not record:
        return None
    return {"n": int(record["n"]), "by": list(record.get("by") or []),
            "seed": int(record["seed"]), "parent_name": record.get("parent_name"),
            "parent_checksum": record.get("parent_checksum"),
            "parent_items": record.get("parent_items"),
            "allocation": list(record.get("allocation") or []),
            "n_item_ids": len(record.get("item_ids") or []),
            **({"unit": "instance"} if record.get("unit") == "instance" else {})}


def describe_subset(record: dict[str, Any] | None) -> str | None:
    """One line for ``foilbench show`` and the report: what part of which benchmark ran."""
    if not record:
        return None
    by = "stratified by " + ", ".join(record["by"]) if record["by"] else "simple random sample"
    strata = len(record["allocation"])
    if record.get("unit") == "instance":  # a tiered benchmark, drawn by instance
        per_tier = {}
        for a in record["allocation"]:
            for t, k in (a.get("tiers") or {}).items():
                per_tier[t] = per_tier.get(t, 0) + k
        tiers = (" (" + ", ".join(f"{k} {t}" for t, k in per_tier.items()) + ")"
                 if per_tier else "")
        return (f"subset of {record['n']} instances{tiers}, {record['n_item_ids']} of "
                f"{record['parent_items']} items of {record['parent_name']} "
                f"({record['parent_checksum']}), {by}, sample_seed {record['seed']} "
                "(CompoSET App. G.4)")
    return (f"subset of {record['n']} of {record['parent_items']} items of "
            f"{record['parent_name']} ({record['parent_checksum']}), {by}"
            + (f" ({strata} strata, proportional allocation)" if record["by"] else "")
            + f", sample_seed {record['seed']} (CompoSET App. G.4)")
