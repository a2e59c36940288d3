"""SugarCrepe's published evaluation loop, re-implemented for timing (read, not copied).

What the release's ``main_eval.py`` does with an open_clip model
(github.com/RAIVNLab/sugar-crepe): for each type file and each item, open the COCO image, then
``text_retrieval``: tokenise and encode the positive caption (batch of 1), the negative caption
(batch of 1) and the image (batch of 1), all normalised; the item is correct when the positive's
dot product with the image is strictly larger. Accuracy per type goes to a JSON file. Here the
two scores per item are written too, so the bench can compare outcomes item by item.

    python bench/peer_sugarcrepe.py CONFIG.json WEIGHTS JSON_DIR IMAGE_DIR OUT.json
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

T_START = time.perf_counter()

import open_clip  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402
from tqdm import tqdm  # noqa: E402


@torch.no_grad()
def text_retrieval(pos: str, neg: str, image, model, tokenizer, transform):
    pos_emb = model.encode_text(tokenizer(pos), normalize=True)
    neg_emb = model.encode_text(tokenizer(neg), normalize=True)
    image_emb = model.encode_image(transform(image).unsqueeze(dim=0), normalize=True)
    pos_score = (pos_emb @ image_emb.t()).item()
    neg_score = (neg_emb @ image_emb.t()).item()
    return (1 if pos_score > neg_score else 0), pos_score, neg_score


def main() -> None:
    config, weights, json_dir, image_root, out = (Path(a) for a in sys.argv[1:6])
    torch.set_num_threads(1)
    t_import = time.perf_counter()
    open_clip.add_model_config(config)
    model, _, transform = open_clip.create_model_and_transforms(
        config.stem, pretrained=str(weights), device="cpu")
    tokenizer = open_clip.get_tokenizer(config.stem)
    model.eval()
    t_model = time.perf_counter()
    dataset = {p.stem: json.load(open(p, encoding="utf-8")) for p in sorted(json_dir.glob("*.json"))}
    metrics, items = {}, {}
    for kind, data in dataset.items():
        correct = 0
        for key, item in tqdm(data.items(), desc=f"evaluating {kind}"):
            image = Image.open(os.path.join(image_root, item["filename"]))
            ok, pos, neg = text_retrieval(item["caption"], item["negative_caption"], image,
                                          model, tokenizer, transform)
            correct += ok
            items[f"{kind}/{key}"] = [pos, neg]
        metrics[kind] = correct / len(data)
    t_loop = time.perf_counter()
    json.dump({"metrics": metrics, "items": items}, open(out, "w"), indent=1)
    print(metrics)
    print(f"PHASES import={t_import - T_START:.3f} model={t_model - t_import:.3f} "
          f"loop={t_loop - t_model:.3f} write={time.perf_counter() - t_loop:.3f}")


if __name__ == "__main__":
    main()
