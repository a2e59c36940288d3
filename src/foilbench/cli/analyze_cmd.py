"""``foilbench analyze``: analyses of stored runs (no model is loaded)."""

from __future__ import annotations

from typing import Any

import click
import pandas as pd

from foilbench import jsonio
from foilbench.cli._table import frame_table
from foilbench.cli.options import JSON_OUT_OLD_NAME
from foilbench.display import safe_message, safe_text

RUNS = click.argument("runs", nargs=-1, required=True)
DB = click.option("--db", "db_path", default=None, type=click.Path(dir_okay=False),
                  help="Results database (default: foilbench-runs/foilbench.duckdb).")
JSON = click.option("--json-out", "--json", "json_path", metavar="FILE",
                    type=click.Path(dir_okay=False),
                    help="Also write the tables as JSON to FILE." + JSON_OUT_OLD_NAME)
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
    """A titled table; the title may hold a benchmark's tier name (escaped and capped)."""
    click.echo(f"\n{safe_message(title)}")
    click.echo(frame_table(frame))


def write_json(path: str | None, tables: dict[str, Any]) -> None:
    if not path:
        return
    data = {k: v.to_dict(orient="records") if isinstance(v, pd.DataFrame) else v
            for k, v in tables.items()}
    jsonio.write_json(path, data, default=str)
    click.echo(f"wrote {path}", err=True)


def refuse_unknown_columns(df, columns, option: str) -> None:
    """A column the user named that the runs do not hold is an error naming the ones they do
    (an option that names nothing must not print a table as if it did)."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        have = sorted(c for c in df.columns if not c.startswith("chance_"))
        raise click.UsageError(f"{option} {', '.join(missing)}: no such column in these runs; "
                               f"columns: {', '.join(have)}")


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
    ctx = click.get_current_context()
    if ctx.get_parameter_source("by") != click.core.ParameterSource.DEFAULT:
        refuse_unknown_columns(df, by, "--by")
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
    and wrong decisions (the item's outcome): quantiles, mean and spread. Pair runs give the
    paper's i2t/t2i margins (anchored on the base) and foilbench's i2t_decision/t2i_decision
    margins (the smaller comparison; > 0 exactly when the decision is correct). near_ties
    counts margins with 0 < |margin| < 1e-6 x max(1, the item's largest |score|): decisions
    within float32 rounding of a tie, which another correct implementation may score the
    other way."""
    from foilbench.analysis.margins import margin_summary

    table = margin_summary(load_runs(runs, db_path))
    emit("margins", table)
    write_json(json_path, {"margins": table})


@analyze.command(short_help="Scene-hard vs edit-hard, variance decomposition.")
@RUNS
@DB
@JSON
@click.option("--metric", default="i2t", show_default=True,
              help="Outcome whose per-foil success rate is split between and within scenes.")
def hardness(runs, db_path, json_path, metric) -> None:
    """Scene-hard vs edit-hard (CompoSET App. G.3) on pair runs with scene_id, within each
    caption tier: quartile sets of the paper's I2T margin and their overlap (6.25% if
    independent), cross-model Spearman and Jaccard (with the Jaccard of independent quartile
    draws), the paper's scene x model decomposition of per-scene mean margins, the edit-type
    and scene x edit-type shares, the within-scene share of per-foil success-rate variance;
    then foilbench's variants (per-foil decomposition, per-model success shares) and the same
    after removing edit-type means. JSON keys are prefixed by the tier."""
    from foilbench.analysis import hardness as h
    from foilbench.analysis import variance as v
    from foilbench.analysis.margins import add_margins

    df = add_margins(load_runs(runs, db_path))
    if "margin_i2t" not in df.columns:
        raise click.UsageError("hardness needs pair runs (I2T margins)")
    tables: dict[str, Any] = {}
    for tier, part in h.split_tiers(df):
        click.echo(f"\n=== tier: {safe_text(tier)} ===")
        variants = [("raw", part)]
        if "edit_type" in part.columns:
            variants.append(("edit_residual", h.residualise_edit_type(part)))
        for label, frame in variants:
            key = f"{tier}/{label}"
            stats = h.scene_margin_stats(frame)
            tables[f"{key}_overlap"] = h.overlap_table(stats)
            tables[f"{key}_agreement"] = agree = h.cross_model_agreement(stats)
            emit(f"[{safe_text(key)}] scene-hard vs edit-hard", tables[f"{key}_overlap"])
            click.echo(f"mean pairwise Spearman {agree['mean_spearman']:.3f}, mean Jaccard of "
                       f"scene-hard sets {agree['mean_jaccard_scene_hard']:.3f} (independent "
                       f"quartile draws: {agree['jaccard_null_independent']:.3f} paper, "
                       f"{agree['jaccard_null_exact']:.3f} exact; "
                       f"{agree['n_models']} models, {agree['n_scenes']} scenes)")
            if agree["n_models"] >= 2:
                tables[f"{key}_scene_model"] = dec = v.scene_model_decomposition(frame)
                click.echo("per-scene mean margin, scene x model (CompoSET App. G.3): " + ", ".join(
                    f"{k[6:]} {x:.1%}" for k, x in dec.items() if k.startswith("share_")))
            tables[f"{key}_per_foil_variance"] = per_foil = v.two_way_decomposition(frame)
            click.echo("per-foil margin decomposition (foilbench): " + ", ".join(
                f"{k[6:]} {x:.1%}" for k, x in per_foil.items() if k.startswith("share_")))
        if "edit_type" in part.columns:
            tables[f"{tier}/edit_type_shares"] = v.edit_type_shares(part)
            emit(f"[{safe_text(tier)}] edit type and scene x edit type shares of margin variance",
                 tables[f"{tier}/edit_type_shares"])
        if metric in part.columns:
            tables[f"{tier}/foil_success"] = fs = v.foil_success_shares(part, metric)
            click.echo(f"per-foil {metric} success-rate variance (rate over models): within "
                       f"scenes {fs['within_scene']:.1%}, between {fs['between_scene']:.1%} "
                       f"({fs['n_foils']} foils)")
            tables[f"{tier}/success_variance"] = v.success_variance_shares(part, metric)
            emit(f"[{safe_text(tier)}] per-model {metric} outcome variance (foilbench): between vs within "
                 "scenes", tables[f"{tier}/success_variance"])
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

    df = load_runs(runs, db_path)
    if by is not None:
        refuse_unknown_columns(df, [by], "--by")
    table = direction_asymmetry(df, n_boot=n_boot, by=by)
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


def _families(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        model, sep, family = pair.rpartition("=")
        if not sep or not model or not family:
            raise click.BadParameter(f"{pair!r}: give MODEL=FAMILY", param_hint="--family")
        out[model] = family
    return out


@analyze.command(short_help="CompoSET App. G.3 robustness checks of scene/edit hardness.")
@RUNS
@DB
@JSON
@click.option("--family", "families", multiple=True,
              help="MODEL=FAMILY (repeatable): same- vs cross-family rank correlation.")
@click.option("--min-models", type=int, default=None,
              help="Scenes scene-hard for at least this many models (default: half, rounded "
                   "up: the paper's 11 of 22).")
@click.option("--alternative", type=click.Choice(["greater", "two-sided", "less"]),
              default="greater", show_default=True,
              help="Mann-Whitney alternative for the least pixel-local edit types.")
def robustness(runs, db_path, json_path, families, min_models, alternative) -> None:
    """CompoSET App. G.3 robustness statistics, within each caption tier: scenes scene-hard
    for at least half the models (and for none), same- vs cross-family Spearman of per-scene
    mean margins, edit-hard ranking after removing edit-type means (Spearman, top-quartile
    overlap), Mann-Whitney for scenes with swap_role / modify_pose / modify_action."""
    from foilbench.analysis import hardness as h
    from foilbench.analysis import robustness as r
    from foilbench.analysis.margins import add_margins

    df = add_margins(load_runs(runs, db_path))
    if "margin_i2t" not in df.columns or "scene_id" not in df.columns:
        raise click.UsageError("robustness needs pair runs with scene_id (I2T margins)")
    fam = _families(families)
    tables: dict[str, Any] = {}
    for tier, part in h.split_tiers(df):
        click.echo(f"\n=== tier: {safe_text(tier)} ===")
        stats = h.scene_margin_stats(part)
        tables[f"{tier}/scene_hard_counts"] = c = r.scene_hard_counts(stats,
                                                                      min_models=min_models)
        click.echo(f"{c['n_scenes_hard_for_min_models']} of {c['n_scenes']} scenes are "
                   f"scene-hard for at least {c['min_models']} of the {c['n_models']} models; "
                   f"{c['n_scenes_hard_for_none']} for none")
        if fam:
            tables[f"{tier}/family_agreement"] = f = r.family_agreement(stats, fam)
            click.echo(f"Spearman of per-scene mean margins: same family "
                       f"{f['same_family_spearman']:.3f} ({f['n_same_pairs']} pairs), cross "
                       f"family {f['cross_family_spearman']:.3f} ({f['n_cross_pairs']} pairs)")
        if "edit_type" in part.columns:
            tables[f"{tier}/edit_hard_stability"] = r.edit_hard_stability(part)
            emit(f"[{safe_text(tier)}] edit-hard ranking before vs after removing edit-type means",
                 tables[f"{tier}/edit_hard_stability"])
            try:
                tables[f"{tier}/least_local_mw"] = mw = r.least_local_mann_whitney(
                    part, alternative=alternative)
            except ValueError as e:
                click.echo(f"Mann-Whitney skipped: {safe_message(e)}")
            else:
                types = ", ".join(safe_text(t) for t in mw["edit_types"])
                click.echo(f"Mann-Whitney ({types}; {alternative}): "
                           f"{mw['n_with']} scenes with vs {mw['n_without']} without, median "
                           f"std {mw['median_std_with']:.4f} vs {mw['median_std_without']:.4f}, "
                           f"U = {mw['u']:.1f}, p = {mw['p_value']:.3f}")
    write_json(json_path, tables)


@analyze.command(short_help="Auto-Comp Table 15: per-relation accuracy at N = 2.")
@RUNS
@DB
@JSON
@click.option("--metric", default="r1", show_default=True,
              help="Outcome column whose per-relation rate is reported (r1 or r1_valid).")
@click.option("--task", default="position", show_default=True,
              help="Auto-Comp task whose relations are split (position, relative_size).")
@click.option("--set", "negative_set", default="swap", show_default=True,
              help="Negative set of the items: swap or confusion.")
def relations(runs, db_path, json_path, metric, task, negative_set) -> None:
    """Per-relation accuracy (Auto-Comp App. A.4, Table 15) on the N = 2 items of TASK's
    negative SET, per model, with Wilson intervals."""
    from foilbench.analysis.autocomp_relations import per_relation_accuracy

    try:
        table = per_relation_accuracy(load_runs(runs, db_path), metric, task, 2, negative_set)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    emit(f"{metric} per relation, {task} N = 2 {negative_set}", table)
    write_json(json_path, {"relations": table})


@analyze.command(short_help="Scores per tier, per instance (tier mean) and pooled, labelled.")
@RUNS
@DB
@JSON
@BOOT
@click.option("--metric", default=None, help="Outcome column (default: group, else r1).")
@click.option("--unit", "units", multiple=True,
              type=click.Choice(["per_tier", "instance", "pooled"]),
              help="Unit of n (repeatable; default all three).")
@click.option("--instance", default=None,
              help="Column naming an instance (its rows across tiers); default foil_id, "
                   "else instance_id (the composet: loader's).")
@click.option("--ci", "ci_method", type=click.Choice(["auto", "bootstrap", "wilson", "wald"]),
              default="auto", show_default=True,
              help="Interval: auto (scene bootstrap with enough scenes), bootstrap, wilson "
                   "or wald.")
def units(runs, db_path, json_path, n_boot, metric, units, instance, ci_method) -> None:
    """The same score under each unit of n (CompoSET §5: n = 1,776 instances, tiers not
    pooled; Table 9: tiers pooled, 3x the instances): per tier, per instance as its tier
    mean, and pooled rows; every row says which unit it uses. `foilbench run --unit` chooses
    the one its own rows use (default: the paper's)."""
    from foilbench.analysis.units import UNITS, unit_table
    from foilbench.data.tiers import instance_column

    df = load_runs(runs, db_path)
    metric = metric or default_metric(df)
    instance = instance or instance_column(df.columns) or "foil_id"
    try:
        table = unit_table(df, metric, units or UNITS, instance, ci_method, n_boot)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    emit(f"{metric} by unit of n", table)
    write_json(json_path, {"units": table})
