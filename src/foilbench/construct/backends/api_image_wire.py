"""Wire formats of the image APIs: building generation / edit requests and reading the image
out of the reply (stdlib only; keys are added by the caller at send time).

Gemini     POST {base}/v1beta/models/{model}:generateContent, parts = [input image as
           ``inline_data``] + text, ``generationConfig.responseModalities = ["TEXT", "IMAGE"]``,
           ``seed``, and ``imageConfig.aspectRatio`` when the wanted size is not square. Reply:
           the first ``candidates[0].content.parts[].inlineData`` (REST spells it camelCase;
           ``inline_data`` is read too) holds the base64 image. Gemini takes no mask.
OpenAI     generation: POST {base}/v1/images/generations, JSON ``{model, prompt, n: 1, size}``
           (DALL-E models also ``response_format: "b64_json"``; GPT image models always
           answer in base64 and refuse that field). Edit (GPT image models
           and DALL-E 2): POST {base}/v1/images/edits as multipart/form-data with ``image`` and
           ``mask`` files, as the official SDK sends it (GPT image: ``quality``; DALL-E 2:
           ``response_format: b64_json``).
           Reply: ``data[0].b64_json``. A mask is a PNG of the image's size whose fully
           transparent pixels (alpha 0) mark where the image may change.
Sizes      OpenAI takes a fixed list per model; the supported size closest in aspect ratio to
           the wanted one is sent (``size=WxH`` in the spec overrides), and the caller resizes
           the answer to the wanted size.
"""

from __future__ import annotations

import base64
import io
import math
import uuid
from typing import Any

import numpy as np
from PIL import Image

from foilbench.errors import ModelError

GEMINI_ASPECTS = ("1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9")
OPENAI_SIZES = {
    "dall-e-2": ((256, 256), (512, 512), (1024, 1024)),
    "dall-e-3": ((1024, 1024), (1792, 1024), (1024, 1792)),
    "gpt-image": ((1024, 1024), (1536, 1024), (1024, 1536)),
}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _ratio(text: str) -> float:
    w, h = text.split(":")
    return int(w) / int(h)


def gemini_aspect(size: tuple[int, int]) -> str:
    """The supported aspect ratio closest (in log ratio) to width / height."""
    want = math.log(size[0] / size[1])
    return min(GEMINI_ASPECTS, key=lambda a: abs(math.log(_ratio(a)) - want))


def openai_family(model: str) -> str:
    if model.startswith("dall-e-2"):
        return "dall-e-2"
    if model.startswith("dall-e-3"):
        return "dall-e-3"
    return "gpt-image"


def openai_size(model: str, size: tuple[int, int]) -> str:
    """Closest supported size in aspect ratio; DALL-E 2 (square only): the smallest side that
    covers the wanted size."""
    family = openai_family(model)
    sizes = OPENAI_SIZES[family]
    if family == "dall-e-2":
        side = next((s for s, _ in sizes if s >= max(size)), sizes[-1][0])
        return f"{side}x{side}"
    want = math.log(size[0] / size[1])
    w, h = min(sizes, key=lambda s: abs(math.log(s[0] / s[1]) - want))
    return f"{w}x{h}"


def mask_png(mask: np.ndarray, image_size: tuple[int, int]) -> bytes:
    """OpenAI mask: alpha 0 where the edit may touch (``mask`` True), 255 elsewhere."""
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (image_size[1], image_size[0]):
        raise ModelError(f"edit mask of shape {mask.shape} does not match the image "
                         f"({image_size[1]} x {image_size[0]} pixels, H x W)")
    rgba = np.zeros((*mask.shape, 4), dtype=np.uint8)
    rgba[..., 3] = np.where(mask, 0, 255)
    buf = io.BytesIO()
    Image.fromarray(rgba).save(buf, format="PNG")
    return buf.getvalue()


def gemini_request(model: str, prompt: str, seed: int, size: tuple[int, int],
                   image_png: bytes | None = None,
                   max_output_tokens: int | None = None) -> tuple[str, dict]:
    """``generateContent`` with text and image output; ``max_output_tokens`` caps the reply
    (and so its bill: :func:`.api_image_price.worst_case` prices that cap)."""
    parts: list[dict[str, Any]] = []
    if image_png is not None:
        parts.append({"inline_data": {"mime_type": "image/png", "data": _b64(image_png)}})
    parts.append({"text": prompt})
    config: dict[str, Any] = {"responseModalities": ["TEXT", "IMAGE"], "seed": seed}
    if max_output_tokens is not None:
        config["maxOutputTokens"] = int(max_output_tokens)
    aspect = gemini_aspect(size)
    if aspect != "1:1":
        config["imageConfig"] = {"aspectRatio": aspect}
    return (f"/v1beta/models/{model}:generateContent",
            {"contents": [{"role": "user", "parts": parts}], "generationConfig": config})


def openai_generation(model: str, prompt: str, size: str, quality: str | None
                      ) -> tuple[str, dict]:
    body: dict[str, Any] = {"model": model, "prompt": prompt, "n": 1, "size": size}
    if openai_family(model) != "gpt-image":
        body["response_format"] = "b64_json"
    if quality:
        body["quality"] = quality
    return "/v1/images/generations", body


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes, str]]
              ) -> tuple[bytes, str]:
    """(body, content type) of a multipart/form-data request."""
    boundary = f"foilbench-{uuid.uuid4().hex}"
    out = io.BytesIO()
    for name, value in fields.items():
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                  .encode())
        out.write(value.encode() + b"\r\n")
    for name, (filename, data, ctype) in files.items():
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                  f'filename="{filename}"\r\nContent-Type: {ctype}\r\n\r\n'.encode())
        out.write(data + b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), f"multipart/form-data; boundary={boundary}"


def openai_edit_multipart(model: str, prompt: str, size: str, image_png: bytes,
                          mask: bytes | None, quality: str | None = None
                          ) -> tuple[str, bytes, str]:
    """The edit request as the official SDK sends it: multipart/form-data with the ``image``
    and ``mask`` files. DALL-E 2 answers in base64 only when asked (``response_format``); GPT
    image models always do and refuse that field, and take ``quality``."""
    fields = {"model": model, "prompt": prompt, "n": "1", "size": size}
    if openai_family(model) == "gpt-image":
        if quality:
            fields["quality"] = quality
    else:
        fields["response_format"] = "b64_json"
    files = {"image": ("image.png", image_png, "image/png")}
    if mask is not None:
        files["mask"] = ("mask.png", mask, "image/png")
    body, ctype = multipart(fields, files)
    return "/v1/images/edits", body, ctype


def _decode(b64: str, where: str) -> bytes:
    try:
        data = base64.b64decode(b64, validate=True)
        Image.open(io.BytesIO(data)).verify()
    except Exception as e:  # noqa: BLE001  (binascii, PIL: any undecodable payload)
        raise ModelError(f"{where}: the reply's image could not be decoded ({e})") from None
    return data


def parse_gemini_image(data: dict) -> bytes:
    """Image bytes from a generateContent reply; no image (a safety block, a text-only answer)
    raises with the finish reason and the model's text."""
    if isinstance(data, dict) and not data.get("candidates"):
        block = (data.get("promptFeedback") or {}).get("blockReason", "no candidates")
        raise ModelError(f"gemini-image: the request was blocked ({block}); no image")
    try:
        cand = data["candidates"][0]
        parts = cand.get("content", {}).get("parts", [])
    except (KeyError, IndexError, TypeError, AttributeError) as e:
        raise ModelError(f"gemini-image: unexpected reply shape ({type(e).__name__}: {e})"
                         ) from None
    for part in parts:
        inline = part.get("inlineData") or part.get("inline_data")
        if inline and inline.get("data"):
            return _decode(inline["data"], "gemini-image")
    text = " ".join(p.get("text", "") for p in parts).strip()[:200]
    raise ModelError(f"gemini-image: the reply has no image (finishReason "
                     f"{cand.get('finishReason', '?')}; text: {text!r})")


def parse_openai_image(data: dict) -> bytes:
    try:
        b64 = data["data"][0]["b64_json"]
    except (KeyError, IndexError, TypeError) as e:
        raise ModelError(f"openai-image: unexpected reply shape ({type(e).__name__}: {e}); "
                         "expected data[0].b64_json") from None
    return _decode(b64, "openai-image")
