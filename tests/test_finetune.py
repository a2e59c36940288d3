"""Auto-Comp App. A.9 fine-tuning: split, negatives by family, losses, R@1, and an end-to-end
run of a tiny open_clip model (weights written, reloaded by their spec, table)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from foilbench.finetune.config import FinetuneConfig, FinetuneError
from foilbench.finetune.data import Example, examples, items_frame, split_concepts
from foilbench.finetune.evaluate import outcome, r1_table
from foilbench.finetune.loop import lr_at
from foilbench.finetune.loss import negclip_loss, sigmoid_loss
from foilbench.finetune.negatives import draw_negatives

sys.path.insert(0, str(Path(__file__).parent))


def test_split_is_concept_disjoint_80_20_with_10pc_validation():
    ids = [f"c{i}" for i in range(10)]
    s = split_concepts(ids, seed=3)
    assert (len(s.train), len(s.val), len(s.test)) == (7, 1, 2)  # 2 held out, round(8*0.1)=1
    assert set(s.train) | set(s.val) | set(s.test) == set(ids)
    assert not (set(s.train) & set(s.test)) and not (set(s.val) & set(s.test))
    assert split_concepts(list(reversed(ids)), seed=3) == s  # order of input does not matter
    with pytest.raises(FinetuneError, match="2 concept"):
        split_concepts(["a", "b"])


def test_confusion_negatives_one_per_family_and_swap_repeats():
    ex = Example("c", Path("x.png"), "pos", ("s1",),
                 {"swap": ("a",), "shared_objects": ("b",), "shared_attributes": ("c",)})
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert sorted(draw_negatives(ex, "confusion", 3, rng)) == ["a", "b", "c"]
    assert draw_negatives(ex, "swap", 3, rng) == ["s1", "s1", "s1"]
    assert draw_negatives(Example("d", Path("y"), "p", ()), "swap", 3, rng) == []


def test_outcome_strict_ties_fail_and_valid_skips_true_negatives():
    assert outcome(np.array([0.5, 0.4, 0.5]), [True, False]) == {"r1": 0, "r1_valid": 1,
                                                                  "tie": 1}
    assert outcome(np.array([0.3, 0.4, 0.1]), [True, True]) == {"r1": 0, "r1_valid": 0, "tie": 0}
    import pandas as pd

    t = r1_table(pd.DataFrame({"negative_set": ["s"] * 4, "condition": ["m"] * 4,
                               "r1": [1, 1, 0, 1], "r1_valid": [1, 1, 1, 1], "tie": [0, 0, 1, 0]}))
    row = t.iloc[0]
    assert row["r1"] == 0.75 and row["ties"] == 1 and row["n"] == 4
    # Wilson for 3/4: centre (0.75 + 1.96^2/8) / (1 + 1.96^2/4)
    z2 = 1.96 ** 2
    centre = (0.75 + z2 / 8) / (1 + z2 / 4)
    half = 1.96 * math.sqrt(0.75 * 0.25 / 4 + z2 / 64) / (1 + z2 / 4)
    assert row["r1_low"] == pytest.approx(centre - half) and row["r1_high"] == pytest.approx(
        centre + half)


def test_lr_schedule_warmup_then_cosine():
    c = FinetuneConfig(lr=1.0, warmup=2, steps=6)
    assert [round(lr_at(s, c), 3) for s in range(6)] == [0.5, 1.0, 1.0, 0.854, 0.5, 0.146]
    d = FinetuneConfig()
    assert (d.lr, d.betas, d.weight_decay, d.warmup, d.steps, d.k) == (1e-6, (0.9, 0.98), 0.1,
                                                                        500, 5000, 3)


def test_negclip_loss_by_hand():
    img = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    negs = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    valid = torch.tensor([True, False])  # the second negative is missing: masked
    got = negclip_loss(img, img.clone(), negs, valid, torch.tensor(1.0))
    e = math.e
    i2t = (-math.log(e / (e + 1 + e)) - math.log(e / (1 + e + 1))) / 2
    t2i = -math.log(e / (e + 1))
    assert float(got) == pytest.approx((i2t + t2i) / 2)


@pytest.mark.parametrize("shapes,needle", [
    (((2, 4), (3, 4), None, None), "one caption per image"),
    (((2, 4), (2, 4), (3, 5), (3,)), r"must be \(M, 4\)"),
    (((2, 4), (2, 4), (3, 4), (2,)), "one flag per negative"),
    (((2, 4), (2, 4), None, (2,)), "mask without negatives"),
])
def test_losses_refuse_mismatched_shapes(shapes, needle):
    img, txt, negs, valid = shapes
    args = (torch.zeros(img), torch.zeros(txt), None if negs is None else torch.zeros(negs),
            None if valid is None else torch.ones(valid, dtype=torch.bool))
    with pytest.raises(ValueError, match=needle):
        negclip_loss(*args, torch.tensor(1.0))
    with pytest.raises(ValueError, match=needle):
        sigmoid_loss(*args, torch.tensor(1.0), torch.tensor(0.0))


def test_sigmoid_loss_by_hand():
    img = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    negs = torch.tensor([[1.0, 0.0]])
    got = sigmoid_loss(img, img.clone(), negs, torch.tensor([True]), torch.tensor(2.0),
                       torch.tensor(-1.0))

    def nls(x):
        return -math.log(1 / (1 + math.exp(-x)))

    row0 = nls(2 - 1) + nls(-(0 - 1)) + nls(-(2 - 1))  # own caption, other caption, negative
    row1 = nls(-(0 - 1)) + nls(2 - 1) + nls(-(0 - 1))
    assert float(got) == pytest.approx((row0 + row1) / 2)


@pytest.fixture(scope="module")
def autocomp_set(tmp_path_factory):
    from foilbench.construct.autocomp.bench import build_autocomp
    from foilbench.data.format import write_benchmark

    root = tmp_path_factory.mktemp("ac")
    benches = build_autocomp(root / "src", seed=0, n_concepts=10, size=32, ns=(2,),
                             tasks=("color",), progress=False)
    return {op: write_benchmark(b, root / op) for op, b in benches.items()}


def _bench(path):
    from foilbench.data.format import load_benchmark

    return load_benchmark(path)


def test_examples_negatives_by_family_at_n2(autocomp_set):
    df = items_frame([_bench(autocomp_set["swap"]), _bench(autocomp_set["confusion"])])
    cfg = FinetuneConfig()
    ids = sorted(df["concept_id"].unique())
    exs = examples(df, ids, cfg)
    assert len(exs) == 10
    for ex in exs:
        # N = 2: one Swap negative; of 15 Confusion arrangements, 1 paraphrase (true), 2 swap,
        # 4 shared-objects, 4 shared-attributes, 4 degenerate "other" (left out at N = 2)
        assert len(ex.swap) == 1
        assert {f: len(t) for f, t in ex.families.items()} == {
            "swap": 2, "shared_objects": 4, "shared_attributes": 4}
    with pytest.raises(FinetuneError, match="lacks the Auto-Comp column"):
        from foilbench.data.tiny import tiny_benchmark

        items_frame([tiny_benchmark()])


def test_finetune_end_to_end_tiny_openclip(autocomp_set, tmp_path):
    import open_clip
    from click.testing import CliRunner
    from safetensors.torch import load_file, save_model

    from _models_tiny import TINY_OPENCLIP_CFG, write_openclip_config
    from foilbench.cli.main import cli
    from foilbench.models.registry import resolve_model

    config = write_openclip_config(tmp_path, "tiny-ft")
    open_clip.add_model_config(config)
    torch.manual_seed(0)
    model = open_clip.create_model("tiny-ft", pretrained=None)
    assert TINY_OPENCLIP_CFG["embed_dim"] == 16
    start = tmp_path / "start.safetensors"
    save_model(model, str(start))
    spec = f"openclip:{config}:{start}"
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, [
        "finetune", "--model", spec, "--benchmark", str(autocomp_set["swap"]),
        "--benchmark", str(autocomp_set["confusion"]), "--steps", "3", "--warmup", "1",
        "--lr", "1e-2", "--batch-size", "4", "--micro-batch", "2", "--eval-every", "1",
        "--patience", "5", "--seeds", "0", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "pretrained" in res.output and "Delta_C = confusion - swap" in res.output
    import json

    record = json.loads((out / "finetune.json").read_text())
    assert len(record["split"]["test"]) == 2 and len(record["split"]["train"]) == 7
    for arm in ("swap", "confusion"):
        weights = out / f"{arm}-seed0" / "model.safetensors"
        assert record["weights"][f"{arm}-seed0"] == f"openclip:{config}:{weights}"
        run = next(r for r in record["runs"] if r["arm"] == arm)
        tuned, initial = load_file(str(weights)), load_file(str(start))
        moved = any(not torch.equal(tuned[k], initial[k]) for k in initial)
        assert moved == (run["best_step"] > 0)  # early stopping kept what validation chose
        resolve_model(record["weights"][f"{arm}-seed0"])  # loads under the same scheme
    # pretrained rows: 2 held-out concepts x {swap, confusion} x {minimal, contextual}
    pre = [r for r in record["r1"] if r["model"] == "pretrained"]
    assert len(pre) == 4 and all(r["n"] == 2 for r in pre)


def test_finetune_refuses_random_init_and_bad_settings(autocomp_set, tmp_path):
    from _models_tiny import write_openclip_config
    from foilbench.finetune.run import finetune

    config = write_openclip_config(tmp_path, "tiny-rand")
    with pytest.raises(FinetuneError, match="no weights"):
        finetune(f"openclip:{config}", [str(autocomp_set["swap"]),
                                        str(autocomp_set["confusion"])], tmp_path / "o",
                 FinetuneConfig(steps=1, seeds=(0,)))
    with pytest.raises(FinetuneError, match="--negatives"):
        FinetuneConfig(negatives=("shuffle",))
    with pytest.raises(FinetuneError, match="k"):
        FinetuneConfig(k=0)


@pytest.mark.parametrize("kind", ["clip", "siglip"])
def test_hf_towers_train_step_save_and_reload(kind, tmp_path):
    """hf: dual encoders: one NegCLIP (CLIP) / sigmoid (SigLIP) step moves the weights, and
    the saved folder reloads as hf:OUT with the tuned model's embeddings."""
    from _models_tiny import save_tiny_hf_dual, tiny_images
    from foilbench.finetune.loop import _loss
    from foilbench.finetune.towers import Towers
    from foilbench.models.registry import resolve_model

    folder = save_tiny_hf_dual(tmp_path / kind, kind, tmp_path / "tok")
    adapter = resolve_model(f"hf:{folder}", device="cpu")
    towers = Towers(adapter, f"hf:{folder}")
    assert (towers.bias() is not None) == (kind == "siglip")
    before = {k: v.clone() for k, v in towers.state().items()}
    opt = torch.optim.SGD(towers.model.parameters(), lr=0.5)
    towers.model.train()
    loss = _loss(towers, tiny_images(2), ["a red cube", "a blue sphere"],
                 [["a blue cube", "a red sphere"], []], 2)
    loss.backward()
    opt.step()
    assert any(not torch.equal(before[k], v) for k, v in towers.state().items())
    spec = towers.save(tmp_path / "out")
    assert spec == f"hf:{(tmp_path / 'out').resolve()}"
    texts = ["a red cube", "a green cone"]
    reloaded = resolve_model(spec, device="cpu")
    assert np.allclose(reloaded.embed_texts(texts), adapter.embed_texts(texts), atol=1e-5)
    assert np.allclose(reloaded.embed_images(tiny_images(2)),
                       adapter.embed_images(tiny_images(2)), atol=1e-5)
