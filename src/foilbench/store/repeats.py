"""Repeats: stored runs of the same (model fingerprint, benchmark checksum, settings).

``run`` and ``sweep`` reuse an identical stored run instead of storing it again
(:mod:`foilbench.runner.reuse`), but a store can still hold repeats: ``run --rerun``, two runs
started at once, stores written before reuse. Views (``show``, the report, ``serve``) show one
run per key, the latest (the one ``find_run`` reuses), and say how many repeats they left
out; a run is never compared with its own repeat. The key is the one reuse checks:
``config_hash`` (the scoring settings); a row stored without one falls back to the settings
columns themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

KEY_COLUMNS = ("model_fingerprint", "benchmark_checksum", "config_hash")
FALLBACK_SETTINGS = ("seed", "n_boot", "ci_method", "tie_policy")


def run_key(run: Mapping[str, Any]) -> tuple:
    """What makes two runs the same run: model fingerprint, benchmark checksum, settings."""
    settings = run.get("config_hash")
    if not isinstance(settings, str) or not settings:
        settings = tuple(str(run.get(c)) for c in FALLBACK_SETTINGS) + (str(run.get("config")),)
    return (run.get("model_fingerprint"), run.get("benchmark_checksum"), settings)


def split_repeats(runs: Iterable[Mapping[str, Any]]) -> tuple[list[str], dict[str, list[str]]]:
    """(run ids to show, in first-seen order of their key; shown id -> the repeats it stands
    for). Of each key the latest ``created`` is shown (ties: the larger run id)."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for r in runs:
        groups.setdefault(run_key(r), []).append(r)
    shown, hidden = [], {}
    for group in groups.values():
        latest = max(group, key=lambda r: (str(r.get("created")), str(r["run_id"])))
        shown.append(str(latest["run_id"]))
        others = [str(r["run_id"]) for r in group if r is not latest]
        if others:
            hidden[str(latest["run_id"])] = others
    return shown, hidden


def stored_repeats(con: Any) -> tuple[list[str], dict[str, list[str]]]:
    """:func:`split_repeats` over every run in a results store's connection."""
    frame = con.execute("SELECT * EXCLUDE (eval_stats) FROM runs ORDER BY created, run_id").df()
    return split_repeats(frame.to_dict(orient="records"))


def repeats_note(hidden: Mapping[str, list[str]], how: str = "") -> str:
    """'2 repeat(s) of a shown run (same model, benchmark and settings) left out' + how."""
    n = sum(len(v) for v in hidden.values())
    if not n:
        return ""
    return (f"{n} repeat(s) of a shown run (same model fingerprint, benchmark checksum and "
            f"settings) left out{how}")
