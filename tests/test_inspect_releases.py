"""``foilbench inspect`` on releases whose images are embedded in Parquet or derived (crops).

Before issue 12 every such image was reported missing and a complete release exited 1:
inspection loads text-only (nothing is written), then looked for the files. Now it checks
what loading will read (data/loaders/sources.py): the embedded bytes, the crop's source.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

import _release_fixtures as rel
from _loader_fixtures import hf_image
from foilbench.cli.main import cli

pytestmark = pytest.mark.filterwarnings("ignore::foilbench.data.loaders.common.LoaderWarning")

COMPLETE = {  # loader -> builder of a complete release in its published layout
    "bivlc": rel.bivlc,
    "colorswap": rel.colorswap_parquet,
    "naturalbench": rel.naturalbench,
    "colorbench": rel.colorbench,
    "winoground": rel.winoground_parquet,
    "aro": rel.aro,
}


def _inspect(spec: str):
    res = CliRunner().invoke(cli, ["inspect", spec, "--json"], catch_exceptions=False)
    return res.exit_code, json.loads(res.output)


@pytest.mark.parametrize("loader", sorted(COMPLETE))
def test_complete_release_inspects_clean_and_writes_nothing(tmp_path, loader):
    root = COMPLETE[loader](tmp_path / loader)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    code, report = _inspect(f"{loader}:{root}")
    assert report["problems"] == [] and code == 0, report["problems"][:3]
    assert report["n_items"] > 0
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_broken_embedded_cell_is_named_by_shard_column_and_row(tmp_path):
    root = rel.bivlc(tmp_path)
    shard = root / "data/test-00000-of-00001.parquet"
    table = pd.read_parquet(shard)
    table.at[1, "negative_image"] = {"bytes": b"not an image", "path": "d.jpg"}
    table.at[0, "image"] = {"bytes": None, "path": "a.jpg"}
    table.to_parquet(shard)
    code, report = _inspect(f"bivlc:{root}")
    assert code == 1
    got = {(p["item_id"], p["reason"]) for p in report["problems"]}
    assert got == {("test/0", "missing_image"), ("test/1", "unreadable_image")}
    text = " ".join(p["message"] for p in report["problems"])
    assert "column 'negative_image', row 1" in text and "no embedded image bytes" in text


def test_aro_crop_source_missing_or_box_outside_is_reported(tmp_path):
    root = rel.aro(tmp_path)
    data = json.loads((root / "visual_genome_attribution.json").read_text())
    data[0].update(bbox_x=50, bbox_y=40)  # the 20x10 source image does not reach the box
    (root / "visual_genome_attribution.json").write_text(json.dumps(data))
    code, report = _inspect(f"aro:{root}")
    assert code == 1
    assert [p["reason"] for p in report["problems"]] == ["bad_crop_box"]
    (root / "images/2.jpg").unlink()
    code, report = _inspect(f"aro:{root}")
    reasons = sorted(p["reason"] for p in report["problems"])
    assert code == 1 and reasons == ["missing_image", "missing_image"]
    assert "crop source image missing" in report["problems"][0]["message"]


def test_skip_images_still_skips_sources(tmp_path):
    root = rel.bivlc(tmp_path)
    table = pd.read_parquet(root / "data/test-00000-of-00001.parquet")
    table.at[0, "image"] = hf_image((1, 2, 3), "x.jpg") | {"bytes": b""}
    table.to_parquet(root / "data/test-00000-of-00001.parquet")
    res = CliRunner().invoke(cli, ["inspect", f"bivlc:{root}", "--json", "--skip-images"],
                             catch_exceptions=False)
    assert res.exit_code == 0 and json.loads(res.output)["problems"] == []
