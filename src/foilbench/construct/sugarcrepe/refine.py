"""``sugarcrepe`` stage 3: the blind audit and adversarial refinement (SugarCrepe Alg. 1).

SugarCrepe §4.1, Stage 3 and App. D.3: for two text-only models M1, M2 the score gaps
g = M(p) - M(n) are binned on a grid, and "for each pair of symmetric grids ... we preserve the
same number of data for both grids, therefore we ensure that for the resultant set,
E_i[M_1(p_i) > M_1(n_i)] = 0.5 and E_i[M_2(p_i) > M_2(n_i)] = 0.5." This reuses the existing
audit: cross-fitted gaps (:func:`foilbench.audit.blind.oriented_gaps`, grouped by image) and
:func:`foilbench.audit.refinement.refine`, one grid per negative type as in
``foilbench audit refine``. With fewer than two images in a type there is nothing to cross-fit:
its items pass unrefined and the stage records why.
"""

from __future__ import annotations

import numpy as np

from foilbench.construct.engine.log import Candidate
from foilbench.construct.engine.stages import Context


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
            res = refine(gaps_a[idx], gaps_b[idx], config.grid, config.seed,
                         zero_bin=getattr(config, "zero_bin", False))
            kept = set(idx[res.kept].tolist())
            report[t] = {"n": len(idx), "kept": len(kept), "before": res.before,
                         "after": res.after}
            for i in idx:
                verdict = {"gap_" + a: float(gaps_a[i]), "gap_" + b: float(gaps_b[i])}
                if i in kept:
                    st.passed(cands[i], verdicts=verdict)
                else:
                    st.drop(cands[i], "adversarial refinement (Alg. 1)", verdicts=verdict)
        ctx.notes["refinement"] = {"scorers": [a, b], "folds": folds, "grid": config.grid,
                                   "zero_bin": bool(getattr(config, "zero_bin", False)),
                                   "by_type": report}
        ctx.log.write({"event": "refinement", "stage": st.name, **ctx.notes["refinement"]})
    return st.survivors
