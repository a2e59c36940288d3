"""Build COMPASS-style benchmarks (kind ``choice``) from the world or from VG files.

``build_compass_benchmark`` samples world scenes, renders them, writes their scene graphs
(``scene_graphs.json``, Visual Genome format) where the items will go, and builds the composed,
decomposed and skill-targeted rows of ``foilbench.construct.compass.captions``; the caller writes the
benchmark (the suite, or ``foilbench compass build-synth``). The same seed gives byte-identical
files. ``build_compass_from_vg`` does the same for user scene graphs and images.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from foilbench.construct.compass.captions import compass_rows
from foilbench.construct.compass.negatives import PrimitivePools
from foilbench.construct.compass.realise import Realiser, TemplateRealiser
from foilbench.construct.compass.sampling import LEVELS
from foilbench.construct.compass.scene_graph import SceneGraph, write_scene_graphs
from foilbench.construct.compass.vg import (
    IMAGE_SUFFIXES,
    ImageIndex,
    describe,
    levels_yielded,
    read_vg_file,
    skip_counts,
)
from foilbench.construct.compass.world_graph import scene_graph_from_world
from foilbench.data.format import Benchmark, Manifest, make_benchmark, write_benchmark
from foilbench.errors import FoilbenchError
from foilbench.kinds import ChoiceKind
from foilbench.scoring.progress import steps

SCENE_GRAPHS_FILE = "scene_graphs.json"
SYNTH_NAME = "compass-synth"
DESCRIPTION = (
    "COMPASS-style captions from scene graphs at levels L1 (O), L2-OA, L2-OR, L3-OAR. "
    "role=composed: [caption, one hard negative per primitive]; role=decomposed: "
    "[d_i, d~_i] with the same perturbation as c~_i; role=skill: [caption, exactly K=4 "
    "negatives of one primitive type; captions with fewer valid negatives get no skill item "
    "of that type, counted in skill_items_dropped_fewer_than_k]. "
    "Analyse with `foilbench compass tables RUN_ID`."
)


def _rows_to_benchmark(rows: list[dict], name: str, root: Path, source: str,
                       extras: dict) -> Benchmark:
    if not rows:
        raise FoilbenchError(f"{name}: no captions could be built (graphs too small or no "
                             "valid replacements); nothing to write")
    items = pd.DataFrame(rows)
    manifest = Manifest(name=name, kind=ChoiceKind.name, version="1", license="MIT", source=source,
                        description=DESCRIPTION, extras=extras)
    return make_benchmark(manifest, items, root)


def build_compass_benchmark(out_dir: str | Path, seed: int = 0, n_scenes: int = 40,
                            size: int = 160, per_level: int = 1,
                            n_objects: tuple[int, int] = (3, 8), condition: str = "minimal",
                            realiser: Realiser | None = None,
                            progress: Any = True) -> Benchmark:
    """Render ``n_scenes`` world scenes under ``out_dir`` and return a COMPASS-style benchmark
    rooted there (the caller writes it: :func:`foilbench.data.format.write_benchmark`).

    Scene j is drawn from ``default_rng([seed, j])`` with 3 to 8 objects (so relation levels
    exist and N can grow); captions use the template realiser unless ``realiser`` is given."""
    from foilbench.construct.compass.world_graph import world_pools
    from foilbench.world.render import png_bytes, render
    from foilbench.world.sample import sample_scene

    lo, hi = n_objects
    if not 1 <= lo <= hi:
        raise ValueError(f"n_objects must be (low, high) with 1 <= low <= high, got {n_objects}")
    if n_scenes < 1:
        raise ValueError(f"n_scenes must be at least 1, got {n_scenes}")
    realiser = realiser or TemplateRealiser()
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    graphs: list[tuple[SceneGraph, str]] = []
    for j in steps(progress, range(n_scenes), "suite: compass scenes", "scene"):
        rng = np.random.default_rng([seed, j])
        scene = sample_scene(rng, int(rng.integers(lo, hi + 1)), condition,
                             scene_id_prefix="compass-")
        rel = f"images/{j:04d}-{scene.scene_id}.png"
        (out / rel).write_bytes(png_bytes(render(scene, size)))
        graphs.append((scene_graph_from_world(scene, image=rel), rel))
    write_scene_graphs([g for g, _ in graphs], out / SCENE_GRAPHS_FILE)
    counts: dict = {}
    rows = compass_rows(graphs, world_pools(), seed=seed, realiser=realiser, per_level=per_level,
                        stats=counts)
    extras = {"builder": SYNTH_NAME, "seed": seed, "n_scenes": n_scenes, "size": size,
              "categories": "foilbench/construct/compass/data/categories.json (strict)",
              "similarity_filter": "all-MiniLM-L6-v2, shipped world table, objects and "
                                   "attributes kept when cosine < 0.8",
              "per_level": per_level, "n_objects": list(n_objects), "condition": condition,
              "realiser": realiser.name, "levels": list(LEVELS), **counts}
    return _rows_to_benchmark(rows, SYNTH_NAME, out, "foilbench procedural world", extras)


def build(out_dir, *, seed: int = 0, size: int = 160, progress: Any = True,
          **cfg) -> list[Benchmark]:
    """The suite-part contract (:mod:`foilbench.construct.suite`): render under
    ``out_dir/compass-synth``; ``cfg`` takes the other arguments of
    :func:`build_compass_benchmark`."""
    return [build_compass_benchmark(Path(out_dir) / SYNTH_NAME, seed=seed, size=size,
                                    progress=progress, **cfg)]


def vg_pools(graphs, categories: str | Path | None = None, category_policy: str = "strict",
             similarity: float | None = None) -> PrimitivePools:
    """Pools of a VG file with COMPASS §3.2's rules: same-category candidates (the shipped
    table, or ``categories`` as a path), less the names of the same, a broader or a
    narrower thing (:mod:`foilbench.construct.compass.lexicon`, counted per reason), then
    the Sentence-Transformer filter at threshold ``similarity`` (None: off) with the local
    MiniLM model."""
    from foilbench.construct.compass.categories import CategoryTable
    from foilbench.construct.compass.lexicon import Lexicon
    from foilbench.construct.compass.similarity import SimilarityFilter

    table = CategoryTable.from_path(categories) if categories else CategoryTable.shipped()
    sim = SimilarityFilter.minilm(similarity) if similarity is not None else None
    return PrimitivePools.from_graphs(graphs).with_rules(table, category_policy, sim,
                                                         Lexicon.shipped())


def build_compass_from_vg(scene_graphs: str | Path, images_dir: str | Path,
                          out_dir: str | Path, seed: int = 0, per_level: int = 1,
                          limit: int | None = None,
                          realiser: Realiser | None = None,
                          categories: str | Path | None = None,
                          category_policy: str = "strict",
                          similarity: float | None = None) -> tuple[Benchmark, dict]:
    """A COMPASS-style benchmark from a VG scene-graph file and its images.

    ``scene_graphs`` may be VG's ``scene_graphs.json``, ``objects.json`` or
    ``relationships.json`` (:mod:`foilbench.construct.compass.vg` says what each yields);
    ``images_dir`` a folder of ``<image_id>.jpg`` or the release root holding ``VG_100K/`` and
    ``VG_100K_2/``. Replacement pools are every object name (all of each object's names),
    attribute and predicate of the whole file, narrowed to the replaced word's category
    (:func:`vg_pools`; ``category_policy="any"`` keeps the whole pool for words of no known
    category) and, with ``similarity`` (e.g. 0.8), filtered for near-synonyms. Returns the benchmark and a report
    ``{"graphs", "used", "missing_image", "layout", "levels", "lines", "hint", **skip_counts}``
    (``lines``: what the CLI prints about the file)."""
    realiser = realiser or TemplateRealiser()
    images = Path(images_dir)
    if not images.is_dir():
        raise FoilbenchError(f"images folder not found: {images}")
    vg = read_vg_file(scene_graphs)
    pools = vg_pools(vg.graphs, categories, category_policy, similarity)
    chosen = vg.graphs if limit is None else vg.graphs[:limit]
    index = ImageIndex(images)
    pairs, missing = [], []
    for g in chosen:
        rel = index.find(g)
        (pairs.append((g, rel)) if rel is not None else missing.append(g.image_id))
    if not pairs:
        where = " or ".join(str(f) for f in index.folders)
        raise FoilbenchError(f"none of the {len(chosen)} scene graphs has an image in {where} "
                             f"(looked for <image_id>{'/'.join(IMAGE_SUFFIXES)}, "
                             f"e.g. {chosen[0].image_id}.jpg)" if chosen else
                             f"{scene_graphs}: no scene graphs")
    skill_counts: dict = {}
    rows = compass_rows(pairs, pools, seed=seed, realiser=realiser, per_level=per_level,
                        stats=skill_counts)
    counts = skip_counts(chosen)
    totals = {k: v for k, v in counts.items() if k != "dangling_by_image"}
    extras = {"builder": "compass-vg", "seed": seed, "per_level": per_level,
              "realiser": realiser.name, "scene_graphs": str(scene_graphs),
              "categories": pools.categories.source, "category_policy": category_policy,
              "uncategorised_replacements": dict(pools.uncategorised),
              "lexical_exclusions": {"source": pools.lexicon.source,
                                     "excluded": dict(sorted(pools.excluded.items())),
                                     "counting": "candidate removals over all draws: a "
                                                 "candidate removed for several primitives or "
                                                 "draws counts each time"},
              "similarity_filter": pools.similarity.describe() if pools.similarity else None,
              "layout": vg.layout, "levels": levels_yielded(chosen),
              "missing_image": len(missing), **totals, **skill_counts}
    bench = _rows_to_benchmark(rows, "compass-vg", images, f"scene graphs {scene_graphs}", extras)
    write_benchmark(bench, out_dir)
    write_scene_graphs([g for g, _ in pairs], Path(out_dir) / SCENE_GRAPHS_FILE)
    report = {"graphs": len(chosen), "used": len(pairs), "missing_image": len(missing),
              "layout": vg.layout, "levels": levels_yielded(chosen),
              "lines": describe(vg, chosen), "hint": index.hint() if missing else None,
              **counts, **skill_counts}
    return bench, report
