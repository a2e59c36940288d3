"""The world pair benchmark: counts, masks (pixels outside identical), byte-identical rebuilds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from foilbench.construct.composet.pair_plan import benchmark_scene_signatures
from foilbench.construct.composet.pairs import build_pairs
from foilbench.data.format import load_benchmark, write_benchmark
from foilbench.world.captions import TIERS
from foilbench.world.edits import EDIT_TYPES
from foilbench.world.sample import scene_signature

N_SCENES, FOILS, SIZE = 3, 15, 96


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs")
    write_benchmark(build_pairs(out, seed=5, n_scenes=N_SCENES, foils_per_scene=FOILS,
                                size=SIZE, progress=False), out)
    return out


def test_counts_and_metadata(built):
    bench = load_benchmark(built)
    items = bench.items
    assert bench.kind == "pair"
    assert items["scene_id"].nunique() == N_SCENES
    assert len(items) == N_SCENES * FOILS * len(TIERS)
    assert (items.groupby("scene_id")["foil_id"].nunique() == FOILS).all()
    assert items.groupby("foil_id")["tier"].apply(lambda t: sorted(t) == sorted(TIERS)).all()
    assert set(items["edit_type"]) <= set(EDIT_TYPES)
    assert items["edit_type"].nunique() >= 10  # spread over the types
    assert set(items["category"]) <= {"identity_appearance", "quantity", "spatial_relations",
                                      "activity_state"}
    assert set(items["operation"]) <= {"modify", "swap", "replace", "add", "remove"}
    assert set(items["condition"]) == {"minimal", "contextual"}
    for col in ("n_objects", "mask", "scene_id", "tier"):
        assert items[col].notna().all()
    # one base image per scene, shared by its foils
    assert (items.groupby("scene_id")["image_base"].nunique() == 1).all()


def test_pixels_outside_mask_identical(built):
    bench = load_benchmark(built)
    foils = bench.items.drop_duplicates("foil_id")
    for row in foils.itertuples():
        base = np.asarray(Image.open(built / row.image_base))
        foil = np.asarray(Image.open(built / row.image_foil))
        mask = np.asarray(Image.open(built / row.mask)) > 0
        assert base.shape == foil.shape == (SIZE, SIZE, 3) and mask.shape == (SIZE, SIZE)
        changed = (base != foil).any(axis=2)
        assert changed.any(), row.foil_id
        assert not (changed & ~mask).any(), row.foil_id
        assert mask.mean() < 0.5


def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_same_seed_byte_identical(built, tmp_path):
    write_benchmark(build_pairs(tmp_path, seed=5, n_scenes=N_SCENES, foils_per_scene=FOILS,
                                size=SIZE, progress=False), tmp_path)
    a, b = _tree_bytes(built), _tree_bytes(tmp_path)
    assert a.keys() == b.keys()
    assert all(a[k] == b[k] for k in a)


def test_signatures_cover_the_benchmark_scenes(built):
    sigs = benchmark_scene_signatures(seed=5, n_scenes=N_SCENES, foils_per_scene=FOILS)
    ids = load_benchmark(built).items["scene_id"].unique()
    prefixes = {s[:12] for s in sigs}
    assert all(sid.removeprefix("sc-") in prefixes for sid in ids)
    other = benchmark_scene_signatures(seed=6, n_scenes=N_SCENES, foils_per_scene=FOILS,
                                       include_foils=False)
    assert not other & sigs


def test_signatures_are_planned_once_per_arguments_and_frozen(monkeypatch):
    """One training run asks twice; the second answer is the first, unchangeable, and the
    same as a fresh plan's."""
    import foilbench.construct.composet.pair_plan as pair_plan

    benchmark_scene_signatures.cache_clear()
    plans = []
    real = pair_plan.plan_benchmark
    monkeypatch.setattr(pair_plan, "plan_benchmark", lambda *a: plans.append(a) or real(*a))
    first = benchmark_scene_signatures(seed=7, n_scenes=2, foils_per_scene=FOILS)
    again = benchmark_scene_signatures(seed=7, n_scenes=2, foils_per_scene=FOILS)
    assert again is first and isinstance(first, frozenset) and len(plans) == 1
    bases = benchmark_scene_signatures(seed=7, n_scenes=2, foils_per_scene=FOILS,
                                       include_foils=False)
    assert len(plans) == 2 and bases < first  # other arguments: planned for them
    assert first == {s for p in real(7, 2, FOILS)
                     for s in (scene_signature(p.scene), *(scene_signature(e.foil)
                                                            for e in p.edits))}
