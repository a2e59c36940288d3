"""CompoSET App. C generator drift audit: a seeded sample of (base, foil) pairs, a VLM flag
per pair, manual verification of every flag, and the confirmed-drift rate.

CompoSET App. C: "To bound how often the image-generation prompt (App. B.2) leaks unintended
changes into the foil, we sampled N=300 short-tier (base, foil) pairs and asked Gemini 2.5
Flash to flag any change beyond the labeled compositional edit. We manually verified every
flag. Only 2/300 instances retained genuine multi-edit drift after verification: 0.67%,
Wilson 95% CI [0.18%, 2.39%]. The remaining flagged cases were either disocclusion (newly
visible background where an object was removed) or below-threshold lighting and blur
differences. Gemini's flags concentrate in spatial edits (6 of 16 modify_spatial and
swap_spatial pairs, against 13 of the other 284)".

* sample (:func:`drift_sample`): ``n`` pair items of one tier (default 300, ``short``), a
  uniform draw without replacement seeded by ``seed``, in item order;
* flag (:func:`flag_pair`): the paper does not print its prompt. foilbench shows the VLM one
  image, base left and foil right at the base's height (:func:`side_by_side`), and asks
  :data:`QUESTION` with the choices yes / no through any ``vqa`` construction backend
  (``hf-vlm:DIR`` or ``api:PROVIDER:MODEL``, with their reply cache and spend cap); a reply
  naming neither choice is recorded as ``unanswerable`` and counts as a flag (it must be
  looked at);
* verification (:mod:`foilbench.review.drift_audit`): a person labels every flag
  ``drift`` (genuine multi-edit drift) or one of the benign classes the paper names;
* rate (:func:`drift_rate`): confirmed drift / n with the Wilson interval (App. C: "For rates
  near 0 or 1 - in particular, the drift-audit rate [...] - we use the Wilson score
  interval"); refused while a flag is unverified.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
from PIL import Image

from foilbench.errors import FoilbenchError

QUESTION = ("The left half is the original image; the right half was edited so that "
            "\"{base}\" became \"{foil}\". Apart from that labeled change, is anything else "
            "different between the two halves (an object added, removed, moved or changed)? "
            "Answer yes or no.")
CHOICES = ("yes", "no")
BENIGN = ("disocclusion", "lighting_or_blur", "no_change")
LABELS = ("drift", *BENIGN)
SPATIAL = ("modify_spatial", "swap_spatial")


class DriftAuditError(FoilbenchError):
    """A drift audit that cannot go on as asked."""


def drift_sample(bench, n: int = 300, tier: str = "short", seed: int = 0) -> pd.DataFrame:
    """``n`` pair items of ``tier`` drawn uniformly without replacement (seeded)."""
    items = bench.items
    for col in ("image_base", "image_foil", "caption_base", "caption_foil"):
        if col not in items.columns:
            raise DriftAuditError(f"{bench.name}: the drift audit needs pair items (no column "
                                  f"{col}); give a pair benchmark")
    pool = items[items["tier"] == tier] if "tier" in items.columns else items
    if "tier" not in items.columns and tier != "all":
        raise DriftAuditError(f"{bench.name}: no tier column; pass tier 'all'")
    if not 1 <= n <= len(pool):
        raise DriftAuditError(f"{bench.name}: cannot sample {n} of {len(pool)} {tier}-tier "
                              "pairs; lower --n")
    rng = np.random.default_rng([seed, 0xD21F])
    chosen = np.sort(rng.choice(len(pool), n, replace=False))
    return pool.iloc[chosen].reset_index(drop=True)


def side_by_side(base: Image.Image, foil: Image.Image) -> Image.Image:
    """Base left, foil right, the foil scaled to the base's height (bilinear)."""
    base, foil = base.convert("RGB"), foil.convert("RGB")
    if foil.height != base.height:
        width = max(1, round(foil.width * base.height / foil.height))
        foil = foil.resize((width, base.height), Image.BILINEAR)
    out = Image.new("RGB", (base.width + foil.width, base.height), "white")
    out.paste(base, (0, 0))
    out.paste(foil, (base.width, 0))
    return out


def flag_pair(backend, bench, row) -> dict:
    """Ask ``backend`` (a vqa construction backend) about one pair: ``{"flag": "yes"|"no"|
    "unanswerable", "reason"?}``."""
    from foilbench.construct.backends.base import UnanswerableError

    with Image.open(bench.image_path(row["image_base"])) as b, \
            Image.open(bench.image_path(row["image_foil"])) as f:
        image = side_by_side(b, f)
    question = QUESTION.format(base=row["caption_base"], foil=row["caption_foil"])
    try:
        return {"flag": backend.answer(image, question, list(CHOICES))}
    except UnanswerableError as e:
        return {"flag": "unanswerable", "reason": str(e)}


def flag_table(pairs: list[dict]) -> pd.DataFrame:
    """Flags per edit type, and the spatial vs other split the paper reports."""
    df = pd.DataFrame(pairs)
    df["flagged"] = df["flag"].isin(("yes", "unanswerable"))
    rows = [{"edit_type": e, "n": len(g), "flagged": int(g["flagged"].sum())}
            for e, g in df.groupby("edit_type", sort=True)]
    spatial = df["edit_type"].isin(SPATIAL)
    rows += [{"edit_type": "(spatial)", "n": int(spatial.sum()),
              "flagged": int(df.loc[spatial, "flagged"].sum())},
             {"edit_type": "(other)", "n": int((~spatial).sum()),
              "flagged": int(df.loc[~spatial, "flagged"].sum())}]
    return pd.DataFrame(rows)


def drift_rate(pairs: list[dict], z: float = 1.96) -> dict:
    """Confirmed drift / n with its Wilson interval, from pairs that carry ``flag`` and, when
    flagged, ``label``; refuses an unverified flag."""
    from foilbench.stats import wilson_ci

    if not pairs:
        raise DriftAuditError("no pair in the audit")
    missing = [p for p in pairs if "flag" not in p]
    if missing:
        raise DriftAuditError(f"{len(missing)} pair(s) not flagged yet (first: "
                              f"{missing[0]['item_id']}); run the flag phase to the end")
    flagged = [p for p in pairs if p["flag"] in ("yes", "unanswerable")]
    open_ = [p for p in flagged if p.get("label") not in LABELS]
    if open_:
        raise DriftAuditError(f"{len(open_)} flag(s) not verified yet (first: "
                              f"{open_[0]['item_id']}); verify them with --verify or --decide")
    labels = Counter(p["label"] for p in flagged)
    k, n = labels.get("drift", 0), len(pairs)
    lo, hi = wilson_ci(k, n, z)
    return {"n": n, "flagged": len(flagged), "confirmed_drift": k, "rate": k / n,
            "ci_low": lo, "ci_high": hi, "labels": dict(sorted(labels.items()))}


def flag_all(state: dict, bench, backend, save, ledger=None, log=lambda msg: None) -> int:
    """Flag every unflagged pair of ``state`` (in sample order), calling ``save(state)`` after
    each so a rerun resumes. ``ledger`` (the audit folder's
    :class:`~foilbench.construct.engine.ledger.SpendLedger`, which the API backend reserves and
    settles every request in) holds the cap across resumes by itself; its committed spend is
    copied into ``state["spent_usd"]`` for the record. Returns the calls made."""
    made = 0
    todo = [p for p in state["pairs"] if "flag" not in p]
    for k, pair in enumerate(todo, 1):
        try:
            pair.update(flag_pair(backend, bench, pair))
        finally:
            if ledger is not None:
                state["spent_usd"] = ledger.total
            save(state)
        made += 1
        if k % 25 == 0 or k == len(todo):
            log(f"flagged {k}/{len(todo)}")
    return made
