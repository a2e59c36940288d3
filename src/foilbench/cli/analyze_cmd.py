"""``foilbench analyze``: analyses of stored runs (no model is loaded)."""

from __future__ import annotations

from typing import Any

import click
import pandas as pd

from foilbench import jsonio
from foilbench.cli._table import frame_table

RUNS = click.argument("runs", nargs=-1, required=True)
DB = click.option("--db", "db_path", default=None, type=click.Path(dir_okay=False),
                  help="Results database (default: foilbench-runs/foilbench.duckdb).")
JSON = click.option("--json", "json_path", type=click.Path(dir_okay=False),
                    help="Also write the tables as JSON.")
BOOT = click.option("--n-boot", default=10_000, show_default=True, help="Bootstrap resamples.")


def load_runs(runs: tuple[str, ...], db_path: str | None) -> pd.DataFrame:
    """Item results of the runs, stacked, with ``model`` (the run's model spec; suffixed by
    the run id when two runs share a spec on one benchmark), ``run_id`` and ``benchmark``."""
    from foilbench.store.db import ResultsStore

    frames = []
    with ResultsStore(db_path, read_only=True) as store:
        for run in runs:
            info = store.get_run(run)
            frame = store.load_item_results(info["run_id"])
            frame["model"] = info["model_spec"]
            frame["run_id"] = info["run_id"]
            frame["benchmark"] = info["benchmark_name"]
            frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    clash = out.groupby(["model", "benchmark"])["run_id"].transform("nunique") > 1
    out.loc[clash, "model"] = out.loc[clash, "model"] + "#" + out.loc[clash, "run_id"].str[:8]
    return out


def default_metric(df: pd.DataFrame) -> str:
    for metric in ("group", "r1", "i2t"):
        if metric in df.columns:
            return metric
    raise click.UsageError("the runs hold none of the metrics group, r1, i2t")


def emit(title: str, frame: pd.DataFrame) -> None:
    click.echo(f"\n{title}")
    click.echo(frame_table(frame))


def write_json(path: str | None, tables: dict[str, Any]) -> None:
    if not path:
        return
    data = {k: v.to_dict(orient="records") if isinstance(v, pd.DataFrame) else v
            for k, v in tables.items()}
    jsonio.write_json(path, data, default=str)
    click.echo(f"wrote {path}", err=True)


@click.group()
def analyze() -> None:
    """Analyses of stored runs: pass one or more RUN ids (or unique prefixes).

    \b
      foilbench analyze breakdown RUN1 RUN2 --by edit_type --by tier
      foilbench analyze hardness RUN1 RUN2 RUN3 --json hardness.json
      foilbench analyze asymmetry RUN1
    """


@analyze.command(short_help="Accuracy by edit type x tier x category; modify-vs-swap.")
@RUNS
@DB
@JSON
@BOOT
@click.option("--metric", default=None, help="Outcome column (default: group, else r1).")
@click.option("--by", multiple=True, default=("edit_type", "tier", "category"),
              show_default=True, help="Metadata column to break down by (repeatable).")
def breakdown(runs, db_path, json_path, n_boot, metric, by) -> None:
    """Accuracy per model and edit type x tier x category with Wilson and scene-bootstrap
    intervals, then matched modify-vs-swap contrasts (CompoSET section 5) when the runs hold
    both modify_X and swap_X edits."""
    from foilbench.analysis.breakdowns import breakdown as run_breakdown
    from foilbench.analysis.contrasts import modify_swap_contrasts

    df = load_runs(runs, db_path)
    metric = metric or default_metric(df)
    tables = {"breakdown": run_breakdown(df, metric, by, n_boot=n_boot)}
    emit(f"{metric} by {', '.join(by)}", tables["breakdown"])
    if {"edit_type", "scene_id"} <= set(df.columns):
        tables["modify_vs_swap"] = modify_swap_contrasts(df, metric, n_boot=n_boot)
        emit("modify - swap (matched by scene and tier)", tables["modify_vs_swap"])
    write_json(json_path, tables)


@analyze.command(short_help="Signed score margins for right and wrong decisions.")
@RUNS
@DB
@JSON
def margins(runs, db_path, json_path) -> None:
    """Signed score margins (CompoSET App. G.3) per model and direction, split by correct
    (margin > 0) and wrong decisions: quantiles, mean and spread."""
    from foilbench.analysis.margins import margin_summary

    table = margin_summary(load_runs(runs, db_path))
    emit("margins", table)
    write_json(json_path, {"margins": table})


@analyze.command(short_help="Scene-hard vs edit-hard, variance decomposition.")
@RUNS
@DB
@JSON
def hardness(runs, db_path, json_path) -> None:
    """Scene-hard vs edit-hard (CompoSET App. G.3) on pair runs with scene_id: quartile sets
    and their overlap (6.25% if independent), cross-model Spearman and Jaccard, the two-way
    variance decomposition, the same after removing edit-type means, and the between-scene
    share of success variance."""
    from foilbench.analysis import hardness as h
    from foilbench.analysis.margins import add_margins
    from foilbench.analysis.variance import success_variance_shares, two_way_decomposition

    df = add_margins(load_runs(runs, db_path))
    if "margin_i2t" not in df.columns:
        raise click.UsageError("hardness needs pair runs (I2T margins)")
    tables: dict[str, Any] = {}
    variants = [("raw", df)]
    if "edit_type" in df.columns:
        variants.append(("edit_residual", h.residualise_edit_type(df)))
    for label, frame in variants:
        stats = h.scene_margin_stats(frame)
        tables[f"{label}_overlap"] = h.overlap_table(stats)
        tables[f"{label}_agreement"] = h.cross_model_agreement(stats)
        tables[f"{label}_variance"] = two_way_decomposition(frame)
        emit(f"[{label}] scene-hard vs edit-hard", tables[f"{label}_overlap"])
        agree = tables[f"{label}_agreement"]
        click.echo(f"mean pairwise Spearman {agree['mean_spearman']:.3f}, mean Jaccard of "
                   f"scene-hard sets {agree['mean_jaccard_scene_hard']:.3f} "
                   f"({agree['n_models']} models, {agree['n_scenes']} scenes)")
        var = tables[f"{label}_variance"]
        click.echo("variance shares: " + ", ".join(
            f"{k[6:]} {v:.3f}" for k, v in var.items() if k.startswith("share_")))
    tables["success_variance"] = success_variance_shares(df, "i2t")
    emit("per-foil I2T success variance: between vs within scenes", tables["success_variance"])
    write_json(json_path, tables)


@analyze.command(short_help="I2T minus T2I per model, paired interval.")
@RUNS
@DB
@JSON
@BOOT
@click.option("--by", default=None, help="Also split by this metadata column.")
def asymmetry(runs, db_path, json_path, n_boot, by) -> None:
    """I2T minus T2I accuracy per model on the same pair items, with a paired scene bootstrap
    interval and the discordant counts."""
    from foilbench.analysis.asymmetry import direction_asymmetry

    table = direction_asymmetry(load_runs(runs, db_path), n_boot=n_boot, by=by)
    emit("I2T - T2I", table)
    write_json(json_path, {"asymmetry": table})


def _autocomp_valid(df, set_column, n_boot, tables, ac) -> None:
    """The same deltas on r1_valid (primary where items list true negatives) and the r1 vs
    r1_valid table (foilbench.analysis.autocomp_valid)."""
    if "r1_valid" not in df.columns or df["r1_valid"].isna().all():
        return
    from foilbench.analysis.autocomp_valid import NEEDED, validity_table

    sub = df[df["r1_valid"].notna()]
    tables["swap_vs_confusion_r1_valid"] = ac.swap_confusion_gap(
        sub, metric="r1_valid", column=set_column, n_boot=n_boot)
    emit("Swap - Confusion on r1_valid (paired concepts)", tables["swap_vs_confusion_r1_valid"])
    if "condition" in sub.columns:
        tables["contextual_vs_minimal_r1_valid"] = ac.minimal_contextual_delta(
            sub, metric="r1_valid", n_boot=n_boot)
        emit("Contextual - Minimal on r1_valid (paired concepts)",
             tables["contextual_vs_minimal_r1_valid"])
    if all(c in sub.columns for c in NEEDED):
        tables["r1_vs_r1_valid"] = validity_table(sub)
        emit("r1 (the paper's) vs r1_valid (primary) per cell", tables["r1_vs_r1_valid"])


@analyze.command(short_help="Swap-vs-Confusion, Minimal-vs-Contextual, error taxonomy.")
@RUNS
@DB
@JSON
@BOOT
@click.option("--set-column", default="negative_set", show_default=True,
              help="Column naming the negative set (swap / confusion); when absent it is "
                   "taken from benchmark names containing 'swap' or 'confusion'.")
def autocomp(runs, db_path, json_path, n_boot, set_column) -> None:
    """Auto-Comp: Swap-vs-Confusion gap and Minimal-vs-Contextual delta on paired concepts
    (concept_id), and the taxonomy of Confusion errors (needs task, objects, values)."""
    from foilbench.analysis import autocomp as ac

    df = load_runs(runs, db_path)
    if set_column not in df.columns:
        name = df["benchmark"].str.lower()
        df[set_column] = name.where(~name.str.contains("swap"), "swap")
        df[set_column] = df[set_column].where(~name.str.contains("confusion"), "confusion")
    tables: dict[str, Any] = {}
    if "concept_id" in df.columns:
        tables["swap_vs_confusion"] = ac.swap_confusion_gap(df, column=set_column,
                                                            n_boot=n_boot)
        emit("Swap - Confusion (paired concepts)", tables["swap_vs_confusion"])
        if "condition" in df.columns:
            tables["contextual_vs_minimal"] = ac.minimal_contextual_delta(df, n_boot=n_boot)
            emit("Contextual - Minimal (paired concepts)", tables["contextual_vs_minimal"])
        _autocomp_valid(df, set_column, n_boot, tables, ac)
    confusion = df[df[set_column] == "confusion"]
    if len(confusion) and {"task", "objects", "values", "captions"} <= set(df.columns):
        tables["confusion_taxonomy"] = ac.confusion_taxonomy(confusion)
        emit("Confusion errors: what the chosen caption is", tables["confusion_taxonomy"])
    if not tables:
        raise click.UsageError("no Auto-Comp structure in these runs (need concept_id, or "
                               "task/objects/values/captions on confusion items)")
    write_json(json_path, tables)
