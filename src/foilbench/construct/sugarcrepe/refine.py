"""``sugarcrepe`` stage 3: the blind audit and adversarial refinement (SugarCrepe Alg. 1).

SugarCrepe §4.1, Stage 3 and App. D.3: for two text-only models M1, M2 the score gaps
g = M(p) - M(n) are binned on a grid, and "for each pair of symmetric grids ... we preserve the
same number of data for both grids, therefore we ensure that for the resultant set,
E_i[M_1(p_i) > M_1(n_i)] = 0.5 and E_i[M_2(p_i) > M_2(n_i)] = 0.5." This reuses the existing
audit: cross-fitted gaps (:func:`foilbench.audit.blind.oriented_gaps`, grouped by image) and
:func:`foilbench.audit.refinement.refine`, one grid per negative type as in
``foilbench audit refine``. With fewer than two images in a type there is nothing to cross-fit:
its items pass unrefined and the stage records why.

The grid (issue 29: a small caption set left 0 items under 100 x 100, as almost no symmetric
cell pair has members on both sides): ``config.grid`` fixes K (``100`` is the paper's);
``None`` (``--grid auto``, the default) chooses per type the largest K of ``GRID_LADDER``, the
paper's 100 first, whose refinement keeps at least ``MIN_KEPT_SHARE`` of the type's items, else
the K that keeps the most. The K used per type is recorded. The paper's 100 x 100 is kept
whenever it fills (large sets); where we choose a coarser grid the blind scorers are balanced
within coarser cells, which we state in the log.
"""

from __future__ import annotations

import numpy as np

from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.stages import ConstructError, Context

GRID_LADDER = (100, 50, 20, 10, 4, 2)
NOTHING_KEPT = ("Algorithm 1 kept no item: on every grid tried ({grids}) the blind scorers "
                "separate positives from negatives in every symmetric cell pair; try "
                "{zero_bin}other --scorer models, more captions, or --no-refine to keep the "
                "unrefined negatives")
MIN_KEPT_SHARE = 0.5


def scorer_kind(name: str) -> str:
    """What a refinement scorer stands for (the manifest labels the offline default)."""
    if name.startswith("hf:"):
        return "local Hugging Face model (the paper's blind models: a CoLA grammar classifier, " \
               "a plausibility model like Vera)"
    if name in ("length", "ngram"):
        return "foilbench's offline stand-in (not the paper's grammar/plausibility models)"
    return "foilbench scorer"


def choose_grid(gap_a: np.ndarray, gap_b: np.ndarray, seed: int, zero_bin: bool = False):
    """``(K, refinement)``: the largest K of ``GRID_LADDER`` keeping at least
    ``MIN_KEPT_SHARE`` of the items, else the one keeping the most (the larger K on a tie)."""
    from foilbench.audit.refinement import refine

    best = None
    for k in GRID_LADDER:
        res = refine(gap_a, gap_b, k, seed, zero_bin=zero_bin)
        if len(res.kept) >= MIN_KEPT_SHARE * len(gap_a):
            return k, res
        if best is None or len(res.kept) > len(best[1].kept):
            best = (k, res)
    return best


def stage_refine(ctx: Context, cands: list[Candidate], config) -> list[Candidate]:
    from foilbench.audit.blind import oriented_gaps
    from foilbench.audit.refinement import refine

    with ctx.log.stage("adversarial refinement (Alg. 1)", cands, unit="caption x type") as st:
        if not cands:
            return st.survivors
        captions = [[c.data["caption"], c.data["negative"]] for c in cands]
        types = np.array([c.data["type"] for c in cands])
        clusters = np.array([c.data["image"] for c in cands])
        n_clusters = len(set(clusters.tolist()))
        folds = min(config.folds, n_clusters)
        if folds < 2:
            for c in cands:
                st.passed(c, verdicts={"refinement": "skipped: fewer than 2 images"})
            return st.survivors
        a, b = config.scorers
        gaps_a, gaps_b = (oriented_gaps(captions, types, clusters, scorer, folds, config.seed)
                          for scorer in ctx.track([a, b], f"{st.name} scorers", unit="scorer"))
        report = {}
        for t in sorted(set(types.tolist())):
            idx = np.flatnonzero(types == t)
            zero_bin = getattr(config, "zero_bin", False)
            if config.grid is None:
                k, res = choose_grid(gaps_a[idx], gaps_b[idx], config.seed, zero_bin)
            else:
                k = config.grid
                res = refine(gaps_a[idx], gaps_b[idx], k, config.seed, zero_bin=zero_bin)
            kept = set(idx[res.kept].tolist())
            report[t] = {"n": len(idx), "kept": len(kept), "grid": k, "before": res.before,
                         "after": res.after}
            for i in idx:
                verdict = {"gap_" + a: float(gaps_a[i]), "gap_" + b: float(gaps_b[i])}
                if i in kept:
                    st.passed(cands[i], verdicts=verdict)
                else:
                    st.drop(cands[i], "adversarial refinement (Alg. 1)", verdicts=verdict)
        ctx.notes["refinement"] = {"scorers": [a, b],
                                   "scorer_kinds": {n: scorer_kind(n) for n in (a, b)},
                                   "folds": folds,
                                   "grid": "auto" if config.grid is None else config.grid,
                                   "zero_bin": bool(getattr(config, "zero_bin", False)),
                                   "by_type": report}
        ctx.log.write({"event": "refinement", "stage": st.name, **ctx.notes["refinement"]})
    if not st.survivors:
        raise ConstructError(NOTHING_KEPT.format(
            grids="the paper's 100 x 100 and coarser ones down to 2 x 2" if config.grid is None
            else f"{config.grid} x {config.grid}", zero_bin=(
                "" if getattr(config, "zero_bin", False) else
                "--zero-bin (blind ties, e.g. equal lengths, kept whole instead of traded "
                "against small positive gaps), ")))
    return st.survivors
