"""``foilbench show``: a stored run's provenance and metrics (no model needed)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from foilbench.cli.run_output import (
    ci_text,
    compact_table,
    pct,
    print_legend,
    print_notes,
    unit_caption,
)
from foilbench.display import safe_markup, safe_message, safe_text
from foilbench.models.labels import short_labels
from foilbench.provenance import describe_subset
from foilbench.runner.in_progress import active
from foilbench.runner.notes import note_lines, repeat_lines
from foilbench.stats.breakdown import metric_table
from foilbench.store.db import DEFAULT_DB, ResultsStore, to_json
from foilbench.store.repeats import repeats_note, stored_repeats

PROVENANCE_FIELDS = ("run_id", "batch_id", "created", "model_spec", "model_fingerprint",
                     "score_kind", "benchmark_name", "benchmark_version", "benchmark_kind",
                     "benchmark_checksum", "n_items", "partial", "package_version",
                     "git_revision", "seed", "n_boot", "ci_method", "tie_policy", "config_hash")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("run", required=False)
@click.option("--db", "db_path", default=str(DEFAULT_DB), show_default=True,
              type=click.Path(dir_okay=False), help="Results database written by `run`.")
@click.option("--by", "by", multiple=True, metavar="COLUMN",
              help="Also show the breakdown by this column (repeatable), recomputed from the "
                   "stored per-item outcomes when it was not stored; --by all shows every "
                   "stored breakdown.")
@click.option("--json", "as_json", is_flag=True, help="Print provenance and metrics as JSON.")
@click.option("--all", "show_all", is_flag=True,
              help="List repeats too (runs of the same model, benchmark and settings; by "
                   "default only the latest of each is listed).")
def show(run: str | None, db_path: str, by: tuple[str, ...], as_json: bool,
         show_all: bool = False) -> None:
    """Print the provenance and metrics of RUN (a run id or a unique prefix of one).

    Without RUN, list the stored runs. While a run is still on its first cell (nothing
    stored yet) this says so and exits 0.
    """
    if not Path(db_path).exists():
        working = active(Path(db_path))
        if working:
            since = time.strftime("%H:%M:%S", time.localtime(working[0]["started"]))
            click.echo(f"a {safe_text(working[0]['what'])} is in progress on {db_path} (process "
                       f"{working[0]['pid']}, started {since}) and nothing has finished yet; "
                       "each run appears here as soon as its cell is stored")
            return
    with ResultsStore(db_path, read_only=True) as store:
        if run is None:
            runs = store.list_runs()
            kept, hidden = stored_repeats(store.con)
            if not show_all:
                runs = runs[runs["run_id"].isin(kept)]
            if as_json:
                click.echo(runs.to_json(orient="records", date_format="iso", indent=2))
            else:
                _print_run_list(runs)
            if hidden and not show_all:
                click.echo(f"note: {repeats_note(hidden, '; --all lists them')}", err=as_json)
            return
        info = store.get_run(run)
        metrics = store.load_metrics(info["run_id"])
        missing = [c for c in by if c != "all" and c not in set(metrics["group_by"])]
        if missing:  # not stored: recompute from the stored per-item outcomes
            metrics = pd.concat([metrics, recompute_breakdown(store, info, missing)],
                                ignore_index=True)
    wanted = metrics["group_by"] == ""
    if "all" in by:
        wanted[:] = True
    elif by:
        wanted |= metrics["group_by"].isin(by)
    shown = metrics[wanted]
    if as_json:
        click.echo(json.dumps(json.loads(to_json({
            "run": {k: info.get(k) for k in PROVENANCE_FIELDS} | {"config": info["config"],
                                                                  "eval_stats": info["eval_stats"]},
            "metrics": shown.to_dict(orient="records")})), indent=2))
        return
    console = Console()
    prov = Table(title=f"run {safe_markup(info['run_id'])}", title_justify="left",
                 show_header=False, highlight=False)
    prov.add_column("field", style="bold", no_wrap=True)
    prov.add_column("value", overflow="fold")
    for key in PROVENANCE_FIELDS:
        prov.add_row(key, safe_markup(info.get(key)))
    stats = info.get("eval_stats") or {}
    text = stats.get("text")
    prov.add_row("captions truncated", f"{text['n_truncated']} of {text['n_texts']} (limit "
                 f"{text['max_tokens']} tokens)" if text else "not measured")
    prov.add_row("unknown tokens", str(text["n_unknown"]) if text else "not measured")
    prov.add_row("subset", describe_subset(stats.get("subset")) or "no (the full benchmark)")
    console.print(prov)
    for line in note_lines(stats) + repeat_lines(stats):
        console.print(f"note: {safe_message(line)}", markup=False, highlight=False)
    table = compact_table("metrics (%)", ("metric", "group", "value", "95% CI", "n", "unit",
                                          "chance", "ties"))
    units = set()
    for row in shown.to_dict(orient="records"):
        group = f"{row['group_by']}={row['group_value']}" if row["group_by"] else "overall"
        unit = row.get("unit") if isinstance(row.get("unit"), str) else "not recorded"
        units.add(unit)
        table.add_row(row["metric"], group, pct(row["value"]), ci_text(row), str(row["n"]),
                      unit, pct(row["chance"]), str(row["ties"]))
    console.print(table)
    print_notes(console, [f"CI: {', '.join(sorted(set(shown['ci_method'])))}",
                          "ties count as failures", unit_caption(units)])


def recompute_breakdown(store: ResultsStore, info: dict, columns: list[str]) -> pd.DataFrame:
    """Breakdown rows for ``columns`` from the run's stored per-item outcomes, with the run's
    own interval settings (no model or benchmark needed); over items, so ``pooled`` on a
    tiered pair benchmark."""
    from foilbench.data.tiers import is_tiered
    from foilbench.kinds import kind_of

    items = store.load_item_results(info["run_id"])
    metric_names = list(dict.fromkeys(store.load_metrics(info["run_id"])["metric"]))
    long = pd.concat([items.assign(metric=m, outcome=items[m], tie=items[f"tie_{m}"],
                                   chance=items[f"chance_{m}"]) for m in metric_names],
                     ignore_index=True)
    table = metric_table(long, by=columns, method=info["ci_method"] or "auto",
                         n_boot=int(info["n_boot"]), seed=int(info["seed"]))
    unit = "pooled" if is_tiered(kind_of(info["benchmark_kind"]).is_edit_pair, items) \
        else "items"
    return table[table["group_by"] != ""].assign(unit=unit)


def _print_run_list(runs) -> None:
    """The stored runs, one line each: id, when, model (by its short label, with a legend),
    benchmark and items; within 80 columns (``--json`` has every field)."""
    labels = short_labels(list(runs["model_spec"])) if len(runs) else {}
    console = Console()
    print_legend(console, labels)
    table = compact_table("stored runs", ("run_id", "created", "model", "benchmark", "items"))
    for row in runs.to_dict(orient="records"):
        created = pd.Timestamp(row["created"]).strftime("%Y-%m-%d %H:%M")
        bench = row["benchmark_name"] + (" (PARTIAL)" if row.get("partial") else "")
        table.add_row(str(row["run_id"]), created, labels[row["model_spec"]], bench,
                      str(row["n_items"]))
    console.print(table)
