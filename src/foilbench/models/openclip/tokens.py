"""open_clip's BPE ``encode`` remembered per text and shared by every equal tokenizer.

A sweep's open_clip models usually share one tokenizer (the CLIP BPE vocabulary, lower-case
cleaning), yet each model's adapter builds its own ``SimpleTokenizer`` and encodes every caption
again, twice per cell: once for the forward pass and once for the truncation report
(:func:`foilbench.models.text_limits.text_report`). On SugarCrepe's 11,844 unique captions that
is about 0.7 s of pure Python per encoding, the same for every model.

:func:`share_encode` replaces the instance's ``encode`` (which ``SimpleTokenizer.__call__`` and
the report both call) with one that looks the text up first in a memory shared by all
tokenizers with the same :func:`tokenizer_key`. ``encode`` is a pure function of the text and
of what the key covers (class, vocabulary, merges, cleaning function, split pattern), so the
tokens are the ones open_clip computes; a test compares them on captions that are truncated,
non-ASCII and oddly spaced. Any other tokenizer (open_clip's HF wrappers, SigLIP's) is left
alone.

:func:`shared_tokenizer` goes one step further: the adapters of one process get the same
tokenizer object for the same architecture and model config, so the BPE tables (about 0.13 s
of pure Python to build) are built once per sweep, not once per model.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from typing import Any

MAX_TOKENIZERS = 64  # distinct (architecture, config) pairs kept; cleared past it
MAX_TEXTS = 500_000  # per tokenizer key; the memory is cleared past it (a few hundred MB at most)
_MEMO: dict[str, dict[str, list[int]]] = {}
_TOKENIZERS: dict[str, Any] = {}
_LOCK = threading.Lock()


def tokenizer_key(tok: Any) -> str | None:
    """A digest of everything open_clip's ``SimpleTokenizer.encode`` reads, or None when
    ``tok`` is not one (or holds something unnamed)."""
    if type(tok).__name__ != "SimpleTokenizer" or \
            not type(tok).__module__.startswith("open_clip"):
        return None
    needed = ("encoder", "bpe_ranks", "byte_encoder", "pat", "clean_fn")
    if any(not hasattr(tok, name) for name in needed):
        return None
    clean = tok.clean_fn
    inner = getattr(clean, "func", clean)  # a functools.partial names its function
    if "<" in getattr(inner, "__qualname__", "<"):
        return None  # a lambda or closure: its behaviour has no name to compare
    h = hashlib.sha256()
    for part in (type(tok).__module__, type(tok).__qualname__, inner.__module__,
                 inner.__qualname__, repr(getattr(clean, "args", ())),
                 repr(sorted(getattr(clean, "keywords", {}).items())), tok.pat.pattern,
                 repr(tok.byte_encoder), repr(tok.encoder), repr(tok.bpe_ranks)):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def share_encode(tok: Any) -> bool:
    """Make ``tok.encode`` remember its texts in the memory of its key; False (untouched)
    when ``tok`` is not an open_clip ``SimpleTokenizer``."""
    key = tokenizer_key(tok)
    if key is None:
        return False
    with _LOCK:
        memo = _MEMO.setdefault(key, {})
    tok.encode = remembering(tok.encode, memo)
    return True


def remembering(encode: Callable[[str], list[int]], memo: dict[str, list[int]]
                ) -> Callable[[str], list[int]]:
    """``encode`` with ``memo`` in front; every call returns a fresh list (callers extend it)."""

    def encode_remembered(text: str) -> list[int]:
        found = memo.get(text)
        if found is None:
            found = encode(text)
            if len(memo) >= MAX_TEXTS:
                memo.clear()
            memo[text] = found
        return list(found)

    return encode_remembered


def shared_tokenizer(arch: str) -> Any:
    """``open_clip.get_tokenizer(arch)`` with :func:`share_encode` applied, built once per
    process for each architecture name and model config (what ``get_tokenizer`` reads: the
    text config's context length, tokenizer name and keyword arguments). Tokenizers keep no
    per-model state, so the adapters may share the object. When open_clip is not imported
    yet, it is imported without what ``arch``'s shipped config has no use for
    (:mod:`.importer`): a process that only counts tokens (``construct``'s caption checks)
    skips ``transformers``, ``timm`` and torch's compiler, most of open_clip's import time
    (an architecture open_clip does not ship imports everything, as before). An open_clip
    already imported is used as it is (a config read from a file is not shipped, so it
    would ask for every package back)."""
    import json
    import sys

    open_clip = sys.modules.get("open_clip")
    if open_clip is None:
        from foilbench.models.openclip.importer import import_open_clip
        from foilbench.models.openclip.spec import needs_packages

        open_clip = import_open_clip(*needs_packages(arch))
    cfg = open_clip.get_model_config(arch)
    key = plain_tokenizer_key(arch, cfg) or \
        json.dumps([arch, cfg], sort_keys=True, default=repr)
    with _LOCK:
        found = _TOKENIZERS.get(key)
    if found is not None:
        return found
    tok = open_clip.get_tokenizer(arch)
    share_encode(tok)
    with _LOCK:
        if len(_TOKENIZERS) >= MAX_TOKENIZERS:
            _TOKENIZERS.clear()
        return _TOKENIZERS.setdefault(key, tok)


PLAIN_BLOCKERS = ("hf_tokenizer_name", "tokenizer_kwargs", "tokenizer_mode")


def plain_tokenizer_key(arch: str, cfg: Any) -> str | None:
    """``plain:<context length>`` when ``open_clip.get_tokenizer(arch)`` builds its default
    ``SimpleTokenizer(context_length=...)`` with no other argument (open_clip 3.x: a built-in
    name, no ``hf-hub:``/``local-dir:`` schema, no SigLIP in the name, a text config without
    a tokenizer name, mode or keyword arguments), else None. Such architectures (the tiny
    model's config and ViT-B-32, whose tokenizer the context check uses) share one
    tokenizer, so its BPE tables and key are built once per run, not once per name."""
    from open_clip.tokenizer import DEFAULT_CONTEXT_LENGTH

    if not isinstance(cfg, dict) or ":" in arch or "siglip" in arch.lower():
        return None
    text = cfg.get("text_cfg", {})
    if not isinstance(text, dict) or any(k in text for k in PLAIN_BLOCKERS):
        return None
    return f"plain:{text.get('context_length', DEFAULT_CONTEXT_LENGTH)!r}"
