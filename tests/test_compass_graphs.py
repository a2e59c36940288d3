"""Scene graphs: Visual Genome JSON round trip, clear errors, the world's closed-world graphs."""

from __future__ import annotations

import json

import pytest

from foilbench.construct.compass.scene_graph import (
    SceneGraph,
    SceneGraphError,
    SGObject,
    SGRelation,
    scene_graph_from_dict,
    write_scene_graphs,
)
from foilbench.construct.compass.vg import read_scene_graphs
from foilbench.construct.compass.world_graph import scene_graph_from_world
from foilbench.world.scene import Obj, Scene

VG_RECORD = {
    "image_id": 1,
    "objects": [
        {"object_id": 10, "names": ["Sofa"], "attributes": ["dark brown", "leather"],
         "x": 5, "y": 6, "w": 50, "h": 30, "synsets": ["sofa.n.01"]},
        {"object_id": 11, "names": ["living room"]},
        {"object_id": 12, "name": "lamp", "attributes": ["tall"]},
    ],
    "relationships": [
        {"relationship_id": 7, "subject_id": 10, "predicate": "IN", "object_id": 11},
        {"relationship_id": 8, "subject": {"object_id": 12}, "predicate": "next to",
         "object": {"object_id": 10}},
    ],
}


def test_vg_record_parsed_and_normalised():
    g = scene_graph_from_dict(VG_RECORD)
    assert g.image_id == "1"
    assert [o.name for o in g.objects] == ["sofa", "living room", "lamp"]
    assert g.objects[0].attributes == ("dark brown", "leather")
    assert g.objects[0].box == (5.0, 6.0, 50.0, 30.0)
    assert g.relationships[0] == SGRelation(7, 10, "in", 11)
    assert g.relationships[1] == SGRelation(8, 12, "next to", 10)
    assert g.name_triples() == {("sofa", "in", "living room"), ("lamp", "next to", "sofa")}
    assert not g.closed_world


def test_vg_json_round_trip(tmp_path):
    graphs = [scene_graph_from_dict(VG_RECORD),
              SceneGraph("w0", (SGObject(0, "cube", ("red",)), SGObject(1, "sphere")),
                         (SGRelation(0, 0, "left of", 1),), image="w0.png", closed_world=True)]
    path = write_scene_graphs(graphs, tmp_path / "sg.json")
    back = read_scene_graphs(path)
    assert back == graphs
    assert back[1].closed_world and back[1].image == "w0.png"
    # The file is plain VG layout: names is a list, relationships use subject_id/object_id.
    raw = json.loads(path.read_text())
    assert raw[0]["objects"][0]["names"] == ["sofa"]
    assert set(raw[0]["relationships"][0]) == {"relationship_id", "subject_id", "predicate",
                                                "object_id"}


@pytest.mark.parametrize(
    ("record", "needle"),
    [
        ({"objects": []}, "without 'image_id'"),
        ({"image_id": 3, "objects": [{"names": ["a"]}]}, "without 'object_id'"),
        ({"image_id": 3, "objects": [{"object_id": 1}]}, "has no 'names'"),
        ({"image_id": 3, "objects": [{"object_id": 1, "names": "a"}]}, "list of strings"),
        ({"image_id": 3, "objects": [{"object_id": 1, "names": ["a", 7]}]},
         "object 1 names: expected a non-empty string, got 7"),
        ({"image_id": 3, "objects": [{"object_id": 1, "names": ["a"]},
                                     {"object_id": 1, "names": ["b"]}]}, "duplicate object ids"),
    ],
)
def test_bad_records_name_image_and_field(record, needle):
    with pytest.raises(SceneGraphError, match=needle):
        scene_graph_from_dict(record)


def test_constructed_graph_still_refuses_a_dangling_relation():
    """The reader skips dangling relations (tests/test_compass_vg.py); a SceneGraph built in
    code with one is a bug and is refused."""
    with pytest.raises(SceneGraphError, match="object_id 9, which is not an object"):
        SceneGraph("3", (SGObject(1, "a"),), (SGRelation(0, 1, "on", 9),))


def test_missing_or_broken_file(tmp_path):
    with pytest.raises(SceneGraphError, match="not found"):
        read_scene_graphs(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(SceneGraphError, match="not valid JSON"):
        read_scene_graphs(bad)


def test_world_graph_hand_checked():
    scene = Scene((Obj("cube", "red", x=0.2, y=0.3),
                   Obj("sphere", "blue", "metal", "striped", size="large", x=0.7, y=0.6),
                   Obj("box", "green", "wood", state="open", x=0.3, y=0.35)), scene_id="s1")
    g = scene_graph_from_world(scene)
    assert g.closed_world and g.image_id == "s1"
    assert [o.name for o in g.objects] == ["cube", "sphere", "box"]
    assert g.objects[0].attributes == ("red", "matte")
    assert g.objects[1].attributes == ("large", "blue", "striped", "metal")
    assert g.objects[2].attributes == ("open", "green", "wooden")
    t = g.name_triples()
    # cube (0.2, 0.3) vs sphere (0.7, 0.6): left of, behind, smaller; and the inverses.
    for triple in [("cube", "left of", "sphere"), ("sphere", "right of", "cube"),
                   ("cube", "behind", "sphere"), ("sphere", "in front of", "cube"),
                   ("cube", "smaller than", "sphere"), ("sphere", "bigger than", "cube")]:
        assert triple in t
    # cube vs box: dx = 0.1 > margin, dy = 0.05 < margin (no depth relation), close: next to.
    assert ("cube", "left of", "box") in t and ("box", "next to", "cube") in t
    assert not {("cube", "behind", "box"), ("cube", "in front of", "box")} & t
    assert ("cube", "bigger than", "box") not in t  # equal sizes
    assert ("cube", "next to", "sphere") not in t
