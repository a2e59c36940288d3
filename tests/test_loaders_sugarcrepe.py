"""SugarCrepe loader: the real release's counts, a native-format fixture, bad input."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from _loader_fixtures import png, write_json
from foilbench.data.loaders import sugarcrepe
from foilbench.data.loaders.common import LoaderWarning
from foilbench.data.registry import resolve_benchmark
from foilbench.errors import BenchmarkError

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "sugarcrepe"
MISSING = ("the real SugarCrepe release is expected at ../shared/data/sugarcrepe beside the "
           "checkout (the project's shared data folder)")
# Fixtures differ from the published counts on purpose; tests that care use pytest.warns.
# the real release is not part of the checkout: without it these tests skip, saying where to put it
needs_release = pytest.mark.skipif(not (REAL / "swap_obj.json").exists(), reason=MISSING)
pytestmark = pytest.mark.filterwarnings("ignore::foilbench.data.loaders.common.LoaderWarning")
PUBLISHED = {"add_att": 692, "add_obj": 2062, "replace_att": 788, "replace_obj": 1652,
             "replace_rel": 1406, "swap_att": 666, "swap_obj": 245}


@needs_release
def test_real_release_counts_exact_without_images():
    assert (REAL / "swap_obj.json").exists(), MISSING
    with warnings.catch_warnings():
        warnings.simplefilter("error", LoaderWarning)  # the real release matches: no warnings
        bench = resolve_benchmark(f"sugarcrepe:{REAL}", check_images=False)
    assert len(bench) == 7511
    assert bench.items["edit_type"].value_counts().to_dict() == PUBLISHED
    assert bench.items["operation"].value_counts().to_dict() == {
        "add": 692 + 2062, "replace": 788 + 1652 + 1406, "swap": 666 + 245}
    assert "swap_obj/108" not in set(bench.items["item_id"])
    assert "swap_obj/107" in set(bench.items["item_id"])
    assert bench.kind == "choice" and bench.manifest.primary_metric == "r1"
    assert bench.manifest.extras["table8_metric"] == "i2t"
    assert bench.manifest.extras["warnings"] == []
    assert not bench.manifest.partial
    assert bench.items["image"].nunique() == 1560


@needs_release
def test_real_release_missing_images_lists_ten_and_count(tmp_path):
    assert (REAL / "swap_obj.json").exists(), MISSING
    with pytest.raises(BenchmarkError) as err:
        resolve_benchmark(f"sugarcrepe:{REAL}?images={tmp_path}")
    msg = str(err.value)
    assert "1560 of 1560 distinct image files are missing" in msg
    assert "... and 1550 more" in msg
    assert "FOILBENCH_COCO_VAL2017" in msg


def _fixture(root: Path, types=tuple(PUBLISHED)) -> tuple[Path, Path]:
    """Two items per type in the native format, images in a separate COCO-like folder."""
    jdir, idir = root / "data", root / "val2017"
    for t in types:
        write_json(jdir / f"{t}.json", {
            "0": {"filename": f"{t}_a.jpg", "caption": f"a {t} caption",
                  "negative_caption": f"a {t} negative"},
            "2": {"filename": "shared.jpg", "caption": f"another {t}",
                  "negative_caption": f"another {t} negative"},
        })
        png(idir / f"{t}_a.jpg")
    png(idir / "shared.jpg", (10, 200, 10))
    return jdir, idir


def test_fixture_loads_with_image_option_and_warns_on_counts(tmp_path):
    jdir, idir = _fixture(tmp_path)
    with pytest.warns(LoaderWarning, match="published release has 692"):
        bench = resolve_benchmark(f"sugarcrepe:{jdir}?images={idir}")
    assert len(bench) == 14
    row = bench.items.set_index("item_id").loc["swap_obj/2"]
    assert list(row["captions"]) == ["another swap_obj", "another swap_obj negative"]
    assert row["image"] == "shared.jpg"
    assert row["operation"] == "swap" and row["category"] == "object"
    assert bench.items.set_index("item_id").loc["replace_rel/0", "category"] == "relation"
    assert bench.root == idir
    assert any("7511" in w for w in bench.manifest.extras["warnings"])


def test_image_root_from_environment(tmp_path, monkeypatch):
    jdir, idir = _fixture(tmp_path)
    monkeypatch.setenv(sugarcrepe.IMAGES_ENV, str(idir))
    with pytest.warns(LoaderWarning):
        bench = sugarcrepe.load(jdir)
    assert bench.root == idir


def test_any_folder_in_the_format_loads_including_other_type_names(tmp_path):
    """Unrefined candidate files share the format; a lone file loads too."""
    write_json(tmp_path / "candidates_x.json", {
        "5": {"filename": "x.jpg", "caption": "c", "negative_caption": "n"}})
    with pytest.warns(LoaderWarning, match="not <add|replace|swap>"):
        bench = sugarcrepe.load(tmp_path, check_images=False)
    assert bench.items["item_id"].tolist() == ["candidates_x/5"]
    with pytest.warns(LoaderWarning):
        single = sugarcrepe.load(tmp_path / "candidates_x.json", check_images=False)
    assert len(single) == 1


def test_missing_type_file_refused_unless_partial(tmp_path):
    jdir, idir = _fixture(tmp_path, types=("add_att", "swap_obj"))
    with pytest.raises(BenchmarkError, match="lacks add_obj.json.*--allow-partial"):
        sugarcrepe.load(f"{jdir}?images={idir}")
    with pytest.warns(LoaderWarning, match="partial dataset"):
        bench = sugarcrepe.load(f"{jdir}?images={idir}", on_invalid="drop")
    assert bench.manifest.partial
    assert len(bench) == 4


def test_schema_mismatch_names_file_and_field(tmp_path):
    write_json(tmp_path / "add_att.json", {"0": {"filename": "a.jpg", "caption": "c"}})
    with pytest.raises(BenchmarkError, match=r"add_att\.json, item '0': missing field\(s\) "
                                             r"negative_caption"):
        sugarcrepe.load(tmp_path, check_images=False, on_invalid="drop")


def test_unknown_option_and_empty_folder_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown loader option.*known: images"):
        sugarcrepe.load(f"{tmp_path}?imgs=x")
    with pytest.raises(BenchmarkError, match="no \\*.json files"):
        sugarcrepe.load(tmp_path)
