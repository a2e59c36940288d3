"""Local model folders for construction backends: checking the path a spec names, and a cheap
identity for the fingerprint.

Identity of a folder (recursively, as diffusers pipelines keep one subfolder per component):
every weight file's relative path and size, and the sha256 of every small file (configs,
tokenizer files, model_index.json, under ``SMALL_FILE_BYTES``). Weights are not hashed in
full: a 12 GB FLUX folder would take minutes to hash, while a retrained or swapped checkpoint
of the same architecture almost never keeps every file size. The trade-off is stated in the
fingerprint itself (``"weights": "names+sizes"``). Scoring models hash weights in full
(:mod:`foilbench.models.hf.loading`); construction outputs are cached by this identity.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from foilbench.errors import ModelError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf", ".onnx")
SMALL_FILE_BYTES = 1 << 20


def require_dir(target: str, scheme: str, marker: str = "config.json") -> Path:
    """The folder a spec names; a missing folder or marker file raises naming both."""
    if not target:
        raise ModelError(f"{scheme}: name a local model folder, e.g. {scheme}:/path/to/dir")
    path = Path(target).expanduser()
    if not path.is_dir():
        raise ModelError(f"{scheme}: model folder not found: {path}")
    if not (path / marker).is_file():
        raise ModelError(f"{scheme}:{path}: no {marker} (a save_pretrained folder is expected)")
    return path


def dir_identity(folder: Path) -> dict:
    """``{"weights": {relpath: size}, "files": {relpath: sha256}}`` for the fingerprint."""
    weights: dict[str, int] = {}
    files: dict[str, str] = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        rel = p.relative_to(folder).as_posix()
        size = p.stat().st_size
        if p.suffix in WEIGHT_SUFFIXES:
            weights[rel] = size
        elif size <= SMALL_FILE_BYTES:
            files[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            weights[rel] = size
    if not weights:
        raise ModelError(f"{folder}: no weights file (*.safetensors, *.bin, ...)")
    return {"weights_by": "names+sizes", "weights": weights, "files": files}
