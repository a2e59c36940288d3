"""``foilbench review concepts`` and ``review solvability``: Auto-Comp's human studies (§6,
App. A.10) in the terminal. ``review_cmd`` registers the commands; the studies live in
:mod:`foilbench.review.concepts` and :mod:`foilbench.review.solvability`."""

from __future__ import annotations

from foilbench.cli._table import format_table


def _pct(r: dict) -> str:
    """``95.0% [83.5, 98.6]`` or ``-`` when nothing was decided (k/n in their own columns)."""
    if r["rate"] is None:
        return "-"
    return f"{100 * r['rate']:.1f}% [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"


def concepts_lines(rep: dict) -> str:
    """The concordance report as a table (per task x N x condition, then all) and the
    precision of passes and of rejects."""
    def row(name: str, t: dict) -> tuple:
        c = t["confusion"]
        return (name, t["images"], *(f"{c[v]['match']}/{c[v]['mismatch']}/{c[v]['unsure']}"
                                     for v in ("pass", "reject")),
                t["pending"], t["agreement"]["n"], _pct(t["agreement"]))

    rows = [row(g, t) for g, t in rep["by_group"].items()] + [row("all", rep["overall"])]
    o = rep["overall"]
    frame = rep.get("frame") or {}
    lines = [f"sample: {rep['sample']}"]
    if rep.get("design") != "passes-only":
        left = sum((frame.get("left_out") or {}).values())
        lines.append(f"frame: {frame.get('images')} judged images ({frame.get('pass')} passed, "
                     f"{frame.get('reject')} rejected; {left} without a verdict left out)")
    lines += [format_table(("group", "images", "pass m/x/u", "reject m/x/u", "pending",
                            "decided", "agreement [95% Wilson]"), rows),
              f"precision of passes (match / decided passes): {_pct(o['pass_precision'])}",
              f"precision of rejects (mismatch / decided rejects): "
              f"{_pct(o['reject_precision'])}",
              "m/x/u: human match / mismatch / unsure; agreement = (pass & match + reject & "
              "mismatch) / decided; unsure counted apart"]
    return "\n".join(lines)
