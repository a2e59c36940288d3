"""Short display labels for model specs, so console tables fit 80 columns.

A spec may end in ``?label=NAME`` (or ``&label=NAME`` after other model options), e.g.
``openclip:ViT-B-32:laion2b_s34b_b79k?label=b32``: the option syntax of every other model
option (:mod:`foilbench.models.spec_options`). The label only names the model in tables; it
is removed before the spec is resolved, stored or used as a resume key, so two runs that
differ in their label are the same run. Specs without a label get one from
:func:`short_labels`, and every table whose labels differ from the specs prints a legend.
"""

from __future__ import annotations

import re

from foilbench.errors import ModelError

LABEL_OPTION = "label"
MAX_LABEL = 16  # a model column this wide leaves a metric table within 80 columns
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_SEPARATORS = ":/-_@"


def split_label(spec: str) -> tuple[str, str | None]:
    """``"hf:/w/siglip?score=cosine&label=sig"`` -> ``("hf:/w/siglip?score=cosine", "sig")``.

    A bad label (empty, longer than :data:`MAX_LABEL`, or with characters other than letters,
    digits and ``. _ + -``) raises :class:`ModelError` naming it."""
    body, mark, query = spec.partition("?")
    if not mark:
        return spec, None
    kept, label = [], None
    for pair in query.split("&"):
        key, eq, value = pair.partition("=")
        if key == LABEL_OPTION and eq:
            if not _LABEL.match(value) or len(value) > MAX_LABEL:
                raise ModelError(f"model label {value!r} in {spec!r} must be 1 to {MAX_LABEL} "
                                 "letters, digits or . _ + - (starting with a letter or digit)")
            label = value
        elif pair:
            kept.append(pair)
    return (body + "?" + "&".join(kept) if kept else body), label


def split_labels(specs: list[str] | tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """The specs without their labels, and ``{spec: label}`` for those that had one."""
    clean, given = [], {}
    for spec in specs:
        body, label = split_label(spec)
        clean.append(body)
        if label is not None:
            given[body] = label
    return clean, given


def short_labels(specs: list[str], given: dict[str, str] | None = None) -> dict[str, str]:
    """``{spec: label}``, every label at most :data:`MAX_LABEL` characters and unique.

    A label the user gave is kept. A spec that short already is its own label. Otherwise,
    the first of these that gives every remaining spec a short, distinct label: the spec
    without the prefix all of them share (``foilbench-plain`` and ``foilbench-swapneg`` are
    ``plain`` and ``swapneg``), then its last part (after ``:`` or ``/``), then ``m1``,
    ``m2``, ... in order."""
    given = dict(given or {})
    specs = list(dict.fromkeys(specs))
    out = {s: given[s] for s in specs if s in given}
    rest = [s for s in specs if s not in out]
    if all(len(s) <= MAX_LABEL for s in rest) and _distinct(out, {s: s for s in rest}):
        return out | {s: s for s in rest}
    for candidate in (_without_common_prefix(rest), _last_parts(rest)):
        if candidate and _distinct(out, candidate) and \
                all(0 < len(v) <= MAX_LABEL for v in candidate.values()):
            return out | candidate
    taken = set(out.values())
    numbered, k = {}, 1
    for spec in rest:
        if len(spec) <= MAX_LABEL and spec not in taken:
            numbered[spec] = spec
        else:
            while f"m{k}" in taken or f"m{k}" in specs:
                k += 1
            numbered[spec] = f"m{k}"
            k += 1
        taken.add(numbered[spec])
    return out | numbered


def legend(labels: dict[str, str]) -> list[str]:
    """``label = spec`` lines for the labels that differ from their spec (none: [])."""
    return [f"{label} = {spec}" for spec, label in labels.items() if label != spec]


def _distinct(fixed: dict[str, str], more: dict[str, str]) -> bool:
    values = list(fixed.values()) + list(more.values())
    return len(set(values)) == len(values)


def _without_common_prefix(specs: list[str]) -> dict[str, str] | None:
    if len(specs) < 2:
        return None
    prefix = specs[0]
    for spec in specs[1:]:
        while not spec.startswith(prefix):
            prefix = prefix[:-1]
    cut = max((prefix.rfind(c) for c in _SEPARATORS), default=-1) + 1
    if cut <= 0:
        return None
    return {s: s[cut:] for s in specs}


def _last_parts(specs: list[str]) -> dict[str, str]:
    out = {}
    for spec in specs:
        body = spec.split("?", 1)[0].rstrip("/")
        out[spec] = re.split(r"[:/]", body)[-1]
    return out
