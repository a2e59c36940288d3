"""Models held in memory: from_open_clip / from_hf score as the spec path does, leave the
model as found, key the cache by the weights as they are, and go through run and sweep."""

from __future__ import annotations

import json

import numpy as np
import open_clip
import pytest
import torch

import foilbench
from _models_tiny import save_tiny_hf_dual, write_openclip_config
from foilbench import runner
from foilbench.errors import ModelError
from foilbench.models.base import CallableDualEncoder
from foilbench.runner.settings import RunnerError
from foilbench.store.db import ResultsStore

QUIET = {"n_boot": 200, "progress": False, "report": False}


def quiet_log(level, message):
    pass


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))


@pytest.fixture(scope="module", params=[False, True], ids=["gelu", "quickgelu"])
def tiny_clip(request, tmp_path_factory):
    """A tiny open_clip model (GELU or QuickGELU), its weights file and its live pieces."""
    from safetensors.torch import save_file

    folder = tmp_path_factory.mktemp("oc")
    name = f"fb-live-{'qg' if request.param else 'gelu'}"
    cfg = write_openclip_config(folder, name, quick_gelu=request.param)
    open_clip.add_model_config(cfg)
    torch.manual_seed(0)
    model, _, preprocess = open_clip.create_model_and_transforms(name)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(folder / "w.safetensors"))
    return {"cfg": cfg, "weights": folder / "w.safetensors", "model": model,
            "preprocess": preprocess, "tokenizer": open_clip.get_tokenizer(name),
            "quick_gelu": request.param}


def live_clip(tiny, name="live-clip", **kwargs):
    return foilbench.from_open_clip(tiny["model"], tiny["preprocess"], tiny["tokenizer"],
                                    name=name, **kwargs)


def scores_of(outcome):
    return {r.result.model.spec: np.concatenate(r.result.scores) for r in outcome.records}


def test_from_open_clip_scores_equal_the_spec_path(tiny_clip, tmp_path):
    spec = f"openclip:{tiny_clip['cfg']}:{tiny_clip['weights']}"
    live = live_clip(tiny_clip, score="logit")
    out = runner.run([f"{spec}?score=logit", live], ["tiny-builtin"], tmp_path / "o",
                     device="cpu", use_cache=False, log=quiet_log, **QUIET)
    got = scores_of(out)
    assert set(got) == {f"{spec}?score=logit", "live-clip"}
    np.testing.assert_allclose(got["live-clip"], got[f"{spec}?score=logit"], atol=1e-6,
                               rtol=0)
    assert live.info.extras["activation"] == ("quick_gelu" if tiny_clip["quick_gelu"]
                                              else "gelu")
    assert live.info.fingerprint.startswith("openclip-live-sha256:")


def test_a_stated_activation_that_the_model_lacks_is_refused(tiny_clip):
    with pytest.raises(ModelError, match="force_quick_gelu"):
        live_clip(tiny_clip, quick_gelu=not tiny_clip["quick_gelu"])
    live_clip(tiny_clip, quick_gelu=tiny_clip["quick_gelu"])  # the right one is accepted


def test_from_hf_scores_equal_the_spec_path(tmp_path):
    from transformers import AutoImageProcessor, AutoTokenizer, CLIPModel

    folder = save_tiny_hf_dual(tmp_path / "clip", "clip", tmp_path / "tok")
    model = CLIPModel.from_pretrained(folder)
    live = foilbench.from_hf(model, image_processor=AutoImageProcessor.from_pretrained(folder),
                             tokenizer=AutoTokenizer.from_pretrained(folder), name="live-hf")
    out = runner.run([f"hf:{folder}", live], ["tiny-builtin"], tmp_path / "o", device="cpu",
                     use_cache=False, log=quiet_log, **QUIET)
    got = scores_of(out)
    np.testing.assert_allclose(got["live-hf"], got[f"hf:{folder}"], atol=1e-6, rtol=0)
    assert live.info.fingerprint.startswith("hf-live-sha256:")
    from transformers import CLIPProcessor

    processor = CLIPProcessor(image_processor=live.image_processor, tokenizer=live.tokenizer)
    model.train()
    again = foilbench.from_hf(model, processor, name="live-hf")  # a processor does the same
    assert again.info.fingerprint == live.info.fingerprint
    again.embed_texts(["a red cube"])
    assert model.training  # given back in train mode
    with pytest.raises(ModelError, match="image_processor and tokenizer"):
        foilbench.from_hf(model, None)


def test_the_model_is_evaluated_in_eval_mode_without_grad_and_left_as_found(tiny_clip):
    model = tiny_clip["model"]
    model.train()
    model.visual.eval()  # a frozen tower the caller keeps in eval mode
    before = [m.training for m in model.modules()]
    seen = []
    hook = model.visual.register_forward_hook(
        lambda mod, args, out: seen.append((model.training, torch.is_grad_enabled())))
    try:
        live = live_clip(tiny_clip)
        live.embed_images([__import__("PIL.Image").Image.new("RGB", (40, 30), "red")])
    finally:
        hook.remove()
        after = [m.training for m in model.modules()]
        model.eval()
    assert seen and all(s == (False, False) for s in seen)
    assert after == before and after[0] is True


def test_the_fingerprint_follows_the_weights_and_the_cache_never_mixes_them(tiny_clip,
                                                                             tmp_path):
    model = tiny_clip["model"]
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    live = live_clip(tiny_clip)
    kw = dict(device="cpu", cache_dir=tmp_path / "cache", log=quiet_log, **QUIET)
    try:
        first = runner.run([live], ["tiny-builtin"], tmp_path / "o", **kw).records[0]
        reused = runner.run([live], ["tiny-builtin"], tmp_path / "o", **kw).records[0]
        assert reused.provenance.get("reused") and reused.run_id == first.run_id
        # computed again (--rerun): the same weights' embeddings come from the cache
        again = runner.run([live], ["tiny-builtin"], tmp_path / "o", rerun=True,
                           **kw).records[0]
        with torch.no_grad():  # a write through .data: no version counter sees it
            proj = model.visual.proj
            proj.data.add_(torch.randn(proj.shape, generator=torch.Generator().manual_seed(1)))
        moved = runner.run([live], ["tiny-builtin"], tmp_path / "o", **kw).records[0]
    finally:
        model.load_state_dict(saved)
    fp = [r.result.model.fingerprint for r in (first, again, moved)]
    assert fp[0] == fp[1] != fp[2]
    assert first.result.stats["images_encoded"] > 0
    assert again.result.stats["images_encoded"] == 0  # same weights: from the cache
    assert moved.result.stats["images_encoded"] == first.result.stats["images_encoded"]
    assert not np.allclose(np.concatenate(moved.result.scores),
                           np.concatenate(first.result.scores))
    # two objects with equal weights share the fingerprint
    assert live_clip(tiny_clip, name="other").info.fingerprint == fp[0]


def _constant(name, vector):
    return CallableDualEncoder(lambda ims: np.tile(vector, (len(ims), 1)),
                               lambda txts: np.array([[len(t), 1.0] for t in txts]),
                               name=name)


def test_run_accepts_adapter_objects(tmp_path):
    calls = []
    out = runner.run(["tiny-random", _constant("callable-model", [1.0, 0.0])],
                     ["tiny-builtin"], tmp_path / "o", metadata={"step": 100},
                     on_result=calls.append, log=quiet_log, n_boot=200, progress=False,
                     report=True)
    names = [e["model"] for e in out.summary["runs"]]
    assert names == ["tiny-random", "callable-model"]
    assert [r.run_id for r in calls] == out.run_ids  # each stored run, once, in order
    assert out.reference["tiny-builtin"]["chance"]  # reference rows with objects too
    assert out.report_path is not None and out.report_path.is_file()
    summary = json.loads(out.summary_path.read_text())
    assert summary["provenance"]["metadata"] == {"step": 100}
    store = ResultsStore(out.db_path, read_only=True)
    try:
        stored = store.get_run(out.run_ids[1])
    finally:
        store.close()
    assert stored["model_spec"] == "callable-model"
    assert stored["eval_stats"]["metadata"] == {"step": 100}


def test_sweep_accepts_adapter_objects_and_resumes_by_fingerprint(tmp_path):
    calls = []
    kw = dict(log=quiet_log, n_boot=200, progress=False, on_result=calls.append)
    first = runner.sweep([_constant("m-a", [1.0, 0.0]), "tiny-random"], ["tiny-builtin"],
                         tmp_path / "o", **kw)
    assert first.models == ["m-a", "tiny-random"] and first.computed == 2
    again = runner.sweep([_constant("m-a", [1.0, 0.0])], ["tiny-builtin"], tmp_path / "o",
                         **kw)
    assert again.reused == 1 and len(calls) == 2  # a reused cell is not delivered again


@pytest.mark.parametrize(("models", "options", "match"), [
    ([object()], {}, "spec strings or model adapters"),
    ([torch.nn.Linear(2, 2)], {}, "from_open_clip"),
    ([_constant("same", [1.0, 0.0]), _constant("same", [0.0, 1.0])], {},
     "two models are named 'same'"),
    ([_constant("m", [1.0, 0.0])], {"precision": "bf16"}, "cannot switch precision"),
    ([_constant("m", [1.0, 0.0])], {"ray": "local"}, "held in memory"),
    (["tiny-random"], {"ray": "local", "metadata": {"step": 1}}, "in-process runner"),
    (["tiny-random"], {"metadata": {"step": object()}}, "metadata must hold JSON"),
    (["tiny-random"], {"metadata": {1: 2}}, "string keys"),
    (["tiny-random"], {"on_result": "wandb"}, "on_result must be a function"),
])
def test_bad_model_objects_and_hooks_are_named(tmp_path, models, options, match):
    with pytest.raises(RunnerError, match=match):
        runner.run(models, ["tiny-builtin"], tmp_path / "o", log=quiet_log,
                   **{**QUIET, **options})


def test_live_names_are_checked(tiny_clip):
    with pytest.raises(ModelError, match="one line"):
        live_clip(tiny_clip, name="a\nb")
    with pytest.raises(ModelError, match="torch.nn.Module"):
        foilbench.from_open_clip("model", tiny_clip["preprocess"], tiny_clip["tokenizer"])
    with pytest.raises(ModelError, match="from_hf"):
        foilbench.from_open_clip(torch.nn.Linear(2, 2), tiny_clip["preprocess"],
                                 tiny_clip["tokenizer"])
    assert live_clip(tiny_clip, name=None).info.spec == "openclip-live:CLIP"


@pytest.mark.parametrize("batch_size", [0, -1, "8", 2.0])
def test_a_bad_batch_size_is_one_error_naming_the_function(tiny_clip, batch_size):
    class Dual(torch.nn.Linear):  # what from_hf asks of a dual encoder, nothing more
        def get_image_features(self, **kwargs): ...

        def get_text_features(self, **kwargs): ...

    with pytest.raises(ModelError, match=r"^from_open_clip: batch_size must be an integer "
                                         r">= 1, got "):
        live_clip(tiny_clip, batch_size=batch_size)
    with pytest.raises(ModelError, match=r"^from_hf: batch_size must be an integer >= 1, "
                                         r"got "):
        foilbench.from_hf(Dual(2, 2), image_processor=object(), tokenizer=object(),
                          batch_size=batch_size)
