"""Write the world's CompoSET-style ``pair`` benchmark: scenes x single-edit foils x 3 tiers.

Each base scene is rendered once and shared by its foils. A foil's edit mask is the union of the
edited objects' footprints (object, shadow, glow) in the base and the foil render; every pixel
outside it is identical between base and foil, which :func:`build_pairs` asserts for every pair.
Images and masks are deterministic PNGs and the table is written in item order, so the same seed
and version give byte-identical files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from foilbench.construct.composet.pair_plan import BENCHMARK_SEED_STREAM, plan_benchmark
from foilbench.data.format import Benchmark, Manifest, make_benchmark
from foilbench.world.captions import TIERS, edit_captions
from foilbench.world.edit_core import Edit
from foilbench.world.render import Layers, png_bytes, render_layers

BENCHMARK_NAME = "world-pairs"
MIN_FOILS_PER_SCENE = 15


class MaskViolation(AssertionError):
    """A foil changed pixels outside its edit mask (a renderer or edit bug, never data)."""


def edit_mask(edit: Edit, base: Layers, foil: Layers) -> np.ndarray:
    """Union of the edited objects' footprints in the base and the foil render."""
    return base.union_mask(edit.base_indices) | foil.union_mask(edit.foil_indices)


def check_outside_mask(base: Image.Image, foil: Image.Image, mask: np.ndarray) -> int:
    """Number of pixels outside ``mask`` that differ (must be 0)."""
    diff = (np.asarray(base) != np.asarray(foil)).any(axis=2)
    return int((diff & ~mask).sum())


def _write_png(root: Path, rel: str, image: Image.Image) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(image))


def _rows(scene_id: str, k: int, edit: Edit, paths: dict[str, str]) -> list[dict]:
    captions = edit_captions(edit)
    params = json.dumps(edit.params, sort_keys=True, default=str)
    return [{
        "item_id": f"{scene_id}-f{k:02d}-{tier}",
        **paths,
        "caption_base": captions[tier][0],
        "caption_foil": captions[tier][1],
        "scene_id": scene_id,
        "edit_type": edit.edit_type,
        "category": edit.category,
        "operation": edit.operation,
        "tier": tier,
        "n_objects": len(edit.base.objects),
        "condition": edit.base.condition,
        "split": "test",
        "foil_id": f"{scene_id}-f{k:02d}",
        "edit_params": params,
    } for tier in TIERS]


def build_pairs(out_dir, seed: int = 0, n_scenes: int = 80, foils_per_scene: int = 16,
                size: int = 160, progress: Any = True) -> Benchmark:
    """Render the pair benchmark's images and masks under ``out_dir`` and return the
    benchmark rooted there (the caller writes it: :func:`foilbench.data.format.write_benchmark`).

    ``n_scenes`` scenes (alternating Minimal and Contextual, 3 to 6 objects) with
    ``foils_per_scene`` visible single edits each, spread over the edit types; one item per
    (foil, tier). Raises :class:`MaskViolation` if any pixel outside an edit mask changed.
    """
    from foilbench.scoring.progress import steps

    if foils_per_scene < 1 or n_scenes < 1:
        raise ValueError(f"n_scenes and foils_per_scene must be positive, got {n_scenes} and "
                         f"{foils_per_scene}")
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    plan = plan_benchmark(seed, n_scenes, foils_per_scene)
    for planned in steps(progress, plan, "suite: world pairs", "scene"):
        scene = planned.scene
        sid = scene.scene_id
        base = render_layers(scene, size)
        base_rel = f"images/{sid}/base.png"
        _write_png(root, base_rel, base.image)
        k = 0
        for edit in planned.edits:
            foil = render_layers(edit.foil, size)
            mask = edit_mask(edit, base, foil)
            changed = (np.asarray(base.image) != np.asarray(foil.image)).any(axis=2)
            if not changed.any():
                continue  # an edit the renderer cannot show at this size; a spare replaces it
            outside = check_outside_mask(base.image, foil.image, mask)
            if outside:
                raise MaskViolation(f"{sid} {edit.edit_type}: {outside} pixels outside the edit "
                                    "mask differ between base and foil")
            paths = {"image_base": base_rel, "image_foil": f"images/{sid}/foil_{k:02d}.png",
                     "mask": f"masks/{sid}/foil_{k:02d}.png"}
            _write_png(root, paths["image_foil"], foil.image)
            _write_png(root, paths["mask"], Image.fromarray(mask.astype(np.uint8) * 255, "L"))
            rows.extend(_rows(sid, k, edit, paths))
            k += 1
            if k == foils_per_scene:
                break
        if k < min(foils_per_scene, MIN_FOILS_PER_SCENE):
            raise RuntimeError(f"scene {sid} kept only {k} visible foils")
    manifest = Manifest(
        name=BENCHMARK_NAME, kind="pair", license="MIT",
        source=f"foilbench.world procedural renderer (seed {seed}, stream "
               f"{BENCHMARK_SEED_STREAM:#x}, {size}px)",
        description="CompoSET-style same-scene single-edit pairs at three caption tiers "
                    "(short, medium, long), with edit masks (column 'mask').",
        extras={"seed": seed, "n_scenes": n_scenes, "foils_per_scene": foils_per_scene,
                "size": size},
    )
    bench = make_benchmark(manifest, pd.DataFrame(rows), root)
    return bench


def build(out_dir, *, seed: int = 0, size: int = 160, progress: Any = True,
          **cfg) -> list[Benchmark]:
    """The suite-part contract (:mod:`foilbench.construct.suite`): render under
    ``out_dir/world-pairs``; ``cfg`` takes ``n_scenes`` and ``foils_per_scene``."""
    return [build_pairs(Path(out_dir) / BENCHMARK_NAME, seed=seed, size=size,
                        progress=progress, **cfg)]
