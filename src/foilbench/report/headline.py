"""The report's headline: per benchmark, each model's primary metric against that benchmark's
chance with its 95% interval (one figure), and one sentence per benchmark generated from the
numbers: which models are above chance, which are not, and which model is better by a paired
test on the same items or instances, at the unit the row counts
(:mod:`foilbench.analysis.paired`; :func:`foilbench.stats.bootstrap.paired_delta_ci`, scenes
resampled jointly for both models, as CompoSET's clustered intervals are).

"Above chance" means the whole 95% interval lies above the chance level; "below" the whole
interval below it; otherwise the result is not distinguishable from chance. A model is called
better than another only when the paired 95% interval of the difference excludes 0 and, for a
clustered test, rests on at least 30 scenes (below that the scene bootstrap covers less than
95%: :mod:`foilbench.stats.few_clusters`). CompoSET has no paired model-vs-model test; this one
is our choice, built on its scene-clustered bootstrap (App. C).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import combinations

import pandas as pd

from foilbench.stats.bootstrap import paired_delta_ci
from foilbench.stats.few_clusters import MIN_BOOTSTRAP_CLUSTERS


def primary_metric(run) -> str:
    """The metric a run's benchmark leads with (stored in the run's config when the runner
    recorded it; else r1_valid where items list true negatives, else the kind's default)."""
    from foilbench.data.kinds import KINDS

    stated = (run.run.get("config") or {}).get("primary_metric")
    if stated:
        return stated
    if "r1_valid" in set(run.metrics["metric"]):
        return "r1_valid"
    return KINDS[run.run["benchmark_kind"]].default_metric


def model_labels(runs) -> dict[str, str]:
    """run_id -> model label, made unique per benchmark (a model run twice gets its id)."""
    seen: dict[tuple[str, str], int] = {}
    for r in runs:
        key = (r.run["benchmark_checksum"], r.run["model_spec"])
        seen[key] = seen.get(key, 0) + 1
    return {r.run["run_id"]: r.run["model_spec"] if seen[(r.run["benchmark_checksum"],
                                                           r.run["model_spec"])] == 1
            else f"{r.run['model_spec']} ({r.run['run_id'][:8]})" for r in runs}


def by_benchmark(runs) -> dict[str, list]:
    """Runs grouped by benchmark checksum (the same items), in first-seen order."""
    out: dict[str, list] = {}
    for r in runs:
        out.setdefault(r.run["benchmark_checksum"], []).append(r)
    return out


def benchmark_frames(runs, frame) -> Iterator[tuple[str, pd.DataFrame]]:
    """``(benchmark name, frame(runs, labels))`` per benchmark, leaving out those whose runs
    ``frame`` cannot stack (it returns None): how a section with one table per benchmark
    (relations, robustness) finds its tables; ``labels`` are :func:`model_labels`."""
    labels = model_labels(runs)
    for group in by_benchmark(runs).values():
        df = frame(group, labels)
        if df is not None:
            yield group[0].run["benchmark_name"], df


def primary_rows(runs) -> pd.DataFrame:
    """One row per run: benchmark, metric, model, value, ci_low, ci_high, chance, n, ties,
    ci_method of the primary metric, overall."""
    labels = model_labels(runs)
    rows = []
    for group in by_benchmark(runs).values():
        for r in group:
            metric = primary_metric(r)
            m = r.metrics
            hit = m[(m["metric"] == metric) & ((m["group_by"] == "") | m["group_by"].isna())]
            if hit.empty:
                continue
            row = hit.iloc[0]
            name = r.run["benchmark_name"] + (" (partial)" if r.run.get("partial") else "")
            rows.append({"benchmark": name, "checksum": r.run["benchmark_checksum"],
                         "metric": metric, "model": labels[r.run["run_id"]],
                         "run_id": r.run["run_id"], **{k: row[k] for k in (
                             "value", "ci_low", "ci_high", "chance", "n", "ties",
                             "ci_method")}})
    return pd.DataFrame(rows)


def paired_differences(runs, metric: str, n_boot: int | None = None) -> pd.DataFrame:
    """Every pair (A, B) of runs on one benchmark: mean(A) - mean(B) of ``metric`` at the unit
    its overall row counts (items, or CompoSET instances with each instance's tier mean:
    :mod:`foilbench.analysis.paired`) on what both runs scored, the paired 95% interval
    (scenes resampled jointly when items carry ``scene_id``) and its two-sided bootstrap
    p-value; ``unit`` names the unit and ``n`` counts it. Empty when fewer than two runs."""
    from foilbench.analysis.paired import overall_unit, paired_outcomes

    labels = model_labels(runs)
    rows = []
    for a, b in combinations(runs, 2):  # in the order given (`report A B`: A - B)
        unit = overall_unit(a.metrics, a.items, metric)
        if unit is None or unit != overall_unit(b.metrics, b.items, metric):
            continue  # the two rows count different things: no paired test of one quantity
        pair = paired_outcomes(a.items, b.items, metric, unit)
        if pair is None:
            continue
        boot = int(n_boot or a.run.get("n_boot") or 10_000)
        seed = int(a.run.get("seed") or 0)
        res = paired_delta_ci(pair.a, pair.b, pair.clusters, n_boot=boot, seed=seed)
        clustered = pair.clusters is not None
        rows.append({"a": labels[a.run["run_id"]], "b": labels[b.run["run_id"]],
                     "benchmark": a.run["benchmark_name"], "metric": metric,
                     "clustered": clustered, "unit": pair.unit,
                     "n_clusters": len(set(pair.clusters)) if clustered else 0, **res})
    return pd.DataFrame(rows)


def pp(x: float) -> str:
    """A difference in percentage points, signed, one decimal; two when one decimal would
    print a non-zero bound as +0.0 (an interval that excludes 0 must not read as touching it).

    >>> pp(0.123), pp(0.0004), pp(-0.0004), pp(0.0)
    ('+12.3', '+0.04', '-0.04', '+0.0')
    """
    v = 100 * float(x)
    return f"{v:+.2f}" if v != 0 and round(v, 1) == 0 else f"{v:+.1f}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def sentence(rows: pd.DataFrame, deltas: pd.DataFrame) -> str:
    """One plain sentence about one benchmark from its primary rows and paired differences."""
    first = rows.iloc[0]
    chance = float(first["chance"])
    above = rows[rows["ci_low"] > chance]["model"].tolist()
    below = rows[rows["ci_high"] < chance]["model"].tolist()
    at = [m for m in rows["model"] if m not in above and m not in below]
    parts = [f"{first['benchmark']} ({first['metric']}, chance {_pct(chance)}%):"]
    groups = [("above chance", above), ("not distinguishable from chance", at),
              ("below chance", below)]
    if len(rows) == 1:
        verdict = next(what for what, ms in groups if ms)
        said = [f"{first['model']} scores {_pct(first['value'])}% [{_pct(first['ci_low'])}, "
                f"{_pct(first['ci_high'])}], {verdict}"]
    else:
        said = [f"{_names(ms)} {'is' if len(ms) == 1 else 'are'} {what}"
                for what, ms in groups if ms]
    parts.append("; ".join(said) + ".")
    if not deltas.empty:
        parts.append(_comparison(rows, deltas))
    return " ".join(parts)


def _comparison(rows: pd.DataFrame, deltas: pd.DataFrame) -> str:
    best = rows.sort_values("value", ascending=False).iloc[0]["model"]
    beats, ties = [], []
    for _, d in deltas.iterrows():
        if best not in (d["a"], d["b"]):
            continue
        other = d["b"] if d["a"] == best else d["a"]
        sign = 1.0 if d["a"] == best else -1.0
        lo, hi = sorted((sign * d["ci_low"], sign * d["ci_high"]))
        text = f"{other} ({pp(sign * d['delta'])} pp [{pp(lo)}, {pp(hi)}])"
        # with few scenes the clustered bootstrap is too narrow (stats/few_clusters.py): no
        # model is called better on it
        scenes = d.get("n_clusters")
        few = bool(d["clustered"]) and scenes is not None and scenes < MIN_BOOTSTRAP_CLUSTERS
        (beats if lo > 0 and not few else ties).append(text)
    how = "paired bootstrap over scenes" if deltas["clustered"].all() else "paired bootstrap"
    if "n" in deltas:
        how += f" on {_unit_words(deltas)}"
    if "n_clusters" in deltas and (deltas["clustered"]
                                   & (deltas["n_clusters"] < MIN_BOOTSTRAP_CLUSTERS)).any():
        how += f"; fewer than {MIN_BOOTSTRAP_CLUSTERS} scenes: too few to call a model better"
    out = []
    if beats:
        out.append(f"{best} is better than {_names(beats)}")
    if ties:
        lead = f"{best} is not reliably better than" if beats else \
            f"No model is reliably better than another: {best} (highest) vs"
        out.append(f"{lead} {_names(ties)}")
    return "; ".join(out) + f" ({how}, 95% interval of the difference)."


def _unit_words(deltas: pd.DataFrame) -> str:
    """'1280 instances (tier mean)' or '96 items': what the paired test counts."""
    from foilbench.analysis.paired import UNIT_WORDS

    unit = str(deltas["unit"].iloc[0]) if "unit" in deltas else "items"
    return f"{int(deltas['n'].max())} {UNIT_WORDS.get(unit, unit)}"


def _names(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def headline_parts(runs) -> tuple[pd.DataFrame, list[str], pd.DataFrame]:
    """(primary rows, one sentence per benchmark, all paired differences)."""
    prim = primary_rows(runs)
    if prim.empty:
        return prim, [], pd.DataFrame()
    groups = by_benchmark(runs)
    texts, all_deltas = [], []
    for checksum, rows in prim.groupby("checksum", sort=False):
        metric = rows["metric"].iloc[0]
        deltas = paired_differences(groups[checksum], metric)
        if not deltas.empty:
            all_deltas.append(deltas)
        if rows["metric"].nunique() == 1 and math.isfinite(float(rows["chance"].iloc[0])):
            texts.append(sentence(rows.reset_index(drop=True), deltas))
    deltas = pd.concat(all_deltas, ignore_index=True) if all_deltas else pd.DataFrame()
    return prim, texts, deltas

