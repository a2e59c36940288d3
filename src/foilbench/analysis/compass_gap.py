"""COMPASS compositional integration gap, from per-item outcomes.

For caption c with primitives 1..N (COMPASS, integration gap):

    composed(c)   = R@1 of c against its N composed negatives c~_i
                    = [s(c) > max_i s(c~_i)]                         (strict >, ties fail)
    decomposed(c) = prod_i [s(d_i) > s(d~_i)]   (every primitive alone beats its perturbation)
    gap(c)        = decomposed(c) - composed(c)

and per (level, N) the mean and sample standard deviation (ddof = 1) of gap(c) over captions.
A positive gap means the model knows each primitive alone but fails to integrate them.
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


def gap_table(per_caption: pd.DataFrame) -> pd.DataFrame:
    """Mean composed/decomposed/gap and gap std per level and N, plus an ``all`` row per level.

    Columns: [run_id,] level, N, n_captions, composed, decomposed, gap, gap_std, and the
    exact ties scored as failures (strict >): composed_ties (captions whose composed item
    tied), decomposed_ties (tied decomposed items)."""
    keys = _group_keys(per_caption)
    frames = []
    for by_n in (True, False):
        df = per_caption.assign(N=per_caption["n_primitives"].astype(int) if by_n else "all")
        g = df.groupby([*keys, "level", "N"], sort=True)
        frames.append(pd.DataFrame({
            "n_captions": g.size(),
            "composed": g["composed"].mean(),
            "decomposed": g["decomposed"].mean(),
            "gap": g["gap"].mean(),
            "gap_std": g["gap"].std(ddof=1),
            "composed_ties": g["composed_tie"].sum().astype(int),
            "decomposed_ties": g["decomposed_ties"].sum().astype(int),
        }).reset_index())
    table = pd.concat(frames, ignore_index=True)
    table["N"] = table["N"].astype(str)
    order = table["N"].map(lambda v: np.inf if v == "all" else int(v))
    return (table.assign(_o=order).sort_values([*keys, "level", "_o"])
            .drop(columns="_o").reset_index(drop=True))
