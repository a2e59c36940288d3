"""What ``foilbench run`` and ``sweep`` print: progress lines, the run tables (one per
benchmark, reference rows last, each row with its n and unit of n; on a tiered pair benchmark
also its primary metric per tier) and, for Auto-Comp runs, r1 beside r1_valid."""

from __future__ import annotations

import re
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from foilbench.display import safe_markup, safe_message, safe_text
from foilbench.models.labels import legend, short_labels
from foilbench.runner.log import Log
from foilbench.runner.summary import overall_metrics, tier_metrics
from foilbench.stats.units import LABELS

TIER_ORDER = ("short", "medium", "long")  # CompoSET's verbosity tiers, shortest first
# The analyses' long Markdown headers, shortened so their tables fit 80 columns.
SHORT_HEADERS = {"negative_set": "set", "n_objects": "N", "with_true_negative": "true neg",
                 "chance_r1 %": "chance %", "chance_r1_valid %": "chance valid %",
                 "paper_chance %": "paper chance %", "n_complexities": "complexities"}
TEXT_COLUMNS = ("model", "metric", "tier", "unit", "group", "benchmark", "run_id", "created")  # left-aligned, may wrap
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


class PlainCells(Table):
    """A rich table whose cells are text, never markup: a benchmark, model or caption string
    from outside is printed as it is (the one place console table cells pass through)."""

    def add_row(self, *renderables, **kwargs) -> None:  # type: ignore[override]
        super().add_row(*(safe_markup(c) if isinstance(c, str) else c for c in renderables),
                        **kwargs)


def compact_table(title: str, columns: tuple[str, ...], wrap_all: bool = False) -> Table:
    """A compact rich table for metrics: no vertical rules, one space between columns, text
    columns (the first ``TEXT_COLUMNS`` names) left-aligned, numbers right-aligned and never
    wrapped, so an interval stays on one line and a table of short labels fits 80 columns."""
    table = PlainCells(title=safe_markup(title), title_justify="left", box=box.SIMPLE_HEAD,
                       highlight=False,
                       show_edge=False,
                       pad_edge=False, padding=(0, 1, 0, 0), caption_justify="left")
    for col in columns:
        text = col in TEXT_COLUMNS
        table.add_column(col, justify="left" if text else "right",
                         no_wrap=not (text or wrap_all), overflow="fold")
    return table


def print_notes(console: Console, notes: list[str]) -> None:
    """A table's notes under it, one per line, each wrapped at the console's width (not the
    table's, so a narrow table keeps its notes readable)."""
    for note in notes:
        console.print(safe_message(note), markup=False, highlight=False)


def print_legend(console: Console, labels: dict[str, str]) -> None:
    """'models:' and one 'plain = foilbench-plain' line per label that differs from its
    spec (nothing when every model is shown by its spec)."""
    lines = legend(labels)
    if lines:
        console.print("models:", highlight=False)
        for line in lines:
            console.print(f"  {line}", markup=False, highlight=False, overflow="fold")


def print_tables(console: Console, records: list, reference: dict[str, dict],
                 labels: dict[str, str] | None = None) -> None:
    """Metric, value, 95% CI, n, chance and ties for every run, grouped by benchmark (in %),
    the unit of n in the caption (a column when a table mixes units); then, on a tiered pair
    benchmark, its primary metric per tier. Models are shown by ``labels`` (default:
    :func:`~foilbench.models.labels.short_labels` of the specs), with a legend."""
    labels = labels or short_labels([rec.result.model.spec for rec in records])
    by_bench: dict[str, list] = {}
    for rec in records:
        by_bench.setdefault(rec.result.benchmark.name, []).append(rec)
    print_legend(console, labels)
    for name, recs in by_bench.items():
        bench = recs[0].result.benchmark
        rows, methods, units = [], set(), set()
        for rec in recs:
            for metric, row in overall_metrics(rec.metrics).items():
                unit = row.get("unit") or "items"
                rows.append(((labels.get(rec.result.model.spec, rec.result.model.spec), metric,
                              pct(row["value"]), ci_text(row), str(row["n"]), unit,
                              pct(row["chance"]), str(row["ties"])), None))
                methods.add(row["ci_method"])
                units.add(unit)
        ref = reference.get(name, {})
        for metric, chance in ref.get("chance", {}).items():
            rows.append((("chance", metric, pct(chance), "-", "-", "-", pct(chance), "-"),
                         "dim"))
        blind_unit = "pooled" if units - {"items"} else "items"  # the audit scores items
        for metric, row in (ref.get("blind") or {}).items():
            units.add(blind_unit)
            row = row if isinstance(row, dict) else {"value": row}
            scorer = row.get("scorer") or row.get("name") or "text-only"
            value = row.get("value", row.get("accuracy"))
            rows.append(((f"blind: {scorer}", metric, pct(value), ci_text(row),
                          str(row.get("n", "-")), blind_unit, pct(row.get("chance")),
                          str(row.get("ties", "-"))), "dim"))
        title = f"{name} ({bench.kind}, {len(bench)} items{', PARTIAL' if bench.dropped else ''})"
        one_unit = len(units) <= 1
        columns = ("model", "metric", "value %", "95% CI", "n") + \
            (() if one_unit else ("unit",)) + ("chance %", "ties")
        table = compact_table(title, columns)
        for values, style in rows:
            table.add_row(*(values[:5] + values[6:] if one_unit else values), style=style)
        console.print(table)
        print_notes(console, [f"CI: {', '.join(sorted(methods))}",
                              "ties count as failures (strict >)", unit_caption(units)])
        print_tiers(console, name, recs, labels)


def print_tiers(console: Console, name: str, recs: list,
                labels: dict[str, str] | None = None) -> None:
    """The primary metric per tier (CompoSET Table 10's unit: n = the tier's instances) of
    the runs whose tier rows are per tier (tiered pair benchmarks); nothing otherwise."""
    labels = labels or {}
    rows = []
    for rec in recs:
        metric = rec.result.benchmark.manifest.primary_metric
        m = rec.metrics
        if "unit" not in m.columns or not (m["unit"] == "per_tier").any():
            continue
        by_tier = tier_metrics(m).get(metric, {})
        for tier in sorted(by_tier, key=lambda t: (TIER_ORDER.index(t) if t in TIER_ORDER
                                                   else len(TIER_ORDER), t)):
            spec = rec.result.model.spec
            rows.append((labels.get(spec, spec), metric, tier, by_tier[tier]))
    if not rows:
        return
    table = compact_table(f"{name} per tier", ("model", "metric", "tier", "value %", "95% CI",
                                              "n", "chance %", "ties"))
    for label, metric, tier, row in rows:
        table.add_row(label, metric, tier, pct(row["value"]), ci_text(row), str(row["n"]),
                      pct(row["chance"]), str(row["ties"]))
    console.print(table)
    print_notes(console, [f"CI: {', '.join(sorted({r[3]['ci_method'] for r in rows}))}",
                          unit_caption({"per_tier"})])


def print_markdown(console: Console, text: str, labels: dict[str, str] | None = None) -> None:
    """Markdown ``text`` (tables and notes, as the analyses write them) on the console: each
    table as a :func:`compact_table` whose cells wrap at spaces rather than being cut (model
    specs shown by their ``labels``; headers wrap at their underscores), each other line
    wrapped to the console's width."""
    labels = labels or {}
    rows: list[list[str]] = []

    def flush() -> None:
        if rows:
            notes = _split_notes(rows)  # a free-text column reads better under the table
            headers = tuple(SHORT_HEADERS.get(h, h).replace("_", " ") for h in rows[0])
            table = compact_table("", headers, wrap_all=True)  # cut nothing, drop nothing
            body = [[labels.get(c, c) for c in row] for row in rows[1:]]
            widths = fitted_widths([headers, *body], console.width)
            for column, width in zip(table.columns, widths, strict=False):
                column.width = width + 1  # + its right padding; rich's own squeeze would
                # fold words or drop columns
            for row in body:
                table.add_row(*row)
            console.print(table)
            print_notes(console, notes)
            rows.clear()

    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip().replace("\\|", "|")
                     for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            if not all(c and set(c) <= set("-:") for c in cells):  # not the rule line
                rows.append(cells)
            continue
        flush()
        console.print(line, markup=False, highlight=False)
    flush()


NOTE_COLUMNS = ("note",)  # free text (e.g. why a skill-load fit is empty): printed as lines


def _split_notes(rows: list[list[str]]) -> list[str]:
    """Remove the note columns from ``rows`` (header first) in place; the notes as lines
    "FIRST SECOND: note" naming their row by its first two cells."""
    drop = [k for k, h in enumerate(rows[0]) if h in NOTE_COLUMNS]
    notes = []
    for row in rows[1:]:
        for k in drop:
            if k < len(row) and row[k] not in ("", "-"):
                notes.append(f"{' '.join(c for c in row[:2] if c)}: {row[k]}")
    for row in rows:
        for k in reversed(drop):
            if k < len(row):
                del row[k]
    return notes


def fitted_widths(rows: list, total: int) -> list[int]:
    """Text widths of the columns of ``rows`` (header first) within ``total`` columns (each
    column also takes its padding and a divider, two characters): each column as wide as its widest cell when that fits, else as wide as its
    longest word plus a share of what is left, so cells wrap between words, never inside
    one (wider only when even the longest words do not fit)."""
    n = max(map(len, rows))
    cells = [[row[k] if k < len(row) else "" for row in rows] for k in range(n)]
    widest = [max(len(c) for c in col) for col in cells]
    words = [max([len(w) for c in col for w in c.split()] or [1]) for col in cells]
    room = total - 2 * n + 1
    if sum(widest) <= room:
        return widest
    widths = list(words)
    spare = room - sum(widths)
    for k in sorted(range(n), key=lambda k: widest[k] - words[k]):
        if spare <= 0:
            break
        grow = min(widest[k] - widths[k], spare)
        widths[k] += grow
        spare -= grow
    return widths


def print_autocomp(console: Console, records: list, blocks: dict[str, dict],
                   labels: dict[str, str] | None = None) -> None:
    """Auto-Comp r1 vs r1_valid for every model side by side, and the affected item counts
    (``blocks``: the summary's ``autocomp`` block per run id)."""
    if not blocks:
        return
    from foilbench.analysis.autocomp_valid import batch_markdown

    console.print("\nAuto-Comp: r1 (the paper's, all candidates) vs r1_valid (primary *, "
                  "false negatives only); chance = mean per-item 1/(K+1), paper_chance = the "
                  "closed form (per-cell tables in summary.json and the report):",
                  markup=False, highlight=False)
    print_markdown(console, batch_markdown([r.result for r in records]), labels)
    seen: dict[str, dict] = {}
    for block in blocks.values():
        seen.setdefault(block["benchmark"], block)
    for name, block in seen.items():
        console.print(f"{safe_text(name)}: {block['items_with_true_negative']} of "
                      f"{block['n_items']} "
                      "items hold a true negative", markup=False, highlight=False)
