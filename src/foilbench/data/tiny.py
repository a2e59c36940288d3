"""``tiny-builtin``: a 12-item pair benchmark drawn with PIL, so ``foilbench run`` always works.

Six scenes (a coloured shape on a grey background); each scene has two single-edit foils that
change only the shape's colour ("a red circle" vs "a blue circle"), CompoSET-style. Images are
drawn once into ``$FOILBENCH_HOME/builtin`` (default ``~/.cache/foilbench/builtin``) with atomic
writes, so concurrent first runs cannot leave a torn file.
"""

from __future__ import annotations

import os
import uuid
import warnings
from pathlib import Path

import pandas as pd
from PIL import Image, ImageDraw

from foilbench.data.format import Benchmark, Manifest, make_benchmark
from foilbench.kinds import PairKind
from foilbench.paths import builtin_dir

VERSION = "1"
SIZE = 64
COLOURS = {"red": (220, 40, 40), "green": (40, 170, 60), "blue": (40, 80, 220),
           "yellow": (235, 200, 40)}
# scene -> (shape, base colour, the two foil colours)
SCENES = [
    ("circle", "red", ("blue", "green")),
    ("square", "green", ("red", "yellow")),
    ("triangle", "blue", ("yellow", "red")),
    ("circle", "yellow", ("green", "blue")),
    ("square", "blue", ("green", "red")),
    ("triangle", "red", ("green", "blue")),
]


def data_cache_root() -> Path:
    return builtin_dir()


def _draw(shape: str, colour: str) -> Image.Image:
    im = Image.new("RGB", (SIZE, SIZE), (200, 200, 200))
    d = ImageDraw.Draw(im)
    box = (14, 14, SIZE - 14, SIZE - 14)
    fill = COLOURS[colour]
    if shape == "circle":
        d.ellipse(box, fill=fill)
    elif shape == "square":
        d.rectangle(box, fill=fill)
    else:
        d.polygon([(SIZE // 2, 12), (SIZE - 12, SIZE - 14), (12, SIZE - 14)], fill=fill)
    return im


def _ensure_image(root: Path, rel: str, shape: str, colour: str) -> None:
    path = root / rel
    if path.is_file():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        _draw(shape, colour).save(tmp, format="PNG")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)  # a full disk leaves no partial file


def tiny_items(root: Path) -> pd.DataFrame:
    """Draw the images under ``root`` (if missing) and return the items table."""
    rows = []
    for s, (shape, base, foils) in enumerate(SCENES):
        base_rel = f"images/s{s}_{shape}_{base}.png"
        _ensure_image(root, base_rel, shape, base)
        for foil in foils:
            foil_rel = f"images/s{s}_{shape}_{foil}.png"
            _ensure_image(root, foil_rel, shape, foil)
            rows.append({
                "item_id": f"s{s}-{foil}",
                "image_base": base_rel,
                "image_foil": foil_rel,
                "caption_base": f"a {base} {shape}",
                "caption_foil": f"a {foil} {shape}",
                "scene_id": f"s{s}",
                "edit_type": "modify_color",
                "category": "attribute",
                "operation": "modify",
                "tier": "short",
                "n_objects": 1,
            })
    return pd.DataFrame(rows)


class DrawWarning(UserWarning):
    """The built-in images could not be drawn where they are kept (a full or read-only
    home): drawn in a temporary folder instead."""


def _temporary_folder() -> Path:
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="foilbench-tiny-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return Path(folder)


def tiny_benchmark(on_invalid: str = "raise", check_images: bool = True,
                   root: str | Path | None = None) -> Benchmark:
    """The 12-item built-in pair benchmark (drawn on first use)."""
    folder = Path(root) if root is not None else data_cache_root() / f"tiny-builtin-v{VERSION}"
    try:
        items = tiny_items(folder)
    except OSError as e:
        from foilbench.staged import disk_errno

        if root is not None or disk_errno(e) is None:
            raise
        home_folder, folder = folder, _temporary_folder()  # drawn, not data: like a cache
        warnings.warn(f"cannot draw tiny-builtin's images into {home_folder} "
                      f"({e.strerror or e}): drawing them in {folder} for this process "
                      "instead", DrawWarning, stacklevel=2)
        items = tiny_items(folder)
    manifest = Manifest(name="tiny-builtin", kind=PairKind.name, version=VERSION, license="MIT",
                        source="foilbench.data.tiny (drawn with PIL)",
                        description="12 colour-edit pairs over 6 scenes; a smoke test")
    bench = make_benchmark(manifest, items, folder, on_invalid=on_invalid,
                           check_images=check_images)
    bench.manifest.checksum = bench.compute_checksum()
    return bench
