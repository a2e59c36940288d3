"""Model specs a user can type, resolved lazily.

Exact names (the embedded models) and schemes (``openclip:...``, ``hf:...``, ``hf-vlm:...``,
``api:...``) each map to a ``"module:factory"`` target. A name factory is called as
``factory(device=..., dtype=...)``; a scheme factory as ``factory(rest, device=..., dtype=...)``
where ``rest`` is the text after the first colon. Plugins add names via the
``foilbench.models`` entry-point group and schemes via ``foilbench.model_schemes`` (an entry
``myscheme = "pkg.module:from_spec"`` makes ``myscheme:...`` resolve to ``from_spec(rest,
device=..., dtype=...)``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from foilbench.errors import UnknownNameError
from foilbench.registry import Registry, unknown_message

if TYPE_CHECKING:
    from foilbench.models.base import ModelAdapter

EMBEDDED_DEFAULTS = ("foilbench-plain", "foilbench-swapneg", "foilbench-confneg")


@lru_cache(maxsize=1)
def model_names() -> Registry:
    """Model name -> factory ``(device, dtype) -> adapter``; plugins add names through the
    ``foilbench.models`` entry-point group."""
    reg = Registry("model", "foilbench.models")
    reg.register("tiny-random", "foilbench.models.tiny:build_tiny_random",
                 "deterministic random-feature dual encoder (a smoke-test model; near chance)")
    reg.register("foilbench-plain", "foilbench.models.embedded:load_plain",
                 "embedded dual encoder, plain InfoNCE on the procedural world")
    reg.register("foilbench-swapneg", "foilbench.models.embedded:load_swapneg",
                 "embedded dual encoder, InfoNCE + NegCLIP-style swap negatives")
    reg.register("foilbench-confneg", "foilbench.models.embedded:load_confneg",
                 "embedded dual encoder, InfoNCE + Auto-Comp-style confusion negatives")
    return reg


@lru_cache(maxsize=1)
def model_schemes() -> Registry:
    """Scheme -> factory ``(rest, device, dtype) -> adapter`` for ``SCHEME:REST`` specs;
    plugins add schemes through ``foilbench.model_schemes``."""
    reg = Registry("model scheme", "foilbench.model_schemes")
    reg.register("openclip", "foilbench.models.openclip.adapter:from_spec",
                 "open_clip: openclip:ARCH:PRETRAINED|/path/weights.pt, openclip:hf-hub:ID, "
                 "openclip:/path/config.json[:weights]", requires=("open_clip", "torchvision"))
    reg.register("hf", "foilbench.models.hf.adapter:from_spec",
                 "Hugging Face CLIP/SigLIP: hf:ORG/NAME or hf:/local/dir", requires=("transformers",))
    reg.register("hf-vlm", "foilbench.models.hf.vlm:from_spec",
                 "generative VLM via transformers: hf-vlm:ID_OR_DIR[?score=loglik|vqascore]",
                 requires=("transformers",))
    reg.register("api", "foilbench.models.api:from_spec",
                 "API model: api:anthropic|openai|gemini:MODEL")
    return reg


def resolve_model(spec: str, device: str = "auto", dtype: str = "float32") -> ModelAdapter:
    """Build the adapter for ``spec``.

    Args:
        spec: A model name (``tiny-random``, a plugin's) or ``SCHEME:REST``
            (``openclip:ViT-B-32:/w.pt``, ``hf:/local/dir``, ``api:openai:MODEL``).
        device: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
        dtype: Weights dtype (``float32``, ``float16``, ``bfloat16``).

    Returns:
        The model adapter (a :class:`~foilbench.models.base.DualEncoder`,
            :class:`~foilbench.models.base.PairwiseScorer` or
            :class:`~foilbench.models.base.ApiChoiceModel`).

    Raises:
        UnknownNameError: No such name or scheme, with close matches.
        MissingExtraError: The scheme's extra is not installed (named, e.g.
            ``pip install 'foilbench[openclip]'``), checked before anything is imported.
    """
    names = model_names()
    if spec in names:
        return names.get(spec)(device=device, dtype=dtype)
    scheme, sep, rest = spec.partition(":")
    schemes = model_schemes()
    if sep and scheme in schemes:
        from foilbench.extras import require

        require(*schemes.entry(scheme).requires, what=f"model {spec!r}")
        return schemes.get(scheme)(rest, device=device, dtype=dtype)
    if sep and scheme not in names:
        close = unknown_message("model scheme", f"{scheme}:", [f"{n}:..." for n in schemes.names()])
        raise UnknownNameError(f"{close}. Exact model names: {', '.join(names.names())}")
    known = names.names() + [f"{s}:..." for s in schemes.names()]
    raise UnknownNameError(unknown_message("model", spec, known))
