"""Local-model construction backends on tiny random models built from configs: hf-lm (GPT-2),
diffusers (text-to-image, InstructPix2Pix, inpainting), hf-det (OWL-ViT), hf-vlm VQA (LLaVA)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from _construct_tiny import (
    save_tiny_gpt2,
    save_tiny_grounding_dino,
    save_tiny_owlv2,
    save_tiny_owlvit,
    save_tiny_sd,
)
from _models_tiny import save_tiny_llava, tiny_images
from foilbench.construct.backends.base import (
    Detection,
    EditRequest,
    ImageRequest,
    TextRequest,
)
from foilbench.construct.backends.detectors import match_phrase, suppress
from foilbench.construct.backends.registry import resolve_backend
from foilbench.construct.backends.vqa import UnanswerableError
from foilbench.errors import ModelError


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "cache"))
    torch.set_num_threads(1)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("construct_models")
    return {"lm": save_tiny_gpt2(root / "lm"), "chat": save_tiny_gpt2(root / "chat", chat=True),
            "t2i": save_tiny_sd(root / "t2i", "t2i"),
            "pix2pix": save_tiny_sd(root / "pix2pix", "pix2pix"),
            "inpaint": save_tiny_sd(root / "inpaint", "inpaint"),
            "owl": save_tiny_owlvit(root / "owl"), "owlv2": save_tiny_owlv2(root / "owlv2"),
            "gdino": save_tiny_grounding_dino(root / "gdino"),
            "llava": save_tiny_llava(root / "llava")}


def arr(image) -> np.ndarray:
    return np.asarray(image).astype(int)


# ---- hf-lm ------------------------------------------------------------------------------

def test_hf_lm_greedy_is_the_argmax_continuation(models):
    lm = resolve_backend("text", f"hf-lm:{models['lm']}", device="cpu")
    with_system = TextRequest("rewrite caption : a red cube", system="you are helpful .")
    assert lm.render_prompt(with_system) == "you are helpful .\n\nrewrite caption : a red cube"
    req = TextRequest("a blue sphere on the left", max_tokens=4)
    ids = lm.tokenizer(lm.render_prompt(req), return_tensors="pt")["input_ids"]
    with torch.no_grad():
        for _ in range(4):
            nxt = lm.model(input_ids=ids).logits[0, -1].argmax()
            if nxt.item() == lm.tokenizer.eos_token_id:
                break
            ids = torch.cat([ids, nxt.view(1, 1)], dim=1)
    n_prompt = lm.tokenizer(lm.render_prompt(req), return_tensors="pt")["input_ids"].shape[1]
    want = lm.tokenizer.decode(ids[0, n_prompt:], skip_special_tokens=True).strip()
    assert want and lm.complete(req) == want


def test_hf_lm_refuses_images_and_fits_the_reply_into_its_context(models):
    from foilbench.construct.backends.hf_lm import PromptTooLongError

    lm = resolve_backend("text", f"hf-lm:{models['lm']}", device="cpu")
    assert not lm.accepts_images and lm.context == 128
    with pytest.raises(ModelError, match="cannot read the 1 image"):
        lm.complete(TextRequest("a red cube", images=(tiny_images(1)[0],)))
    long = " ".join(["a red cube on the left of the blue sphere ."] * 11)  # 121 tokens
    reply = lm.complete(TextRequest(long, max_tokens=500))  # cut to the 7 tokens left
    assert len(lm.tokenizer(reply)["input_ids"]) <= 7
    with pytest.raises(PromptTooLongError, match="context is 128") as info:
        lm.complete(TextRequest(long + " " + long))
    assert info.value.retryable is False


def test_hf_lm_sampling_is_seeded_and_leaves_the_global_rng_alone(models):
    lm = resolve_backend("text", f"hf-lm:{models['chat']}", device="cpu")
    req = TextRequest("rewrite caption : a red cube", temperature=1.5, max_tokens=8, seed=3)
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    first = lm.complete(req)
    assert torch.rand(1) == expected_next
    assert lm.complete(req) == first
    others = {lm.complete(TextRequest(req.prompt, temperature=1.5, max_tokens=8, seed=s))
              for s in range(4, 8)}
    assert others - {first}  # other seeds, other samples


def test_hf_lm_chat_template_and_fingerprint(models, tmp_path):
    chat = resolve_backend("text", f"hf-lm:{models['chat']}", device="cpu")
    req = TextRequest("a red cube", system="you are helpful .")
    assert chat.render_prompt(req) == (
        "<|system|> you are helpful . <|user|> a red cube <|assistant|>")
    plain = resolve_backend("text", f"hf-lm:{models['chat']}?chat=0", device="cpu")
    assert plain.render_prompt(req) == "you are helpful .\n\na red cube"
    again = resolve_backend("text", f"hf-lm:{models['chat']}", device="cpu")
    lm = resolve_backend("text", f"hf-lm:{models['lm']}", device="cpu")
    assert chat.fingerprint == again.fingerprint
    assert len({chat.fingerprint, plain.fingerprint, lm.fingerprint}) == 3
    with pytest.raises(ModelError, match="model folder not found"):
        resolve_backend("text", f"hf-lm:{tmp_path / 'nope'}")
    with pytest.raises(ModelError, match="no config.json"):
        resolve_backend("text", f"hf-lm:{tmp_path}")


# ---- diffusers --------------------------------------------------------------------------

def test_diffusers_text_to_image(models):
    gen = resolve_backend("image", f"diffusers:{models['t2i']}?steps=2", device="cpu")
    a = gen.generate(ImageRequest("a red cube", seed=1, size=(32, 32)))
    assert a.mode == "RGB" and a.size == (32, 32) and arr(a).std() > 0
    assert (arr(gen.generate(ImageRequest("a red cube", seed=1, size=(32, 32)))) == arr(a)).all()
    assert (arr(gen.generate(ImageRequest("a red cube", seed=2, size=(32, 32)))) != arr(a)).any()
    assert (arr(gen.generate(ImageRequest("blue", seed=1, size=(32, 32)))) != arr(a)).any()
    odd = gen.generate(ImageRequest("a red cube", seed=1, size=(36, 20)))
    assert odd.size == (36, 20)  # generated at 32 x 16, resized back
    d = gen.describe()
    assert d["pipeline"] == "StableDiffusionPipeline" and d["call_args"] == {
        "num_inference_steps": 2}
    other = resolve_backend("image", f"diffusers:{models['t2i']}?steps=3", device="cpu")
    assert other.fingerprint != gen.fingerprint
    with pytest.raises(ModelError, match="text-to-image pipeline"):
        resolve_backend("edit", f"diffusers:{models['t2i']}", device="cpu")
    with pytest.raises(ModelError, match="no model_index.json"):
        resolve_backend("image", f"diffusers:{models['lm']}")


def test_diffusers_instruct_pix2pix_edit(models):
    ed = resolve_backend("edit", f"diffusers:{models['pix2pix']}?steps=2&image_guidance=1.5",
                         device="cpu")
    assert ed.describe()["edit_mode"] == "instruct"
    (image,) = tiny_images(1, size=32)
    out = ed.edit(EditRequest(image, "make the cube blue", seed=0))
    assert out.image.size == (32, 32) and out.mask is None
    assert (arr(ed.edit(EditRequest(image, "make the cube blue", seed=0)).image)
            == arr(out.image)).all()
    assert (arr(out.image) != arr(image)).any()


def test_diffusers_inpainting_uses_the_mask_and_pastes_outside_it(models):
    ed = resolve_backend("edit", f"diffusers:{models['inpaint']}?steps=2", device="cpu")
    assert ed.describe()["edit_mode"] == "inpaint"
    (image,) = tiny_images(1, size=32, seed=3)
    mask = np.zeros((32, 32), dtype=bool)
    mask[8:16, 4:20] = True
    out = arr(ed.edit(EditRequest(image, "a green cone", seed=0, mask=mask)).image)
    assert (out[~mask] == arr(image)[~mask]).all() and (out[mask] != arr(image)[mask]).any()
    raw = resolve_backend("edit", f"diffusers:{models['inpaint']}?steps=2&paste=0",
                          device="cpu")
    assert (arr(raw.edit(EditRequest(image, "a green cone", seed=0, mask=mask)).image)[~mask]
            != arr(image)[~mask]).any()  # the VAE round trip drifts without the paste
    with pytest.raises(ModelError, match="needs the edit's mask"):
        ed.edit(EditRequest(image, "a green cone"))
    with pytest.raises(ModelError, match="does not match the image"):
        ed.edit(EditRequest(image, "x", mask=np.zeros((8, 8), dtype=bool)))


# ---- detector ---------------------------------------------------------------------------

def test_owlvit_detections_respect_labels_boxes_and_threshold(models):
    det = resolve_backend("detector", f"hf-det:{models['owl']}", device="cpu")
    (image,) = tiny_images(1, size=48, seed=1)
    labels = ["a red cube", "a blue sphere"]
    every = det.detect(image, labels, threshold=0.0)
    assert len(every) == 16  # (32 / 8)^2 patches, one box each
    assert {d.label for d in every} <= set(labels)
    assert all(0 <= d.box[0] <= d.box[2] <= 48 and 0 <= d.box[1] <= d.box[3] <= 48
               for d in every)
    scores = sorted(d.score for d in every)
    assert scores[0] > 0 and scores == sorted(set(scores))  # distinct, real scores
    cut = scores[8]
    kept = det.detect(image, labels, threshold=cut)
    assert min(d.score for d in kept) == cut and len(kept) == 8  # at least the threshold
    assert det.describe()["model_type"] == "owlvit"
    with pytest.raises(ModelError, match="non-empty labels"):
        det.detect(image, [], threshold=0.1)


def test_owlv2_boxes_are_scaled_by_the_padded_square(models):
    from transformers.image_transforms import center_to_corners_format

    det = resolve_backend("detector", f"hf-det:{models['owlv2']}", device="cpu")
    (image,) = tiny_images(1, size=48, seed=4)
    image = image.crop((0, 0, 48, 32))  # wide: padded to 48 x 48 at the bottom
    dets = det.detect(image, ["a red cube", "a blue sphere"], threshold=0.0)
    enc = det.processor(text=[["a red cube", "a blue sphere"]], images=image,
                        return_tensors="pt")
    with torch.no_grad():
        out = det.model(**enc)
    corners = center_to_corners_format(out.pred_boxes[0]) * 48
    want = sorted(tuple(min(max(v, 0.0), lim) for v, lim in zip(b, (48, 32, 48, 32),
                                                                 strict=True))
                  for b in corners.tolist())
    assert np.allclose(sorted(d.box for d in dets), want, atol=1e-4)
    assert max(d.box[3] for d in dets) <= 32


def test_grounding_dino_phrases_map_back_to_labels(models):
    det = resolve_backend("detector", f"hf-det:{models['gdino']}", device="cpu")
    assert det.describe()["model_type"] == "grounding-dino"
    (image,) = tiny_images(1, size=40, seed=5)
    labels = ["red cube", "blue sphere"]
    dets = det.detect(image, labels, threshold=0.0)
    assert dets and {d.label for d in dets} <= set(labels)
    assert all(0 <= d.box[0] <= d.box[2] <= 40 for d in dets)
    cut = sorted(d.score for d in dets)[len(dets) // 2]
    assert all(d.score >= cut for d in det.detect(image, labels, threshold=cut))
    assert cut in [d.score for d in det.detect(image, labels, threshold=cut)]


def test_suppress_and_phrase_matching():
    a = Detection("cube", 0.9, (0, 0, 10, 10))
    b = Detection("cube", 0.8, (1, 1, 11, 11))  # IoU 81/119 with a
    c = Detection("sphere", 0.7, (1, 1, 11, 11))
    assert suppress([b, c, a], 0.5) == [a, c]
    assert suppress([b, c, a], 0.7) == [a, b, c]
    assert match_phrase("Red Cube", ["red cube", "blue sphere"]) == "red cube"
    assert match_phrase("cube", ["red cube", "blue sphere"]) == "red cube"
    assert match_phrase("red", ["red cube", "red sphere"]) is None
    assert match_phrase("cone", ["red cube"]) is None


# ---- hf-vlm VQA -------------------------------------------------------------------------

def test_hf_vlm_vqa_scores_are_the_answer_loglik(models):
    vqa = resolve_backend("vqa", f"hf-vlm:{models['llava']}", device="cpu")
    (image,) = tiny_images(1, size=32, seed=2)
    question = "what colour is the cube ?"
    choices = ["red", "blue", "green"]
    scores = vqa.scores(image, question, choices)
    backend, model = vqa.scorer.backend, vqa.scorer.model
    prefix = vqa.prefix_text(question)
    assert prefix.startswith("USER: <image>\n") and prefix.endswith(" ASSISTANT:")
    enc = backend.processor(images=[image], text=[prefix], return_tensors="pt")
    for choice, got in zip(choices, scores, strict=True):
        cont = backend.tokenize(" " + choice)
        ids = torch.cat([enc["input_ids"], torch.tensor([cont])], dim=1)
        with torch.no_grad():
            logits = model(input_ids=ids, pixel_values=enc["pixel_values"],
                           attention_mask=torch.ones_like(ids)).logits[0]
        p = enc["input_ids"].shape[1]
        logp = torch.log_softmax(logits.double(), -1)
        want = np.mean([logp[p - 1 + j, t].item() for j, t in enumerate(cont)])
        assert got == pytest.approx(want, abs=1e-5)
    assert vqa.answer(image, question, choices) == choices[int(np.argmax(scores))]


def test_hf_vlm_vqa_ties_have_no_answer(models):
    vqa = resolve_backend("vqa", f"hf-vlm:{models['llava']}?norm=sum", device="cpu")
    (image,) = tiny_images(1, size=32)
    # two words the tiny vocabulary lacks: both are <unk>, so their scores tie exactly
    with pytest.raises(UnanswerableError, match="tie"):
        vqa.answer(image, "what colour is the cube ?", ["mauve", "teal"])
    with pytest.raises(ModelError, match="must differ"):
        vqa.answer(image, "q", ["red", "Red."])
    mean = resolve_backend("vqa", f"hf-vlm:{models['llava']}", device="cpu")
    assert mean.fingerprint != vqa.fingerprint
