"""The text-only models that audits and dataset controls share, each loaded once per process.

- :func:`minilm`: the all-MiniLM-L6-v2 sentence encoder, loaded with sentence-transformers
  from a local folder or a Hugging Face Hub name (blind ``minilm`` scorer, caption-change
  controls; docs/text-models.md);
- :func:`causal_lm`: a local transformers causal LM folder (blind ``lm:PATH`` scorer,
  perplexity audit);
- :func:`clip_bpe`: CLIP's BPE tokenizer from open_clip's shipped vocabulary (caption change
  counted in tokens).

A blind audit and a controls audit in one process thus load MiniLM once, not twice; a missing
optional package is a :class:`~foilbench.errors.ModelError` that names the extra to install.
Downloads: only :func:`minilm` given a Hub name (the default,
``sentence-transformers/all-MiniLM-L6-v2``) when it is not in the local Hugging Face cache and
``HF_HUB_OFFLINE`` is not set; with ``HF_HUB_OFFLINE`` set it reads the cache only. A folder
(``FOILBENCH_MINILM=DIR``) never downloads. The BPE vocabulary ships inside open_clip and causal
LMs are read with ``local_files_only``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from foilbench.errors import ModelError
from foilbench.paths import MINILM_ENV, minilm_source

MINILM = "sentence-transformers/all-MiniLM-L6-v2"  # the Hub name used when none is given


def minilm_name(name_or_path: str | Path | None = None) -> str:
    """The sentence-transformers model :func:`minilm` loads: ``name_or_path`` when given, else
    ``$FOILBENCH_MINILM`` when set, else :data:`MINILM` (a folder is returned resolved)."""
    chosen = str(name_or_path or minilm_source() or MINILM)
    folder = Path(chosen).expanduser()
    if folder.is_dir():
        return str(folder.resolve())
    if chosen.startswith(("/", ".", "~")) or chosen.count("/") > 1 or "\\" in chosen:
        raise ModelError(f"MiniLM: {chosen} is not a folder (name a sentence-transformers "
                         f"model folder or a Hub name like {MINILM}; ${MINILM_ENV} sets it)")
    return chosen


def minilm(device: str = "cpu", name_or_path: str | Path | None = None) -> Any:
    """The MiniLM sentence encoder on ``device`` (its ``encode(texts, ...)`` gives embeddings),
    from :func:`minilm_name` (a folder, or a Hub name read from the local cache when
    ``HF_HUB_OFFLINE`` is set and downloaded once otherwise)."""
    # one cache key per (model, device), however the caller spells the call
    return _minilm(minilm_name(name_or_path), device)


def _offline() -> bool:
    """The Hub's own offline switch (``HF_HUB_OFFLINE``, as huggingface_hub read it)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


@lru_cache(maxsize=2)
def _minilm(name: str, device: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise ModelError("MiniLM needs the package sentence-transformers "
                         "(pip install 'foilbench[audit]')") from None
    local = Path(name).is_dir()
    try:
        return SentenceTransformer(name, device=device, local_files_only=local or _offline())
    except (OSError, ValueError) as err:  # not cached offline, no network, not a model folder
        where = ("the folder holds no sentence-transformers model" if local else
                 "not in the local Hugging Face cache and HF_HUB_OFFLINE is set" if _offline()
                 else "it could not be downloaded")
        raise ModelError(f"MiniLM {name}: {where} ({type(err).__name__}); fetch it once with "
                         f"`hf download {MINILM}` or set ${MINILM_ENV} to a "
                         "local model folder (docs/text-models.md)") from None


@lru_cache(maxsize=1)
def causal_lm(path: str | Path, device: str) -> tuple[Any, Any]:
    """(tokenizer, model in eval mode on ``device``) of the causal LM saved in folder ``path``."""
    folder = Path(path)
    if not folder.is_dir():
        raise ModelError(f"lm:{folder}: not a local model directory (expected a transformers "
                         "causal LM saved with save_pretrained)")
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise ModelError("causal LMs need the package transformers "
                         "(pip install 'foilbench[hf]')") from None
    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).to(device).eval()
    return tok, model


@lru_cache(maxsize=1)
def clip_bpe() -> Any:
    """open_clip's ViT-B-32 tokenizer (CLIP's BPE vocabulary, shipped with open_clip)."""
    try:
        import open_clip
    except ImportError:
        raise ModelError("CLIP BPE token counts need the package open_clip_torch "
                         "(pip install 'foilbench[openclip]')") from None
    return open_clip.get_tokenizer("ViT-B-32")
