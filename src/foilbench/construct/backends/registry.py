"""Backend specs a user can type, like model specs.

``resolve_backend(role, spec)``: ``template`` and ``world`` are exact names; other specs are
``SCHEME:REST`` (``api:anthropic:MODEL``, ``api:gemini-image:MODEL``, ``hf-lm:/dir``,
``diffusers:/dir``, ``hf-det:/dir``, ``hf-vlm:/dir``). A factory is called as
``factory(rest, **options)`` (names with ``rest == ""``). Plugins add schemes through the
``foilbench.construct_backends`` entry-point group, named ``ROLE.SCHEME``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from foilbench.construct.backends.base import ROLES, Backend
from foilbench.errors import FoilbenchError
from foilbench.registry import Registry

_T = "foilbench.construct.backends"

# (role, scheme-or-name, target, description, requires)
_BUILTIN: tuple[tuple[str, str, str, str, tuple[str, ...]], ...] = (
    ("text", "template", f"{_T}.template:TemplateText", "deterministic templates, no model", ()),
    ("image", "world", f"{_T}.world:WorldImages", "the procedural renderer (exact, offline)", ()),
    ("edit", "world", f"{_T}.world:WorldEdits", "exact single edits with masks (offline)", ()),
    ("detector", "world", f"{_T}.world:WorldDetector",
     "reads objects from the world scene (offline validator)", ()),
    ("vqa", "world", f"{_T}.world:WorldVQA", "answers from the world scene (offline)", ()),
)


@cache
def backend_registry(role: str) -> Registry:
    if role not in ROLES:
        raise FoilbenchError(f"unknown backend role {role!r}; expected one of {', '.join(ROLES)}")
    reg = Registry(f"{role} backend", "foilbench.construct_backends")
    for r, name, target, desc, req in _BUILTIN + _extra_entries():
        if r == role:
            reg.register(name, target, desc, requires=req)
    return reg


def _extra_entries() -> tuple[tuple[str, str, str, str, tuple[str, ...]], ...]:
    """Generative backends (API, local models); kept apart from the offline ones above."""
    return (
        ("text", "api", f"{_T}.api_text:from_spec",
         "api:anthropic|openai|gemini:MODEL (keys from the environment)", ()),
        ("text", "hf-lm", f"{_T}.hf_lm:from_spec", "hf-lm:/local/dir (transformers LM)",
         ("transformers",)),
        ("image", "api", f"{_T}.api_image:generator_from_spec",
         "api:gemini-image|openai-image:MODEL", ()),
        ("image", "diffusers", f"{_T}.diffusers_backend:generator_from_spec",
         "diffusers:/local/dir (text-to-image pipeline)", ("diffusers",)),
        ("edit", "api", f"{_T}.api_image:editor_from_spec",
         "api:gemini-image|openai-image:MODEL with an input image", ()),
        ("edit", "diffusers", f"{_T}.diffusers_backend:editor_from_spec",
         "diffusers:/local/dir (InstructPix2Pix or inpainting with the edit mask)",
         ("diffusers",)),
        ("detector", "hf-det", f"{_T}.detectors:from_spec",
         "hf-det:/local/dir (OWL-ViT, OWLv2, Grounding DINO)", ("transformers",)),
        ("vqa", "hf-vlm", f"{_T}.vqa:from_spec", "hf-vlm:/local/dir (constrained answers)",
         ("transformers",)),
        ("vqa", "api", f"{_T}.vqa:api_from_spec", "api:anthropic|openai|gemini:MODEL", ()),
    )


def resolve_backend(role: str, spec: str, **options: Any) -> Backend:
    """Build the backend for ``spec`` in ``role``; unknown specs raise with close matches."""
    reg = backend_registry(role)
    scheme, sep, rest = spec.partition(":")
    if spec in reg:
        backend = reg.get(spec)("", **options)
    elif sep and scheme in reg:
        backend = reg.get(scheme)(rest, **options)
    else:
        reg.entry(spec)  # raises UnknownNameError with close matches
        raise AssertionError("unreachable")
    if not getattr(backend, "spec", None):
        backend.spec = spec  # what provenance shows beside the fingerprint
    return backend
