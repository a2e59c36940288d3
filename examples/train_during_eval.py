"""Evaluate an open_clip model with foilbench while it trains (docs/training.md).

A tiny open_clip model (built from a config, random start) learns to match pictures of
coloured shapes with their captions. Every ``--every`` optimizer steps the live model is
evaluated on a benchmark with ``runner.run``: the same code path as ``foilbench run`` (the
chance and blind reference rows, the store, summary.json), with the step stored in each
run's metadata and handed to a tracker through ``on_result``. The checkpoint of each
evaluation has its own fingerprint (its weights' hash), so no embedding of step 10 is
reused at step 20.

    python examples/train_during_eval.py --out /tmp/fb-train --steps 30 --every 10
    python examples/train_during_eval.py --out /tmp/fb-train --tracker mlflow
    python examples/train_during_eval.py --out /tmp/fb-train --tracker wandb   # offline

Nothing is downloaded: the model comes from a config, the tokenizer's vocabulary ships
with open_clip, the benchmark (``tiny-builtin`` by default) with foilbench.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path

import open_clip
import torch
from PIL import Image, ImageDraw

import foilbench
from foilbench import runner
from foilbench.store.db import ResultsStore

ARCH = "fb-train-demo"
CONFIG = {  # a few hundred thousand weights: trains in seconds on a CPU
    "embed_dim": 32,
    "vision_cfg": {"image_size": 64, "layers": 2, "width": 64, "patch_size": 8,
                   "head_width": 32},
    "text_cfg": {"context_length": 32, "vocab_size": 49408, "width": 64, "heads": 2,
                 "layers": 2},
}
COLOURS = {"red": (220, 40, 40), "blue": (40, 70, 220), "green": (40, 170, 60),
           "yellow": (230, 210, 40)}
SHAPES = ("square", "circle")


def build_model(folder: Path):
    """The tiny model, its train and eval transforms and its tokenizer."""
    config = folder / f"{ARCH}.json"
    config.write_text(json.dumps(CONFIG))
    open_clip.add_model_config(config)
    model, train_tf, eval_tf = open_clip.create_model_and_transforms(ARCH)
    return model, train_tf, eval_tf, open_clip.get_tokenizer(ARCH)


def picture(colour: str, shape: str, rng: random.Random) -> Image.Image:
    image = Image.new("RGB", (64, 64), (235, 235, 235))
    x, y, r = rng.randint(14, 50), rng.randint(14, 50), rng.randint(8, 13)
    draw = ImageDraw.Draw(image)
    box = (x - r, y - r, x + r, y + r)
    (draw.rectangle if shape == "square" else draw.ellipse)(box, fill=COLOURS[colour])
    return image


def batch(rng: random.Random, transform, size: int = 16):
    pairs = [(rng.choice(list(COLOURS)), rng.choice(SHAPES)) for _ in range(size)]
    images = torch.stack([transform(picture(c, s, rng)) for c, s in pairs])
    return images, [f"a {c} {s}" for c, s in pairs]


def contrastive_loss(model, images, tokens):
    image_f = model.encode_image(images, normalize=True)
    text_f = model.encode_text(tokens, normalize=True)
    logits = model.logit_scale.exp() * image_f @ text_f.T
    target = torch.arange(len(images))
    return (torch.nn.functional.cross_entropy(logits, target)
            + torch.nn.functional.cross_entropy(logits.T, target)) / 2


def tracker(kind: str, out: Path):
    """(on_result hook, finish function) for ``kind``: none, mlflow or wandb (offline)."""
    if kind == "mlflow":
        import mlflow

        # a local file store in OUT (mlflow 3 asks for this opt-in; the full mlflow
        # package can use sqlite:///OUT/mlflow.db instead)
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        mlflow.set_tracking_uri((out / "mlruns").resolve().as_uri())
        active = mlflow.start_run(run_name="train-during-eval")
        from foilbench.tracking import MlflowLogger

        def finish():
            from mlflow.tracking import MlflowClient

            mlflow.end_run()
            client = MlflowClient(mlflow.get_tracking_uri())
            print(f"mlflow run {active.info.run_id} in {out / 'mlruns'}:")
            for key in sorted(client.get_run(active.info.run_id).data.metrics):
                if key.endswith(("/group", "/group_ci_low", "/group_ci_high")):
                    steps = [(m.step, round(m.value, 4))
                             for m in client.get_metric_history(active.info.run_id, key)]
                    print(f"  {key}: {steps}")

        return MlflowLogger(), finish
    if kind == "wandb":
        import wandb

        run = wandb.init(mode="offline", dir=str(out), project="foilbench-train-demo")
        from foilbench.tracking import WandbLogger

        def finish():
            last = dict(run.summary)
            summary = {k: round(float(last[k]), 4) for k in sorted(last)
                       if k.startswith("foilbench/") and k.endswith("/group")}
            run.finish()
            print(f"wandb offline run in {out / 'wandb'} (last values): {summary}")

        return WandbLogger(run), finish
    return None, lambda: None


def stored_steps(db_path: Path, name: str) -> list[tuple]:
    """(step, benchmark, group value, interval, fingerprint) of each stored run of ``name``."""
    rows = []
    with ResultsStore(db_path, read_only=True) as store:
        runs = store.con.execute(
            "SELECT run_id, benchmark_name, model_fingerprint, eval_stats FROM runs "
            "WHERE model_spec = ? ORDER BY created", [name]).fetchall()
        for run_id, bench, fingerprint, stats in runs:
            step = (json.loads(stats).get("metadata") or {}).get("step")
            metrics = store.load_metrics(run_id)
            top = metrics[(metrics["group_by"].fillna("") == "")].set_index("metric")
            metric = "group" if "group" in top.index else top.index[0]
            row = top.loc[metric]
            rows.append((step, bench, metric, row["value"], row["ci_low"], row["ci_high"],
                         fingerprint[-12:]))
    return rows


def main(argv: list[str] | None = None) -> list[tuple]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("foilbench-train-demo"))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--benchmark", default="tiny-builtin")
    parser.add_argument("--tracker", choices=("none", "mlflow", "wandb"), default="none")
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    torch.manual_seed(0)
    rng = random.Random(0)
    model, train_tf, eval_tf, tokenizer = build_model(args.out)
    # the live model, wrapped once: each evaluation hashes its weights as they are then,
    # switches it to eval mode under no_grad and gives it back in train mode
    live = foilbench.from_open_clip(model, eval_tf, tokenizer, name="tiny-clip (training)")
    on_result, finish = tracker(args.tracker, args.out)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    try:
        for step in range(1, args.steps + 1):
            model.train()
            images, texts = batch(rng, train_tf)
            loss = contrastive_loss(model, images, tokenizer(texts))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % args.every == 0:
                # use_cache=False: each checkpoint is evaluated once, so its embeddings
                # would only fill the cache (they could never be reused: new weights,
                # new fingerprint)
                outcome = runner.run([live], [args.benchmark], args.out, report=False,
                                     n_boot=args.n_boot, metadata={"step": step},
                                     on_result=on_result, use_cache=False)
                entry = outcome.summary["runs"][0]
                metric = "group" if "group" in entry["metrics"] else next(
                    iter(entry["metrics"]))
                m = entry["metrics"][metric]
                print(f"step {step:3d}  loss {loss.item():.3f}  {entry['benchmark']} "
                      f"{metric} {m['value']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}] "
                      f"(chance {m['chance']:.3f}, n={m['n']})  still training: "
                      f"{model.training}")
    finally:
        finish()
    rows = stored_steps(args.out / runner.DB_FILE, "tiny-clip (training)")
    print(f"in the store {args.out / runner.DB_FILE}:")
    for step, bench, metric, value, low, high, fp in rows:
        print(f"  step {step}: {bench} {metric} {value:.3f} [{low:.3f}, {high:.3f}]  "
              f"fingerprint ...{fp}")
    return rows


if __name__ == "__main__":
    main()
