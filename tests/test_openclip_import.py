"""open_clip imported without ``timm`` (and ``transformers``) when the model has no use for them
(issue 30, fixed costs: about half a second of every run of an open_clip-towered model), and
a timm-towered model later in the same process still builds and embeds exactly as in a
process that never hid it.

What is imported is the thing under test, so each check reads a fresh interpreter. The
facts of a run of an own-tower model (timm hidden, transformers hidden, the tokenizer report
without transformers, then both brought back) come from ONE such process (:func:`hidden`):
each is printed before anything could bring the hidden package back, so they do not
interfere, and the process start (torch, open_clip, timm) is paid once, not per fact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _models_tiny import TINY_OPENCLIP_CFG
from foilbench.models.openclip.importer import config_needs_timm, config_needs_transformers

SRC = Path(__file__).resolve().parents[1] / "src"
TIMM_CFG = {"embed_dim": 16,
            "vision_cfg": {"timm_model_name": "vit_tiny_patch16_224",
                           "timm_model_pretrained": False, "timm_pool": "avg",
                           "timm_proj": "linear", "image_size": 224},
            "text_cfg": TINY_OPENCLIP_CFG["text_cfg"]}
HEAD = ("import sys, warnings\nwarnings.simplefilter('ignore')\n"
        "from foilbench.models.registry import resolve_model\n")


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


def _said(out: str, tag: str) -> str:
    """The rest of the one line of ``out`` that starts with ``tag`` and a space."""
    lines = [line[len(tag) + 1:] for line in out.splitlines() if line.startswith(tag + " ")]
    assert len(lines) == 1, (tag, out)
    return lines[0]


@pytest.fixture(scope="module")
def towers(tmp_path_factory) -> dict:
    """An own-tower config, a timm-tower config with seeded weights, and an image. open_clip
    comes through foilbench's importer with timm asked for: an earlier test on this worker may
    have imported it with timm hidden (the importer brings timm back then)."""
    import torch
    from PIL import Image
    from safetensors.torch import save_file

    from foilbench.models.openclip.importer import import_open_clip

    open_clip = import_open_clip()  # transformers and timm both, as a plain import
    tmp = tmp_path_factory.mktemp("towers")
    plain, timm_cfg = tmp / "fb-notimm.json", tmp / "fb-timmtower.json"
    plain.write_text(json.dumps(TINY_OPENCLIP_CFG))
    timm_cfg.write_text(json.dumps(TIMM_CFG))
    open_clip.add_model_config(timm_cfg)
    torch.manual_seed(0)
    model = open_clip.create_model("fb-timmtower")
    weights = tmp / "fb-timmtower.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(weights))
    image = tmp / "x.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (40, 48, 3), np.uint8)).save(image)
    embed_timm = (
        f"b = resolve_model('openclip:{timm_cfg}:{weights}', device='cpu')\n"
        "from PIL import Image\n"
        f"e = b.embed_images([Image.open('{image}')])\n"
        "print('emb', ' '.join(repr(float(x)) for x in e[0]))\n")
    return {"plain": plain, "embed_timm": embed_timm}


@pytest.fixture(scope="module")
def hidden(towers) -> str:
    """The output of one fresh process that runs an own-tower model, reports on its
    tokenizer, then runs a timm-towered model and asks for transformers back."""
    return _run(
        HEAD + f"a = resolve_model('openclip:{towers['plain']}', device='cpu')\n"
        "print('embeds', a.embed_texts(['a cat']).shape)\n"
        "print('timm', 'timm' in sys.modules)\n"
        "print('transformers', 'transformers' in sys.modules)\n"
        "import open_clip\n"
        "print('none', open_clip.timm_model.timm is None)\n"
        # open_clip imported as a run of an open_clip-towered model imports it
        "from foilbench.models.text_limits import text_report\n"
        "oc = type('OC', (), {'tokenizer': open_clip.get_tokenizer('ViT-B-32')})()\n"
        "before = 'transformers' in sys.modules\n"
        "r = text_report(oc, ['a red cube', 'word ' * 100])\n"
        "after = 'transformers' in sys.modules\n"
        "print('report', before, after, r['n_truncated'], r['max_tokens'], r['longest'])\n"
        + towers["embed_timm"]
        + "print('back', open_clip.timm_model.timm is not None)\n"
        "from foilbench.models.openclip.importer import import_open_clip\n"
        "print('hf_back', import_open_clip(True).hf_model.transformers is not None)\n")


def test_timm_hidden_for_an_own_tower_and_brought_back_for_a_timm_tower(towers, hidden):
    assert _said(hidden, "embeds") == "(1, 16)"
    assert _said(hidden, "timm") == "False" and _said(hidden, "none") == "True"
    assert _said(hidden, "back") == "True"
    never = _run(HEAD + towers["embed_timm"])  # a process that imported timm from the start
    assert _said(hidden, "emb") == _said(never, "emb")


def test_open_clip_is_imported_without_transformers_only_when_unneeded(hidden):
    assert not config_needs_transformers({"text_cfg": {"width": 8}, "vision_cfg": {}})
    assert config_needs_transformers({"text_cfg": {"hf_model_name": "roberta-base"}})
    assert config_needs_transformers({"text_cfg": {}, "multimodal_cfg": {}})
    assert config_needs_transformers(None)
    assert _said(hidden, "embeds") == "(1, 16)"
    assert _said(hidden, "transformers") == "False"
    assert _said(hidden, "hf_back") == "True"


def test_text_report_of_an_open_clip_tokenizer_does_not_import_transformers_tokenizers(hidden):
    """The open_clip branch gives the same report without importing transformers' tokenizer
    module (0.2 s of every open_clip run); an HF tokenizer is still recognised once loaded
    (tests/test_reliability_notes.py). In a fresh interpreter, so no other test has imported
    it first."""
    assert _said(hidden, "report").split() == ["False", "False", "1", "77", "102"]


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
