"""``foilbench construct``: build benchmarks the way the papers do, with any backend.

Thin wiring over :func:`foilbench.construct.engine.runner.run_pipeline`; the pipelines, the
stage engine and the backends live in ``foilbench.construct``.
"""

from __future__ import annotations

from pathlib import Path

import click

from foilbench.cli.construct_help import GROUP_HELP
from foilbench.cli.construct_run import (
    _finite,
    _run,
    common_options,
)
from foilbench.cli.construct_spend import spend
from foilbench.cli.options import SIMILARITY_DEFAULT, SIMILARITY_HELP, SIMILARITY_TYPE

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
TEXT_HELP = "Text backend: template (offline), api:anthropic|openai|gemini:MODEL, hf-lm:DIR."
IMAGE_HELP = "Image generator: world (offline), api:gemini-image|openai-image:MODEL, diffusers:DIR."
#: --size range: the renderer's smallest legible scene up to what image APIs generate
SIZES = (32, 2048)
EDIT_HELP = ("Image editor: world (offline, exact masks), api:gemini-image|openai-image:MODEL, "
             "diffusers:DIR (instruction-edit or inpainting).")


@click.group(context_settings=CONTEXT, help=GROUP_HELP)
def construct() -> None:
    pass


construct.add_command(spend)


def _default(spec: str | None, image: str, role: str) -> str | None:
    """Offline validators follow an offline image backend; other images need one named."""
    if spec is not None:
        return None if spec == "none" else spec
    return "world" if image == "world" else None


@construct.command(context_settings=CONTEXT,
                   short_help="CompoSET App. B: same-scene single-edit pairs, 3 caption tiers.")
@click.option("--text", default="template", show_default=True, help=TEXT_HELP)
@click.option("--image", default="world", show_default=True, help=IMAGE_HELP)
@click.option("--edit", default="world", show_default=True, help=EDIT_HELP)
@click.option("--detector", default=None,
              help="Detector (world, hf-det:DIR, or none) for the base check, the count checks "
                   "and the edit region. Default: world with --image world, else none.")
@click.option("--scenes", "scenes_csv", type=click.Path(dir_okay=False, exists=True,
                                                        path_type=Path),
              help="Scene parameters CSV (id,indoor_outdoor,setting[,n_subjects,framing]), "
                   "like CompoSET's scene_settings.csv. Default: drawn settings.")
@click.option("--n-scenes", default=6, show_default=True, type=click.IntRange(min=1),
              help="Scenes to build (CSV: first N).")
@click.option("--foils-per-scene", default=22, show_default=True, type=click.IntRange(min=1),
              help="Foils proposed per scene in step 4 (CompoSET: ~22).")
@click.option("--size", default=256, show_default=True, type=click.IntRange(*SIZES),
              help="Image side in pixels.")
@click.option("--max-drift", default=0.01, show_default=True, callback=_finite,
              type=click.FloatRange(0, 1),
              help="Largest share of changed pixels outside the edit region a foil may have.")
@click.option("--detector-threshold", default=0.3, show_default=True,
              type=click.FloatRange(0, 1), callback=_finite,
              help="Smallest detector score that counts as a detection.")
@click.option("--min-foils", default=15, show_default=True, type=click.IntRange(0),
              help="Drop scenes with fewer kept foils (CompoSET §3: at least 15); 0 keeps all.")
@click.option("--token-counter", type=click.Choice(["auto", "bpe", "bound"]), default="auto",
              show_default=True, help="Long-tier 77-token counter: CLIP BPE (open_clip), a "
              "conservative bound, or auto (BPE when open_clip is installed).")
@click.option("--caption-qc/--no-caption-qc", default=True, show_default=True,
              help="Rewrite each base caption to what its rendered image shows (a --text "
              "backend that reads images) before foils are enumerated.")
@click.option("--recent-scenes", default=5, show_default=True, type=click.IntRange(0),
              help="Recent scene captions shown to step 1 so scenes do not repeat (0: none).")
@click.option("--vqa", default=None,
              help="VQA model (hf-vlm:DIR, api:..., world) for the caption QC when --text "
                   "reads no images: spec objects it does not count are removed.")
@click.option("--bias-variants", is_flag=True,
              help="Also run the *.bias.txt prompt variants of steps 3, 4 and 7 (App. B.3, "
              "which runs them in parallel), reconciled by the self-check and tier checks. "
              "Off by default (twice the text calls of those steps); a run without them "
              "says so in its output and manifest.")
@common_options
def composet(text, image, edit, detector, scenes_csv, n_scenes, foils_per_scene, size,
             max_drift, detector_threshold, min_foils, token_counter, caption_qc,
             recent_scenes, bias_variants, vqa, run) -> None:
    """CompoSET App. B: base scene, base render, instance captions, foil enumeration over
    the 16-type taxonomy, self-check, foil render by editing the base, verbosity tiers;
    then automatic checks (pixel drift outside the edit region, detector counts).

    
    Roles:
      --text      steps 1 (scene spec), 3 (instance captions), 4 (foils), 5 (self-check),
                  7 (medium/long tiers); an API model also sees the base image in 3-4
      --image     step 2 (base render)
      --edit      step 6 (foil = the base image edited); an inpainting editor repaints
                  the detector boxes of the edited object, so give --detector with it
      --detector  optional: base check, count checks, the edit region for the drift check
    world backends draw only what --text template specifies (use them together).

    
    Examples:
      offline   foilbench construct composet --out cs
      API       foilbench construct composet --text api:anthropic:claude-sonnet-4-5 \\
                  --image api:gemini-image:gemini-2.5-flash-image \\
                  --edit api:openai-image:gpt-image-1 --max-spend 20 --out cs
      mixed     foilbench construct composet --text api:openai:gpt-4o \\
                  --image diffusers:./sdxl --edit diffusers:./sd-inpaint \\
                  --detector hf-det:./owlv2 --device cuda --dtype bfloat16 --out cs
      estimate  add --dry-run to see the most calls and USD before spending any
      resume    rerun the same command (same --out): finished calls are reused

    
    Items are pairs (base/foil image x base/foil caption) at three tiers, with mask_path
    (the edit region), scene_caption, foil_id and qc_status = pending. Next:
      foilbench review OUT                      three-phase human QC in the browser
      foilbench review export OUT --out OUT_QC  the accepted benchmark + QC report
      foilbench run --benchmark OUT_QC
    """
    from foilbench.construct.composet.spec import ComposetConfig

    config = ComposetConfig(n_scenes=n_scenes, foils_per_scene=foils_per_scene, size=size,
                            seed=run["seed"], scenes_csv=scenes_csv, max_drift=max_drift,
                            detector_threshold=detector_threshold,
                            min_foils_per_scene=min_foils, token_counter=token_counter,
                            caption_qc=caption_qc, recent_scenes=recent_scenes,
                            bias_variants=bias_variants)
    specs = {"text": text, "image": image, "edit": edit,
             "detector": _default(detector, image, "detector"), "vqa": vqa}
    if not bias_variants:
        from foilbench.construct.composet.variants import departure

        click.echo(f"note: {departure()}")  # on stdout: a --out error still comes first on stderr
    _run("composet", config, specs, run)


@construct.command(context_settings=CONTEXT,
                   short_help="SugarCrepe App. D.2: 7 hard-negative types for your captions.")
@click.argument("captions", type=click.Path(exists=True, path_type=Path))
@click.option("--images", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Folder the caption file's image names are relative to (default: its own).")
@click.option("--text", default="template", show_default=True, help=TEXT_HELP)
@click.option("--types", default="all", show_default=True,
              help="Comma-separated subset of replace_obj,replace_att,replace_rel,swap_obj,"
                   "swap_att,add_obj,add_att.")
@click.option("--captions-per-image", default=1, show_default=True, type=click.IntRange(min=1),
              help="Positive captions used per image (the first ones of each image).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Use only the first LIMIT captions.")
@click.option("--refine/--no-refine", default=True, show_default=True,
              help="Adversarial refinement (SugarCrepe Alg. 1) against blind text scorers.")
@click.option("--scorer", "scorers", nargs=2, default=("length", "ngram"), show_default=True,
              help="The two blind scorers of the refinement: length, ngram, minilm, lm:DIR or "
                   "hf:DIR (a local classifier or causal LM, e.g. the paper's grammar model).")
@click.option("--grid", default="auto", show_default=True,
              help="K x K grid over the gaps (SugarCrepe App. D.3: 100 x 100). auto: 100 where "
                   "it keeps at least half of a type's items, else the largest of 50, 20, 10, "
                   "4, 2 that does (small caption sets).")
@click.option("--zero-bin", is_flag=True,
              help="foilbench's grid: K bins plus one for exact-zero gaps (blind ties kept).")
@common_options
def sugarcrepe(captions, images, text, types, captions_per_image, limit, refine, scorers, grid,
               zero_bin, run) -> None:
    """SugarCrepe App. D.2 hard negatives for your CAPTIONS (a COCO captions JSON with
    'images' and 'annotations', or a list of {"image", "caption"} records). CAPTIONS may
    also be a folder exported by `foilbench review export` after validating the negatives:
    Algorithm 1 then runs on the validated set (the paper's order, §4.1 Stages 2-3).

    Replace and Add take three calls (locate a concept at temperature 0, a new concept at
    1.5, compose at 0); Swap takes one call that first asks whether a swap is possible.
    Then blind text scorers (length, n-gram) and Algorithm 1 remove what they could exploit.
    Human validation (the paper's Stage 2): build with --no-refine, then
    `foilbench review OUT` (keys 1/2/3), `foilbench review export OUT --out V`,
    `foilbench construct sugarcrepe V --out FINAL`.

    
    Roles: --text only (template offline; an LLM for the paper's procedure; Anthropic
    clamps the 1.5 sampling temperature to its maximum of 1, with a warning).
    
    Examples:
      foilbench construct sugarcrepe captions.json --images imgs --out sc
      foilbench construct sugarcrepe captions_val2017.json --images val2017 \\
          --text api:openai:gpt-4o --limit 500 --max-spend 10 --out sc
      foilbench construct sugarcrepe caps.json --text hf-lm:./qwen2.5-7b-instruct \\
          --device cuda --dtype bfloat16 --types replace_att,swap_att --out sc
    Rerun the same command to resume; --dry-run prints the estimate only; --max-spend
    caps the run (foilbench construct -h: backends, spend, resume).
    """
    from foilbench.construct.sugarcrepe.pipeline import TYPES, SugarcrepeConfig

    chosen = tuple(TYPES) if types == "all" else tuple(t.strip() for t in types.split(","))
    if grid != "auto" and not (grid.isdigit() and int(grid) >= 2):
        raise click.BadParameter(f"{grid!r} is neither auto nor a whole number >= 2",
                                 param_hint="--grid")
    config = SugarcrepeConfig(captions=captions, images=images, types=chosen,
                              captions_per_image=captions_per_image, limit=limit,
                              refine=refine, seed=run["seed"], scorers=tuple(scorers),
                              grid=None if grid == "auto" else int(grid), zero_bin=zero_bin)
    _run("sugarcrepe", config, {"text": text}, run)


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {text!r}") from None


@construct.command(context_settings=CONTEXT,
                   short_help="Auto-Comp §3: Minimal/Contextual concepts, Swap/Confusion.")
@click.option("--text", default="template", show_default=True, help=TEXT_HELP)
@click.option("--image", default="world", show_default=True, help=IMAGE_HELP)
@click.option("--detector", default=None, help="Object presence/count detector: world, "
              "hf-det:DIR (default world with --image world).")
@click.option("--vqa", default=None, help="VQA for the attribute/relation check: world, "
              "hf-vlm:DIR, api:PROVIDER:MODEL (default world with --image world).")
@click.option("--tasks", default="color,shape_color,position,relative_size", show_default=True,
              help="Comma-separated Auto-Comp tasks (concept kinds) to build.")
@click.option("--n", "ns", default="2,3", show_default=True, help="Objects per concept (N).")
@click.option("--concepts", "n_concepts", default=4, show_default=True,
              type=click.IntRange(min=1),
              help="Concepts per (task, N).")
@click.option("--vocab", type=click.Path(dir_okay=False, path_type=Path),
              help="JSON with your vocabularies: objects, shapes, colors, relations, "
                   "size_relations (default: the procedural world's), or 'paper' for the "
                   "world's objects with Auto-Comp §4's relation and size words.")
@click.option("--size", default=256, show_default=True, type=click.IntRange(*SIZES),
              help="Image side in pixels.")
@click.option("--detector-threshold", default=0.4, show_default=True,
              type=click.FloatRange(0, 1), callback=_finite,
              help="Smallest detector score that counts (Auto-Comp App. A.6: 0.4).")
@click.option("--text-threshold", default=0.3, show_default=True,
              type=click.FloatRange(0, 1), callback=_finite, help="The detector's text threshold the run expects (App. A.6: 0.3).")
@click.option("--contextual-prompt", type=click.Choice(["paper", "json"]), default="paper",
              show_default=True, help="App. A.2's plain-text prompt, or foilbench's JSON one.")
@common_options
def autocomp(text, image, detector, vqa, tasks, ns, n_concepts, vocab, size, detector_threshold,
             text_threshold, contextual_prompt, run) -> None:
    """Auto-Comp §3: concepts -> Minimal (template, "on a white background") and Contextual
    (LLM-rewritten, semantic preservation checked) captions -> images -> validation (objects
    and counts, white background for Minimal, VQA) -> Swap and Confusion negatives.

    One choice benchmark with both conditions and both negative sets (columns condition,
    negative_set); `paired` marks concepts validated in both conditions. The survival table
    is the analogue of Auto-Comp Table 3: every drop is counted with its reason.

    
    Roles:
      --text      Contextual rewrite (retried with new seeds when a binding is lost)
      --image     text-to-image, both tracks
      --detector  object presence and count (exact class and cardinality)
      --vqa       attribute / relation questions, answers constrained to --vocab;
                  an answer naming no single choice fails the check
    
    Examples:
      offline   foilbench construct autocomp --out ac
      local     foilbench construct autocomp --text hf-lm:./qwen2.5-7b-instruct \\
                  --image diffusers:./sdxl --detector hf-det:./grounding-dino \\
                  --vqa hf-vlm:./llava-1.5-7b --device cuda --dtype bfloat16 --out ac
      API       foilbench construct autocomp --text api:anthropic:claude-sonnet-4-5 \\
                  --image api:openai-image:gpt-image-1 --detector hf-det:./owlv2 \\
                  --vqa api:gemini:gemini-2.5-flash --vocab my_words.json \\
                  --max-spend 30 --out ac
    Rerun the same command to resume; --dry-run prints the estimate only; --max-spend
    caps the run (foilbench construct -h: backends, spend, resume).
    """
    from foilbench.construct.autocomp.pipeline import AutocompConfig

    config = AutocompConfig(tasks=tuple(t.strip() for t in tasks.split(",")), ns=_ints(ns),
                            n_concepts=n_concepts, vocab=vocab, size=size, seed=run["seed"],
                            detector_threshold=detector_threshold,
                            text_threshold=text_threshold, contextual_prompt=contextual_prompt)
    specs = {"text": text, "image": image, "detector": _default(detector, image, "detector"),
             "vqa": _default(vqa, image, "vqa")}
    _run("autocomp", config, specs, run)


@construct.command(context_settings=CONTEXT,
                   short_help="COMPASS §3: scene-graph captions worded by a text backend.")
@click.option("--text", default="template", show_default=True, help=TEXT_HELP)
@click.option("--scene-graphs", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Visual Genome scene_graphs.json (default: procedural-world graphs).")
@click.option("--images", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Images of the scene graphs (<image_id>.jpg or the record's 'image').")
@click.option("--n-scenes", default=12, show_default=True, type=click.IntRange(min=1),
              help="World scenes (no --scene-graphs).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Use only the first LIMIT scene graphs.")
@click.option("--per-level", default=1, show_default=True, type=click.IntRange(min=1),
              help="Captions per level per image.")
@click.option("--on-violation", type=click.Choice(["drop", "template"]), default="drop",
              show_default=True, help="A worded caption failing a structural check is dropped, "
                                      "or its failing texts fall back to the template.")
@click.option("--category-policy", type=click.Choice(["strict", "any"]), default="strict",
              show_default=True, help="A word of no known category: no negative (COMPASS "
                                      "§3.2, same category only), or any absent word.")
@click.option("--similarity", type=SIMILARITY_TYPE, default=SIMILARITY_DEFAULT,
              show_default=True,
              help=SIMILARITY_HELP)
@common_options
def compass(text, scene_graphs, images, n_scenes, limit, per_level, on_violation,
            category_policy, similarity, run) -> None:
    """COMPASS §3: captions from scene-graph walks at levels L1 / L2-OA / L2-OR / L3-OAR,
    worded by the text backend, with structural checks on every worded caption
    (all primitives said, attributes bound, relations in order, nothing else).

    
    Roles: --text only (template words the graph exactly; an LLM words it naturally and
    is checked). Examples:
      foilbench construct compass --out cp
      foilbench construct compass --scene-graphs scene_graphs.json --images VG_100K \\
          --text api:openai:gpt-4o --limit 200 --max-spend 5 --out cp
    Rerun the same command to resume; --dry-run prints the estimate only; --max-spend
    caps the run (foilbench construct -h: backends, spend, resume).
    """
    from foilbench.construct.compass.pipeline import CompassConfig

    config = CompassConfig(scene_graphs=scene_graphs, images=images, n_scenes=n_scenes,
                           limit=limit, per_level=per_level, seed=run["seed"],
                           on_violation=on_violation, category_policy=category_policy,
                           similarity=similarity or None)
    _run("compass", config, {"text": text}, run)
