"""Write a side-by-side comparison's report (SugarCrepe App. E.2, Table 9's layout).

``compare_report.json`` (the full report), ``compare_report.md`` (Table 9's rows: per type and
criterion, the counts first-better / tie / second-better, each rate with its Wilson 95%
interval, and the net), and ``compare_decisions.parquet`` (the whole log, undos included),
all in the comparison's folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from foilbench.display import safe_text
from foilbench.review.compare import CRITERIA, DB_NAME, CompareStore, summarize

REPORT_JSON = "compare_report.json"
REPORT_MD = "compare_report.md"
DECISIONS_FILE = "compare_decisions.parquet"


def _rate(r: dict) -> str:
    if r["rate"] is None:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"


def report_rows(report: dict) -> list[tuple]:
    """(type, criterion, decided, pending, a, tie, b, a rate, tie rate, b rate, net) rows."""
    rows = []
    for family, e in [*report["by_family"].items(), ("all", report["overall"])]:
        for c in CRITERIA:
            x = e[c]
            net = "-" if x["net"] is None else f"{100 * x['net']:+.1f} pts"
            rows.append((family, c, x["decided"], e["pending"], x["counts"]["a"],
                         x["counts"]["tie"], x["counts"]["b"], _rate(x["a_better"]),
                         _rate(x["tie"]), _rate(x["b_better"]), net))
    return rows


def report_markdown(report: dict) -> str:
    a, b = (safe_text(report[k]).replace("|", "\\|") for k in ("a", "b"))
    head = ("type", "criterion", "decided", "pending", f"{a} better", "tie", f"{b} better",
            f"{a} better rate", "tie rate", f"{b} better rate", f"net ({b} - {a})")
    lines = [f"# Hard-negative quality: {a} vs {b} (SugarCrepe App. E.2)", "",
             "Each pair shows one negative of each benchmark (random left/right, benchmark "
             "names hidden); a person answers, for commonsense and for grammatical "
             "correctness, which negative is better or tie. Rates are over decided pairs "
             "with Wilson 95% intervals; ties are their own answer; pending pairs are not "
             f"counted. Net = ({b} better - {a} better) / decided, the paper's \"N% more "
             "sensical\".", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in report_rows(report)]
    m = report["overall"]["matches"]
    lines += ["", f"Pairs matched by shared positive: {m['positive']}, by shared image: "
              f"{m['image']}, sampled within the type: {m['sampled']} "
              f"(up to {report['n_per_family']} per type, seed {report['seed']})."]
    return "\n".join(lines) + "\n"


def export_compare(out_dir: str | Path) -> dict:
    """Write the report files into the comparison's folder; returns the report."""
    folder = Path(out_dir)
    store = CompareStore(folder / DB_NAME, read_only=True)
    try:
        report = summarize(store.pairs(), store.current(), store.meta())
        events = store.events()
    finally:
        store.close()
    (folder / REPORT_JSON).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    (folder / REPORT_MD).write_text(report_markdown(report))
    log = pd.DataFrame(events, columns=["seq", "pair_id", "commonsense", "grammar",
                                        "reverts", "created"])
    log["reverts"] = log["reverts"].astype("Int64")
    log.to_parquet(folder / DECISIONS_FILE, index=False)
    return report
