"""Run SugarCrepe's own evaluation code, imported from a checkout the user fetched, for timing.

Nothing of SugarCrepe is copied here: this driver puts the checkout on ``sys.path``, imports its
``main_eval`` module and calls its functions ``load_model`` and ``evaluate`` (the per-item loop
over ``text_retrieval``: positive caption, negative caption and image each encoded alone). Their
``__main__`` block is not a function, so its glue is repeated here: the seven type files read
from ``--data_root`` in their order, ``device = 'cuda' if available else 'cpu'``, one model,
``metrics`` dumped as JSON.

Adaptations, each the least that lets their code load our tiny local model offline and lets the
bench compare outcomes item by item:

1. ``open_clip.add_model_config(CONFIG)``: registers the tiny architecture's JSON config, so
   ``load_model`` (``open_clip.create_model_and_transforms(model_name=..., pretrained=...)``)
   resolves its name; ``pretrained`` is the local weights file instead of a hub tag.
2. The model handed to ``evaluate`` is the loaded model behind a recorder that passes every
   ``encode_text`` / ``encode_image`` call through unchanged and keeps the returned embedding.
   ``evaluate`` returns only per-type accuracies; the recorded embeddings give each item's two
   scores with the same operation as ``text_retrieval`` (``text_emb @ image_emb.t()``), and the
   driver checks that they reproduce their accuracies exactly before writing them.

    python bench/peer_sugarcrepe.py SUGARCREPE_REPO CONFIG.json WEIGHTS JSON_DIR IMAGE_DIR OUT.json
"""

from __future__ import annotations

import json
import sys
from argparse import Namespace
from pathlib import Path

HOW_TO_GET = ("git clone https://github.com/RAIVNLab/sugar-crepe (tested at commit "
              "0047054b243992f0fad63d6f64f7544862daf846) and pass its folder as "
              "--sugarcrepe-repo")
TYPES = ("add_obj", "add_att", "replace_obj", "replace_att", "replace_rel", "swap_obj",
         "swap_att")  # the order of their __main__ block's data_dict


def check_repo(repo: Path) -> str | None:
    """None when ``repo`` looks like a SugarCrepe checkout, else what is wrong and how to fix it."""
    if not (repo / "main_eval.py").is_file():
        return f"{repo} is not a SugarCrepe checkout (no main_eval.py): {HOW_TO_GET}"
    return None


class Recorder:
    """The model, unchanged, keeping each embedding ``encode_text``/``encode_image`` returns."""

    def __init__(self, model) -> None:
        self._model, self.log = model, []

    def encode_text(self, *args, **kwargs):
        out = self._model.encode_text(*args, **kwargs)
        self.log.append(out)
        return out

    def encode_image(self, *args, **kwargs):
        out = self._model.encode_image(*args, **kwargs)
        self.log.append(out)
        return out

    def __getattr__(self, name):
        return getattr(self._model, name)


def main() -> None:
    repo, config, weights, json_dir, image_root, out = (Path(a).resolve() for a in sys.argv[1:7])
    problem = check_repo(repo)
    if problem:
        raise SystemExit(problem)
    sys.path.insert(0, str(repo))
    import main_eval
    import open_clip
    import torch

    open_clip.add_model_config(config)  # adaptation 1
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dataset = {c: json.load(open(json_dir / f"{c}.json", encoding="utf-8")) for c in TYPES}
    args = Namespace(model=config.stem, model_cache_dir=None)
    model, tokenizer, transform = main_eval.load_model(args, str(weights), device)
    recorder = Recorder(model)  # adaptation 2
    metrics = main_eval.evaluate(str(image_root), dataset, recorder, tokenizer, transform, device)
    print(metrics)
    items, at = {}, 0
    for c, data in dataset.items():
        correct = 0
        for key in data:  # text_retrieval's order: positive text, negative text, image
            pos, neg, image = recorder.log[at:at + 3]
            at += 3
            scores = [(pos @ image.t()).item(), (neg @ image.t()).item()]
            correct += 1 if scores[0] > scores[1] else 0
            items[f"{c}/{key}"] = scores
        if correct / len(data) != metrics[c]:
            raise SystemExit(f"recorded scores give {correct / len(data)} on {c}, "
                             f"their evaluate gave {metrics[c]}: the recorder is not faithful")
    with open(out, "w") as fh:
        json.dump({"metrics": metrics, "items": items}, fh, indent=1)


if __name__ == "__main__":
    main()
