"""``foilbench compass``: build COMPASS-style benchmarks and print their gap and skill-load
tables. Thin wiring over ``foilbench.construct.compass.build`` and ``foilbench.analysis.compass``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from foilbench.cli.options import SIMILARITY_DEFAULT, SIMILARITY_HELP, SIMILARITY_TYPE
from foilbench.display import safe_message, safe_text

CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT)
def compass() -> None:
    """COMPASS scene-graph captions: integration gap and skill load.

    \b
    A COMPASS-style benchmark holds, per caption built from a scene graph:
      composed    the caption against one hard negative per primitive (c~_i)
      decomposed  each primitive alone (d_i) against the same perturbation (d~_i)
      skill       the caption against K=4 negatives that all change one primitive type
    Evaluate it with `foilbench run --benchmark DIR`, then `foilbench compass tables RUN_ID`.

    \b
    Examples:
      foilbench compass build-synth --out compass_synth
      foilbench compass build --scene-graphs VG/scene_graphs.json --images VG --out vg_compass
      foilbench compass tables 3f9c2a --db foilbench-runs/foilbench.duckdb
    """


@compass.command("build-synth", context_settings=CONTEXT,
                 short_help="Build a COMPASS-style set from the procedural world.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the benchmark to (created).")
@click.option("--seed", default=0, show_default=True, help="Same seed, byte-identical files.")
@click.option("--n-scenes", default=40, show_default=True, help="World scenes to render.")
@click.option("--size", default=160, show_default=True, help="Image side in pixels.")
@click.option("--per-level", default=1, show_default=True,
              help="Captions per structural level (L1, L2-OA, L2-OR, L3-OAR) per scene.")
def build_synth(out_dir: Path, seed: int, n_scenes: int, size: int, per_level: int) -> None:
    """Render procedural-world scenes and write a COMPASS-style benchmark (offline).

    The world's scene graphs are written next to the items as scene_graphs.json
    (Visual Genome format).
    """
    from foilbench.construct.compass.build import build_compass_benchmark
    from foilbench.data.format import write_benchmark

    bench = build_compass_benchmark(out_dir, seed=seed, n_scenes=n_scenes, size=size,
                                    per_level=per_level)
    write_benchmark(bench, out_dir)
    _summary(bench, out_dir)


@compass.command("build", context_settings=CONTEXT,
                 short_help="Build a COMPASS-style set from Visual Genome graphs.")
@click.option("--scene-graphs", "graphs_file", required=True,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Visual Genome scene_graphs.json (a list of image records); "
                   "objects.json (L1 only) and relationships.json (L1, L2-OR) also work.")
@click.option("--images", "images_dir", required=True,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Folder with the images, named <image_id>.jpg (or the record's 'image'), "
                   "or the VG release root holding VG_100K/ and VG_100K_2/.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the benchmark to; images are copied under it.")
@click.option("--seed", default=0, show_default=True,
              help="Seed of the walks and of each replacement drawn; same seed, same files.")
@click.option("--per-level", default=1, show_default=True, help="Captions per level per image.")
@click.option("--limit", type=int, default=None, help="Use only the first LIMIT scene graphs.")
@click.option("--categories", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="Your category table (JSON, the layout of the shipped one).")
@click.option("--category-policy", type=click.Choice(["strict", "any"]), default="strict",
              show_default=True, help="A word of no known category: no negative (COMPASS "
                                      "§3.2), or any absent word of its kind.")
@click.option("--similarity", type=SIMILARITY_TYPE, default=SIMILARITY_DEFAULT,
              show_default=True,
              help=SIMILARITY_HELP)
def build(graphs_file: Path, images_dir: Path, out_dir: Path, seed: int, per_level: int,
          limit: int | None, categories: Path | None, category_policy: str,
          similarity: float | None) -> None:
    """Build a COMPASS-style benchmark from your own Visual Genome scene graphs.

    Hard negatives replace one primitive by a word of the same category (COMPASS §3.2; the
    shipped category table, looked up by VG synset first) that is nowhere in that image's
    graph, compared by lemma (every name of every object, every attribute and predicate,
    counts). Relationships whose subject or object is not
    among the image's objects, and blank names, attributes or predicates, are skipped and
    counted.
    """
    from foilbench.construct.compass.build import build_compass_from_vg

    bench, report = build_compass_from_vg(graphs_file, images_dir, out_dir, seed=seed,
                                          per_level=per_level, limit=limit,
                                          categories=categories,
                                          category_policy=category_policy,
                                          similarity=similarity or None)
    for line in report["lines"]:  # they quote the scene graphs' names
        click.echo(safe_message(line))
    click.echo(f"scene graphs: {report['graphs']}, used: {report['used']}, "
               f"skipped (no image found): {report['missing_image']}")
    if report["hint"]:
        click.echo(f"hint: {report['hint']}")
    _summary(bench, out_dir)


def _summary(bench, out_dir: Path) -> None:
    items = bench.items
    counts = items.groupby(["level", "role"]).size().unstack(fill_value=0)
    click.echo(f"wrote {len(items)} items to {out_dir}")
    click.echo(safe_message(counts.to_string(), None))
    dropped = bench.manifest.extras.get("skill_items_dropped_fewer_than_k")
    if dropped is not None:
        click.echo("skill items dropped (fewer than K = 4 valid negatives): "
                   + ", ".join(f"{safe_text(k)} {v}" for k, v in dropped.items()))


@compass.command("tables", context_settings=CONTEXT,
                 short_help="Integration gap and skill-load tables of runs.")
@click.argument("runs", nargs=-1, required=True)
@click.option("--db", "db_path", default=None, type=click.Path(dir_okay=False),
              help="Results database written by `foilbench run` "
                   "[default: foilbench-runs/foilbench.duckdb].")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False, path_type=Path),
              help="Also write gap.csv, skill_load.csv, table3.csv and tables.md here.")
@click.option("--json", "as_json", is_flag=True, help="Print the tables as JSON records.")
@click.option("--se", "se_type", type=click.Choice(["hc3", "classical"]), default="hc3",
              show_default=True, help="Standard errors of Table 3 (the paper does not say "
                                      "which it used; both are in skill_load.csv).")
def tables(runs: tuple[str, ...], db_path: str | None, out_dir: Path | None,
           as_json: bool, se_type: str) -> None:
    """Integration gap and skill-load (COMPASS Table 3) tables of stored RUNS.

    \b
    gap     per level and caption complexity N: composed R@1 (caption beats all its N
            composed negatives, strict >), decomposed success (every d_i beats d~_i),
            gap = decomposed - composed (mean, std over captions); per level the row
            N=all is COMPASS Table 2 (mean +- std of the per-N gaps across complexities)
            and N=pooled foilbench's mean over all captions
    table2  COMPASS Table 2: Delta in percentage points, mean +- std across N
    table3  OLS  R@1_t = b_O n_O + b_A n_A + b_R n_R + a  per skill t and level,
            "estimate (se)" in percentage points, * p < 0.005, ** p < 0.001 (as the
            paper); --se picks the standard errors (hc3 robust, or classical)
    """
    import pandas as pd

    from foilbench.analysis.compass import compass_tables
    from foilbench.store.db import ResultsStore

    frames = []
    with ResultsStore(db_path, read_only=True) as store:
        for run in runs:
            run_id = store.resolve_run_id(run)
            frames.append(store.load_item_results(run_id).assign(run_id=run_id))
    result = compass_tables(pd.concat(frames, ignore_index=True), se_type=se_type)
    if result["dropped_incomplete"]:
        click.echo(f"note: {result['dropped_incomplete']} caption(s) left out of the gap: "
                   "not all of their decomposed items were scored (partial run)", err=True)
    if result["dropped_k"]:
        click.echo(f"note: {result['dropped_k']} skill item(s) left out of the skill load: "
                   "not exactly K = 4 negatives (COMPASS §6.1)", err=True)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        result["gap"].to_csv(out_dir / "gap.csv", index=False)
        result["skill_load"].to_csv(out_dir / "skill_load.csv", index=False)
        result["table3"].to_csv(out_dir / "table3.csv", index=False)
        result["table2"].to_csv(out_dir / "table2.csv", index=False)
        (out_dir / "tables.md").write_text(_markdown(result))
    if as_json:
        click.echo(json.dumps({k: json.loads(result[k].to_json(orient="records"))
                               for k in ("gap", "table2", "skill_load", "table3")}, indent=2))
    else:  # the tables name the benchmark's skills and levels: escaped on the terminal
        click.echo(safe_message(_markdown(result), None))


def _markdown(result: dict) -> str:
    return ("## Integration gap (decomposed - composed)\n\n" + result["gap_markdown"]
            + "\n## Integration gap across complexities (COMPASS Table 2, pp)\n\n"
            + result["table2_markdown"]
            + "\n## Skill load (COMPASS Table 3)\n\n" + result["table3_markdown"]
            + "\n" + result["table3_note"] + "\n")
