"""Shared Hugging Face loading: where a spec points, offline rules, and what to fingerprint.

``ORG/NAME`` is a hub id (downloaded only because the user named it; ``HF_HUB_OFFLINE=1``
makes transformers use the local cache only). Anything that looks like a path must be an
existing folder, and a missing one is named in the error.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from foilbench.errors import ModelError
from foilbench.models.fingerprint import file_sha256
from foilbench.models.weight_errors import (
    is_weights_only_refusal,
    safetensors_errors,
    weights_error,
)

# what from_pretrained raises for a corrupt .safetensors or a refused pickle, besides OSError
LOAD_ERRORS: tuple[type[BaseException], ...] = (pickle.UnpicklingError, *safetensors_errors())

WEIGHT_GLOBS = ("*.safetensors", "*.bin", "*.pt", "*.pth")
CONFIG_FILES = ("config.json", "preprocessor_config.json", "processor_config.json",
                "tokenizer_config.json", "tokenizer.json", "vocab.json", "vocab.txt",
                "merges.txt", "special_tokens_map.json", "generation_config.json",
                "chat_template.jinja", "chat_template.json")


def is_local_spec(target: str) -> bool:
    return target.startswith(("/", "./", "../", "~")) or Path(target).expanduser().is_dir()


def resolve_source(target: str) -> tuple[str, bool]:
    """(path or hub id to pass to ``from_pretrained``, is_local). Missing folders raise."""
    if not target:
        raise ModelError("empty Hugging Face model spec; use ORG/NAME or /path/to/dir")
    if is_local_spec(target):
        path = Path(target).expanduser()
        if not path.is_dir():
            raise ModelError(f"Hugging Face model folder not found: {path}")
        if not (path / "config.json").is_file():
            raise ModelError(f"{path}: no config.json (a save_pretrained folder is expected)")
        return str(path), True
    if target.count("/") != 1:
        raise ModelError(f"{target!r} is neither an existing folder nor a hub id ORG/NAME")
    return target, False


def split_revision(target: str, opts: dict) -> tuple[str, str | None]:
    """``ORG/NAME@REV`` or ``?revision=REV`` -> (``ORG/NAME``, REV): the hub branch, tag or
    commit that ``from_pretrained(..., revision=REV)`` loads. A folder has no revision.

    >>> split_revision("openai/clip-vit-base-patch32@3d74acf", {})
    ('openai/clip-vit-base-patch32', '3d74acf')
    >>> split_revision("org/name", {"revision": "v1.0"})
    ('org/name', 'v1.0')
    """
    rev = opts.get("revision")
    if rev is not None and not rev:
        raise ModelError("model option revision= is empty; give a branch, tag or commit")
    if not is_local_spec(target) and "@" in target:
        target, _, at = target.rpartition("@")
        if not at:
            raise ModelError(f"{target}@ has no revision after '@'; write ORG/NAME@REV")
        if rev is not None and rev != at:
            raise ModelError(f"two revisions for {target}: @{at} and ?revision={rev}; "
                             "give one")
        rev = at
    if rev is not None and is_local_spec(target):
        raise ModelError(f"{target} is a local folder; a revision applies only to a hub id "
                         "ORG/NAME")
    return target, rev


def revision_kwargs(revision: str | None) -> dict:
    """The ``from_pretrained`` keyword for a requested revision (none: the hub's default)."""
    return {} if revision is None else {"revision": revision}


def load_error(target: str, err: Exception) -> ModelError:
    if is_weights_only_refusal(err) or isinstance(err, safetensors_errors()):
        return weights_error(f"Hugging Face model {target!r}", err)
    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0")
    hint = (" HF_HUB_OFFLINE is set, so only the local Hugging Face cache is used."
            if offline else "")
    return ModelError(f"could not load Hugging Face model {target!r}: {err}.{hint}")


def source_identity(source: str, is_local: bool, config,
                    requested_revision: str | None = None) -> dict:
    """Fingerprint parts for the weights: file hashes for a folder, id + revision for the hub
    (the commit the hub resolved, and the branch/tag/commit the spec asked for, if any)."""
    if not is_local:
        ident = {"hub_id": source,
                 "revision": getattr(config, "_commit_hash", None) or "unknown"}
        if requested_revision is not None:
            ident["requested_revision"] = requested_revision
        return ident
    folder = Path(source)
    weights = sorted(p for g in WEIGHT_GLOBS for p in folder.glob(g))
    if not weights:
        raise ModelError(f"{folder}: no weights file (*.safetensors or *.bin)")
    files = {p.name: file_sha256(p) for p in weights}
    files.update({name: file_sha256(folder / name) for name in CONFIG_FILES
                  if (folder / name).is_file()})
    return {"local_files_sha256": files}
