"""Perplexity audit (COMPASS App. B): do negatives differ from positives in fluency alone?

Per item, PPL(x) = exp(-mean token log-probability of x) under a causal LM. Among the item's
K negatives the *hardest* is the one whose perplexity is closest to the positive's,

    n*(item) = argmin_k |PPL(n_k) - PPL(c)|        (smallest gap = hardest to spot by fluency)

Then the two samples {PPL(c)} (n1 items) and {PPL(n*)} (n2 items) are compared with the
Mann-Whitney U test. With U = #{(x, y): x > y} + 0.5 #{x = y} over positives x and chosen
negatives y, the rank-biserial correlation is

    r = 1 - 2 U / (n1 n2)                        in [-1, 1]

r > 0: positives tend to have LOWER perplexity (negatives read as less fluent); r = 0: no
fluency gap. |r| is labelled with Cohen-style cut-offs: < 0.1 negligible, < 0.3 small,
< 0.5 medium, otherwise large.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

EFFECT_LABELS = ((0.1, "negligible"), (0.3, "small"), (0.5, "medium"), (np.inf, "large"))


def effect_label(r: float) -> str:
    """Label of |r| under the cut-offs 0.1 / 0.3 / 0.5."""
    return next(label for cut, label in EFFECT_LABELS if abs(r) < cut)


def mann_whitney_u(x: np.ndarray, y: np.ndarray) -> float:
    """U of sample x: pairs with x > y plus half the ties, via mid-ranks (no n1 n2 loop)."""
    x = np.asarray(x, np.float64)
    y = np.asarray(y, np.float64)
    ranks = stats.rankdata(np.concatenate([x, y]))
    return float(ranks[: len(x)].sum() - len(x) * (len(x) + 1) / 2)


def rank_biserial(x: np.ndarray, y: np.ndarray) -> float:
    """r = 1 - 2 U / (n1 n2), U the Mann-Whitney U of ``x``."""
    return 1.0 - 2.0 * mann_whitney_u(x, y) / (len(x) * len(y))


def hardest_negative(ppl_pos: np.ndarray, ppl_neg: np.ndarray) -> np.ndarray:
    """Column of the negative with the smallest |PPL(n) - PPL(c)| per item (NaN = missing;
    the first column wins an exact tie)."""
    gap = np.abs(np.asarray(ppl_neg, np.float64) - np.asarray(ppl_pos, np.float64)[:, None])
    if np.isnan(gap).all(axis=1).any():
        raise ValueError("every item needs at least one negative with a perplexity")
    return np.nanargmin(gap, axis=1)


def perplexity_audit(ppl_pos: np.ndarray, ppl_neg: np.ndarray) -> dict[str, Any]:
    """The audit from per-item perplexities: ``ppl_pos`` (n,), ``ppl_neg`` (n, K)."""
    ppl_pos = np.asarray(ppl_pos, np.float64)
    ppl_neg = np.asarray(ppl_neg, np.float64).reshape(len(ppl_pos), -1)
    chosen = hardest_negative(ppl_pos, ppl_neg)
    ppl_hard = ppl_neg[np.arange(len(ppl_pos)), chosen]
    u = mann_whitney_u(ppl_pos, ppl_hard)
    r = 1.0 - 2.0 * u / (len(ppl_pos) * len(ppl_hard))
    p = stats.mannwhitneyu(ppl_pos, ppl_hard, alternative="two-sided").pvalue
    return {"n": len(ppl_pos), "u": u, "p_value": float(p), "rank_biserial": r,
            "effect": effect_label(r), "median_ppl_positive": float(np.median(ppl_pos)),
            "median_ppl_hardest_negative": float(np.median(ppl_hard)),
            "hardest_index": chosen + 1}  # 1-based: position among the item's captions


NEGATIVE_TYPE = {"O": "Object", "A": "Attribute", "R": "Relation"}


def _strip(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "hardest_index"}


def compass_perplexity_tables(ppl: np.ndarray, items) -> dict[str, Any]:
    """The COMPASS App. B tables from per-item perplexities (``ppl``: (n, K+1), positive
    first, NaN where an item has fewer candidates) and the items' ``role``, ``level``,
    ``skill``.

    * ``skill``: one audit per (level, negative type) over the skill-targeted items, as
      Table 4 ("Perplexity effect sizes ... for skill-targeted negatives across all structural
      levels, measured on the hardest negative subset"; rows "L3 (OAR) | Object", ...);
    * ``composed``: one audit per level over the composed captions and their c~_i, as
      Table 5 ("effect sizes for composed captions across structural levels");
    * decomposed items are excluded and counted (``decomposed_excluded``): App. B.5, "decomposed
      perplexity results are therefore not informative for benchmark validity" (captions of
      6-8 tokens, where one substituted word dominates the perplexity).

    No pooled number is given: the paper reports none, and pooling mixes levels whose
    captions differ in length and structure.
    """
    role = items["role"].astype(str).to_numpy()
    level = items["level"].astype(str).to_numpy()
    skill = (items["skill"].fillna("").astype(str).to_numpy() if "skill" in items.columns
             else np.full(len(items), ""))
    out: dict[str, Any] = {"skill": [], "composed": [],
                           "decomposed_excluded": int((role == "decomposed").sum())}
    for lv in sorted(set(level[role == "skill"].tolist())):
        for sk in ("O", "A", "R"):
            m = (role == "skill") & (level == lv) & (skill == sk)
            if m.any():
                out["skill"].append({"level": lv, "negative_type": NEGATIVE_TYPE[sk],
                                     **_strip(perplexity_audit(ppl[m, 0], ppl[m, 1:]))})
    for lv in sorted(set(level[role == "composed"].tolist())):
        m = (role == "composed") & (level == lv)
        out["composed"].append({"level": lv,
                                **_strip(perplexity_audit(ppl[m, 0], ppl[m, 1:]))})
    return out


def perplexity_audit_benchmark(bench, lm_path: str | Path, device: str = "auto"
                               ) -> dict[str, Any]:
    """Perplexity audit of a ``choice`` benchmark under the local causal LM at ``lm_path``:
    overall and per edit type, or, for a COMPASS-style benchmark (items with ``role``), the
    paper's tables per level x negative type and per level for composed captions
    (:func:`compass_perplexity_tables`; decomposed items are not scored)."""
    from foilbench.audit.crossfit import gather
    from foilbench.audit.neural import causal_lm_logprobs
    from foilbench.audit.text import choice_captions, edit_types, pad_captions

    captions = choice_captions(bench)
    items = bench.items.reset_index(drop=True)
    compass = "role" in items.columns and "level" in items.columns
    if compass:
        keep = np.flatnonzero(items["role"].astype(str).to_numpy() != "decomposed")
        if len(keep) == 0:
            raise ValueError(f"{bench.name}: only decomposed items; COMPASS App. B audits "
                             "composed and skill-targeted captions")
        kept = items.iloc[keep].reset_index(drop=True)
        texts, index = pad_captions([captions[i] for i in keep])
        ppl = gather(np.exp(-causal_lm_logprobs(texts, lm_path, device=device)), index)
        tables = compass_perplexity_tables(ppl, kept)
        tables["decomposed_excluded"] = int(len(items) - len(keep))
        return {"compass": tables}
    texts, index = pad_captions(captions)
    ppl = gather(np.exp(-causal_lm_logprobs(texts, lm_path, device=device)), index)
    types = edit_types(bench)
    out = {"overall": _strip(perplexity_audit(ppl[:, 0], ppl[:, 1:])), "by_type": {}}
    for t in sorted(set(types.tolist())):
        m = types == t
        out["by_type"][t] = _strip(perplexity_audit(ppl[m, 0], ppl[m, 1:]))
    return out
