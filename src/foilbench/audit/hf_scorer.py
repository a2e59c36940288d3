"""Any local Hugging Face model as a blind text scorer (``hf:DIR``), e.g. the paper's own.

SugarCrepe §3: "We then utilize Vera, a plausibility estimation model, to characterize the
nonsensical bias. To capture the non-fluent bias, we leverage a grammar-check model that
assigns high scores to grammatically correct texts." App. D.3 then balances "the grammar model
M_1 and plausibility model M_2", whose score gaps g = M(p) - M(n) lie in [-1, 1].

``hf:DIR`` reads the folder's ``config.json`` ``architectures``:

* ``...ForSequenceClassification`` (e.g. a CoLA grammar classifier such as
  textattack/roberta-base-CoLA): the score is the probability of one label -- the sigmoid of
  the logit for a one-label head, the softmax probability of label 1 (CoLA's "acceptable") for
  two labels, or ``hf:DIR?label=N`` / ``?label=NAME`` (a name of ``id2label``). Scores are
  probabilities, so gaps lie in [-1, 1] as the paper's and are binned without rescaling
  (``bounded``).
* ``...ForCausalLM`` / ``...LMHeadModel``: the mean token log-probability
  (:func:`foilbench.audit.neural.causal_lm_logprobs`, as ``lm:DIR``); unbounded, so the gaps
  are scaled by their largest magnitude before binning.

Vera itself is a T5 encoder with its own scoring head, not a standard transformers class: a
user who has it can export it as a one-label sequence classifier, or register a scorer.
Nothing is downloaded: DIR must be a local ``save_pretrained`` folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from foilbench.audit.crossfit import FeatureFn, gather
from foilbench.errors import ModelError


def parse_spec(spec: str) -> tuple[Path, str | None]:
    """``/dir?label=1`` -> (Path('/dir'), '1')."""
    path, _, query = spec.partition("?")
    label = None
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        if key != "label" or not value:
            raise ModelError(f"hf:{spec}: unknown option {part!r} (only label=N or label=NAME)")
        label = value
    return Path(path), label


def architecture(path: Path) -> str:
    """'classifier' or 'causal-lm' from the folder's config.json; a clear error otherwise."""
    cfg = path / "config.json"
    if not cfg.is_file():
        raise ModelError(f"hf:{path}: not a local transformers model folder (no config.json; "
                         "save the model with save_pretrained, nothing is downloaded)")
    archs = json.loads(cfg.read_text()).get("architectures") or []
    if any(a.endswith("ForSequenceClassification") for a in archs):
        return "classifier"
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        return "causal-lm"
    raise ModelError(f"hf:{path}: architectures {archs or 'unset'} are neither a sequence "
                     "classifier nor a causal LM; a blind scorer needs one of the two")


def _label_index(model, label: str | None, n_labels: int, path: Path) -> int | None:
    if n_labels == 1:
        return None
    if label is None:
        if n_labels == 2:
            return 1
        raise ModelError(f"hf:{path}: {n_labels} labels; say which one scores a caption as "
                         f"good with hf:{path}?label=N (labels: {model.config.id2label})")
    if label.isdigit():
        index = int(label)
    else:
        names = {str(v): int(k) for k, v in model.config.id2label.items()}
        if label not in names:
            raise ModelError(f"hf:{path}: no label {label!r} (labels: {model.config.id2label})")
        index = names[label]
    if not 0 <= index < n_labels:
        raise ModelError(f"hf:{path}: label {index} outside 0..{n_labels - 1}")
    return index


def classifier_scores(texts: list[str], path: Path, label: str | None = None,
                      device: str = "auto", batch_size: int = 32) -> np.ndarray:
    """Probability of the chosen label per text (sigmoid for a one-label head)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from foilbench.models.device import select_device

    dev = select_device(device)
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        path, local_files_only=True).to(dev).eval()
    index = _label_index(model, label, int(model.config.num_labels), path)
    out = np.empty(len(texts))
    for start in range(0, len(texts), batch_size):
        batch = tok(texts[start:start + batch_size], padding=True, truncation=True,
                    return_tensors="pt").to(dev)
        with torch.no_grad():
            logits = model(**batch).logits.float()
        probs = torch.sigmoid(logits[:, 0]) if index is None else torch.softmax(
            logits, dim=-1)[:, index]
        out[start:start + len(probs)] = probs.cpu().numpy()
    return out


def hf_scorer(texts: list[str], index: np.ndarray, spec: str) -> FeatureFn:
    """Feature = the model's score of each caption (see the module docstring); the returned
    function carries ``bounded`` (True for classifier probabilities)."""
    path, label = parse_spec(spec)
    kind = architecture(path)
    if kind == "classifier":
        feats = gather(classifier_scores(texts, path, label), index)
    else:
        if label is not None:
            raise ModelError(f"hf:{spec}: label= applies to classifiers; {path} is a causal LM")
        from foilbench.audit.neural import causal_lm_logprobs

        feats = gather(causal_lm_logprobs(texts, path), index)

    def features(train_mask: np.ndarray) -> np.ndarray:
        return feats

    features.bounded = kind == "classifier"
    return features
