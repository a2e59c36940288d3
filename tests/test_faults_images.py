"""One rule for the model and the reviewer: pixels as stored (issue 42, item 5; docs/images.md).

An animated GIF was scored on its first frame without a note; a JPEG with an EXIF rotation was
scored unrotated while the review app showed it rotated. Now the run notes multi-frame images,
the engine keeps EXIF orientation unapplied (as open_clip's preprocessing does) and every page
that shows benchmark images says ``image-orientation: none``.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest
from PIL import Image

from _core_helpers import colour_pair_folder
from _faults_cli import foilbench
from foilbench.data.images import frame_count
from foilbench.scoring.encode import open_image, open_rgb


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "300")


def animated_gif(path, colours=("red", "blue")):
    frames = [Image.new("RGB", (16, 16), c) for c in colours]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100, loop=0)


def rotated_jpeg(path):
    """A 32 x 16 JPEG whose EXIF says 'rotate 90 degrees clockwise' (orientation 6)."""
    im = Image.new("RGB", (32, 16), "red")
    exif = Image.Exif()
    exif[0x0112] = 6
    im.save(path, exif=exif.tobytes())


def test_frame_count(tmp_path):
    animated_gif(tmp_path / "a.gif")
    Image.new("RGB", (4, 4)).save(tmp_path / "still.gif")
    assert frame_count(tmp_path / "a.gif") == 2
    assert frame_count(tmp_path / "still.gif") == 1
    assert frame_count(tmp_path / "absent.gif") == 1


def test_an_animated_gif_is_scored_on_its_first_frame_with_a_note(tmp_path, capsys):
    root = colour_pair_folder(tmp_path / "b")
    animated_gif(root / "red.gif", ("red", "blue", "green"))
    import pandas as pd

    items = pd.read_parquet(root / "items.parquet")
    items = items.replace({"red.png": "red.gif"})
    items.to_parquet(root / "items.parquet", index=False)
    first = open_rgb(root / "red.gif")
    assert first.getpixel((0, 0)) == (255, 0, 0)  # the first frame is what a model gets
    code, out, err = foilbench(capsys, "run", "--model", "tiny-random", "--benchmark",
                               str(root), "--out", str(tmp_path / "out"), "--no-report",
                               "--no-cache", "--quiet")
    assert code == 0, err
    assert "1 image(s) hold several frames (red.gif (3 frames)): each is scored on its " \
           "first frame only" in out + err
    db = str(tmp_path / "out" / "foilbench.duckdb")
    run_id = json.loads(foilbench(capsys, "show", "--db", db, "--json")[1])[0]["run_id"]
    code, out, err = foilbench(capsys, "show", run_id, "--db", db)
    assert "hold several frames" in out


def test_exif_orientation_is_not_applied_to_what_a_model_scores(tmp_path):
    rotated_jpeg(tmp_path / "r.jpg")
    with Image.open(tmp_path / "r.jpg") as im:
        assert im.getexif()[0x0112] == 6
    assert open_image(tmp_path / "r.jpg").size == (32, 16)  # as stored, not rotated
    assert open_rgb(tmp_path / "r.jpg").size == (32, 16)


@pytest.mark.parametrize("sheet", ["review.css", "choice.css"])
def test_the_review_apps_show_pixels_as_stored(sheet):
    css = resources.files("foilbench.review").joinpath("static", sheet).read_text()
    assert "img { image-orientation: none; }" in css


def test_the_report_shows_pixels_as_stored():
    from foilbench.report.html import CSS

    assert "img{image-orientation:none}" in CSS
