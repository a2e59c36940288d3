"""``colour-pairs``: four CompoSET-style pairs whose foil changes one object's colour.

A benchmark factory returns a :class:`foilbench.data.format.Benchmark`; the images are
drawn once into ``$FOILBENCH_HOME/plugins/colour-pairs`` (a published benchmark would
instead ship a foilbench folder and return ``load_benchmark(folder, ...)``).
"""

from __future__ import annotations

import pandas as pd
from PIL import Image

from foilbench.data.format import Benchmark, Manifest, make_benchmark
from foilbench.paths import home

COLOURS = {"red": (220, 30, 30), "green": (30, 170, 50), "blue": (30, 60, 220),
           "yellow": (235, 210, 30)}
PAIRS = [("red", "blue"), ("green", "yellow"), ("blue", "red"), ("yellow", "green")]


def _image(folder, colour: str) -> str:
    rel = f"images/{colour}.png"
    path = folder / rel
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (32, 32), COLOURS[colour]).save(path)
    return rel


def build(on_invalid: str = "raise", check_images: bool = True) -> Benchmark:
    """The entry point's factory: the benchmark, validated as foilbench validates any."""
    folder = home() / "plugins" / "colour-pairs"
    rows = [{"item_id": f"{base}-{foil}", "image_base": _image(folder, base),
             "image_foil": _image(folder, foil), "caption_base": f"a {base} square",
             "caption_foil": f"a {foil} square", "scene_id": base}
            for base, foil in PAIRS]
    manifest = Manifest(name="colour-pairs", kind="pair", license="CC0-1.0",
                        source="foilbench-colour-plugin",
                        description="four single-colour-edit pairs (plugin example)")
    bench = make_benchmark(manifest, pd.DataFrame(rows), folder, on_invalid=on_invalid,
                           check_images=check_images)
    bench.manifest.checksum = bench.compute_checksum()
    return bench
