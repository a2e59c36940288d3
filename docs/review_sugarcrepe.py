"""Regenerate docs/review_sugarcrepe.png: the negative-validation phase of `foilbench review`
(SugarCrepe §4.1 Stage 2) in headless Chromium, on SugarCrepe-style negatives (template
backend) of three procedural-world scenes, after two verdicts.

    PYTHONPATH=src:tests python docs/review_sugarcrepe.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from _browser import browser_page
from foilbench.cli.main import cli
from foilbench.world.captions import describe_scene
from foilbench.world.render import png_bytes, render
from foilbench.world.sample import sample_scene
from test_review_browser import Server

OUT = Path(__file__).resolve().parent / "review_sugarcrepe.png"


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="fb-review-sc-"))
    records = []
    for k in range(3):
        scene = sample_scene(np.random.default_rng(k), 3, "contextual")
        (root / f"scene{k}.png").write_bytes(png_bytes(render(scene, size=320)))
        records.append({"image": f"scene{k}.png", "caption": describe_scene(scene)})
    (root / "captions.json").write_text(json.dumps(records))
    res = CliRunner().invoke(cli, ["construct", "sugarcrepe", str(root / "captions.json"),
                                   "--out", str(root / "sc"), "--no-refine", "--no-progress"])
    assert res.exit_code == 0, res.output
    server = Server(root / "sc")
    try:
        with browser_page() as (page, errors):
            page.goto(server.url)
            page.wait_for_function("() => document.querySelector('#image').naturalWidth > 0")
            for key in ("1", "2"):
                before = page.inner_text("#progress")
                page.keyboard.press(key)
                page.wait_for_function(
                    "b => document.querySelector('#progress').textContent !== b", arg=before)
            page.wait_for_function("() => document.querySelector('#image').complete")
            page.screenshot(path=str(OUT), full_page=True)
            assert errors == [], errors
    finally:
        server.kill()
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
