"""The image endpoints of the strict provider fake (tests/_strict_providers.py): OpenAI
image generations (JSON; GPT image models refuse ``response_format``) and edits (multipart/
form-data only, ``image`` and ``mask`` files, an RGBA mask of the image's size), with
``usage`` for GPT image models; Gemini image models through generateContent with
``candidatesTokensDetails`` by modality. Billed at the packaged list prices."""

from __future__ import annotations

import io
from email.parser import BytesParser
from email.policy import HTTP

from PIL import Image

from _strict_common import Rejected, _json, _only, bearer, png_b64, tokens

OPENAI_GEN_FIELDS = {"model", "prompt", "n", "size", "quality", "response_format", "background",
                     "output_format", "moderation", "style", "user"}
OPENAI_EDIT_FIELDS = {"model", "prompt", "n", "size", "quality", "response_format", "user",
                      "background", "output_format", "input_fidelity"}
OPENAI_SIZES = {"gpt-image": {"1024x1024", "1536x1024", "1024x1536", "auto"},
                "dall-e-2": {"256x256", "512x512", "1024x1024"},
                "dall-e-3": {"1024x1024", "1792x1024", "1024x1792"}}
GPT_IMAGE_OUT = {"low": {"1024x1024": 272, "1024x1536": 408, "1536x1024": 400},
                 "medium": {"1024x1024": 1056, "1024x1536": 1584, "1536x1024": 1568},
                 "high": {"1024x1024": 4160, "1024x1536": 6240, "1536x1024": 6208}}


class StrictImages:
    """Mixed into StrictProviders (which holds ``image``, ``prices``, ``billed_usd``)."""

    def _image_reply(self, model, prompt, src, size, quality, seed=0):
        family = ("dall-e-2" if model.startswith("dall-e-2") else
                  "dall-e-3" if model.startswith("dall-e-3") else "gpt-image")
        if size not in OPENAI_SIZES[family]:
            raise Rejected(400, f"openai-image: size {size!r} is not supported by {model}")
        w, h = (int(v) for v in size.split("x"))
        img = self.image(prompt, src, seed).resize((w, h))
        reply = {"created": 1, "data": [{"b64_json": png_b64(img)}]}
        if family == "gpt-image":
            out = GPT_IMAGE_OUT[quality if quality in GPT_IMAGE_OUT else "high"][size]
            text_in, image_in = tokens(prompt), (323 if src is not None else 0)
            reply["usage"] = {"input_tokens": text_in + image_in, "output_tokens": out,
                              "total_tokens": text_in + image_in + out,
                              "input_tokens_details": {"text_tokens": text_in,
                                                       "image_tokens": image_in}}
            with self._lock:
                self.billed_usd += (text_in * 5 + image_in * 10 + out * 40) / 1e6
        else:
            entry = self.prices.image_entry("openai-image", model)
            with self._lock:
                self.billed_usd += entry["per_image"][quality or "standard"][size]
        return 200, {}, reply

    def _openai_generate(self, headers, raw):
        bearer(headers, "openai-image")
        body = _json(headers, raw, "openai-image")
        _only("openai-image", body, OPENAI_GEN_FIELDS)
        if body["model"].startswith("gpt-image") and "response_format" in body:
            raise Rejected(400, "openai-image: response_format is not supported for GPT image")
        return self._image_reply(body["model"], body["prompt"], None,
                                 body.get("size", "1024x1024"), body.get("quality"))

    def _openai_edit(self, headers, raw):
        bearer(headers, "openai-image edit")
        ctype = headers.get("Content-Type", "")
        if not ctype.startswith("multipart/form-data; boundary="):
            raise Rejected(400, f"openai-image edit: must be multipart/form-data, got {ctype!r}")
        msg = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {ctype}\r\n\r\n".encode() + raw)
        fields, files = {}, {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if part.get_filename():
                files[name] = part.get_payload(decode=True)
            else:
                fields[name] = part.get_content().strip()
        _only("openai-image edit", fields, OPENAI_EDIT_FIELDS)
        _only("openai-image edit files", files, {"image", "mask", "image[]"})
        if "image" not in files and "image[]" not in files:
            raise Rejected(400, "openai-image edit: the image file is required")
        model = fields.get("model", "dall-e-2")
        if model.startswith("gpt-image") and "response_format" in fields:
            raise Rejected(400, "openai-image: response_format is not supported for GPT image")
        with Image.open(io.BytesIO(files.get("image") or files["image[]"])) as im:
            src = im.convert("RGB")
        if "mask" in files:
            with Image.open(io.BytesIO(files["mask"])) as m:
                if m.mode != "RGBA" or m.size != src.size:
                    raise Rejected(400, "openai-image edit: the mask must be an RGBA PNG of "
                                        "the image's size")
        return self._image_reply(model, fields["prompt"], src, fields.get("size", "1024x1024"),
                                 fields.get("quality"))

    def _gemini_image(self, model, prompt, src, seed, tin):
        entry = self.prices.image_entry("gemini-image", model)
        if entry is None:
            raise Rejected(404, f"model {model} not found")
        img = self.image(prompt, src, seed)
        n = entry["tokens_per_image"]
        with self._lock:
            self.billed_usd += (tin * entry["in"] + n * entry["image_out"]) / 1e6
        return 200, {}, {"candidates": [{"content": {"role": "model", "parts": [
            {"inlineData": {"mimeType": "image/png", "data": png_b64(img)}}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": tin, "candidatesTokenCount": n,
                              "candidatesTokensDetails": [{"modality": "IMAGE",
                                                           "tokenCount": n}]}}
