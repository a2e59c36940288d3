"""Generative VLMs through transformers: ``hf-vlm:ID_OR_DIR[?options]``, family "pairwise".

Options:
  ``score=loglik|vqascore``     caption log-likelihood given the image (default), or VQAScore
  ``norm=mean|sum``             loglik: length-normalised mean or summed token
                                log-probabilities. Unstated, each benchmark gets the one its
                                paper states (Auto-Comp: sum; CompoSET: mean;
                                :mod:`foilbench.scoring.norms`), else mean (foilbench's)
  ``yes=raw|normalised``        vqascore: P(Yes) as the softmax over the whole vocabulary
                                (default, as in Lin et al. 2024) or over {Yes, No} only
  ``template=llava|qwen2vl|blip``  prompt layout (default from the model type)
  ``share=1|0``                 compute the image+prompt prefix once per image and share its
                                key/value cache across the candidates (default), or not
  ``batch=N``                   candidates per forward pass (default 16)
  ``revision=REV``              hub branch, tag or commit (also ``hf-vlm:ORG/NAME@REV``),
                                passed to every ``from_pretrained``

The formulas are in :mod:`foilbench.models.vlm_scoring`; prompts in
:mod:`foilbench.models.vlm_templates`. Higher is better for every score.
Tested on tiny random BLIP (``BlipForConditionalGeneration``), LLaVA and Qwen2-VL (M-RoPE)
models: shared-prefix scores equal from-scratch and direct model computations. Other
``AutoModelForImageTextToText`` models (e.g. BLIP-2 with a decoder LM) take the LLaVA path
and template unless ``template=`` says otherwise; they are untested here.
"""

from __future__ import annotations

import copy

import numpy as np
from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.base import ModelInfo, PairwiseScorer, to_rgb
from foilbench.models.device import select_device, select_dtype
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.hf.loading import (
    LOAD_ERRORS,
    load_error,
    resolve_source,
    revision_kwargs,
    source_identity,
    split_revision,
)
from foilbench.models.spec_options import int_option, split_options
from foilbench.models.vlm_backends import BlipBackend, DecoderBackend
from foilbench.models.vlm_scoring import answer_logits, continuation_loglik, yes_probability
from foilbench.models.vlm_templates import (
    BLIP_CAPTION_PROMPT,
    LOGLIK_PROMPT,
    TEMPLATES,
    VQA_QUESTION,
    answer_token,
    continuation_ids,
    separator,
    template_for,
)

OPTIONS = {
    "score": ("loglik", "vqascore"),
    "norm": ("mean", "sum"),
    "yes": ("raw", "normalised"),
    "template": tuple(TEMPLATES),
    "share": ("1", "0"),
    "batch": None,
    "revision": None,
}
DEFAULT_NORM = "mean"  # foilbench's default where neither the user nor a paper states one


def from_spec(rest: str, device: str = "auto", dtype: str = "float32") -> HFVLMScorer:
    body, opts = split_options(rest, OPTIONS)
    body, revision = split_revision(body, opts)
    return HFVLMScorer(f"hf-vlm:{rest}", body, device=device, dtype=dtype,
                       score=opts.get("score", "loglik"), norm=opts.get("norm"),
                       yes=opts.get("yes", "raw"), template=opts.get("template"),
                       share=opts.get("share", "1") == "1",
                       batch_size=int_option(opts, "batch", 16), revision=revision)


def _load(source: str, target: str, dtype, revision: str | None = None):
    from transformers import AutoConfig, AutoModelForImageTextToText, AutoProcessor

    rev = revision_kwargs(revision)
    try:
        config = AutoConfig.from_pretrained(source, **rev)
        if config.model_type == "blip":
            from transformers import BlipForConditionalGeneration as cls
        else:
            cls = AutoModelForImageTextToText
        model = cls.from_pretrained(source, dtype=dtype, **rev)
        processor = AutoProcessor.from_pretrained(source, **rev)
    except (OSError, ValueError, *LOAD_ERRORS) as e:
        raise load_error(target, e) from None
    return config, model, processor


class HFVLMScorer(PairwiseScorer):
    """Caption log-likelihood or VQAScore of a transformers VLM (see the module docstring)."""

    def __init__(self, spec: str, target: str, device: str = "auto", dtype: str = "float32",
                 score: str = "loglik", norm: str | None = None, yes: str = "raw",
                 template: str | None = None, share: bool = True, batch_size: int = 16,
                 revision: str | None = None) -> None:
        source, is_local = resolve_source(target)
        self.device = select_device(device)
        self.torch_dtype = select_dtype(dtype, self.device)
        config, model, processor = _load(source, target, self.torch_dtype, revision)
        self.model = model.to(self.device).eval()
        self.template = template_for(config.model_type, template)
        backend_cls = BlipBackend if self.template.name == "blip" else DecoderBackend
        self.backend = backend_cls(self.model, processor, self.device, self.torch_dtype)
        self.norm_stated = norm is not None
        self.norm = norm or DEFAULT_NORM
        self.norm_source = "stated (?norm=)" if norm else "foilbench default"
        self.score, self.yes, self.share = score, yes, share
        self.batch_size = batch_size
        self.yes_id, self.no_id = self._answer_ids()
        self.prefix_passes = 0  # how many image+prompt prefixes were computed
        self._identity = {
            **source_identity(source, is_local, config, revision),
            "model_class": type(model).__name__,
            "template": self.template.name,
            "prompt": self._prefix_text(),
            "question": VQA_QUESTION if score == "vqascore" else None,
            "score": score,
            "yes": yes if score == "vqascore" else None,
            "answer_ids": [self.yes_id, self.no_id] if score == "vqascore" else None,
            "dtype": dtype,
        }
        self._info = self._make_info(spec)

    def _make_info(self, spec: str) -> ModelInfo:
        loglik = self.score == "loglik"
        parts = {**self._identity, "norm": self.norm if loglik else None}
        extras = {**parts, "norm_source": self.norm_source if loglik else None}
        return ModelInfo(spec=spec, fingerprint=make_fingerprint("hf-vlm", parts),
                         family=self.family, score_kind="loglik" if loglik else "p_yes",
                         extras=extras)

    def with_default_norm(self, norm: str, source: str) -> HFVLMScorer:
        """This scorer with ``norm`` (a benchmark's paper's, named by ``source``) unless the
        user stated ``?norm=`` or the score is not a log-likelihood; shares the loaded model.
        The fingerprint carries the norm, so sum and mean scores never share a cache entry."""
        if norm not in OPTIONS["norm"]:
            raise ModelError(f"unknown log-likelihood norm {norm!r}; possible: "
                             f"{', '.join(OPTIONS['norm'])}")
        if self.norm_stated or self.score != "loglik" or (norm, source) == (
                self.norm, self.norm_source):
            return self
        other = copy.copy(self)
        other.norm, other.norm_source = norm, source
        other._info = other._make_info(self._info.spec)
        return other

    @property
    def info(self) -> ModelInfo:
        return self._info

    def _answer_ids(self) -> tuple[int, int]:
        """The first token of "Yes" / "No" as this tokenizer writes the answer after the
        question and the template's turn marker (vlm_templates.answer_token)."""
        context = VQA_QUESTION.format(caption="x") + self.template.tail
        yes, no = (answer_token(self.backend.tokenize, context, w) for w in ("Yes", "No"))
        if self.score == "vqascore" and (yes is None or no is None or yes == no):
            raise ModelError("this tokenizer has no distinct 'Yes'/'No' tokens; VQAScore needs them")
        return (-1 if yes is None else yes), (-1 if no is None else no)

    def _prefix_text(self) -> str:
        head = self.template.head.format(image=getattr(self.backend, "image_token", ""))
        if self.score == "vqascore":
            return head
        prompt = BLIP_CAPTION_PROMPT if self.template.name == "blip" else LOGLIK_PROMPT
        return head + prompt + self.template.tail

    def _continuation(self, caption: str) -> list[int]:
        """The candidate's ids, tokenised in context after the prefix; a space before a
        caption only where the prefix does not end in whitespace (vlm_templates)."""
        prefix = self._prefix_text()
        if self.score == "vqascore":
            text = VQA_QUESTION.format(caption=caption) + self.template.tail
        else:
            text = separator(prefix) + caption
        ids = continuation_ids(self.backend.tokenize, prefix, text) if caption.strip() else []
        if not ids:
            raise ModelError(f"caption {caption!r} tokenises to nothing; cannot score it")
        return ids

    def _padded(self, rows: list[list[int]]):
        import torch

        lengths = [len(r) for r in rows]
        out = torch.zeros(len(rows), max(lengths), dtype=torch.long)
        for k, r in enumerate(rows):
            out[k, : len(r)] = torch.tensor(r)
        return out.to(self.device), lengths

    def _scores(self, prefix_last, cont_logits, ids, lengths) -> np.ndarray:
        if self.score == "loglik":
            return continuation_loglik(prefix_last, cont_logits, ids, lengths, self.norm)
        return yes_probability(answer_logits(cont_logits, lengths), self.yes_id, self.no_id,
                               self.yes)

    def score_image(self, image: Image.Image, captions: list[str], share: bool | None = None
                    ) -> np.ndarray:
        """Scores of each caption for one image (shared prefix unless ``share=False``)."""
        import torch

        share = self.share if share is None else share
        prefix_text = self._prefix_text()
        rows = [self._continuation(c) for c in captions]
        out = []
        with torch.no_grad():
            state = None
            if share and rows:
                state = self.backend.encode_prefix(image, prefix_text)
                self.prefix_passes += 1
            for start in range(0, len(rows), self.batch_size):
                ids, lengths = self._padded(rows[start:start + self.batch_size])
                if state is not None:
                    logits = self.backend.continue_from(state, ids)
                    out.append(self._scores(state.last_logits, logits, ids, lengths))
                else:
                    prefix_last, logits = self.backend.from_scratch(image, prefix_text, ids)
                    self.prefix_passes += ids.shape[0]
                    out.append(self._scores(prefix_last, logits, ids, lengths))
        return np.concatenate(out) if out else np.zeros(0)

    def score_pairs(self, images: list[Image.Image], texts: list[list[str]]) -> list[np.ndarray]:
        if len(images) != len(texts):
            raise ValueError(f"score_pairs: {len(images)} images but {len(texts)} caption lists")
        results = []  # progress is shown by the caller (the engine), per pair
        for k, (image, captions) in enumerate(zip(images, texts, strict=True)):
            rgb = to_rgb(image, name=getattr(image, "filename", "") or f"image #{k}")
            results.append(self.score_image(rgb, list(captions)))
        return results
