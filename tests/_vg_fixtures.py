"""A miniature Visual Genome release on disk, in the real layouts (for COMPASS build tests).

Format evidence (read, not copied):

* VG's own reader, ranjaykrishna/visual_genome_python_driver ``visual_genome/local.py``:
  ``map_object`` reads an object's ``object_id``, ``names``, ``attributes``, ``x/y/w/h``;
  ``parse_graph_local`` reads ``relationships`` by ``subject_id``/``object_id``/``predicate``
  and skips a relationship whose subject or object is not among the objects ("Some data is
  missing in this way"); ``add_attrs_to_scene_graphs`` reads ``attributes.json`` as per-image
  ``{"image_id", "attributes": [object with "attributes"]}``.
* ``visual_genome/utils.py`` ``parse_image_data``: ``image_data.json`` records are
  ``{"image_id" (or "id"), "url", "width", "height", "coco_id", "flickr_id"}``.
* huggingface/datasets ``datasets/visual_genome/visual_genome.py``: images unpack to
  ``VG_100K`` and ``VG_100K_2`` (the folder is read off the ``url``,
  ``https://cs.stanford.edu/people/rak248/VG_100K_2/<id>.jpg``); ``relationships.json``
  nests ``subject``/``object`` object records (``names``; a commented-out normaliser notes
  that "relationships objects have a single name instead of a list of names", i.e.
  ``name``); ``objects.json`` objects carry ``names``, ``synsets`` and (v1.4)
  ``merged_object_ids``, no attributes; an image record may use ``id`` for ``image_id``.

Planted: object 101 has two names (``mug``/``cup``) and object 104 two (``shirt``/``t-shirt``);
image 1 has two dangling relationships (``holding``, ``near``), image 2 one (``behind``);
image 3 has one blank name, one blank attribute and one blank predicate; image 4 has no image
file anywhere.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image


def _obj(oid, names, attrs=None, key="names", x=10, y=10, w=40, h=30, synset=None):
    rec = {"object_id": oid, key: names if key == "names" else names[0], "x": x, "y": y,
           "w": w, "h": h, "synsets": [synset] if synset else []}
    if attrs is not None:
        rec["attributes"] = attrs
    return rec


def _rel(rid, s, pred, o):
    return {"relationship_id": rid, "subject_id": s, "predicate": pred, "object_id": o,
            "synsets": []}


SCENE_GRAPHS = [
    {"image_id": 1,
     "objects": [_obj(101, ["mug", "cup"], ["white"], synset="mug.n.04"),
                 _obj(102, ["table"], ["wooden", "brown"]),
                 _obj(103, ["man"], ["smiling"]),
                 _obj(104, ["shirt", "t-shirt"], ["blue"])],
     "relationships": [_rel(1001, 101, "ON", 102), _rel(1002, 103, "wearing", 104),
                       _rel(1003, 103, "holding", 5071),  # 5071: not an object of image 1
                       _rel(1004, 9999, "near", 102)]},   # 9999: neither
    {"image_id": 2,
     "objects": [_obj(201, ["cup"], ["red"]), _obj(202, ["plate"], ["round"]),
                 _obj(203, ["woman"], ["tall"]), _obj(204, ["glass"], ["clear"])],
     "relationships": [_rel(2001, 201, "next to", 202), _rel(2002, 203, "holding", 204),
                       _rel(2003, 204, "behind", 7777)]},
    {"image_id": 3,
     "objects": [_obj(301, ["", "dog"], ["", "white"]), _obj(302, ["grass"], ["green"]),
                 _obj(303, ["frisbee"], ["yellow"])],
     "relationships": [_rel(3001, 301, "on", 302), _rel(3002, 303, " ", 302),
                       _rel(3003, 303, "above", 301)]},
    {"image_id": 4,
     "objects": [_obj(401, ["car"], ["black"]), _obj(402, ["road"], [])],
     "relationships": [_rel(4001, 401, "on", 402)]},
]

# relationships.json: no objects list; endpoints nested, "name" (older) or "names".
RELATIONSHIPS = [
    {"image_id": 1, "relationships": [
        {"relationship_id": 1001, "predicate": "ON", "synsets": ["along.r.01"],
         "subject": _obj(101, ["mug"], key="name"), "object": _obj(102, ["table"], key="name")},
        {"relationship_id": 1002, "predicate": "wearing", "synsets": ["wear.v.01"],
         "subject": _obj(103, ["man"]), "object": _obj(104, ["shirt", "t-shirt"])},
        {"relationship_id": 1005, "predicate": "near", "synsets": [],
         "subject": _obj(101, ["cup"], key="name"), "object": _obj(103, ["man"])}]},
    {"id": 2, "relationships": [  # an older release's image key
        {"relationship_id": 2001, "predicate": "next to", "synsets": [],
         "subject": _obj(201, ["cup"]), "object": _obj(202, ["plate"])}]},
]

OBJECTS = [
    {"image_id": 1, "objects": [{**_obj(101, ["mug", "cup"]), "merged_object_ids": []},
                                _obj(102, ["table"]), _obj(103, ["man"])]},
    {"image_id": 2, "objects": [_obj(201, ["cup"]), _obj(202, ["plate"])]},
]

ATTRIBUTES = [{"image_id": 1, "attributes": [_obj(101, ["mug"], ["white"])]}]

IMAGE_DATA = [{"image_id": 1, "url": "https://cs.stanford.edu/people/rak248/VG_100K/1.jpg",
               "width": 64, "height": 48, "coco_id": None, "flickr_id": None},
              {"image_id": 2, "url": "https://cs.stanford.edu/people/rak248/VG_100K_2/2.jpg",
               "width": 64, "height": 48, "coco_id": None, "flickr_id": None}]


def write_release(root: Path) -> Path:
    """Write the release under ``root``: JSON files at the root, images 1 and 3 in
    ``VG_100K/``, image 2 in ``VG_100K_2/``, image 4 nowhere."""
    root.mkdir(parents=True, exist_ok=True)
    for name, data in [("scene_graphs.json", SCENE_GRAPHS), ("relationships.json", RELATIONSHIPS),
                       ("objects.json", OBJECTS), ("attributes.json", ATTRIBUTES),
                       ("image_data.json", IMAGE_DATA)]:
        (root / name).write_text(json.dumps(data))
    for folder, ids in (("VG_100K", (1, 3)), ("VG_100K_2", (2,))):
        (root / folder).mkdir(exist_ok=True)
        for k in ids:
            Image.new("RGB", (16, 12), (60 * k, 20, 0)).save(root / folder / f"{k}.jpg")
    return root
