"""Issue 13, bad benchmark input: every case a message naming item/field/file and a non-zero
exit, or handled and counted. Strings where lists belong, null ids, format_version, image
bombs, corrupt pixel data and symlinks out of the folder."""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from _core_helpers import solid, write_folder
from _reliability import choice_folder, choice_items, fb, serving
from foilbench.data.format import (
    FORMAT_VERSION,
    Manifest,
    load_benchmark,
    make_benchmark,
    write_benchmark,
)
from foilbench.data.images import CORRUPT, OUTSIDE_ROOT, TOO_LARGE, check_image
from foilbench.errors import BenchmarkError

SRC = Path(__file__).resolve().parent.parent / "src" / "foilbench"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FOILBENCH_MAX_IMAGE_PIXELS", raising=False)
    return tmp_path


def run_args(bench: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--model", "tiny-random", "--benchmark", str(bench), "--out", str(out),
            "--n-boot", "100", "--no-report", "--quiet", "--no-cache", *extra]


# --- strings where lists belong --------------------------------------------------------------
def test_a_string_where_a_list_belongs_is_refused_naming_item_and_column(env, capsys):
    items = choice_items(env / "b", 3)
    items["captions"] = items["captions"].astype(object)
    items.at[1, "captions"] = "cube"  # was split into c, u, b, e and scored
    with pytest.raises(BenchmarkError, match=r"item 'i1', field 'captions': expected a list of "
                                             r"captions .* got the string 'cube'"):
        make_benchmark(Manifest(name="m", kind="choice"), items, env / "b")
    images = pd.DataFrame([{"item_id": "t1", "caption": "a red square", "images": "red.png"}])
    with pytest.raises(BenchmarkError, match=r"item 't1', field 'images': expected a list of "
                                             r"image paths"):
        make_benchmark(Manifest(name="m", kind="image_choice"), images, env / "b")
    # a folder whose whole column holds strings (Parquet cannot mix lists and strings)
    folder = choice_folder(env / "folder", 3)
    table = pd.read_parquet(folder / "items.parquet")
    table["captions"] = ["cube", "sphere", "cone"]
    table.to_parquet(folder / "items.parquet", index=False)
    code, _, err = fb(run_args(folder, env / "out"), capsys)
    assert code == 2 and "item 'i2', field 'captions'" in err and "the string 'cone'" in err
    assert not (env / "out" / "foilbench.duckdb").exists()


# --- null item ids -----------------------------------------------------------------------------
def test_a_null_item_id_is_named_by_row_and_dropped_counted(env, capsys):
    folder = choice_folder(env / "b", 6)
    table = pd.read_parquet(folder / "items.parquet")
    table.loc[2, "item_id"] = None
    table.to_parquet(folder / "items.parquet", index=False)
    code, _, err = fb(run_args(folder, env / "out"), capsys)
    assert code == 2 and "row 2, field 'item_id': item_id is null" in err
    code, _, err = fb(run_args(folder, env / "out", "--allow-partial"), capsys)
    assert code == 0, err
    [summary] = (env / "out").glob("*/summary.json")
    [run] = json.loads(summary.read_text())["runs"]
    assert run["n_items"] == 5 and run["dropped"] == {"n": 1, "by_reason": {"null_id": 1}}


# --- format_version ----------------------------------------------------------------------------
def test_format_version_is_written_newer_refused_older_read(env, capsys):
    folder = choice_folder(env / "old", 3)  # written as before the field: no format_version
    assert "format_version" not in json.loads((folder / "manifest.json").read_text())
    bench = load_benchmark(folder)
    assert bench.manifest.format_version == 0
    written = write_benchmark(bench, env / "new")
    assert json.loads((written / "manifest.json").read_text())["format_version"] == FORMAT_VERSION
    assert load_benchmark(written).manifest.format_version == FORMAT_VERSION
    newer = choice_folder(env / "newer", 3, format_version=FORMAT_VERSION + 1)
    code, _, err = fb(["inspect", str(newer)], capsys)
    assert code == 2
    assert (f"manifest.json: format_version {FORMAT_VERSION + 1} is newer than the format this "
            f"foilbench reads (format_version {FORMAT_VERSION})") in err
    bad = choice_folder(env / "bad", 3, format_version="one")
    with pytest.raises(BenchmarkError, match="format_version must be a whole number"):
        load_benchmark(bad)


def test_every_builder_writes_its_manifest_through_write_benchmark():
    """Builders (suite, construct pipelines, review export, loaders' caches) must not write a
    manifest.json of their own: only data/format.py writes one, so each carries format_version."""
    writers = []
    for path in SRC.rglob("*.py"):
        text = path.read_text()
        mentions = "manifest.json" in text or "MANIFEST_FILE" in text
        writes = any(w in text for w in ("write_json(", ".write_text(", "json.dump("))
        if mentions and writes:
            writers.append(path.relative_to(SRC).as_posix())
    allowed = {"data/format.py", "cli/review_cmd.py", "cli/inspect_cmd.py"}  # last two only read
    assert set(writers) <= allowed, writers
    for name in ("construct/engine/export.py", "review/export.py", "construct/suite.py"):
        assert "write_benchmark(" in (SRC / name).read_text(), name


# --- image bombs and huge images ---------------------------------------------------------------
def png_header_only(path: Path, width: int, height: int) -> Path:
    """A tiny PNG whose header claims ``width`` x ``height`` (a decompression bomb's shape)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    path.write_bytes(b"\x89PNG\r\n\x1a\n"
                     + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"\x00" * 16)) + chunk(b"IEND", b""))
    return path


def test_a_decompression_bomb_is_refused_from_its_header_naming_the_file(env, capsys,
                                                                         monkeypatch):
    # wide enough that the message's long temp path (longer under xdist: .../popen-gw0/...)
    # is not folded inside "red.png" at a pipe's 80 columns
    monkeypatch.setenv("COLUMNS", "240")
    folder = choice_folder(env / "b", 3)
    png_header_only(folder / "red.png", 20000, 20000)
    code, out, _ = fb(["inspect", str(folder)], capsys)
    assert code == 1 and TOO_LARGE in out and "red.png" in out and "400,000,000" in out
    code, _, err = fb(run_args(folder, env / "out"), capsys)
    assert code == 2 and "red.png claims 400,000,000 pixels" in err


def test_a_real_9000_square_image_is_refused_before_any_decode(env, monkeypatch):
    folder = choice_folder(env / "b", 3)
    Image.new("1", (9000, 9000), 1).save(folder / "red.png")  # a real, valid image
    decoded = []
    real_load = Image.Image.load
    monkeypatch.setattr(Image.Image, "load", lambda self: decoded.append(1) or real_load(self))
    problem = check_image(folder, "red.png", decode=True)
    assert problem is not None and problem.reason == TOO_LARGE
    assert "9000 x 9000 = 81,000,000 pixels" in problem.message and "red.png" in problem.message
    assert decoded == []  # refused from the header: nothing was decoded
    monkeypatch.setenv("FOILBENCH_MAX_IMAGE_PIXELS", "100_000_000")  # the limit is configurable
    assert check_image(folder, "red.png", decode=False) is None
    monkeypatch.setenv("FOILBENCH_MAX_IMAGE_PIXELS", "lots")
    with pytest.raises(Exception, match="FOILBENCH_MAX_IMAGE_PIXELS='lots'"):
        check_image(folder, "red.png")


# --- valid header, corrupt pixel data ----------------------------------------------------------
def corrupt_images(folder: Path) -> None:
    """green.png: IDAT bytes scrambled with a recomputed CRC (verify() passes); blue.jpg: the
    second half cut off. Both open and report their size; neither decodes."""
    im = Image.new("RGB", (64, 64))
    im.putdata([(i % 256, (i * 7) % 256, 3) for i in range(64 * 64)])
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    data = bytearray(buf.getvalue())
    at = data.find(b"IDAT")
    size = struct.unpack(">I", data[at - 4:at])[0]
    for k in range(at + 14, at + 44):
        data[k] ^= 0x5A
    data[at + 4 + size:at + 8 + size] = struct.pack(">I", zlib.crc32(bytes(data[at:at + 4 + size])))
    (folder / "green.png").write_bytes(bytes(data))
    buf = io.BytesIO()
    Image.new("RGB", (256, 256), (0, 0, 255)).save(buf, format="JPEG", quality=95)
    (folder / "blue.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    for name in ("green.png", "blue.jpg"):
        with Image.open(folder / name) as opened:
            opened.verify()  # the old check passed both


def test_corrupt_pixel_data_is_flagged_by_inspect_and_dropped_by_allow_partial(env, capsys):
    folder = env / "b"
    items = choice_items(folder, 6)
    items["image"] = items["image"].str.replace("blue.png", "blue.jpg")
    write_folder(folder, "choice", items)
    corrupt_images(folder)
    code, out, _ = fb(["inspect", str(folder), "--json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["images_checked"] == "decoded"
    flagged = {(p["item_id"], p["reason"]) for p in report["problems"]}
    assert flagged == {(f"i{k}", CORRUPT) for k in (1, 2, 4, 5)}
    code, out, _ = fb(["inspect", str(folder), "--fast"], capsys)
    assert code == 0 and "--fast: image headers only" in out
    code, _, err = fb(run_args(folder, env / "out"), capsys)
    assert code == 2 and "green.png" in err and "blue.jpg" in err and "evaluating" not in err
    code, out, err = fb(run_args(folder, env / "out", "--allow-partial"), capsys)
    assert code == 0 and "PARTIAL" in out, err
    [summary] = (env / "out").glob("*/summary.json")
    [run] = json.loads(summary.read_text())["runs"]
    assert run["n_items"] == 2 and run["dropped"] == {"n": 4, "by_reason": {CORRUPT: 4}}


# --- symlinks out of the folder: refused by run, report and serve alike ------------------------
def test_a_symlink_out_of_the_folder_is_refused_by_run_report_and_serve(env, capsys):
    from urllib.error import HTTPError

    from foilbench.report.examples import _thumb

    folder = choice_folder(env / "b", 3)
    secret = solid(env / "elsewhere" / "secret.png", "blue")
    stored = fb(run_args(folder, env / "out"), capsys)  # stored while blue.png was a file
    assert stored[0] == 0
    (folder / "blue.png").unlink()
    (folder / "blue.png").symlink_to(env / "elsewhere" / secret)
    problem = check_image(folder, "blue.png")
    assert problem is not None and problem.reason == OUTSIDE_ROOT
    code, _, err = fb(run_args(folder, env / "out2"), capsys)
    assert code == 2 and OUTSIDE_ROOT in err and "secret.png" in err
    assert "image not found: blue.png" in _thumb(folder, "blue.png")
    assert "<img" in _thumb(folder, "red.png")
    db = env / "out" / "foilbench.duckdb"
    with serving(db) as (get, run_id):
        assert get(f"/image?run={run_id}&path=red.png").status == 200
        with pytest.raises(HTTPError, match="404"):
            get(f"/image?run={run_id}&path=blue.png")
