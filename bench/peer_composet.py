"""CompoSET's published evaluation loop, re-implemented for timing (read, not copied).

What the release's ``eval/run.py`` -> ``eval/benchmark.run_composet`` does with an open_clip
model (github.com/laure-delisle/CompoSET, ``eval/benchmark.py`` and ``eval/models.py``):
for every variation and every caption tier, ``VLMScorer.sim(base_image, [cap_base, cap_var])``
and ``sim(var_image, [cap_base, cap_var])``; each call opens and converts the image, encodes it
alone (batch of 1) and the two captions together (batch of 2), normalised, and takes the two
dot products. I2T, T2I and Group follow from the four similarities (strict ``>``); the rows go
to a DataFrame and a CSV. The release's entry point also imports ``transformers`` (to patch
tokenizers for other backends); that import is left out here, which only makes this peer
faster.

    python bench/peer_composet.py CONFIG.json WEIGHTS RELEASE_DIR OUT.csv
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

T_START = time.perf_counter()

import open_clip  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from PIL import Image  # noqa: E402
from tqdm import tqdm  # noqa: E402

TIERS = ("short", "medium", "long")


class Scorer:
    """One open_clip model; ``sim`` = cosine of one image with each of a few texts."""

    def __init__(self, config: Path, weights: Path) -> None:
        open_clip.add_model_config(config)
        self.model, _, self.preprocess = open_clip.create_model_and_transforms(
            config.stem, pretrained=str(weights), device="cpu")
        self.tokenizer = open_clip.get_tokenizer(config.stem)
        self.model.eval()

    @torch.no_grad()
    def sim(self, image_path: Path, texts: list[str]) -> list[float]:
        image = Image.open(image_path).convert("RGB")
        pixels = self.preprocess(image).unsqueeze(0)
        image_feat = self.model.encode_image(pixels, normalize=True)
        text_feat = self.model.encode_text(self.tokenizer(texts), normalize=True)
        return (image_feat @ text_feat.T).squeeze(0).tolist()


def run(scorer: Scorer, variations: pd.DataFrame, root: Path) -> pd.DataFrame:
    rows = []
    with tqdm(total=len(variations) * len(TIERS), desc="CompoSET") as bar:
        for row in variations.itertuples(index=False):
            for tier in TIERS:
                cap = row.captions[tier]
                s_base = scorer.sim(root / row.image_base, [cap["base"], cap["var"]])
                s_var = scorer.sim(root / row.image_var, [cap["base"], cap["var"]])
                bb, bv = s_base
                vb, vv = s_var
                i2t = int(bb > bv and vv > vb)
                t2i = int(bb > vb and vv > bv)
                rows.append({"variation_id": row.id, "tier": tier, "scene_id": row.scene_id,
                             "edit_type": row.edit_type, "sim_base_cb": bb, "sim_base_cv": bv,
                             "sim_var_cb": vb, "sim_var_cv": vv, "i2t_score": i2t,
                             "t2i_score": t2i, "group_score": int(i2t and t2i)})
                bar.update(1)
    return pd.DataFrame(rows)


def main() -> None:
    config, weights, root, out = (Path(a) for a in sys.argv[1:5])
    torch.set_num_threads(1)
    t_import = time.perf_counter()
    scorer = Scorer(config, weights)
    t_model = time.perf_counter()
    frame = run(scorer, pd.read_parquet(root / "variations.parquet"), root)
    t_loop = time.perf_counter()
    frame.to_csv(out, index=False)
    print(frame[["i2t_score", "t2i_score", "group_score"]].mean().to_string())
    print(f"PHASES import={t_import - T_START:.3f} model={t_model - t_import:.3f} "
          f"loop={t_loop - t_model:.3f} write={time.perf_counter() - t_loop:.3f}")


if __name__ == "__main__":
    main()
