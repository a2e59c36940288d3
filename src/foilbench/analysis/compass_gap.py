"""COMPASS compositional integration gap, from per-item outcomes.

For caption c with primitives 1..N (COMPASS, integration gap):

    composed(c)   = R@1 of c against its N composed negatives c~_i
                    = [s(c) > max_i s(c~_i)]                         (strict >, ties fail)
    decomposed(c) = prod_i [s(d_i) > s(d~_i)]   (every primitive alone beats its perturbation)
    gap(c)        = decomposed(c) - composed(c)

and per (level, N) the mean and sample standard deviation (ddof = 1) of gap(c) over captions;
per level the paper's Table 2 aggregate across complexities (:func:`gap_table`, :func:`table2`).
A positive gap means the model knows each primitive alone but fails to integrate them.

What the paper gives and what we read (checked against our copy of COMPASS, §5.1-5.3):

* composed, given as an equation (§5.2): "R@1_comp(c) = 1[ s(I,c) > s(I,c~_i), for all i in
  {1,...,N} ]" -- exactly ``composed`` above (all N negatives in one item, strict >);
* decomposed: our copy prints no equation for it (§5.2 holds only R@1_comp). We read it from
  §5.1: "success requires the model to retrieve every decomposed primitive against its
  respective negative independently", each d_i paired with the d~_i made by "the exact same
  perturbation applied to its corresponding composed negative": the product above (1 only
  when every primitive wins its own pair);
* Delta: no equation either; Table 2's caption defines it in words, "the difference between
  decomposed and composed accuracy (Delta)", "Positive values indicate better independent
  than joint performance": Delta = decomposed - composed, per caption and in the means;
* the per-complexity results are "detailed results in the Appendix", which our copy lacks;
  :func:`gap_table` gives them per N, and the aggregation of the ``all`` row is ours where
  the text is silent (see there).
Outcomes may be fractions (API models average two order-swapped asks); the product then is the
probability that all decomposed checks pass when they are independent, and equals "all pass"
for 0/1 outcomes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from foilbench.errors import FoilbenchError

CAPTION_COLUMNS = ("level", "n_o", "n_a", "n_r", "n_primitives")


def _group_keys(items: pd.DataFrame) -> list[str]:
    return ["run_id"] if "run_id" in items.columns else []


def caption_outcomes(items: pd.DataFrame, incomplete: str = "raise") -> pd.DataFrame:
    """One row per caption: composed, decomposed, gap, n_decomposed, and ties (from the
    store's ``tie_r1`` column when present).

    ``items`` needs ``role``, ``caption_id``, ``r1`` and the caption columns. A caption whose
    decomposed items are not all present (``n_primitives`` of them; a partial run) would
    inflate decomposed success: ``incomplete="raise"`` refuses it, ``"drop"`` leaves it out
    and records how many in ``out.attrs["dropped_incomplete"]``."""
    if incomplete not in ("raise", "drop"):
        raise ValueError(f"incomplete must be 'raise' or 'drop', got {incomplete!r}")
    need = {"role", "caption_id", "r1", *CAPTION_COLUMNS}
    missing = sorted(need - set(items.columns))
    if missing:
        raise FoilbenchError(f"COMPASS gap needs item columns {', '.join(missing)} "
                             f"(have: {', '.join(map(str, items.columns))})")
    keys = [*_group_keys(items), "caption_id"]
    items = items.assign(tie=items["tie_r1"].astype(bool) if "tie_r1" in items.columns
                         else False)
    comp = items[items["role"] == "composed"]
    comp = comp[[*keys, *CAPTION_COLUMNS, "r1", "tie"]].rename(
        columns={"r1": "composed", "tie": "composed_tie"})
    dec = items[items["role"] == "decomposed"].groupby(keys, sort=False)
    dec = pd.DataFrame({"decomposed": dec["r1"].prod(), "n_decomposed": dec.size(),
                        "decomposed_ties": dec["tie"].sum()}).reset_index()
    out = comp.merge(dec, on=keys, how="left")
    out["n_decomposed"] = out["n_decomposed"].fillna(0).astype(int)
    out["decomposed_ties"] = out["decomposed_ties"].fillna(0).astype(int)
    bad = out[out["n_decomposed"] != out["n_primitives"]]
    if len(bad) and incomplete == "drop":
        out = out[out["n_decomposed"] == out["n_primitives"]]
    elif len(bad):
        row = bad.iloc[0]
        raise FoilbenchError(
            f"caption {row['caption_id']!r}: {row['n_decomposed']} decomposed items, expected "
            f"{row['n_primitives']} (one per primitive); {len(bad)} caption(s) incomplete")
    out = out.assign(gap=out["decomposed"] - out["composed"]).reset_index(drop=True)
    out.attrs["dropped_incomplete"] = len(bad)
    return out


def _per_n(per_caption: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    df = per_caption.assign(N=per_caption["n_primitives"].astype(int))
    g = df.groupby([*keys, "level", "N"], sort=True)
    return pd.DataFrame({
        "n_captions": g.size(),
        "composed": g["composed"].mean(),
        "decomposed": g["decomposed"].mean(),
        "gap": g["gap"].mean(),
        "gap_std": g["gap"].std(ddof=1),
        "composed_ties": g["composed_tie"].sum().astype(int),
        "decomposed_ties": g["decomposed_ties"].sum().astype(int),
    }).reset_index()


def gap_table(per_caption: pd.DataFrame) -> pd.DataFrame:
    """Per level: one row per complexity N, then an ``all`` row (COMPASS Table 2) and a
    ``pooled`` row (foilbench's).

    Columns: [run_id,] level, N, n_captions, n_complexities, composed, decomposed, gap,
    gap_std, spread_over, and the exact ties scored as failures (strict >): composed_ties
    (captions whose composed item tied), decomposed_ties (tied decomposed items).

    * N rows: means over the captions of that complexity; ``gap_std`` is the spread over those
      captions (``spread_over = "captions"``).
    * ``all`` row, COMPASS Table 2: "We report the mean and standard deviation of Delta
      aggregated across all complexities" (caption: "the mean +- standard deviation of the
      difference between decomposed and composed accuracy (Delta) aggregated across all
      complexities"). Delta_N = decomposed accuracy - composed accuracy at complexity N;
      the row holds the unweighted mean of the per-N values and ``gap_std`` their sample
      standard deviation over the complexities (ddof = 1; the paper does not say which;
      ``spread_over = "complexities"``). Every N counts once, however many captions it has.
    * ``pooled`` row (foilbench's, not in the paper): means over all captions of the level,
      so complexities with more captions weigh more, and ``gap_std`` over captions.
    """
    keys = _group_keys(per_caption)
    by_n = _per_n(per_caption, keys).assign(spread_over="captions", n_complexities=1)
    g = by_n.groupby([*keys, "level"], sort=True)
    table2 = pd.DataFrame({
        "n_captions": g["n_captions"].sum(),
        "n_complexities": g.size(),
        "composed": g["composed"].mean(),
        "decomposed": g["decomposed"].mean(),
        "gap": g["gap"].mean(),
        "gap_std": g["gap"].std(ddof=1),
        "composed_ties": g["composed_ties"].sum(),
        "decomposed_ties": g["decomposed_ties"].sum(),
    }).reset_index().assign(N="all", spread_over="complexities")
    pc = per_caption.groupby([*keys, "level"], sort=True)
    pooled = pd.DataFrame({
        "n_captions": pc.size(),
        "n_complexities": pc["n_primitives"].nunique(),
        "composed": pc["composed"].mean(),
        "decomposed": pc["decomposed"].mean(),
        "gap": pc["gap"].mean(),
        "gap_std": pc["gap"].std(ddof=1),
        "composed_ties": pc["composed_tie"].sum().astype(int),
        "decomposed_ties": pc["decomposed_ties"].sum().astype(int),
    }).reset_index().assign(N="pooled", spread_over="captions")
    table = pd.concat([by_n, table2, pooled], ignore_index=True)
    table["N"] = table["N"].astype(str)
    order = table["N"].map(lambda v: np.inf if v in ("all", "pooled") else int(v))
    rank = table["N"].map({"all": 1, "pooled": 2}).fillna(0)
    cols = [*keys, "level", "N", "n_captions", "n_complexities", "composed", "decomposed",
            "gap", "gap_std", "spread_over", "composed_ties", "decomposed_ties"]
    return (table.assign(_o=order, _r=rank).sort_values([*keys, "level", "_r", "_o"])
            .drop(columns=["_o", "_r"]).reset_index(drop=True)[cols])


def table2(gap: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """COMPASS Table 2 layout from :func:`gap_table`: per [run,] level, Delta as
    "mean +- std" in percentage points across complexities (the ``all`` rows), with the
    number of complexities and captions behind it.

    >>> import pandas as pd
    >>> g = pd.DataFrame({"level": ["L2-OA"], "N": ["all"], "gap": [0.0239], "gap_std": [0.0123],
    ...                   "n_complexities": [11], "n_captions": [500]})
    >>> table2(g)["delta_pp"].item()
    '2.39 ± 1.23'
    """
    keys = _group_keys(gap)
    rows = gap[gap["N"].astype(str) == "all"]
    fmt = lambda m, s: (f"{100 * m:.{digits}f} ± {100 * s:.{digits}f}"  # noqa: E731
                        if np.isfinite(s) else f"{100 * m:.{digits}f} ± -")
    return pd.DataFrame({
        **{k: rows[k].to_numpy() for k in [*keys, "level"]},
        "delta_pp": [fmt(m, s) for m, s in zip(rows["gap"], rows["gap_std"], strict=True)],
        "n_complexities": rows["n_complexities"].astype(int).to_numpy(),
        "n_captions": rows["n_captions"].astype(int).to_numpy(),
    })
