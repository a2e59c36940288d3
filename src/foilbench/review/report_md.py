"""The QC report as Markdown: the tables a paper's QC appendix would print."""

from __future__ import annotations

from foilbench.review.construction import construction_markdown
from foilbench.review.rubric import PHASES


def pct(r: dict) -> str:
    """``12.5% (3/24) [4.3, 31.0]`` or ``-`` when nothing was decided."""
    if r["rate"] is None:
        return "-"
    return (f"{100 * r['rate']:.1f}% ({r['k']}/{r['n']}) "
            f"[{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]")


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: dict) -> str:
    phases = report["phases"]
    overall = report["overall"]
    parts = [
        f"# QC report: {report['benchmark']}",
        "",
        f"Source: `{report['source']}` ({report['source_checksum'] or 'no checksum'}); "
        f"written {report['created']}; review "
        + ("complete." if report["complete"] else
           f"**unfinished** (pending: {report['pending']})."),
        "",
        f"Kept {overall['kept']} of {overall['instances']} instances; overall discard rate "
        f"{pct(overall['discard'])} (base invalidations included). Instance-review (phase 2) "
        f"discard rate {pct(phases['instance']['discard'])}; for reference, "
        f"{report['paper_reference']['text']}.",
        "",
        "Rates are rejects over decided units with Wilson 95% intervals in brackets; a reject "
        "may name several criteria, so criterion rates can sum above the phase rate.",
        "",
        *construction_markdown(report.get("construction"), report.get("construction_files", []),
                               overall["instances"], overall["kept"]),
        "## Phases",
        "",
        _table(["phase", "units", "accepted", "rejected", "invalidated", "pending",
                "discard rate"],
               [[p.title, phases[p.key]["units"], phases[p.key]["accept"],
                 phases[p.key]["reject"], phases[p.key]["invalidated"],
                 phases[p.key]["pending"] + phases[p.key]["waiting"],
                 pct(phases[p.key]["discard"])] for p in PHASES]),
        "",
        "## Discard rate per criterion",
        "",
        _table(["phase", "criterion", "rate"],
               [[p.title, f"{c.key}: {c.question}", pct(phases[p.key]["by_criterion"][c.key])]
                for p in PHASES for c in p.criteria]),
        "",
        "## Per edit type",
        "",
    ]
    rows = []
    for et, s in sorted(report["by_edit_type"].items(),
                        key=lambda kv: -(kv[1]["instance_discard"]["rate"] or 0)):
        rows.append([et, s["instances"], s["kept"], s["invalidated"],
                     pct(s["instance_discard"]), pct(s["verbosity_discard"]),
                     pct(s["overall_discard"])])
    parts.append(_table(["edit type", "instances", "kept", "invalidated", "instance discard",
                         "verbosity discard", "overall discard"], rows))
    crit = PHASES[1].criteria
    parts += ["", "## Instance-review criteria per edit type", "",
              _table(["edit type", *[c.key for c in crit]],
                     [[et, *[pct(s["instance_by_criterion"][c.key]) for c in crit]]
                      for et, s in sorted(report["by_edit_type"].items())]), ""]
    return "\n".join(parts)
