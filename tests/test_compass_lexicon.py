"""COMPASS negatives must be false of the image (issues 40, 41).

COMPASS §3.2: "propose candidate primitives of the same semantic category (e.g., replacing
"sofa" with "chair"). We randomly sample a replacement that does not already appear in the
image's entire scene graph. ... filter out overly similar candidates using Sentence
Transformers ... This ensures that negatives are both natural and sufficiently distinct from
the ground truth."

Planted: the shipped categories are as narrow as the paper's example; man -> person / guy,
red -> crimson / scarlet, small -> little, dark brown -> brown and mug -> cup are never
negatives in an open-world graph; LLM proposals of another category (open -> purple, left of
-> smaller than) are refused; every exclusion is counted by reason.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from foilbench.construct.compass.categories import CategoryTable, ProposedCategories
from foilbench.construct.compass.lexicon import Lexicon, head_word
from foilbench.construct.compass.negatives import PrimitivePools, replacement_tiers
from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.compass.scene_graph import scene_graph_from_dict
from foilbench.construct.compass.similarity import CAPTION_FRAME, SimilarityFilter

SHIPPED = {
    "object": {
        "geometric shape": ["cube", "sphere", "cylinder", "cone", "pyramid", "prism", "torus"],
        "container": ["mug", "bottle", "box", "jar", "vase", "basket", "can", "bucket", "jug",
                      "pitcher"],
        "drinkware": ["cup", "mug", "glass"],
        "dishware": ["plate", "bowl", "saucer", "tray"],
        "cutlery": ["fork", "knife", "spoon"],
        "seating": ["chair", "sofa", "couch", "bench", "stool", "armchair"],
        "table": ["table", "desk", "nightstand", "counter"],
        "storage furniture": ["shelf", "cabinet", "dresser", "bookshelf"],
        "light source": ["lamp", "candle", "lantern", "chandelier"],
        "reading matter": ["book", "magazine", "newspaper", "notebook"],
        "timepiece": ["clock", "watch"],
        "fruit": ["apple", "banana", "orange", "lemon", "pear", "grape"],
        "vegetable": ["carrot", "broccoli", "tomato", "potato", "onion", "lettuce"],
        "prepared food": ["pizza", "sandwich", "cake", "bread", "donut", "hot dog", "salad"],
        "road vehicle": ["car", "bus", "truck", "van", "taxi", "jeep", "tractor"],
        "two-wheeler": ["bike", "bicycle", "motorcycle", "scooter"],
        "watercraft": ["boat", "ship", "canoe", "kayak"],
        "mammal": ["dog", "cat", "horse", "cow", "sheep", "elephant", "giraffe", "zebra",
                   "bear", "goat", "deer", "squirrel"],
        "bird": ["bird", "duck", "pigeon", "seagull", "goose"],
        "adult": ["man", "woman", "lady", "guy"],
        "child": ["boy", "girl", "child", "kid"],
        "sport role": ["skier", "surfer", "skateboarder", "snowboarder"],
        "upper-body garment": ["shirt", "jacket", "coat", "sweater", "vest"],
        "lower-body garment": ["pants", "jeans", "shorts", "skirt"],
        "headwear": ["hat", "cap", "helmet"],
        "footwear": ["shoe", "boot", "sneaker", "sandal"],
        "neckwear": ["scarf", "tie"],
        "limb": ["arm", "leg"],
        "extremity": ["hand", "foot"],
        "facial feature": ["eye", "ear", "nose", "mouth"],
        "opening": ["window", "door", "gate"],
        "building surface": ["wall", "roof", "ceiling", "floor"],
        "room": ["living room", "kitchen", "bedroom", "bathroom", "office", "hallway",
                 "dining room", "garage", "attic", "basement"],
        "woody plant": ["tree", "bush", "shrub", "palm tree", "cactus"],
        "landform": ["mountain", "hill"],
        "body of water": ["ocean", "river", "lake", "sea"],
        "street furniture": ["fire hydrant", "parking meter", "trash can", "mailbox"],
        "traffic fixture": ["traffic light", "street light", "street sign"],
        "computer": ["laptop", "computer", "tablet"],
        "display": ["monitor", "television", "tv", "screen"],
        "input device": ["keyboard", "mouse", "remote"],
        "kitchen appliance": ["oven", "refrigerator", "fridge", "microwave", "stove", "toaster",
                              "dishwasher", "blender", "kettle"],
        "hand-held sports gear": ["racket", "bat", "ball", "frisbee", "kite"],
        "board": ["skateboard", "surfboard", "snowboard", "ski"],
        "bag": ["bag", "backpack", "purse", "handbag", "suitcase", "luggage", "briefcase"],
        "bedding": ["pillow", "cushion", "blanket", "sheet"],
        "floor covering": ["rug", "carpet", "mat"],
    },
    "attribute": {
        "color": ["red", "crimson", "scarlet", "orange", "yellow", "gold", "green", "teal",
                  "blue", "navy", "purple", "pink", "brown", "dark brown", "light brown",
                  "gray", "grey", "black", "white", "silver", "tan", "beige", "light blue",
                  "dark blue", "dark green", "light green", "maroon", "violet"],
        "material": ["matte", "metal", "metallic", "glass", "wooden", "wood", "plastic",
                     "stone", "brick", "concrete", "leather", "paper", "ceramic", "steel",
                     "cloth", "rubber"],
        "pattern": ["striped", "dotted", "checkered", "plaid", "spotted", "floral", "plain"],
        "transparency": ["translucent", "transparent", "opaque", "clear"],
        "size": ["small", "large", "big", "tiny", "huge", "little", "giant"],
        "height": ["tall", "short"],
        "state:upright/tipped over": ["upright", "tipped over"],
        "state:closed/open": ["closed", "open"],
        "state:unlit/lit": ["unlit", "lit"],
        "age": ["old", "new"],
        "cleanliness": ["dirty", "clean"],
        "fill": ["empty", "full"],
        "wetness": ["wet", "dry"],
        "outline shape": ["round", "square", "rectangular", "circular", "triangular", "oval"],
        "profile": ["curved", "flat", "straight"],
        "posture": ["standing", "sitting", "lying"],
        "gait": ["walking", "running"],
    },
    "relation": {
        "horizontal": ["left of", "right of"],
        "depth": ["in front of", "behind"],
        "vertical": ["above", "below"],
        "support": ["on", "under"],
        "in/outside": ["in", "outside"],
        "inside/outside": ["inside", "outside"],
        "near/far": ["near", "far from"],
        "next to/far": ["next to", "far from"],
        "size": ["bigger than", "smaller than"],
        "posture on": ["sitting on", "standing on", "lying on"],
    },
}
CONTAINERS = {"mug", "cup", "bottle", "box", "jar", "vase", "basket", "can", "bucket", "jug",
              "pitcher", "glass", "bowl", "teapot"}
FURNITURE = {"chair", "sofa", "couch", "table", "desk", "bed", "bench", "stool", "armchair",
             "shelf", "cabinet", "dresser", "bookshelf", "nightstand", "drawer"}
PEOPLE = {"man", "woman", "boy", "girl", "child", "kid", "lady", "guy", "person", "people"}


def test_every_shipped_category_and_its_members():
    """The whole shipped table, category by category: a change to it must change this."""
    table = CategoryTable.shipped()
    assert {k: {c: list(ws) for c, ws in table.members[k].items()}
            for k in SHIPPED} == SHIPPED


def test_no_category_mixes_a_container_with_furniture_or_person_with_a_kind_of_person():
    table = CategoryTable.shipped()
    for cat, words in table.members["object"].items():
        assert not (CONTAINERS & set(words) and FURNITURE & set(words)), cat
        assert "person" not in words and "people" not in words, cat
    mates = set(table.candidates("object", "mug"))
    assert not {"ball", "book", "lamp", "chair"} & mates  # the old "household object"
    assert table.candidates("object", "person") is None  # no narrow category: no negative


@pytest.mark.parametrize("old,new,reason", [
    ("man", "person", "hypernym"), ("man", "guy", "hyponym"), ("person", "man", "hyponym"),
    ("dark brown", "brown", "head word"), ("mug", "cup", "curated"),
    ("red", "crimson", "synonym"), ("red", "scarlet", "synonym"),
    ("small", "little", "synonym"), ("small", "tiny", "similar"),
    ("sofa", "couch", "synonym")])
def test_lexicon_excludes_the_issue_examples(old, new, reason):
    kind = "attribute" if old in {"red", "small", "dark brown"} else "object"
    got = Lexicon.shipped().reason(kind, old, new)
    assert got is not None and got.split(":")[0] == reason


@pytest.mark.parametrize("old,new", [("man", "woman"), ("sofa", "chair"), ("car", "bus"),
                                     ("red", "orange"), ("small", "large"),
                                     ("open", "closed")])
def test_lexicon_keeps_real_contrasts(old, new):
    kind = "object" if old in {"man", "sofa", "car"} else "attribute"
    assert Lexicon.shipped().reason(kind, old, new) is None


def test_head_word_rule():
    assert head_word("dark brown", "brown") and head_word("tree", "palm tree")
    assert not head_word("brown", "brown") and not head_word("dark brown", "dark")


def _graph():
    """A VG image of a small man in a red shirt with a dark brown mug (open world)."""
    return scene_graph_from_dict({"image_id": 5, "objects": [
        {"object_id": 1, "names": ["man"], "attributes": ["small"], "synsets": ["man.n.01"]},
        {"object_id": 2, "names": ["shirt"], "attributes": ["red"]},
        {"object_id": 3, "names": ["mug"], "attributes": ["dark brown"]}],
        "relationships": [{"relationship_id": 1, "subject_id": 1, "predicate": "wearing",
                           "object_id": 2}]})


SPEC = CaptionSpec("5", "L2-OA", ((1, "man"), (2, "shirt"), (3, "mug")),
                   ((1, "small"), (2, "red"), (3, "dark brown")), ())


def _proposals():
    return {("object", "man"): ["person", "guy", "woman"],
            ("object", "mug"): ["cup", "bottle"],
            ("attribute", "red"): ["crimson", "scarlet", "orange", "purple"],
            ("attribute", "small"): ["little", "tiny", "large"],
            ("attribute", "dark brown"): ["brown", "black"]}


def _pools(lexicon=True):
    base = PrimitivePools(("man", "shirt", "mug"), {"small": "a", "red": "a",
                                                    "dark brown": "a"}, {"wearing": "w"})
    proposed = ProposedCategories(_proposals(), CategoryTable.shipped())
    return base.with_rules(proposed, "strict", None, Lexicon.shipped() if lexicon else None)


def test_open_world_negatives_exclude_every_issue_example_and_count_them():
    pools = _pools()
    got = {i: sum(replacement_tiers(_graph(), SPEC, i, pools), []) for i in range(6)}
    assert got[0] == ["woman"]  # man: person (hypernym), guy (hyponym) out
    assert got[2] == ["bottle"]  # mug: cup (curated) out
    assert got[3] == ["large"]  # small: little (synonym), tiny (similar) out
    assert got[4] == ["orange", "purple"]  # red: crimson, scarlet (synonyms) out
    assert got[5] == ["black"]  # dark brown: brown (head word) out
    assert pools.excluded == {"hypernym": 1, "hyponym": 1, "curated": 1, "synonym": 3,
                              "similar": 1, "head word": 1}
    # the paper's rule alone (no lexicon): every one of them would have been a negative
    bare = _pools(lexicon=False)
    assert "person" in sum(replacement_tiers(_graph(), SPEC, 0, bare), [])
    assert "crimson" in sum(replacement_tiers(_graph(), SPEC, 4, bare), [])


def test_closed_world_keeps_its_rendered_near_shades():
    """The procedural world's graph is complete and its renderer draws the named colour:
    crimson is false of a red object there, and stays a negative."""
    from foilbench.construct.compass.world_graph import scene_graph_from_world, world_pools
    from foilbench.world.scene import Obj, Scene

    g = scene_graph_from_world(Scene((Obj("cube", "red", x=0.2, y=0.5),
                                      Obj("sphere", "blue", x=0.8, y=0.5))))
    spec = CaptionSpec(g.image_id, "L2-OA", ((0, "cube"),), ((0, "red"),), ())
    pools = world_pools().with_rules(CategoryTable.shipped(), "strict", None,
                                     Lexicon.shipped())
    assert "crimson" in sum(replacement_tiers(g, spec, 1, pools), [])
    assert pools.excluded == {}


def test_proposals_of_another_category_are_refused_and_counted():
    table = CategoryTable.shipped()
    proposed = ProposedCategories({("attribute", "open"): ["purple", "closed"],
                                   ("relation", "left of"): ["smaller than", "right of"],
                                   ("attribute", "red"): ["magenta", "orange"]}, table)
    assert proposed.candidates("attribute", "open") == ["closed"]
    assert proposed.candidates("relation", "left of") == ["right of"]
    assert proposed.candidates("attribute", "red") == ["magenta", "orange"]
    assert proposed.checks == {"rejected_category": 2, "unchecked": 1}  # magenta: not in table
    assert proposed.rejected == [("attribute", "open", "purple"),
                                 ("relation", "left of", "smaller than")]


def test_caption_level_filter_where_wordnet_is_silent():
    """"fellow" is outside the table's WordNet vocabulary: the object is compared at the
    caption level ("There is a man in the image." vs "There is a fellow ..."), not dropped
    or kept by default. A planted encoder makes the caption pair close (0.9) and another
    far (0.1)."""
    vectors = {"man": [1.0, 0.0], "fellow": [0.0, 1.0], "mannequin": [0.0, 1.0],
               CAPTION_FRAME.format("man"): [1.0, 0.0],
               CAPTION_FRAME.format("fellow"): [0.9, np.sqrt(1 - 0.81)],
               CAPTION_FRAME.format("mannequin"): [0.1, np.sqrt(1 - 0.01)]}
    sim = SimilarityFilter(lambda texts: np.array([vectors.get(t, [0.0, 1.0])
                                                   for t in texts]), "planted", 0.99)
    base = PrimitivePools(("man",), {}, {})
    proposed = ProposedCategories({("object", "man"): ["fellow", "mannequin"]})
    pools = base.with_rules(proposed, "strict", sim, Lexicon.shipped())
    spec = CaptionSpec("5", "L1", ((1, "man"),))
    g = scene_graph_from_dict({"image_id": 5, "objects": [{"object_id": 1, "names": ["man"]}]})
    assert sum(replacement_tiers(g, spec, 0, pools), []) == ["mannequin"]
    assert pools.excluded == {"caption similarity": 1} and sim.caption_filtered == 1


def test_vg_build_manifest_counts_exclusions_by_reason(tmp_path):
    """Through ``foilbench compass build`` on a VG file: the manifest states how many
    candidates each reason removed, and no negative is one of the excluded words."""
    from foilbench.cli.compass_cmd import compass
    from foilbench.data.format import load_benchmark

    graphs = [{"image_id": k, "objects": [
        {"object_id": 1, "names": ["man"], "attributes": ["small"], "synsets": ["man.n.01"]},
        {"object_id": 2, "names": ["shirt"], "attributes": ["red"]},
        {"object_id": 3, "names": ["mug"], "attributes": ["dark brown"]},
        {"object_id": 4, "names": ["sofa"], "attributes": ["gray"]}],
        "relationships": [{"relationship_id": 1, "subject_id": 1, "predicate": "near",
                           "object_id": 4}]} for k in (1, 2, 3)]
    (tmp_path / "sg.json").write_text(json.dumps(graphs))
    for k in (1, 2, 3):
        Image.new("RGB", (16, 12), (40 * k, 20, 0)).save(tmp_path / f"{k}.jpg")
    out = tmp_path / "out"
    res = CliRunner().invoke(compass, ["build", "--scene-graphs", str(tmp_path / "sg.json"),
                                       "--images", str(tmp_path), "--out", str(out),
                                       "--per-level", "3"])
    assert res.exit_code == 0, res.output
    bench = load_benchmark(out)
    excluded = bench.manifest.extras["lexical_exclusions"]["excluded"]
    assert excluded.get("hyponym", 0) >= 1 and excluded.get("synonym", 0) >= 1
    bad = {("man", "guy"), ("red", "crimson"), ("red", "scarlet"), ("small", "little"),
           ("mug", "cup"), ("dark brown", "brown"), ("gray", "grey"), ("sofa", "couch")}
    perts = [p for p in bench.items["perturbation"] if isinstance(p, str)]
    pairs = {tuple(x.split(":", 1)[-1].split(" -> ")) for p in perts for x in p.split("; ")}
    assert pairs and not bad & pairs
