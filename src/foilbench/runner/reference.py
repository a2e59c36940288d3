"""Reference rows printed under each benchmark's results: chance, and the blind baseline.

The blind baseline (SugarCrepe section 3: how often a text-only scorer, never seeing the
image, picks the positive caption) depends only on the benchmark, so it is computed once per
(benchmark checksum, audit key) and kept in the results store (table ``blind_reference``);
later runs and the report read it from there. The audit key hashes the audit settings and
its exact inputs (captions, edit types, clusters), so a partial run of a benchmark (items
dropped) does not reuse the full benchmark's row, and a changed scorer version
(:data:`AUDIT_VERSION`) recomputes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pandas as pd

from foilbench.data.format import Benchmark
from foilbench.runner.log import Log
from foilbench.runner.setup import ensure_checksum
from foilbench.runner.summary import overall_metrics
from foilbench.store.db import to_json

AUDIT_VERSION = 1  # bump when a cheap scorer's numbers change, so stored rows are recomputed
FOLDS = 5
AUDIT_SEED = 0


def chance_rows(metrics: pd.DataFrame) -> dict[str, float]:
    """metric -> mean per-item chance (the reference line every table shows)."""
    return {m: float(v["chance"]) for m, v in overall_metrics(metrics).items()}


def audit_key(captions: list[list[str]], types: Any, clusters: Any) -> str:
    """sha256 (first 16 hex) of the audit settings and inputs."""
    from foilbench.audit.scorers import CHEAP_SCORERS

    blob = json.dumps({"version": AUDIT_VERSION, "scorers": list(CHEAP_SCORERS),
                       "folds": FOLDS, "seed": AUDIT_SEED, "captions": captions,
                       "types": [str(t) for t in types], "clusters": [str(c) for c in clusters]},
                      sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def blind_reference(bench: Benchmark, store: Any = None) -> dict[str, dict]:
    """The blind reference row of ``bench`` (``{"r1": STAT + {"scorer"}}``; ``{}`` for kinds
    other than ``choice`` and for benchmarks too small to cross-fit), from ``store`` when it
    holds one, else computed and, with a store, kept there."""
    if not bench.item_kind.has_caption_candidates:
        return {}
    # the audit's code is imported by the kinds that have one (a pair run never needs it)
    from foilbench.audit import blind as audit_blind
    from foilbench.audit.scorers import CHEAP_SCORERS
    from foilbench.audit.text import choice_captions, cluster_labels, edit_types

    captions = choice_captions(bench)
    types, clusters = edit_types(bench), cluster_labels(bench)
    key, checksum = audit_key(captions, types, clusters), ensure_checksum(bench)
    if store is not None:
        stored = store.load_blind_reference(checksum, audit_key=key)
        if stored is not None:
            return stored["reference"]
    try:
        audit = audit_blind.blind_audit_captions(captions, types, clusters, CHEAP_SCORERS,
                                                 FOLDS, AUDIT_SEED)
        reference, note = audit_blind.reference_from_audit(audit), None
    except ValueError as e:  # fewer clusters than folds: too small for a cross-fitted row
        audit, reference, note = None, {}, str(e)
    reference = json.loads(to_json(reference))
    if store is not None:
        store.write_blind_reference(checksum, key, benchmark_name=bench.name,
                                    n_items=len(bench), reference=reference, audit=audit,
                                    note=note)
    return reference


def try_blind_reference(bench: Benchmark, store: Any, log: Log) -> dict[str, dict] | None:
    """:func:`blind_reference`, with a failure logged as a warning and None returned: an
    optional baseline must never lose the runs already stored."""
    try:
        return blind_reference(bench, store)
    except Exception as e:
        log("warning", f"blind baseline skipped on {bench.name}: {e}")
        return None


def benchmark_reference(bench: Benchmark, records: list, store: Any,
                        log: Log) -> dict[str, Any]:
    """Chance per metric (from the stored per-item chance) and the blind baseline if any."""
    mine = [r for r in records if r.result.benchmark is bench]
    ref: dict[str, Any] = {"chance": chance_rows(mine[0].metrics) if mine else {}}
    blind = try_blind_reference(bench, store, log)
    if blind:
        ref["blind"] = blind
    return ref
