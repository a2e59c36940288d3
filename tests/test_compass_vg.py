"""COMPASS build on the Visual Genome release as it lies on disk (issue 19).

Each fixture follows a real VG layout; the evidence for each format is cited in
``tests/_vg_fixtures.py`` (VG's own ``visual_genome/local.py`` and ``utils.py``, and the
Hugging Face ``visual_genome`` loading script).
"""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from _vg_fixtures import write_release
from foilbench.cli.compass_cmd import compass
from foilbench.construct.compass.negatives import PrimitivePools, replacement_tiers
from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.compass.vg import read_vg_file
from foilbench.data.format import load_benchmark


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return write_release(tmp_path_factory.mktemp("vg"))


def build(release, tmp_path, graphs="scene_graphs.json", images=None, *extra):
    out = tmp_path / "out"
    res = CliRunner().invoke(compass, ["build", "--scene-graphs", str(release / graphs),
                                       "--images", str(images or release), "--out", str(out),
                                       *extra])
    assert res.exit_code == 0, res.output
    return res.output, load_benchmark(out)


def test_release_root_finds_images_in_both_folders(release, tmp_path):
    """VG unpacks to VG_100K/ and VG_100K_2/ (HF script: the folder is read off the url)."""
    output, bench = build(release, tmp_path)
    assert "scene graphs: 4, used: 3, skipped (no image found): 1" in output
    assert set(bench.items.image) == {"VG_100K/1.jpg", "VG_100K_2/2.jpg", "VG_100K/3.jpg"}
    assert bench.manifest.extras["missing_image"] == 1
    assert "hint" not in output


def test_one_image_folder_still_works_and_hints_at_its_sibling(release, tmp_path):
    output, bench = build(release, tmp_path, "scene_graphs.json", release / "VG_100K")
    assert "used: 2, skipped (no image found): 2" in output
    assert set(bench.items.image) == {"1.jpg", "3.jpg"}
    assert f"hint: VG splits its images over VG_100K and VG_100K_2: pass --images {release}" \
        in output


def test_dangling_relations_are_skipped_counted_per_image_and_never_captioned(release,
                                                                               tmp_path):
    """VG's parse_graph_local skips a relationship whose subject or object is not an object
    of the image ("Some data is missing in this way"); so do we, and we count them."""
    graphs = {g.image_id: g for g in read_vg_file(release / "scene_graphs.json").graphs}
    g1 = graphs["1"]
    assert [r.relationship_id for r in g1.relationships] == [1001, 1002]
    assert g1.extras["skipped"] == {"dangling_relations": 2}
    assert g1.mentioned == {"holding", "near"}
    assert graphs["2"].extras["skipped"] == {"dangling_relations": 1}
    output, bench = build(release, tmp_path)
    assert ("skipped relations (subject or object not among the image's objects): 3 in 2 "
            "image(s), e.g. image 1: 2, image 2: 1") in output
    assert bench.manifest.extras["dangling_relations"] == 3
    items = bench.items[bench.items.scene_id == "1"]
    assert len(items) > 0
    texts = [t for caps in items.captions for t in caps]
    # "holding" is a real predicate of image 2, so it is in the pool; for image 1 it is
    # stated by a dangling relation and must appear in no caption, true or negative.
    assert not [t for t in texts if "holding" in t or "near" in t]


def test_every_name_of_every_object_is_kept_out_of_replacements(release):
    """COMPASS §3.2: a replacement must not "already appear in the image's entire scene
    graph". Object 101 is ["mug", "cup"]: "cup" (a real name in image 2) must never replace
    "mug" in image 1, nor any attribute or predicate image 1 states."""
    graphs = read_vg_file(release / "scene_graphs.json").graphs
    g1 = graphs[0]
    assert g1.objects[0].name == "mug" and g1.objects[0].other_names == ("cup",)
    assert g1.names() == {"mug", "cup", "table", "man", "shirt", "t-shirt"}
    pools = PrimitivePools.from_graphs(graphs)
    assert {"cup", "t-shirt"} <= set(pools.objects)
    spec = CaptionSpec("1", "L3-OAR", ((101, "mug"), (102, "table")), ((101, "white"),),
                       ((101, "on", 102),))
    assert [p.kind for p in spec.primitives] == ["object", "object", "attribute", "relation"]
    objects, attrs, preds = (set(sum(replacement_tiers(g1, spec, i, pools), []))
                             for i in (0, 2, 3))
    assert objects == {"car", "dog", "frisbee", "glass", "grass", "plate", "road", "woman"}
    assert attrs == {"black", "clear", "green", "red", "round", "tall", "yellow"}
    assert preds == {"above", "next to"}  # not "holding": a dangling relation of image 1


def test_built_negatives_never_use_a_word_of_their_image(release, tmp_path):
    output, bench = build(release, tmp_path, "scene_graphs.json", None, "--per-level", "3")
    assert ("objects with several names: 2 (captions use the first; 2 other name(s) kept out "
            "of replacements)") in output
    graphs = {g.image_id: g for g in read_vg_file(release / "scene_graphs.json").graphs}
    dec = bench.items[bench.items.role == "decomposed"]
    assert len(dec) > 10
    for row in dec.itertuples():
        old, new = row.perturbation.split(" -> ")
        vocab = graphs[row.scene_id].vocabulary()
        assert old in vocab and new not in vocab, (row.scene_id, old, new)


def test_blank_names_attributes_predicates_are_skipped_and_counted(release, tmp_path):
    g3 = read_vg_file(release / "scene_graphs.json").graphs[2]
    assert g3.objects[0].name == "dog" and g3.objects[0].attributes == ("white",)
    assert [r.predicate for r in g3.relationships] == ["on", "above"]
    assert g3.extras["skipped"] == {"empty_names": 1, "empty_attributes": 1,
                                    "empty_predicates": 1}
    output, _ = build(release, tmp_path)
    assert "skipped blank strings: empty_names 1, empty_attributes 1, empty_predicates 1" \
        in output


def test_relationships_json_nested_name_or_names(release, tmp_path):
    """relationships.json nests subject/object records with "name" or "names"; it has no
    attributes, so it yields L1 and L2-OR only, and says so."""
    vg = read_vg_file(release / "relationships.json")
    assert vg.layout == "relationships.json"
    g1, g2 = vg.graphs
    assert g2.image_id == "2"  # "id" in an older release
    mug = g1.object(101)
    assert mug.name == "mug" and mug.other_names == ("cup",)  # two relations, two names
    assert g1.object(104).all_names == ("shirt", "t-shirt")
    assert [(r.subject_id, r.predicate, r.object_id) for r in g1.relationships] == \
        [(101, "on", 102), (103, "wearing", 104), (101, "near", 103)]
    output, bench = build(release, tmp_path, "relationships.json")
    assert ("read relationships.json as VG relationships.json: levels L1, L2-OR (no "
            "L2-OA/L3-OAR: relationships.json has no attributes)") in output
    assert set(bench.items.level) <= {"L1", "L2-OR"} and "L2-OR" in set(bench.items.level)
    assert bench.manifest.extras["levels"] == ["L1", "L2-OR"]


def test_objects_json_yields_l1_only(release, tmp_path):
    vg = read_vg_file(release / "objects.json")
    assert vg.layout == "objects.json" and vg.graphs[0].object(101).other_names == ("cup",)
    output, bench = build(release, tmp_path, "objects.json")
    assert ("levels L1 (no L2-OA/L2-OR/L3-OAR: objects.json has no attributes and no "
            "relationships)") in output
    assert set(bench.items.level) == {"L1"}


@pytest.mark.parametrize(("name", "holds"), [
    ("attributes.json", "per-image objects with their attributes"),
    ("image_data.json", "image metadata: url, width, height"),
])
def test_other_vg_files_are_refused_by_name(release, tmp_path, monkeypatch, capsys, name,
                                            holds):
    from foilbench.cli.main import main

    monkeypatch.setattr(sys, "argv", ["foilbench", "compass", "build", "--scene-graphs",
                                      str(release / name), "--images", str(release),
                                      "--out", str(tmp_path / "o")])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{release / name}: this looks like Visual Genome's {name} ({holds}" in err
    assert "expected Visual Genome's scene_graphs.json" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_written_graphs_keep_every_name_and_mentioned_words(release, tmp_path):
    build(release, tmp_path)
    written = json.loads((tmp_path / "out" / "scene_graphs.json").read_text())
    first = next(r for r in written if r["image_id"] == "1")
    assert first["objects"][0]["names"] == ["mug", "cup"]
    assert first["mentioned_words"] == ["holding", "near"]
    assert read_vg_file(tmp_path / "out" / "scene_graphs.json").graphs[0].mentioned == \
        {"holding", "near"}
