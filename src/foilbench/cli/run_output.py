"""What ``foilbench run`` and ``sweep`` print: progress lines, the run tables (one per
benchmark, reference rows last, each row with its n and unit of n; on a tiered pair benchmark
also its primary metric per tier) and, for Auto-Comp runs, r1 beside r1_valid."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from foilbench.display import safe_markup, safe_message, safe_text
from foilbench.runner.log import Log
from foilbench.runner.summary import overall_metrics, tier_metrics
from foilbench.stats.units import LABELS

TIER_ORDER = ("short", "medium", "long")  # CompoSET's verbosity tiers, shortest first
_PREFIX = {"warning": "[yellow]warning[/yellow]: ", "error": "[red]failed[/red] "}


def console_log(console: Console) -> Log:
    """The runner's ``log`` for the CLI: messages on ``console``, warnings and failed cells
    marked in colour."""
    def log(level: str, message: str) -> None:
        if level == "debug":
            return
        console.print(_PREFIX.get(level, "") + escape(safe_message(message)), highlight=False)

    return log


def pct(x: Any) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}"


def ci_text(row: dict[str, Any]) -> str:
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return "-"
    return f"[{pct(row['ci_low'])}, {pct(row['ci_high'])}]"


def unit_caption(units: set) -> str:
    """'unit of n: instance = per instance, tier mean (n = instances); ...' for the units
    shown (a row without one is 'items')."""
    named = {"not recorded": "stored before units were recorded: pooled on a tiered pair "
                             "benchmark, items otherwise", **LABELS}
    return "unit of n: " + "; ".join(f"{u} = {named.get(u, u)}" for u in sorted(units))


def print_tables(console: Console, records: list, reference: dict[str, dict]) -> None:
    """Metric, value, 95% CI, n, unit of n, chance and ties for every run, grouped by
    benchmark (in %); then, on a tiered pair benchmark, its primary metric per tier."""
    by_bench: dict[str, list] = {}
    for rec in records:
        by_bench.setdefault(rec.result.benchmark.name, []).append(rec)
    for name, recs in by_bench.items():
        bench = recs[0].result.benchmark
        title = (f"{safe_markup(name)} ({bench.kind}, {len(bench)} items"
                 f"{', PARTIAL' if bench.dropped else ''})")
        table = Table(title=title, title_justify="left", highlight=False)
        for col, justify in (("model", "left"), ("metric", "left"), ("value %", "right"),
                             ("95% CI", "right"), ("n", "right"), ("unit", "left"),
                             ("chance %", "right"), ("ties", "right")):
            table.add_column(col, justify=justify)
        methods: set[str] = set()
        units: set[str] = set()
        for rec in recs:
            for metric, row in overall_metrics(rec.metrics).items():
                unit = row.get("unit") or "items"
                table.add_row(safe_markup(rec.result.model.spec), metric, pct(row["value"]), ci_text(row),
                              str(row["n"]), unit, pct(row["chance"]), str(row["ties"]))
                methods.add(row["ci_method"])
                units.add(unit)
        ref = reference.get(name, {})
        for metric, chance in ref.get("chance", {}).items():
            table.add_row("chance", metric, pct(chance), "-", "-", "-", pct(chance), "-",
                          style="dim")
        blind_unit = "pooled" if units - {"items"} else "items"  # the audit scores items
        for metric, row in (ref.get("blind") or {}).items():
            units.add(blind_unit)
            row = row if isinstance(row, dict) else {"value": row}
            scorer = row.get("scorer") or row.get("name") or "text-only"
            value = row.get("value", row.get("accuracy"))
            table.add_row(f"blind: {safe_markup(scorer)}", metric, pct(value), ci_text(row),
                          str(row.get("n", "-")), blind_unit, pct(row.get("chance")),
                          str(row.get("ties", "-")), style="dim")
        table.caption = (f"CI: {', '.join(sorted(methods))}; ties count as failures (strict "
                         f">); {unit_caption(units)}")
        table.caption_justify = "left"
        console.print(table)
        print_tiers(console, name, recs)


def print_tiers(console: Console, name: str, recs: list) -> None:
    """The primary metric per tier (CompoSET Table 10's unit: n = the tier's instances) of
    the runs whose tier rows are per tier (tiered pair benchmarks); nothing otherwise."""
    rows = []
    for rec in recs:
        metric = rec.result.benchmark.manifest.primary_metric
        m = rec.metrics
        if "unit" not in m.columns or not (m["unit"] == "per_tier").any():
            continue
        by_tier = tier_metrics(m).get(metric, {})
        for tier in sorted(by_tier, key=lambda t: (TIER_ORDER.index(t) if t in TIER_ORDER
                                                   else len(TIER_ORDER), t)):
            rows.append((rec.result.model.spec, metric, tier, by_tier[tier]))
    if not rows:
        return
    table = Table(title=f"{safe_markup(name)} per tier", title_justify="left", highlight=False)
    for col in ("model", "metric", "tier", "value %", "95% CI", "n", "chance %", "ties"):
        table.add_column(col, justify="left" if col in ("model", "metric", "tier") else "right")
    for spec, metric, tier, row in rows:
        table.add_row(safe_markup(spec), metric, safe_markup(tier), pct(row["value"]), ci_text(row), str(row["n"]),
                      pct(row["chance"]), str(row["ties"]))
    table.caption = (f"CI: {', '.join(sorted({r[3]['ci_method'] for r in rows}))}; "
                     f"{unit_caption({'per_tier'})}")
    table.caption_justify = "left"
    console.print(table)


def print_autocomp(records: list, blocks: dict[str, dict]) -> None:
    """Auto-Comp r1 vs r1_valid for every model side by side, and the affected item counts
    (``blocks``: the summary's ``autocomp`` block per run id)."""
    if not blocks:
        return
    from foilbench.analysis.autocomp_valid import batch_markdown

    click.echo("\nAuto-Comp: r1 (the paper's, all candidates) vs r1_valid (primary *, false "
               "negatives only); chance = mean per-item 1/(K+1), paper_chance = the closed "
               "form (per-cell tables in summary.json and the report):")
    click.echo(batch_markdown([r.result for r in records]))
    seen: dict[str, dict] = {}
    for block in blocks.values():
        seen.setdefault(block["benchmark"], block)
    for name, block in seen.items():
        click.echo(f"{safe_text(name)}: {block['items_with_true_negative']} of {block['n_items']} items "
                   "hold a true negative")
