"""The offline construction backends (template, world) and the pixel checks."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from foilbench.construct.backends.base import EditRequest, ImageRequest, TextRequest, call_key
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.backends.template import TemplateTaskError
from foilbench.construct.backends.world import WorldBackendError, scene_to_dict
from foilbench.construct.backends.world_questions import (
    NONE_OF_THESE,
    color_question,
    count_question,
    parse_question,
    relation_question,
)
from foilbench.construct.validators.image_checks import (
    background_whiteness,
    changed_pixels,
    is_white_background,
    pixel_drift,
)
from foilbench.world.edits import apply_edit
from foilbench.world.scene import Obj, Scene

SCENE = Scene((Obj("cube", "red", x=0.25, y=0.6), Obj("mug", "blue", x=0.75, y=0.6)))


def test_template_dispatches_on_the_task_and_refuses_free_text():
    text = resolve_backend("text", "template")
    req = TextRequest("ignored", task={"kind": "sugarcrepe.locate", "concept": "object",
                                       "caption": "A dog on a couch."})
    assert text.complete(req) == '{"concepts": ["dog", "couch"]}'
    assert text.fingerprint.startswith("template:")
    with pytest.raises(TemplateTaskError, match="structured tasks"):
        text.complete(TextRequest("write a caption"))
    with pytest.raises(TemplateTaskError, match="no template rules"):
        text.complete(TextRequest("x", task={"kind": "nopipeline.step"}))


def test_world_images_render_exactly_and_carry_their_scene():
    images = resolve_backend("image", "world")
    img = images.generate(ImageRequest("anything", size=(64, 64), scene=scene_to_dict(SCENE)))
    assert img.size == (64, 64) and "foilbench.world_scene" in img.info
    with pytest.raises(WorldBackendError, match="structured scenes"):
        images.generate(ImageRequest("a red cube", size=(64, 64)))
    with pytest.raises(WorldBackendError, match="square"):
        images.generate(ImageRequest("x", size=(64, 32), scene=SCENE))


def test_world_edit_returns_the_exact_mask_and_checks_its_input():
    images, edits = resolve_backend("image", "world"), resolve_backend("edit", "world")
    base = images.generate(ImageRequest("", size=(96, 96), scene=SCENE))
    edit = apply_edit(SCENE, "modify_color", 0, target=0, value="green")
    out = edits.edit(EditRequest(base, "make the cube green", edit=edit))
    diff = (np.asarray(base) != np.asarray(out.image)).any(axis=2)
    assert diff.any() and not (diff & ~out.mask).any()
    assert pixel_drift(base, out.image, out.mask) == 0.0
    other = images.generate(ImageRequest("", size=(96, 96), scene=edit.foil))
    with pytest.raises(WorldBackendError, match="not the render"):
        edits.edit(EditRequest(other, "x", edit=edit))


def test_world_validators_read_the_scene_of_the_image():
    img = resolve_backend("image", "world").generate(ImageRequest("", size=(96, 96),
                                                                  scene=SCENE))
    det = resolve_backend("detector", "world")
    found = det.detect(img, ["cube", "mugs", "sphere"])
    assert sorted(d.label for d in found) == ["cube", "mugs"]
    x0, y0, x1, y1 = found[0].box
    assert 0 <= x0 < x1 <= 96 and 0 <= y0 < y1 <= 96
    vqa = resolve_backend("vqa", "world")
    assert vqa.answer(img, color_question("mug"), ["red", "blue"]) == "blue"
    assert vqa.answer(img, count_question("cube"), ["0", "1", "2"]) == "1"
    assert vqa.answer(img, relation_question("cube", "mug"),
                      ["left of", "right of", "above", "below", NONE_OF_THESE]) == "left of"
    with pytest.raises(WorldBackendError, match="not among the choices"):
        vqa.answer(img, color_question("cube"), ["green", "blue"])
    with pytest.raises(WorldBackendError, match="not rendered by the world"):
        det.detect(Image.new("RGB", (8, 8)), ["cube"])


def test_question_forms_round_trip():
    q = parse_question(relation_question("red box", "lamp"))
    assert (q.kind, q.subject, q.other) == ("relation", "red box", "lamp")
    with pytest.raises(ValueError, match="not a question form"):
        parse_question("Is the cube happy?")


def test_call_key_depends_on_the_structured_scene():
    images = resolve_backend("image", "world")
    a = call_key(images, "generate", ImageRequest("p", scene=scene_to_dict(SCENE)))
    moved = Scene((SCENE.objects[0].with_(x=0.3), SCENE.objects[1]))
    b = call_key(images, "generate", ImageRequest("p", scene=scene_to_dict(moved)))
    assert a != b


def test_pixel_drift_counts_changes_outside_the_grown_mask_only():
    base = np.zeros((40, 40, 3))
    foil = base.copy()
    foil[10:14, 10:14] = 1.0  # the edit
    mask = np.zeros((40, 40), bool)
    mask[10:14, 10:14] = True
    assert pixel_drift(base, foil, mask) == 0.0  # blur spill stays within 4 sigma
    foil[30, 30] = 1.0  # one stray pixel far away: blurred, it touches a few pixels
    drift = pixel_drift(base, foil, mask)
    assert 0 < drift < 0.01
    assert changed_pixels(base, foil)[30, 30]


def test_background_whiteness_ignores_boxes():
    img = Image.new("RGB", (10, 10), "white")
    img.paste((0, 0, 0), (0, 0, 4, 10))  # a dark object on the left 40%
    assert background_whiteness(img, []) == pytest.approx(0.6)
    assert background_whiteness(img, [(0, 0, 4, 10)]) == 1.0
    assert not is_white_background(img, [], share=0.7)
