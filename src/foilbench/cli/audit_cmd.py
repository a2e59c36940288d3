"""``foilbench audit``: audits of a benchmark that need no vision model (and ``controls``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from foilbench.cli._table import acc_ci, format_table
from foilbench.cli.options import JSON_OUT_OLD_NAME
from foilbench.display import safe_text
from foilbench.errors import FoilbenchError
from foilbench.jsonio import write_json


def _load(spec: str):
    from foilbench.data.registry import resolve_benchmarks

    return resolve_benchmarks(spec, check_images=False)


def _plain(obj):
    """numpy scalars and arrays -> Python values for JSON; anything else -> str."""
    return obj.tolist() if hasattr(obj, "tolist") else str(obj)


def _write_json(data: dict, path: str | None) -> None:
    if path:
        write_json(path, data, default=_plain)
        click.echo(f"wrote {path}", err=True)


@click.group()
def audit() -> None:
    """Audit a benchmark: is it hackable from text alone, are its controls real?

    \b
      foilbench audit blind sugarcrepe:/data/sugarcrepe --json blind.json
      foilbench audit perplexity ./my_bench --lm /models/gpt2
      foilbench audit refine sugarcrepe:/data/sugarcrepe --out kept.json
      foilbench audit controls ./my_pair_bench --model openclip:ViT-B-32:/w.pt
    """


def blind_table(result: dict) -> str:
    """Rows: edit types then ALL; columns: each scorer's accuracy [95% CI], chance, and the
    same-bag-of-words count."""
    scorers = list(result["scorers"])
    first = result["scorers"][scorers[0]]
    bag = result["flags"]["same_bag_of_words"]
    rows = []
    for t in list(first["by_type"]) + ["ALL"]:
        stats = [result["scorers"][s]["by_type"][t] if t != "ALL" else
                 result["scorers"][s]["overall"] for s in scorers]
        n_bag = bag.get(t, 0) if t != "ALL" else sum(bag.values())
        rows.append([t, stats[0]["n"], *[acc_ci(s) for s in stats], stats[0]["chance"], n_bag])
    ties = ", ".join(f"{s} {sum(result['flags'][f'ties:{s}'].values())}" for s in scorers)
    rules = "; ".join(f"{s}: {result['scorers'][s]['rule']}" for s in scorers
                      if "rule" in result["scorers"][s])
    return (format_table(["edit_type", "n", *scorers, "chance", "same_bag"], rows)
            + f"\nties, scored as failures: {ties}" + (f"\nrule: {rules}" if rules else ""))


@audit.command(short_help="Text-only baselines: is the benchmark solvable without the image?")
@click.argument("benchmark")
@click.option("--json-out", "--json", "json_path", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write the result as JSON to FILE." + JSON_OUT_OLD_NAME)
@click.option("--scorer", "scorers", multiple=True,
              help="Scorer name, repeatable: length, ngram, minilm, lm:PATH (a local causal "
                   "LM) or mc:PATH (a local causal LM picks among the numbered captions, "
                   "Auto-Comp App. A.8). Default: length, ngram, minilm.")
@click.option("--folds", default=5, show_default=True, help="Cross-fitting folds (by cluster).")
@click.option("--seed", default=0, show_default=True,
              help="Seed of the fold assignment and of --max-options' draw.")
@click.option("--max-options", type=int, default=None,
              help="At most this many captions per item: the positive and a seeded draw of "
                   "the negatives (Auto-Comp App. A.8: 50, i.e. 49 negatives at N = 3).")
@click.option("--mc-reading", type=click.Choice(["choice", "crossfit"]), default="choice",
              show_default=True,
              help="How an mc:PATH scorer is scored. choice: the paper's rule (Auto-Comp "
                   "App. A.8), right when the model's own top option is the positive. "
                   "crossfit: foilbench's reading, a sign fitted on the other folds like the "
                   "text scorers' (an LLM that always avoids the positive then scores high). "
                   "The rule used is printed under the table and stored as \"rule\".")
def blind(benchmark: str, json_path: str | None, scorers: tuple[str, ...], folds: int,
          seed: int, max_options: int | None, mc_reading: str) -> None:
    """Blind text-only baselines (SugarCrepe section 3) of a choice BENCHMARK.

    Each scorer reads only the captions. Its rule (which sign of its score means
    "positive", per edit type) is fitted on the other folds and applied to the held-out one,
    folds grouped by scene or image so nothing leaks. An mc:PATH model is scored by its
    own choice instead (Auto-Comp App. A.8; --mc-reading). Accuracy well above chance means the
    benchmark can be solved without looking at the image. Ties count as failures; their
    counts are in the JSON under flags["ties:NAME"]. Works without the images. The
    default scorers include minilm, which needs foilbench[audit] (pip install
    'foilbench[audit]'); --scorer length --scorer ngram needs no extra.
    """
    from foilbench.audit.blind import blind_audit
    from foilbench.audit.scorers import DEFAULT_SCORERS
    from foilbench.audit.text import is_blind_auditable

    benches = _load(benchmark)
    results = {}
    for bench in benches:
        if len(benches) > 1 and not is_blind_auditable(bench):
            click.echo(f"[{safe_text(bench.name)}] skipped: kind {bench.kind!r} has no blind "
                       "baseline", err=True)
            continue
        results[bench.name] = blind_audit(bench, scorers or DEFAULT_SCORERS, folds, seed,
                                          max_options=max_options, mc_reading=mc_reading)
        limit = f", at most {max_options} options per item" if max_options else ""
        click.echo(f"[{safe_text(bench.name)}] blind text-only accuracy ({folds} folds where "
                   f"a rule is fitted{limit})")
        click.echo(blind_table(results[bench.name]))
    _write_json(next(iter(results.values())) if len(benches) == 1 else results, json_path)


@audit.command(short_help="COMPASS perplexity audit: are negatives less fluent?")
@click.argument("benchmark")
@click.option("--lm", "lm_path", required=True, type=click.Path(exists=True, file_okay=False),
              help="A local causal LM directory (transformers save_pretrained).")
@click.option("--device", default="auto", show_default=True,
              help="Where the LM runs: auto, cpu, cuda, cuda:N or mps.")
@click.option("--json-out", "--json", "json_path", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write the tables as JSON to FILE." + JSON_OUT_OLD_NAME)
def perplexity(benchmark: str, lm_path: str, device: str, json_path: str | None) -> None:
    """Perplexity audit (COMPASS App. B) of a choice BENCHMARK.

    A COMPASS-style benchmark is reported as the paper does: per level x negative type for
    the skill-targeted items (Table 4), per level for the composed captions (Table 5), and
    without its decomposed items (App. B.5); other benchmarks per edit type and overall.

    Per item the hardest negative is the one whose perplexity is closest to the positive's;
    positives and those negatives are compared by Mann-Whitney U and the rank-biserial
    r = 1 - 2U/(n1 n2) (r > 0: negatives less fluent), labelled negligible (<0.1), small
    (<0.3), medium (<0.5) or large.
    """
    from foilbench.audit.perplexity import perplexity_audit_benchmark

    out = {}
    stat_cols = ["n", "ppl_pos", "ppl_hard_neg", "r", "effect", "p"]

    def stat(s: dict) -> list:
        return [s["n"], s["median_ppl_positive"], s["median_ppl_hardest_negative"],
                s["rank_biserial"], s["effect"], f"{s['p_value']:.2g}"]

    for bench in _load(benchmark):
        out[bench.name] = res = perplexity_audit_benchmark(bench, lm_path, device)
        click.echo(f"[{safe_text(bench.name)}] perplexity audit under {lm_path}")
        if "compass" in res:
            tab = res["compass"]
            click.echo("skill-targeted negatives (COMPASS Table 4), hardest negative per item")
            click.echo(format_table(["level", "negative_type", *stat_cols],
                                    [[r["level"], r["negative_type"], *stat(r)]
                                     for r in tab["skill"]]))
            click.echo("composed captions (COMPASS Table 5)")
            click.echo(format_table(["level", *stat_cols],
                                    [[r["level"], *stat(r)] for r in tab["composed"]]))
            click.echo(f"decomposed items excluded (COMPASS App. B.5): "
                       f"{tab['decomposed_excluded']}")
            continue
        rows = [[t, *stat(s)] for t, s in [*res["by_type"].items(), ("ALL", res["overall"])]]
        click.echo(format_table(["edit_type", *stat_cols], rows))
    _write_json(out, json_path)


@audit.command(short_help="SugarCrepe adversarial refinement: balance two blind scorers.")
@click.argument("benchmark")
@click.option("--scorer", "scorers", nargs=2, default=("length", "ngram"), show_default=True,
              help="The two blind scorers whose gaps span the grid: length, ngram, minilm, "
                   "lm:DIR, or hf:DIR (any local sequence classifier or causal LM, e.g. the "
                   "paper's grammar model and Vera; hf:DIR?label=N picks a label).")
@click.option("--grid", "k", default=100, show_default=True,
              help="K equal bins per axis over [-1, 1] (SugarCrepe App. D.3: 100 x 100); the "
                   "same K as `construct sugarcrepe --grid`, whose default auto shrinks it "
                   "for small caption sets.")
@click.option("--zero-bin", is_flag=True,
              help="foilbench's grid: K bins (even) plus one for exact-zero gaps, so blind "
                   "ties are kept rather than traded against small positive gaps.")
@click.option("--folds", default=5, show_default=True, help="Cross-fitting folds of the gaps.")
@click.option("--seed", default=0, show_default=True,
              help="Seed of the cross-fitting fold assignment.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Write the kept item_ids (JSON list).")
def refine(benchmark: str, scorers: tuple[str, str], k: int, zero_bin: bool, folds: int,
           seed: int, out_path: str | None) -> None:
    """Adversarial refinement (SugarCrepe Algorithm 1) of a choice BENCHMARK.

    The two scorers' held-out (cross-fitted) positive-minus-negative gaps in [-1, 1]
    (probability scorers as they are, others scaled by the largest gap) place each item on a
    K x K grid (App. D.3: 100 x 100), one grid per edit type; each cell and its point
    reflection are balanced by subsampling, so neither blind scorer can prefer positives.
    Prints blind accuracy before and after, per edit type.
    """
    import numpy as np

    from foilbench.audit.blind import oriented_gaps
    from foilbench.audit.refinement import refine as run_refine
    from foilbench.audit.text import choice_captions, cluster_labels, edit_types

    for bench in _load(benchmark):
        caps, types = choice_captions(bench), edit_types(bench)
        ga, gb = (oriented_gaps(caps, types, cluster_labels(bench), s, folds, seed)
                  for s in scorers)
        kept_ids = []
        rows = []
        for t in sorted(set(types.tolist())):
            m = np.flatnonzero(types == t)
            res = run_refine(ga[m], gb[m], k, seed, zero_bin=zero_bin)
            kept_ids += bench.items["item_id"].iloc[m[res.kept]].tolist()
            rows.append([t, len(m), len(res.kept), res.before["a"], res.after["a"],
                         res.before["b"], res.after["b"]])
        a, b = scorers
        grid = f"{k} bins per axis" + (" + zero bin" if zero_bin else " (App. D.3)")
        click.echo(f"[{safe_text(bench.name)}] refinement, {grid}, gaps of "
                   f"({a}, {b}), held out over {folds} folds")
        click.echo(format_table(["edit_type", "n", "kept", f"{a}_before", f"{a}_after",
                                 f"{b}_before", f"{b}_after"], rows))
        if out_path:
            write_json(out_path, kept_ids, indent=None)
            click.echo(f"wrote {out_path}", err=True)
        if not kept_ids:
            coarser = f" or a coarser grid (--grid {max(2, k // 10)})" if k > 4 else ""
            raise click.ClickException(
                f"[{safe_text(bench.name)}] the refinement kept 0 of {len(bench)} items: an "
                f"item is kept only when the cell mirrored through the origin of the {k} x {k} grid (the "
                f"scorers preferring the negative as much) holds items too, and no cell's "
                f"mirror does. The blind scorers prefer the positives nearly everywhere (`foilbench "
                f"audit blind` shows by how much), or the grid is too fine for this many items: "
                f"try other --scorer pairs{coarser}, or more items.")


@audit.command(short_help="CompoSET dataset controls: pixel, caption and similarity checks.")
@click.argument("benchmark")
@click.option("--model", default=None, help="Model spec for the within- vs across-scene image "
                                           "similarity gap (omit to skip it).")
@click.option("--text-model", type=click.Path(path_type=Path), default=None,
              help="Local copy of the paper's sentence encoder (all-mpnet-base-v2, saved by "
                   "sentence-transformers or transformers) for the caption cosine; without it "
                   "the shipped MiniLM is the labelled fallback.")
@click.option("--no-minilm", is_flag=True, help="Skip the fallback MiniLM caption cosine.")
@click.option("--lpips", "lpips_weights", type=click.Path(path_type=Path), default=None,
              help="Local torchvision backbone weights for LPIPS (e.g. "
                   "alexnet-owt-7be5be79.pth, or a folder holding it).")
@click.option("--lpips-net", type=click.Choice(["alex", "vgg"]), default="alex",
              show_default=True, help="LPIPS backbone (CompoSET reports both).")
@click.option("--dinov2", "dinov2_dir", type=click.Path(path_type=Path), default=None,
              help="Local transformers Dinov2Model folder (e.g. dinov2-base) for the CLS "
                   "cosine between base and foil images.")
@click.option("--no-pixels", is_flag=True, help="Skip pixel metrics (no images needed).")
@click.option("--json-out", "--json", "json_path", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write the summary (per benchmark) as JSON to FILE." + JSON_OUT_OLD_NAME)
def controls(benchmark: str, model: str | None, text_model: Path | None, no_minilm: bool,
             lpips_weights: Path | None, lpips_net: str, dinov2_dir: Path | None,
             no_pixels: bool, json_path: str | None) -> None:
    """Dataset-control audits (CompoSET section 4, App. F) of a pair BENCHMARK: pixel change
    between base and foil images (MAE, L2, L-inf, fraction affected, SSIM, MS-SSIM; LPIPS and
    DINOv2 CLS cosine with local weights), caption change per tier (BPE-token Levenshtein,
    fraction of tokens changed, sentence cosine under --text-model, else MiniLM) and, with
    --model, the within-pair vs across-scene image similarity gap."""
    from foilbench.analysis.controls import audit_controls
    from foilbench.data.registry import resolve_benchmarks

    out = {}
    for bench in resolve_benchmarks(benchmark, check_images=not no_pixels):
        summary = audit_controls(bench, model=model, minilm=not no_minilm,
                                 pixels=not no_pixels, text_model=text_model,
                                 lpips=lpips_weights, lpips_net=lpips_net,
                                 dinov2=dinov2_dir)["summary"]
        out[bench.name] = summary
        click.echo(f"[{safe_text(bench.name)}] dataset controls, {summary['n_items']} items")
        sm = summary.get("sentence_model")
        if sm:
            click.echo(f"caption cosine: {sm['name']} ({sm['column']}"
                       + ("" if sm.get("paper_model") else
                          "; not the paper's all-mpnet-base-v2") + ")")
        if "pixels" in summary:
            click.echo(format_table(["pixel metric", "mean"], summary["pixels"].items()))
        tiers = summary.get("text_by_tier", {})
        if tiers:
            cols = list(next(iter(tiers.values())))
            click.echo(format_table(["tier", *cols],
                                    [[t, *[v[c] for c in cols]] for t, v in tiers.items()]))
        if "similarity_gap" in summary:
            click.echo(json.dumps(summary["similarity_gap"], indent=2, default=str))
    _write_json(out, json_path)


@audit.command(short_help="Auto-Comp survival per stage by condition, and filter shift.")
@click.argument("construction", type=click.Path(exists=True))
@click.option("--target", type=click.Choice(["created", "uniform"]), default="created",
              show_default=True, help="Target prior: the labels the sampler asked for, or "
                                      "uniform over them.")
@click.option("--json-out", "--json", "json_path", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write the tables as JSON to FILE." + JSON_OUT_OLD_NAME)
def filters(construction: str, target: str, json_path: str | None) -> None:
    """Auto-Comp Tables 3, 4 and 16 from CONSTRUCTION (an output folder of `foilbench
    construct autocomp`, or its construction_log.jsonl): survival per validation stage in the
    Minimal and Contextual tracks with the Contextual - Minimal shift, and the label / object
    distribution shift of what was kept from the target prior (total variation, share of
    labels within 0.5-1.5x and below 0.25x the target; `mean` rows average the conditions,
    as Table 4 does)."""
    from foilbench.analysis.autocomp_filters import (
        filter_shift,
        read_records,
        survival_by_condition,
    )
    from foilbench.cli._table import frame_table

    try:
        records = read_records(construction)
        survival = survival_by_condition(records)
        shift = filter_shift(records, target=target)
    except (FileNotFoundError, ValueError) as e:
        raise FoilbenchError(str(e)) from None
    click.echo("survival per stage, Minimal vs Contextual (shift = Contextual - Minimal)")
    click.echo(frame_table(survival))
    click.echo(f"\nfilter-induced distribution shift (target prior: {target})")
    click.echo(frame_table(shift))
    _write_json({"survival": survival.to_dict("records"), "filter_shift":
                 shift.to_dict("records")}, json_path)


@audit.command(short_help="CompoSET App. F.3: detected objects per image (OWLv2 protocol).")
@click.argument("benchmarks", nargs=-1, required=True)
@click.option("--detector", required=True, help="hf-det:DIR (OWLv2 in the paper).")
@click.option("--classes", "classes_file", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Text file, one class prompt per line (the paper's 116 classes).")
@click.option("--people", default="person", show_default=True,
              help="Comma-separated labels counted as people (excluded in the primary row).")
@click.option("--n", "n_images", default=200, show_default=True,
              help="Images per benchmark (one base image per scene for pair benchmarks; the "
                   "paper: 50 CompoSET scenes, 200 images elsewhere).")
@click.option("--seed", default=42, show_default=True,
              help="Seed of the image sample (--n images per benchmark).")
@click.option("--threshold", "thresholds", multiple=True, type=float, default=(0.3,),
              show_default=True, help="Score threshold (repeatable: 0.2, 0.3, 0.4).")
@click.option("--iou", default=0.5, show_default=True, help="Class-agnostic NMS IoU.")
@click.option("--device", default="auto", show_default=True,
              help="Where the detector runs: auto, cpu, cuda, cuda:N or mps.")
@click.option("--json-out", "--json", "json_path", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write the tables as JSON to FILE." + JSON_OUT_OLD_NAME)
def objects(benchmarks, detector, classes_file, people, n_images, seed, thresholds, iou,
            device, json_path) -> None:
    """Objects per image under one detector protocol (CompoSET App. F.3, Table 7): score
    threshold, class-agnostic NMS, people excluded and included; mean, median, std, p25, p75,
    max per benchmark."""
    import pandas as pd

    from foilbench.analysis.object_counts import object_counts
    from foilbench.cli._table import frame_table
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.data.registry import resolve_benchmark

    classes = [c.strip() for c in classes_file.read_text(encoding="utf-8").splitlines()
               if c.strip()]
    if not classes:
        raise FoilbenchError(f"{classes_file}: no class names (one per line)")
    det = resolve_backend("detector", detector, device=device)
    tables = []
    for spec in benchmarks:
        _, table = object_counts(resolve_benchmark(spec), det, classes, n_images, seed,
                                 thresholds, iou, [p for p in people.split(",") if p])
        tables.append(table)
    table = pd.concat(tables, ignore_index=True)
    click.echo(frame_table(table))
    _write_json({"objects": table.to_dict("records")}, json_path)


def _add_drift() -> None:
    """``audit drift`` lives in its own module (cli/audit_drift_cmd.py) to keep files small."""
    from foilbench.cli.audit_drift_cmd import drift

    audit.add_command(drift)


_add_drift()
