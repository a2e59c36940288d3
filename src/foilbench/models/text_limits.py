"""What a model's tokenizer does to a benchmark's captions: how many it truncates, how many
tokens it cannot represent.

A caption longer than the model's context is cut to fit, and a word outside a closed
vocabulary becomes ``[UNK]``; both happen inside the tokenizer without a word, and both change
what is scored (a foil whose difference lies past the cut is scored as identical to its base).
:func:`text_report` measures both over the unique texts of a run by tokenizing them again,
without the model and whatever the embedding cache holds, so every run of a model on a
benchmark reports the same counts. The runner prints them, stores them with the run
(``eval_stats.text``) and in ``summary.json``, and the report shows them.

Tokenizers it knows: the embedded models' word tokenizer, Hugging Face tokenizers (``hf:``)
and open_clip's (``openclip:``). An adapter may answer for itself with a ``text_report(texts)``
method; for any other model the report is None (not measured, e.g. ``tiny-random`` hashes
words and has no limit, API models see whole captions).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

SHOW_UNKNOWN = 10


def _report(n_texts: int, lengths: Sequence[int], limit: int | None, n_unknown: int,
            unknown: Counter | None = None) -> dict[str, Any]:
    truncated = sum(1 for n in lengths if limit is not None and n > limit)
    return {"n_texts": n_texts, "n_truncated": truncated, "max_tokens": limit,
            "longest": max(lengths, default=0), "n_unknown": n_unknown,
            "unknown_examples": dict((unknown or Counter()).most_common(SHOW_UNKNOWN))}


def _word_tokenizer(tok: Any, texts: list[str]) -> dict[str, Any]:
    from foilbench.models.word_tokenizer import split_words

    _, stats = tok.encode(texts)
    lengths = [len(split_words(t)) + 1 for t in texts]  # + [CLS]
    return _report(len(texts), lengths, tok.max_len, stats.n_unknown,
                   Counter(stats.unknown_words))


def _hf_tokenizer(tok: Any, texts: list[str], limit: int | None) -> dict[str, Any]:
    ids = tok(list(texts), truncation=False, add_special_tokens=True, verbose=False)["input_ids"]
    unk = getattr(tok, "unk_token_id", None)
    unknown = Counter()
    if unk is not None:
        for text, row in zip(texts, ids, strict=True):
            if unk in row:
                unknown[text[:40]] += sum(1 for i in row if i == unk)
    return _report(len(texts), [len(r) for r in ids], limit, sum(unknown.values()), unknown)


def _hf_limit(adapter: Any, tok: Any) -> int | None:
    """The text context: the model's position table, else the tokenizer's stated maximum."""
    config = getattr(getattr(adapter, "model", None), "config", None)
    text_config = getattr(config, "text_config", None) or config
    limit = getattr(text_config, "max_position_embeddings", None)
    if isinstance(limit, int) and limit > 0:
        return limit
    stated = getattr(tok, "model_max_length", None)
    return stated if isinstance(stated, int) and 0 < stated < 1_000_000 else None


def _loaded_hf_tokenizer_base() -> Any:
    """transformers' ``PreTrainedTokenizerBase`` when its module is already imported, else
    ``()`` (``isinstance(x, ())`` is False). No object can be an instance of a class whose
    module was never imported, so importing it here (0.2 s in a run of an open_clip model,
    whose tokenizer is not a transformers one) could only ever answer False."""
    module = sys.modules.get("transformers.tokenization_utils_base")
    return getattr(module, "PreTrainedTokenizerBase", ())


def text_report(adapter: Any, texts: Sequence[str]) -> dict[str, Any] | None:
    """``{n_texts, n_truncated, max_tokens, longest, n_unknown, unknown_examples}`` of
    ``texts`` under ``adapter``'s tokenizer, or None when it cannot be measured.

    >>> from foilbench.models.word_tokenizer import WordTokenizer
    >>> class A: tokenizer = WordTokenizer.build(["a red cube"], max_len=3)
    >>> r = text_report(A(), ["a red cube", "a cube"])
    >>> r["n_truncated"], r["n_unknown"]
    (1, 0)
    """
    texts = list(texts)
    own = getattr(adapter, "text_report", None)
    if callable(own):
        return own(texts)
    tok = getattr(adapter, "tokenizer", None)
    if tok is None:
        return None
    from foilbench.models.word_tokenizer import WordTokenizer

    if isinstance(tok, WordTokenizer):
        return _word_tokenizer(tok, texts)
    PreTrainedTokenizerBase = _loaded_hf_tokenizer_base()  # noqa: N806
    if isinstance(tok, PreTrainedTokenizerBase):
        return _hf_tokenizer(tok, texts, _hf_limit(adapter, tok))
    context = getattr(tok, "context_length", None)
    inner = getattr(tok, "tokenizer", None)  # open_clip's HFTokenizer wraps a HF tokenizer
    if inner is not None and isinstance(inner, PreTrainedTokenizerBase):
        return _hf_tokenizer(inner, texts, context)
    if callable(getattr(tok, "encode", None)) and isinstance(context, int):  # open_clip BPE
        lengths = [len(tok.encode(t)) + 2 for t in texts]  # + start and end of text
        return _report(len(texts), lengths, context, 0)
    return None


def describe(report: dict[str, Any] | None) -> str | None:
    """One line for the console when captions were truncated or tokens unknown, else None.

    >>> line = describe({"n_texts": 9, "n_truncated": 1, "max_tokens": 77, "longest": 5001,
    ...                  "n_unknown": 2, "unknown_examples": {"zorblax": 2}})
    >>> first, second = line.split("; ")
    >>> first
    "1 of 9 unique captions truncated to the model's 77 tokens (longest: 5001)"
    >>> second
    '2 unknown token(s) (zorblax x2)'
    """
    if not report or not (report.get("n_truncated") or report.get("n_unknown")):
        return None
    parts = []
    if report["n_truncated"]:
        parts.append(f"{report['n_truncated']} of {report['n_texts']} unique captions truncated to "
                     f"the model's {report['max_tokens']} tokens (longest: {report['longest']})")
    if report["n_unknown"]:
        shown = ", ".join(f"{w} x{n}" for w, n in report["unknown_examples"].items())
        parts.append(f"{report['n_unknown']} unknown token(s) ({shown})")
    return "; ".join(parts)
