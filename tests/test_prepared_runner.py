"""``sweep`` and ``run`` share prepared images across models: identical stored outcomes with
and without sharing, and a second sweep that adds a model decodes nothing."""

from __future__ import annotations

import json

import numpy as np
import torch

from foilbench import runner
from foilbench.scoring.encode import image_decoder
from foilbench.store.shared import SharedStore
from test_prepared_share import TINY_OPENCLIP_CFG


def _model_spec(folder, name: str, seed: int) -> str:
    import open_clip
    from safetensors.torch import save_file

    path = folder / f"{name}.json"
    path.write_text(json.dumps(TINY_OPENCLIP_CFG))
    open_clip.add_model_config(path)
    torch.manual_seed(seed)
    model = open_clip.create_model(name)
    weights = folder / f"{name}.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(weights))
    return f"openclip:{path}:{weights}?batch=8"


def db_scores(db_path, run_id):
    return list(SharedStore(db_path).load_item_results(run_id)["scores"])


def _cells(outcome):
    return outcome.cells.set_index(["model", "benchmark"])["value"].to_dict()


def test_sweep_shares_preparation_and_a_second_sweep_decodes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    specs = [_model_spec(tmp_path, f"fb-sw-{k}", k) for k in range(3)]
    opts = {"n_boot": 100, "progress": False}
    old = runner.sweep(specs[:2], ["tiny-builtin"], tmp_path / "old", share_preparation=False,
                       use_cache=False, **opts)
    new = runner.sweep(specs[:2], ["tiny-builtin"], tmp_path / "new", **opts)
    assert _cells(old) == _cells(new)
    assert "prepare_decoded" not in SharedStore(old.db_path).get_run(
        old.cells["run_id"].iloc[1])["eval_stats"]  # the old path: each model decodes
    db = SharedStore(new.db_path)
    for a, b in zip(old.cells["run_id"], new.cells["run_id"], strict=True):
        sa, sb = db_scores(old.db_path, a), db_scores(new.db_path, b)
        assert all(np.array_equal(x, y) for x, y in zip(sa, sb, strict=True))
    stats = [db.get_run(r)["eval_stats"] for r in new.cells["run_id"]]
    n_images = stats[0]["images_unique"]
    # decoded once, by validation's pixel check, for both models; the cells decode nothing
    assert new.preparation["decoded"] == n_images > 0
    for s in stats:
        assert s["prepare_decoded"] == 0 and s["prepare_memory_hits"] == n_images
    again = runner.sweep(specs, ["tiny-builtin"], tmp_path / "new", **opts)
    assert again.reused == 2 and again.computed == 1
    assert again.preparation["decoded"] == 0 and again.preparation["disk_hits"] == n_images
    third = db.get_run(again.cells["run_id"].iloc[2])["eval_stats"]
    assert third["prepare_decoded"] == 0 and third["prepare_memory_hits"] == n_images


def test_run_with_several_models_decodes_each_image_once(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    specs = [_model_spec(tmp_path, f"fb-run-{k}", k) for k in range(2)]
    out = runner.run(specs, ["tiny-builtin"], tmp_path / "out", n_boot=100, progress=False,
                     report=False, use_cache=False)  # no disk: memory sharing alone
    stats = [r.result.stats for r in out.records]
    assert out.preparation["decoded"] == stats[0]["images_unique"] > 0  # in validation
    for s in stats:
        assert s["prepare_decoded"] == 0
        assert s["prepare_memory_hits"] == s["images_unique"]
    assert not (tmp_path / "home").exists() or not list((tmp_path / "home").rglob(
        "prepared-images"))


def test_ray_workers_share_prepared_images_through_the_cache_folder(tmp_path, monkeypatch):
    """Two worker bodies (no Ray needed to call them) on one configured cache folder: the
    second, evaluating another model, decodes nothing; its scores equal a plain run's."""
    from foilbench.data.registry import resolve_benchmarks
    from foilbench.models.registry import resolve_model
    from foilbench.runner.ray.worker import ModelWorker
    from foilbench.runner.settings import RunSettings
    from foilbench.scoring.engine import evaluate

    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    specs = [_model_spec(tmp_path, f"fb-ray-{k}", k) for k in range(2)]
    bench = resolve_benchmarks("tiny-builtin", progress=False)[0]
    settings = RunSettings(cache_dir=str(tmp_path / "shared"), n_boot=100).to_dict()
    first = ModelWorker(settings).evaluate(specs[0], bench)
    second = ModelWorker(settings).evaluate(specs[1], bench)
    assert first["stats"]["prepare_decoded"] > 0
    assert second["stats"]["prepare_decoded"] == 0
    assert second["stats"]["prepare_disk_hits"] == second["stats"]["images_unique"]
    assert list((tmp_path / "shared" / "prepared-images").rglob("*.safetensors"))
    plain = evaluate(resolve_model(specs[1], device="cpu"), bench, progress=False)
    assert np.array_equal(second["scores"], np.concatenate(plain.scores))


def test_ray_image_shards_share_prepared_images_too(tmp_path, monkeypatch):
    from foilbench.data.registry import resolve_benchmarks
    from foilbench.models.registry import resolve_model
    from foilbench.runner.ray.worker import ModelWorker
    from foilbench.runner.settings import RunSettings

    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    specs = [_model_spec(tmp_path, f"fb-shard-{k}", k) for k in range(2)]
    bench = resolve_benchmarks("tiny-builtin", progress=False)[0]
    refs = bench.unique_images()
    settings = RunSettings(cache_dir=str(tmp_path / "shared"), n_boot=100).to_dict()
    first = ModelWorker(settings)
    first.encode_shard(specs[0], bench, "image", refs)
    assert first._prepared.counts["decoded"] > 0
    second = ModelWorker(settings)
    got = second.encode_shard(specs[1], bench, "image", refs)
    assert second._prepared.counts["decoded"] == 0
    assert second._prepared.counts["disk_hits"] == len(got["hashes"])
    adapter = resolve_model(specs[1], device="cpu")
    plain = adapter.embed_images([image_decoder(adapter)(bench.image_path(refs[hashes_first(got, bench, refs)[h]]))
                                  for h in got["hashes"]])
    assert np.array_equal(got["embeddings"], plain)


def hashes_first(got, bench, refs):
    from foilbench.hashing import sha256_file

    first = {}
    for k, r in enumerate(refs):
        first.setdefault(sha256_file(bench.image_path(r)), k)
    return first


def test_a_run_whose_validation_decodes_for_its_models_still_refuses_corrupt_pixels(
        tmp_path, monkeypatch):
    """Validation's pixel check is the shared preparation's full decode inside a run: a file
    with a valid header and corrupt data is still refused by name before any cell, or dropped
    with --allow-partial, and the good images are decoded once."""
    import pytest

    from _core_helpers import write_folder
    from _reliability import choice_items
    from foilbench.data.images import CORRUPT
    from foilbench.errors import BenchmarkError
    from test_reliability_data import corrupt_images

    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    spec = _model_spec(tmp_path, "fb-corrupt", 0)
    folder = tmp_path / "b"
    items = choice_items(folder, 6)
    items["image"] = items["image"].str.replace("blue.png", "blue.jpg")
    write_folder(folder, "choice", items)
    corrupt_images(folder)
    opts = {"n_boot": 100, "progress": False, "report": False}
    with pytest.raises(BenchmarkError, match="green.png") as refused:
        runner.run([spec], [str(folder)], tmp_path / "out", **opts)
    assert "blue.jpg" in str(refused.value) and CORRUPT in str(refused.value)
    out = runner.run([spec], [str(folder)], tmp_path / "out", allow_partial=True, **opts)
    [record] = out.records
    assert {len(v) for v in record.result.outcomes.values()} == {2}
    good = {p for p in items["image"] if p not in ("green.png", "blue.jpg")}
    # the refused run had already decoded the good image into the prepared-image cache
    assert out.preparation["decoded"] == 0 and out.preparation["disk_hits"] == len(good)
    assert record.result.stats["prepare_decoded"] == 0
