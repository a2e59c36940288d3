"""Model vs model, per benchmark: which model is better by a paired bootstrap on the same
items (or CompoSET instances), one verdict per pair, in the forms the report, ``serve`` and
``sweep`` print (:func:`foilbench.report.headline.paired_differences` computes them).

A model is called better only when the paired 95% interval of the difference excludes 0 and,
for a clustered test, rests on at least 30 scenes (below that the scene bootstrap covers less
than 95%: :mod:`foilbench.stats.few_clusters`).
"""

from __future__ import annotations

import pandas as pd

from foilbench.analysis.paired import UNIT_WORDS
from foilbench.stats.few_clusters import MIN_BOOTSTRAP_CLUSTERS

HEADERS = ["benchmark", "A", "B", "A - B (pp)", "95% CI (pp)", "p", "unit (n)", "scenes",
           "verdict"]


def comparisons(runs, n_boot: int | None = None) -> pd.DataFrame:
    """Every pair of runs on the same benchmark (checksum) on its primary metric."""
    from foilbench.report.headline import by_benchmark, paired_differences, primary_metric

    frames = [paired_differences(group, primary_metric(group[0]), n_boot)
              for group in by_benchmark(runs).values() if len(group) > 1]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def few_scenes(d) -> bool:
    scenes = d.get("n_clusters")
    return bool(d.get("clustered")) and scenes is not None and scenes < MIN_BOOTSTRAP_CLUSTERS


def verdict(d) -> str:
    """'A better', 'B better', or why neither is called better."""
    if few_scenes(d):
        return f"too few scenes (< {MIN_BOOTSTRAP_CLUSTERS}) to call"
    if d["ci_low"] > 0:
        return f"{d['a']} better"
    if d["ci_high"] < 0:
        return f"{d['b']} better"
    return "no reliable difference"


def rows(deltas: pd.DataFrame) -> list[list[str]]:
    """One text row per pair, in :data:`HEADERS` order."""
    from foilbench.report.headline import pp

    out = []
    for _, d in deltas.iterrows():
        unit = UNIT_WORDS.get(str(d.get("unit", "items")), str(d.get("unit")))
        out.append([str(d["benchmark"]), str(d["a"]), str(d["b"]), pp(d["delta"]),
                    f"[{pp(d['ci_low'])}, {pp(d['ci_high'])}]",
                    f"{d['p_value']:.3f}", f"{unit} ({int(d['n'])})",
                    str(int(d["n_clusters"])) if d["clustered"] else "none (items)",
                    verdict(d)])
    return out


NOTE = ("Paired bootstrap on the units both runs scored: items, or on a CompoSET-format "
        "benchmark counted per instance each instance's tier mean; scenes resampled jointly "
        "for both models (CompoSET App. C's scene bootstrap, applied to the difference; "
        "CompoSET itself has no paired test). A model is better when the 95% interval of "
        f"A - B excludes 0 on at least {MIN_BOOTSTRAP_CLUSTERS} scenes.")


def markdown(deltas: pd.DataFrame) -> str:
    """The comparisons as a Markdown table with its note ('' when there are none)."""
    if deltas.empty:
        return ""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + " --- |" * len(HEADERS)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows(deltas)]
    return "\n".join(lines) + f"\n\n{NOTE}\n"
