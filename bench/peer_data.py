"""Data and model files for ``bench_peers.py``: built once into a work folder, then reused.

- A CompoSET-shaped release (the published format: ``variations.parquet`` with
  ``captions = {short, medium, long: {base, var}}``, ``scenes.parquet``, 224 px PNGs): 80
  scenes x 22 foils x 3 tiers. Each foil recolours or reshapes one of the scene's three
  objects; the base caption names the edited object first, so a scene's base caption is shared
  by the foils editing the same object, as in the release (about 6,000 unique texts over 1,840
  unique images). Caption lengths follow the paper's medians (4 / 7 / 25 words, section 4).
- A SugarCrepe-shaped set: the real release's 7,511 items (``/work/shared/data/sugarcrepe``)
  and, since COCO itself is not on this machine, 1,560 synthetic 640x480 JPEGs under the COCO
  file names (smooth blobs plus sensor-like noise, quality 90, so a file is about the size of a
  COCO photo and decodes at a similar cost).
- A tiny random open_clip model: a JSON architecture config and a safetensors weights file,
  read by both foilbench (``openclip:CONFIG:WEIGHTS``) and the peers' loops.

``scale`` keeps the first fraction of scenes (CompoSET) and of each type file's items
(SugarCrepe), so a quick run has the same shape. ``subset`` (a number of pair items) instead
draws a stratified subset: for SugarCrepe a seeded random sample of each type file in
proportion to its size (so the seven types keep their shares); for CompoSET whole scenes,
each of which holds every edit type and all three tiers in the release's proportions.
:func:`unique_inputs` counts a set's distinct images and texts (the forward-pass floor's
inputs, ``bench_forward_floor.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TIERS = ("short", "medium", "long")
SUGARCREPE_JSON = Path("/work/shared/data/sugarcrepe")
COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220),
           "yellow": (235, 200, 40), "purple": (140, 60, 170), "orange": (240, 140, 30),
           "white": (245, 245, 245), "black": (20, 20, 20)}
SHAPES = ("circle", "square", "triangle")
NOUNS = {"circle": "ball", "square": "box", "triangle": "cone"}
MATERIALS = ("metal", "wooden", "ceramic", "glass", "plastic", "woven")
ANCHORS = ("the cart", "the bench", "the table", "the shelf", "the window", "the rug")
PLACES = ("a sculpture garden", "a quiet kitchen", "a sunlit workshop", "a busy market stall",
          "a small classroom", "a hotel lobby", "a rooftop terrace", "a train platform")
MODEL_NAME = "fbpeer_tiny"
TINY_CFG = {
    "embed_dim": 64,
    "vision_cfg": {"image_size": 224, "layers": 2, "width": 128, "patch_size": 32,
                   "head_width": 64},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 128, "heads": 2,
                 "layers": 2},
}


ARCHS = ("tiny", "ViT-B-32")


def _arch_name(arch: str) -> str:
    """The local config name of ``arch``: the tiny model's, or ``fbpeer_<arch>`` for an
    open_clip architecture (a name of our own, so registering it changes no built-in)."""
    if arch not in ARCHS:
        raise SystemExit(f"unknown --arch {arch!r}: one of {', '.join(ARCHS)}")
    return MODEL_NAME if arch == "tiny" else f"fbpeer_{arch.replace('-', '').lower()}"


def _arch_cfg(arch: str) -> dict:
    """The architecture config: the tiny one, or open_clip's own for a named architecture
    (copied from the installed open_clip, so nothing is downloaded)."""
    if arch == "tiny":
        return TINY_CFG
    import open_clip

    cfg = open_clip.get_model_config(arch)
    if cfg is None:
        raise SystemExit(f"the installed open_clip has no config named {arch!r}")
    return cfg


def _write_weights(arch: str, seed: int, out: Path) -> None:
    """Seeded random weights of ``arch`` (``torch.manual_seed`` then open_clip's own
    initialisation; ``pretrained=None``, no download) as one safetensors file."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    torch.manual_seed(seed)
    model = (open_clip.CLIP(**TINY_CFG) if arch == "tiny"
             else open_clip.create_model(arch, pretrained=None))
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(out))


def model_files(work: Path, arch: str = "tiny") -> tuple[Path, Path]:
    """(config.json, weights.safetensors) of ``arch`` with seed 0, written once. The config
    file's stem is the name the peers' drivers register with open_clip."""
    name = _arch_name(arch)
    cfg, weights = work / f"{name}.json", work / f"{name}.safetensors"
    if not weights.exists():
        cfg.write_text(json.dumps(_arch_cfg(arch)))
        _write_weights(arch, 0, weights)
    return cfg, weights


def more_weights(work: Path, n: int, arch: str = "tiny") -> list[Path]:
    """Weights of ``n`` models of ``arch`` sharing the one config (so one preprocessing):
    seed 0 is :func:`model_files`' file, seeds 1.. are written once beside it."""
    _, first = model_files(work, arch)
    out = [first]
    for seed in range(1, n):
        weights = work / f"{_arch_name(arch)}_seed{seed}.safetensors"
        if not weights.exists():
            _write_weights(arch, seed, weights)
        out.append(weights)
    return out


def _draw(objects, bg):
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (224, 224), bg)
    d = ImageDraw.Draw(im)
    for shape, colour, _material, (x, y) in objects:
        box, fill = (x, y, x + 48, y + 48), COLOURS[colour]
        if shape == "circle":
            d.ellipse(box, fill=fill)
        elif shape == "square":
            d.rectangle(box, fill=fill)
        else:
            d.polygon([(x + 24, y), (x + 48, y + 48), (x, y + 48)], fill=fill)
    return im


def _captions(obj, anchor: str, context: str) -> dict[str, str]:
    shape, colour, material, _ = obj
    short = f"a {colour} {material} {NOUNS[shape]}"
    medium = f"{short} on the left side of {anchor}"
    return {"short": short, "medium": medium,
            "long": f"{context}, with {medium} near the far wall"}


def composet_scenes(scale: float, subset: int | None = None, n_foils: int = 22) -> int:
    """Scenes kept: ``scale`` of 80, or enough whole scenes for ``subset`` pair items."""
    if subset is not None:
        return max(1, min(80, -(-subset // (n_foils * len(TIERS)))))
    return max(1, round(80 * scale))


def composet_release(work: Path, scale: float, n_foils: int = 22,
                     subset: int | None = None) -> Path:
    """The CompoSET-shaped release folder for ``scale`` or ``subset`` (built once)."""
    import pandas as pd

    n_scenes = composet_scenes(scale, subset, n_foils)
    root = work / f"composet_{n_scenes}x{n_foils}"
    if (root / "variations.parquet").exists():
        return root
    rng = np.random.default_rng(0)
    colours = list(COLOURS)
    rows, scenes = [], []
    for s in range(n_scenes):
        sid = f"s{s:03d}"
        objects = [(SHAPES[rng.integers(3)], colours[rng.integers(8)],
                    MATERIALS[rng.integers(len(MATERIALS))],
                    (int(rng.integers(0, 170)), int(rng.integers(0, 170)))) for _ in range(3)]
        anchor = ANCHORS[rng.integers(len(ANCHORS))]
        context = (f"A {MATERIALS[rng.integers(6)]} display stands in {PLACES[s % len(PLACES)]} "
                   f"under soft morning light, beside a {colours[rng.integers(8)]} crate")
        bg = tuple(int(v) for v in rng.integers(90, 180, 3))
        (root / "images" / sid).mkdir(parents=True, exist_ok=True)
        base_rel = f"images/{sid}/base.png"
        _draw(objects, bg).save(root / base_rel)
        scenes.append({"scene_id": sid, "image": base_rel})
        for v in range(n_foils):
            k = v % 3
            shape, colour, material, pos = objects[k]
            others = [c for c in colours if c != colour]
            if v // 3 < len(others):
                edit, new = "modify_color", (shape, others[v // 3], material, pos)
            else:
                new_shape = SHAPES[(SHAPES.index(shape) + 1 + v // 3) % 3]
                edit, new = "modify_shape", (new_shape, colour, material, pos)
            foil = list(objects)
            foil[k] = new
            var_rel = f"images/{sid}/v{v:02d}.png"
            _draw(foil, bg).save(root / var_rel)
            base_caps, var_caps = _captions(objects[k], anchor, context), \
                _captions(new, anchor, context)
            rows.append({"id": f"{sid}-v{v:02d}", "scene_id": sid, "edit_type": edit,
                         "image_base": base_rel, "image_var": var_rel,
                         "captions": {t: {"base": base_caps[t], "var": var_caps[t]}
                                      for t in TIERS}})
    pd.DataFrame(rows).to_parquet(root / "variations.parquet", index=False)
    pd.DataFrame(scenes).to_parquet(root / "scenes.parquet", index=False)
    return root


def _photo_like(rng: np.random.Generator, width: int = 640, height: int = 480):
    """Smooth colour blobs plus per-pixel noise: about a COCO photo's JPEG size and decode."""
    from PIL import Image, ImageFilter

    small = rng.integers(0, 256, (height // 32, width // 32, 3), dtype=np.uint8)
    im = Image.fromarray(small).resize((width, height), Image.Resampling.BICUBIC)
    im = im.filter(ImageFilter.GaussianBlur(3))
    noise = rng.normal(0, 9, (height, width, 3))
    return Image.fromarray(np.clip(np.asarray(im, float) + noise, 0, 255).astype(np.uint8))


def _stratified(data: dict, share: float, seed: int) -> dict:
    """A seeded random ``share`` of one type file's items (at least one), in file order."""
    n = max(1, min(len(data), round(len(data) * share)))
    keys = list(data)
    chosen = set(np.random.default_rng(seed).choice(len(keys), n, replace=False).tolist())
    return {k: data[k] for i, k in enumerate(keys) if i in chosen}


def sugarcrepe_set(work: Path, scale: float,
                   subset: int | None = None) -> tuple[Path, Path]:
    """(json folder, image folder) for ``scale`` (the first fraction of each type file's
    items) or ``subset`` (about that many items, stratified by type, seed 0), and a synthetic
    JPEG per COCO file name they use (images built once, shared)."""
    images = work / "coco_synth"
    files = sorted(SUGARCREPE_JSON.glob("*.json"))
    total = sum(len(json.loads(f.read_text())) for f in files) if subset else 0
    jdir = work / (f"sugarcrepe_sub{subset}" if subset else f"sugarcrepe_{scale:g}")
    jdir.mkdir(parents=True, exist_ok=True)
    needed: set[str] = set()
    for k, path in enumerate(files):
        data = json.loads(path.read_text())
        keep = (_stratified(data, subset / total, k) if subset
                else dict(list(data.items())[: max(1, round(len(data) * scale))]))
        (jdir / path.name).write_text(json.dumps(keep))
        needed.update(v["filename"] for v in keep.values())
    images.mkdir(exist_ok=True)
    for name in sorted(needed):
        out = images / name
        if not out.exists():
            seed = int("".join(ch for ch in name if ch.isdigit()) or 0)
            _photo_like(np.random.default_rng(seed)).save(out, quality=90)
    return jdir, images


def unique_inputs(kind: str, data) -> tuple[int, int]:
    """(distinct images, distinct texts) of a built set: ``data`` is the CompoSET release
    folder, or SugarCrepe's (json folder, image folder). Texts are counted as exact strings,
    the way an embedding is reused for an identical text."""
    if kind == "composet":
        import pandas as pd

        rows = pd.read_parquet(Path(data) / "variations.parquet")
        images = set(rows["image_base"]) | set(rows["image_var"])
        texts = {c[t][side] for c in rows["captions"] for t in TIERS for side in ("base", "var")}
        return len(images), len(texts)
    images, texts = set(), set()
    for path in sorted(Path(data[0]).glob("*.json")):
        for item in json.loads(path.read_text()).values():
            images.add(item["filename"])
            texts.update((item["caption"], item["negative_caption"]))
    return len(images), len(texts)
