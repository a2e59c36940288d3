"""`foilbench fetch` against a local server holding small releases in their real layouts:
listing with published checksums, resume after a dropped connection (HTTP Range), corrupt
files refused, gated Winoground refused without HF_TOKEN, archives unpacked safely, the
loader spec printed, and `--benchmark NAME` finding the fetched release."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pytest
from click.testing import CliRunner
from PIL import Image

from _fetch_server import TOKEN, Routes, serve
from _release_fixtures import winoground_parquet
from foilbench.cli.main import cli
from foilbench.data.registry import resolve_benchmark
from foilbench.fetch import catalog
from foilbench.fetch.listing import FetchError
from foilbench.fetch.unpack import unpack

TYPES = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att",
         "swap_obj")
IMAGES = ["000000000139.jpg", "000000000285.jpg", "000000000632.jpg"]


def _jpeg(colour) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), colour).save(buf, format="JPEG")
    return buf.getvalue()


def coco_zip() -> bytes:
    """val2017.zip as cocodataset.org ships it: one top folder val2017/ of JPEGs."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, name in enumerate(IMAGES):
            zf.writestr(f"val2017/{name}", _jpeg((60 * k, 20, 200)))
    return buf.getvalue()


def sugarcrepe_json(kind: str) -> bytes:
    """One type file of RAIVNLab/sugar-crepe data/: string keys (with a gap) -> filename,
    caption, negative_caption."""
    rows = {str(k): {"filename": IMAGES[i], "caption": f"a {kind} caption {i}",
                     "negative_caption": f"a wrong {kind} caption {i}"}
            for i, k in enumerate((0, 1, 3))}
    return json.dumps(rows).encode()


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    routes = Routes()
    routes.github("RAIVNLab/sugar-crepe", "main", {
        **{f"data/{t}.json": sugarcrepe_json(t) for t in TYPES},
        "README.md": b"not part of the release"})
    routes.files["/coco/zips/val2017.zip"] = coco_zip()
    with serve(routes) as ends:
        monkeypatch.setattr(catalog, "endpoints", lambda: ends)
        yield tmp_path, routes


def fb(args, **kw):
    return CliRunner().invoke(cli, ["fetch", *args], **kw)


def test_sugarcrepe_with_coco_then_benchmark_by_name(env):
    tmp, routes = env
    res = fb(["sugarcrepe", "--to", str(tmp / "data")])
    assert res.exit_code == 0, res.output
    root = (tmp / "data").resolve()
    assert "licence: COCO annotations: CC BY 4.0" in res.output
    assert "licence: MIT (annotations)" in res.output
    assert "swap_att.json: " in res.output and "git blob SHA-1 published by the source" in \
        res.output
    assert "val2017.zip: " in res.output and "no published checksum" in res.output
    spec = f"sugarcrepe:{root}/sugarcrepe?images={root}/coco-val2017/val2017"
    assert f"benchmark spec: {spec}" in res.output
    assert sorted(p.name for p in (root / "sugarcrepe").iterdir()) == sorted(
        f"{t}.json" for t in TYPES)
    assert (root / "coco-val2017" / "val2017" / IMAGES[2]).is_file()
    bench = resolve_benchmark("sugarcrepe")  # found through the fetched-releases index
    assert len(bench.items) == 21 and set(bench.items["edit_type"]) == set(TYPES)
    again = fb(["sugarcrepe", "--to", str(tmp / "data")])
    assert again.exit_code == 0 and again.output.count("already here") == 8
    assert sum(r["path"].endswith("val2017.zip") for r in routes.log) == 1


def test_a_dropped_download_resumes_with_a_range_request(env):
    tmp, routes = env
    routes.cut_once.add("/coco/zips/val2017.zip")
    first = fb(["coco-val2017", "--to", str(tmp / "d")])
    assert first.exit_code != 0 and "run fetch again to resume" in str(first.exception)
    part = tmp / "d" / "coco-val2017" / "val2017.zip.part"
    have = part.stat().st_size
    assert 0 < have < len(routes.files["/coco/zips/val2017.zip"])
    second = fb(["coco-val2017", "--to", str(tmp / "d")])
    assert second.exit_code == 0, second.output
    assert f"resumed from byte {have}" in second.output
    assert routes.log[-1]["range"] == f"bytes={have}-"
    data = (tmp / "d" / "coco-val2017" / "val2017.zip").read_bytes()
    assert data == routes.files["/coco/zips/val2017.zip"] and not part.exists()


def test_a_file_that_does_not_match_its_published_checksum_is_refused(env):
    tmp, routes = env
    routes.files["/gh-raw/RAIVNLab/sugar-crepe/main/data/swap_att.json"] = b'{"tampered": 1}'
    res = fb(["sugarcrepe", "--to", str(tmp / "d")])
    assert isinstance(res.exception, FetchError)
    assert "swap_att.json" in str(res.exception) and "does not match the published" in \
        str(res.exception)
    folder = tmp / "d" / "sugarcrepe"
    assert not (folder / "swap_att.json").exists()
    assert not (folder / "swap_att.json.part").exists()


def test_winoground_is_gated_on_the_users_token(env, monkeypatch):
    """Without huggingface_hub: the plain-HTTP listing and download (the Hub-cache path is
    tests/test_hub.py)."""
    from foilbench.fetch import fetcher

    monkeypatch.setattr(fetcher, "installed", lambda module: module != "huggingface_hub")
    tmp, routes = env
    src = winoground_parquet(tmp / "wino-src")
    shard = "data/test-00000-of-00001.parquet"
    routes.hub("facebook/winoground", "main", "data", {shard: (src / shard).read_bytes()})
    res = fb(["winoground", "--to", str(tmp / "d"), "--yes"])
    assert isinstance(res.exception, FetchError)
    assert "gated" in str(res.exception) and "HF_TOKEN" in str(res.exception)
    assert "solely for research purposes" in res.output  # the terms came first
    assert routes.log == []  # nothing was asked of the Hub without a token
    asked = fb(["winoground", "--to", str(tmp / "d")], input="y\n")
    assert "HF_TOKEN" in str(asked.exception) and "Do you accept" not in asked.output
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    refused = fb(["winoground", "--to", str(tmp / "d")], input="n\n")
    assert refused.exit_code != 0 and "not accepted" in str(refused.exception)
    ok = fb(["winoground", "--to", str(tmp / "d")], input="y\n")
    assert ok.exit_code == 0, ok.output
    assert "SHA-256 published by the source" in ok.output
    assert all(r["auth"] == f"Bearer {TOKEN}" for r in routes.log if r["path"].startswith("/hf"))
    bench = resolve_benchmark("winoground")
    assert len(bench.items) == 2


def test_whatsup_archives_unpack_into_the_loader_layout(env):
    tmp, routes = env
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = _jpeg((1, 2, 3))
        info = tarfile.TarInfo("controlled_images/mug_left_of_plate.jpeg")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    ids = {"controlled_images_dataset.json": "1ap8mmmpQjLIjPGuplkpBgc1hoEHCj4hm",
           "controlled_clevr_dataset.json": "1unNNosLbdy9NDjgj4l8fsQP3WiAAGA6z",
           "controlled_images.tar.gz": "19KGYVQjrV3syb00GgcavB2nZTW5NXX0H",
           "controlled_clevr.tar.gz": "13jdBpg8t3NqW3jrL6FK8HO93vwsUjDxG"}
    for name, file_id in ids.items():
        body = buf.getvalue() if name.endswith(".tar.gz") else b"[]"
        routes.files[f"/gdrive/download?id={file_id}&export=download&confirm=t"] = body
    res = fb(["whatsup", "--to", str(tmp / "d")])
    assert res.exit_code == 0, res.output
    assert (tmp / "d" / "whatsup" / "controlled_images" / "mug_left_of_plate.jpeg").is_file()
    assert "benchmark spec: whatsup_pairs:" in res.output and "also: whatsup:" in res.output


def test_hostile_archives_and_unknown_names_are_refused(tmp_path, env):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tarfile.TarInfo("../outside.txt")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"x"))
    archive = tmp_path / "evil.tar"
    archive.write_bytes(buf.getvalue())
    with pytest.raises(FetchError, match="outside"):
        unpack(archive, tmp_path / "t")
    assert not (tmp_path / "outside.txt").exists()
    res = fb(["sugarcrep"])
    assert "sugarcrepe" in str(res.exception)


def test_every_release_names_its_source_licence_and_hosts():
    ends = catalog.endpoints()
    for release in catalog.releases().values():
        assert release.source.startswith("https://") and release.licence
        for f in release.files:
            assert f["url"].format(**ends).startswith(("http://", "https://"))
        assert release.github or release.hub or release.files


@pytest.mark.parametrize("has_data_filter", [True, False])
def test_tar_unpacks_with_and_without_the_stdlib_data_filter(tmp_path, monkeypatch,
                                                              has_data_filter):
    """Python 3.10.0-3.10.11 have no ``tarfile.data_filter``: the same archive unpacks there
    (our own member checks are the filter), setuid and others' write bits dropped, and a
    link is still refused."""
    if not has_data_filter:
        monkeypatch.delattr(tarfile, "data_filter")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        info = tarfile.TarInfo("d/a.txt")
        info.size, info.mode = 2, 0o4777
        tf.addfile(info, io.BytesIO(b"ok"))
    archive = tmp_path / "good.tar"
    archive.write_bytes(buf.getvalue())
    assert unpack(archive, tmp_path / "t") == 1
    out = tmp_path / "t" / "d" / "a.txt"
    assert out.read_bytes() == b"ok"
    assert out.stat().st_mode & 0o4002 == 0
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        link = tarfile.TarInfo("d/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
    (tmp_path / "link.tar").write_bytes(buf.getvalue())
    with pytest.raises(FetchError, match="link"):
        unpack(tmp_path / "link.tar", tmp_path / "t2")
