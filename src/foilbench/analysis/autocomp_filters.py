"""Auto-Comp filter analyses from a construction log: survival per validation stage in the
Minimal and Contextual tracks (Table 3, and the shift between them), and the filter-induced
distribution shift of labels and objects (Table 4, Table 16).

Auto-Comp §4: "The validation survival rates (Table 3) expose where generators fail most: the
Object Presence Check filters many samples, the Background Check further purifies the Minimal
set, and the largest drop typically occurs at the final Attribute/Relation Correctness Check
[...] Table 4 reports a summary of filter-induced distribution shift on the hardest N=3
setting, averaged over Minimal and Contextual." Table 16 rows: "Label-TV from target prior",
"Object-TV from target prior", "% labels within 0.5-1.5x target", "% labels below 0.25x
target", and the same two for objects.

Input: ``construction_log.jsonl`` of ``foilbench construct autocomp``
(:mod:`foilbench.construct.engine.log`): each concept's ``created`` event carries its task,
objects and values; it is expanded into one track per condition (``<concept>-minimal``,
``<concept>-contextual``), and every track ends ``kept`` or ``dropped`` at a named stage
(stage names end in ``[minimal]`` / ``[contextual]``). A track entered every stage of its
condition up to the one that dropped it (stage order: first appearance in the log).

* survival: per (task, N, stage): tracks in, out and out/in per condition, and the shift
  Contextual - Minimal (NaN where a stage runs in one track only, e.g. the background check).
  The text does not define Table 3's "survival rate"; we read it per stage (out / in: of the
  tracks that reached the stage, the share it passed, so "the largest drop" is a stage's own),
  not cumulatively (out / created);
* filter shift: per (task, N, condition), p_target(l) the share of label l among the values of
  every created concept of that (task, N) (what the sampler asked for: our reading of "target
  prior", which the text does not define; ``target="uniform"`` takes the uniform prior over the
  labels asked for instead), p_final(l) its share among the kept tracks; TV = 1/2 sum_l
  |p_final(l) - p_target(l)|, and the share of labels with p_final / p_target in [0.5, 1.5]
  (ends included) and strictly below 0.25 (NaN when nothing was kept). Objects the same way. Table 4 averages Minimal and
  Contextual: ``mean`` rows (over the conditions that kept something).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

CONDITIONS = ("minimal", "contextual")


def read_records(path: str | Path) -> list[dict]:
    """The log's records (a folder holding ``construction_log.jsonl``, or the file)."""
    import json

    p = Path(path)
    if p.is_dir():
        p = p / "construction_log.jsonl"
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no construction log (written by foilbench construct)")
    out = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{p}:{n}: not a JSON line ({e})") from None
    return out


def _split_stage(stage: str) -> tuple[str, str | None]:
    for c in CONDITIONS:
        if stage.endswith(f" [{c}]"):
            return stage[: -len(c) - 3], c
    return stage, None


def tracks(records: list[dict]) -> tuple[pd.DataFrame, list[str], pd.DataFrame]:
    """(one row per track: concept, task, n, condition, outcome, drop stage and reason;
    the track stages in order; one row per created concept)."""
    concepts, order, rows = {}, [], {}
    for r in records:
        stage = r.get("stage", "")
        if stage and _split_stage(stage)[1] and stage not in order:
            order.append(stage)
        if r.get("event") == "created" and r.get("kind") == "concept":
            inputs = r.get("inputs") or {}
            concepts[r["item"]] = {"concept": r["item"], "task": inputs.get("task"),
                                   "n": len(inputs.get("objects") or []),
                                   "objects": list(inputs.get("objects") or []),
                                   "values": list(inputs.get("values") or [])}
        elif r.get("event") == "created" and r.get("kind") == "track":
            cond = next((c for c in CONDITIONS if r["item"].endswith(f"-{c}")), None)
            rows[r["item"]] = {"track": r["item"], "concept": r.get("parent"), "condition": cond,
                               "outcome": None, "stage": None, "reason": None}
        elif r.get("event") == "outcome" and r.get("kind") == "track" and r["item"] in rows:
            rows[r["item"]].update(outcome=r.get("outcome"), stage=r.get("stage"),
                                   reason=r.get("reason"))
    if not concepts or not rows:
        raise ValueError("the log holds no Auto-Comp concepts and tracks (is it from "
                         "foilbench construct autocomp?)")
    table = pd.DataFrame(rows.values())
    concept_table = pd.DataFrame(concepts.values())
    table = table.merge(concept_table, on="concept", how="left")
    open_ = table[table["outcome"].isna()]
    if len(open_):
        raise ValueError(f"track {open_['track'].iloc[0]} has no outcome: the log is incomplete "
                         "(an interrupted run?)")
    return table, order, concept_table


def survival_by_condition(records: list[dict]) -> pd.DataFrame:
    """Per (task, N, stage): in, out, survival per condition and the Contextual - Minimal
    shift (see the module docstring)."""
    table, order, _ = tracks(records)
    rows = []
    for (task, n), sub in table.groupby(["task", "n"], sort=True):
        bases = list(dict.fromkeys(_split_stage(s)[0] for s in order))
        for base in bases:
            row = {"task": task, "n": int(n), "stage": base}
            for cond in CONDITIONS:
                stage = f"{base} [{cond}]"
                if stage not in order:
                    row |= {f"{cond}_in": 0, f"{cond}_out": 0, f"{cond}_survival": np.nan}
                    continue
                pos = order.index(stage)
                tr = sub[sub["condition"] == cond]
                dropped_at = tr["stage"].map(lambda s: order.index(s) if s in order else
                                             len(order))
                dropped = tr["outcome"] == "dropped"
                entered = int((~dropped | (dropped_at >= pos)).sum())
                out = entered - int((dropped & (dropped_at == pos)).sum())
                row |= {f"{cond}_in": entered, f"{cond}_out": out,
                        f"{cond}_survival": out / entered if entered else np.nan}
            row["shift"] = row["contextual_survival"] - row["minimal_survival"]
            rows.append(row)
    return pd.DataFrame(rows)


def _shift_stats(target: Counter, final: Counter, prefix: str) -> dict:
    labels = sorted(target)
    f_total = sum(final.values())
    if f_total == 0:  # nothing kept: no distribution to compare
        return {f"{prefix}_tv": float("nan"), f"{prefix}_within_0.5_1.5": float("nan"),
                f"{prefix}_below_0.25": float("nan"), f"n_{prefix}s": len(labels)}
    t = np.array([target[k] for k in labels], float)
    t = t / t.sum()
    f = np.array([final.get(k, 0) for k in labels], float) / (f_total or 1)
    extra = sum(v for k, v in final.items() if k not in target) / (f_total or 1)
    ratio = f / t
    return {f"{prefix}_tv": float(0.5 * (np.abs(f - t).sum() + extra)),
            f"{prefix}_within_0.5_1.5": float(np.mean((ratio >= 0.5) & (ratio <= 1.5))),
            f"{prefix}_below_0.25": float(np.mean(ratio < 0.25)), f"n_{prefix}s": len(labels)}


def filter_shift(records: list[dict], target: str = "created") -> pd.DataFrame:
    """Per (task, N, condition) and a ``mean`` row per (task, N): label and object TV from the
    target prior and the ratio bands (see the module docstring)."""
    if target not in ("created", "uniform"):
        raise ValueError(f"target must be 'created' or 'uniform', got {target!r}")
    table, _, concepts = tracks(records)
    rows = []
    for (task, n), csub in concepts.groupby(["task", "n"], sort=True):
        asked_l = Counter(v for vs in csub["values"] for v in vs)
        asked_o = Counter(o for os_ in csub["objects"] for o in os_)
        if target == "uniform":
            asked_l, asked_o = Counter(dict.fromkeys(asked_l, 1)), Counter(dict.fromkeys(asked_o, 1))
        cell = []
        for cond in CONDITIONS:
            kept = table[(table["task"] == task) & (table["n"] == n)
                         & (table["condition"] == cond) & (table["outcome"] == "kept")]
            row = {"task": task, "n": int(n), "condition": cond, "kept": len(kept),
                   "created": len(csub)}
            row |= _shift_stats(asked_l, Counter(v for vs in kept["values"] for v in vs), "label")
            row |= _shift_stats(asked_o, Counter(o for os_ in kept["objects"] for o in os_),
                                "object")
            cell.append(row)
        rows.extend(cell)
        mean = {k: float(np.nanmean([r[k] for r in cell])) if any(np.isfinite(r[k]) for r
                                                                       in cell) else np.nan
                for k in cell[0]
                if k.endswith(("_tv", "_1.5", "_0.25"))}
        rows.append({"task": task, "n": int(n), "condition": "mean",
                     "kept": sum(r["kept"] for r in cell), "created": len(csub), **mean,
                     "n_labels": cell[0]["n_labels"], "n_objects": cell[0]["n_objects"]})
    return pd.DataFrame(rows)
