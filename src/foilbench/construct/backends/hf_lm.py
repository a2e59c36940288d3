"""Local text LLM backend: ``hf-lm:/local/dir`` (any transformers causal or chat LM).

The prompt: when the tokenizer has a chat template, ``apply_chat_template`` over
``[system, user]`` messages with the generation prompt added (a template that refuses a
system turn gets the system text prepended to the user turn); otherwise the plain text
``system + "\\n\\n" + prompt``. Decoding: temperature 0 is greedy; temperature > 0 samples
from ``softmax(logits / temperature)`` over the full vocabulary (``top_k=0``, ``top_p=1``,
so a model's generation_config defaults do not change the distribution silently), or over its
nucleus when the request sets ``top_p`` (Auto-Comp App. A.6: top_p 0.9), seeded by
the request's seed in a forked RNG (the caller's global torch RNG is untouched). The reply is
the decoded new tokens, special tokens dropped, stripped.

Context: a request's ``max_tokens`` is cut to what the model's context has left after the
prompt (``max_position_embeddings`` / ``n_positions``), and a prompt that alone fills the
context raises :class:`PromptTooLongError` (not retried: the same prompt fails again).
Images: a causal LM reads text only, so a request with ``images`` is refused
(``accepts_images`` is false; pipelines then send the prompt alone and say so in their log).

Fingerprint: spec, model class, dtype and the folder identity (:mod:`.local_dir`).
"""

from __future__ import annotations

import threading
from typing import Any

from foilbench.construct.backends.api_common import check_options
from foilbench.construct.backends.base import TextBackend, TextRequest
from foilbench.construct.backends.local_dir import dir_identity, require_dir
from foilbench.errors import ModelError
from foilbench.models.device import select_device, select_dtype
from foilbench.models.fingerprint import make_fingerprint
from foilbench.models.spec_options import split_options


class PromptTooLongError(ModelError):
    """The prompt alone fills the model's context window."""

    retryable = False


def context_length(config: Any) -> int | None:
    """The model's context window in tokens, when its config states one."""
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def from_spec(rest: str, **options: Any) -> HFTextLM:
    check_options(f"hf-lm:{rest}", options)
    body, opts = split_options(rest, {"chat": ("auto", "0")})
    return HFTextLM(f"hf-lm:{rest}", body, device=options.get("device") or "auto",
                    dtype=options.get("dtype") or "float32",
                    use_chat_template=opts.get("chat", "auto") == "auto")


class HFTextLM(TextBackend):
    def __init__(self, spec: str, target: str, device: str = "auto", dtype: str = "float32",
                 use_chat_template: bool = True) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = require_dir(target, "hf-lm")
        self.spec = spec
        self.device = select_device(device)
        self.torch_dtype = select_dtype(dtype, self.device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=self.torch_dtype)
        except (OSError, ValueError) as e:
            raise ModelError(f"hf-lm: could not load {folder}: {e}") from None
        self.model = model.to(self.device).eval()
        self.context = context_length(model.config)
        self.chat = bool(use_chat_template and getattr(self.tokenizer, "chat_template", None))
        self._lock = threading.Lock()
        self._fingerprint = make_fingerprint("hf-lm", {
            **dir_identity(folder), "model_class": type(model).__name__, "dtype": dtype,
            "chat_template": self.chat})

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "spec": self.spec, "chat_template": self.chat}

    def render_prompt(self, request: TextRequest) -> str:
        """The exact text the model continues."""
        if not self.chat:
            return f"{request.system}\n\n{request.prompt}" if request.system else request.prompt
        messages = [{"role": "user", "content": request.prompt}]
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        try:
            return self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                      add_generation_prompt=True)
        except Exception:  # noqa: BLE001  (jinja raises TemplateError for "no system role")
            if not request.system:
                raise
            merged = [{"role": "user", "content": f"{request.system}\n\n{request.prompt}"}]
            return self.tokenizer.apply_chat_template(merged, tokenize=False,
                                                      add_generation_prompt=True)

    def complete(self, request: TextRequest) -> str:
        import torch

        if request.images:
            raise ModelError(f"{self.spec}: a text-only language model cannot read the "
                             f"{len(request.images)} image(s) of this request (prompt "
                             f"{request.prompt_id or '?'}); use an API model for image input")
        text = self.render_prompt(request)
        # a chat template already writes the special tokens it wants
        enc = self.tokenizer(text, return_tensors="pt", add_special_tokens=not self.chat)
        enc = {k: v.to(self.device) for k, v in enc.items()}
        if enc["input_ids"].shape[1] == 0:
            raise ModelError(f"{self.spec}: the prompt tokenises to nothing")
        n_prompt = int(enc["input_ids"].shape[1])
        max_new = request.max_tokens
        if self.context is not None:
            if n_prompt >= self.context:
                raise PromptTooLongError(
                    f"{self.spec}: the prompt {request.prompt_id or ''} is {n_prompt} tokens, "
                    f"the model's context is {self.context}; use a model with a longer context")
            max_new = min(max_new, self.context - n_prompt)
        sample = request.temperature > 0
        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "do_sample": sample}
        if sample:
            top_p = 1.0 if request.top_p is None else float(request.top_p)
            kwargs.update(temperature=float(request.temperature), top_k=0, top_p=top_p)
        else:
            kwargs.update(temperature=None, top_k=None, top_p=None)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        devices = ([torch.device(self.device).index or 0] if self.device.startswith("cuda")
                   else [])
        with self._lock, torch.no_grad(), torch.random.fork_rng(devices=devices):
            torch.manual_seed(request.seed)
            out = self.model.generate(**enc, pad_token_id=pad, **kwargs)
        new = out[0, enc["input_ids"].shape[1]:]
        return self.tokenizer.decode(new, skip_special_tokens=True).strip()
