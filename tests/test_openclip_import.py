"""open_clip imported without ``timm`` (and ``transformers``) when the model has no use for them
(issue 30, fixed costs: about half a second of every run of an open_clip-towered model), and
a timm-towered model later in the same process still builds and embeds exactly as in a
process that never hid it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from _models_tiny import TINY_OPENCLIP_CFG
from foilbench.models.openclip.importer import config_needs_timm

SRC = Path(__file__).resolve().parents[1] / "src"
TIMM_CFG = {"embed_dim": 16,
            "vision_cfg": {"timm_model_name": "vit_tiny_patch16_224",
                           "timm_model_pretrained": False, "timm_pool": "avg",
                           "timm_proj": "linear", "image_size": 224},
            "text_cfg": TINY_OPENCLIP_CFG["text_cfg"]}


def test_config_needs_timm_only_for_a_timm_tower():
    assert not config_needs_timm(TINY_OPENCLIP_CFG)
    assert config_needs_timm(TIMM_CFG)
    assert config_needs_timm(None)  # unreadable: assume it does
    assert config_needs_timm({"text_cfg": {}})  # no vision_cfg: assume it does


def _run(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
               OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_timm_hidden_for_an_own_tower_and_brought_back_for_a_timm_tower(tmp_path):
    import open_clip
    import torch
    from safetensors.torch import save_file

    plain, timm_cfg = tmp_path / "fb-notimm.json", tmp_path / "fb-timmtower.json"
    plain.write_text(json.dumps(TINY_OPENCLIP_CFG))
    timm_cfg.write_text(json.dumps(TIMM_CFG))
    open_clip.add_model_config(timm_cfg)
    torch.manual_seed(0)
    model = open_clip.create_model("fb-timmtower")
    weights = tmp_path / "fb-timmtower.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(weights))
    image = tmp_path / "x.png"
    from PIL import Image

    Image.fromarray(np.random.default_rng(0).integers(0, 256, (40, 48, 3), np.uint8)).save(image)
    embed_timm = (
        f"b = resolve_model('openclip:{timm_cfg}:{weights}', device='cpu')\n"
        "from PIL import Image\n"
        f"e = b.embed_images([Image.open('{image}')])\n"
        "print('emb', ' '.join(repr(float(x)) for x in e[0]))\n")
    head = ("import sys, warnings\nwarnings.simplefilter('ignore')\n"
            "from foilbench.models.registry import resolve_model\n")
    hidden = _run(head + f"a = resolve_model('openclip:{plain}', device='cpu')\n"
                  "print('embeds', a.embed_texts(['a cat']).shape)\n"
                  "print('timm', 'timm' in sys.modules)\n"
                  "import open_clip\n"
                  "print('none', open_clip.timm_model.timm is None)\n" + embed_timm
                  + "print('back', open_clip.timm_model.timm is not None)\n")
    assert "embeds (1, 16)" in hidden
    assert "timm False" in hidden and "none True" in hidden and "back True" in hidden
    never = _run(head + embed_timm)  # a process that imported timm from the start
    pick = [next(line for line in out.splitlines() if line.startswith("emb "))
            for out in (hidden, never)]
    assert pick[0] == pick[1]


def test_counting_clip_tokens_imports_open_clip_without_timm_transformers_or_the_compiler():
    """``construct``'s caption checks count CLIP BPE tokens; a process that only counts
    imports open_clip without what ViT-B-32's tokenizer has no use for, and counts exactly as
    open_clip's own tokenizer (the one imported the ordinary way in this process)."""
    import open_clip

    texts = ["a red cube on the left of a blue sphere",
             "Two  GLOSSY mugs, one behind the other; the vase isn't there!"]
    fresh = _run("import sys, json\n"
                 "from foilbench.world.token_budget import long_tier_counter\n"
                 "c = long_tier_counter('bpe')\n"
                 f"print(json.dumps([[c.count(t) for t in {texts!r}], c.exact,\n"
                 "    sorted(m for m in ('timm', 'transformers', 'torch._dynamo')\n"
                 "           if m in sys.modules)]))\n")
    counts, exact, imported = json.loads(fresh.strip().splitlines()[-1])
    assert exact and imported == []
    own = open_clip.get_tokenizer("ViT-B-32")
    assert counts == [len(own.encode(t)) + 2 for t in texts]  # + start and end tokens
