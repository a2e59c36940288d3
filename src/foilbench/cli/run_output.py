"""What ``foilbench run`` and ``sweep`` print: progress lines, the run tables (one per
benchmark, reference rows last) and, for Auto-Comp runs, r1 beside r1_valid."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from foilbench.runner.log import Log
from foilbench.runner.summary import overall_metrics

_PREFIX = {"warning": "[yellow]warning[/yellow]: ", "error": "[red]failed[/red] "}


def console_log(console: Console) -> Log:
    """The runner's ``log`` for the CLI: messages on ``console``, warnings and failed cells
    marked in colour."""
    def log(level: str, message: str) -> None:
        if level == "debug":
            return
        console.print(_PREFIX.get(level, "") + escape(message))

    return log


def pct(x: Any) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}"


def ci_text(row: dict[str, Any]) -> str:
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return "-"
    return f"[{pct(row['ci_low'])}, {pct(row['ci_high'])}]"


def print_tables(console: Console, records: list, reference: dict[str, dict]) -> None:
    """Metric, value, 95% CI, chance and ties for every run, grouped by benchmark (in %)."""
    by_bench: dict[str, list] = {}
    for rec in records:
        by_bench.setdefault(rec.result.benchmark.name, []).append(rec)
    for name, recs in by_bench.items():
        bench = recs[0].result.benchmark
        title = f"{name} ({bench.kind}, {len(bench)} items{', PARTIAL' if bench.dropped else ''})"
        table = Table(title=title, title_justify="left")
        for col, justify in (("model", "left"), ("metric", "left"), ("value %", "right"),
                             ("95% CI", "right"), ("chance %", "right"), ("ties", "right")):
            table.add_column(col, justify=justify)
        methods: set[str] = set()
        for rec in recs:
            for metric, row in overall_metrics(rec.metrics).items():
                table.add_row(rec.result.model.spec, metric, pct(row["value"]), ci_text(row),
                              pct(row["chance"]), str(row["ties"]))
                methods.add(row["ci_method"])
        ref = reference.get(name, {})
        for metric, chance in ref.get("chance", {}).items():
            table.add_row("chance", metric, pct(chance), "-", pct(chance), "-", style="dim")
        for metric, row in (ref.get("blind") or {}).items():
            row = row if isinstance(row, dict) else {"value": row}
            scorer = row.get("scorer") or row.get("name") or "text-only"
            value = row.get("value", row.get("accuracy"))
            table.add_row(f"blind: {scorer}", metric, pct(value), ci_text(row),
                          pct(row.get("chance")),
                          str(row.get("ties", "-")), style="dim")
        table.caption = f"CI: {', '.join(sorted(methods))}; ties count as failures (strict >)"
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
        click.echo(f"{name}: {block['items_with_true_negative']} of {block['n_items']} items "
                   "hold a true negative")
