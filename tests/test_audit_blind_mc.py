"""Auto-Comp App. A.8 blind-LLM multiple choice: seeded shuffles, the prompt by hand, label
log-probabilities against a one-sequence reference, features in the audit's layout."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.audit.blind_mc import label_logprobs, mc_prompt, mc_scorer, shuffled_order
from foilbench.audit.text import pad_captions

VOCAB = (["<pad>", "<bos>", "<unk>", "a", "red", "blue", "cube", "ball", ".", ":", "Answer"]
         + [str(k) for k in range(1, 13)])


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("mc_lm")
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", pad_token="<pad>",
                            unk_token="<unk>").save_pretrained(path)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(VOCAB), n_positions=256, n_embd=16, n_layer=1,
                               n_head=2, bos_token_id=1, eos_token_id=1,
                               pad_token_id=0)).save_pretrained(path)
    return path


def test_prompt_lists_options_where_the_order_puts_them():
    text = mc_prompt(["P", "A", "B"], np.array([2, 0, 1]))
    assert text.endswith("\n1. A\n2. B\n3. P\nAnswer:")
    a, b = shuffled_order(50, 7, seed=0), shuffled_order(50, 7, seed=0)
    assert list(a) == list(b) and sorted(a) == list(range(50))
    assert list(shuffled_order(50, 8, seed=0)) != list(a)  # each item its own shuffle


def _reference(path, prompt, label):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    head = tok(prompt)["input_ids"]
    tail = tok(label, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([head + tail])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0], -1)
    return sum(float(logp[len(head) - 1 + k, t]) for k, t in enumerate(tail))


def test_label_logprobs_match_one_sequence_reference(tiny_lm):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_lm)
    model = AutoModelForCausalLM.from_pretrained(tiny_lm).eval()
    prompt = mc_prompt(["a red cube", "a blue cube", "a red ball"], np.array([1, 2, 0]))
    labels = [" 1", " 2", " 3", " 12"]
    got = label_logprobs(tok, model, prompt, labels, "cpu", batch_size=3)
    for lab, value in zip(labels, got, strict=True):
        assert value == pytest.approx(_reference(tiny_lm, prompt, lab), abs=1e-5)


def test_mc_scorer_features_follow_the_shuffle(tiny_lm):
    captions = [["a red cube", "a blue cube", "a red ball"], ["a blue ball", "a red ball"]]
    texts, index = pad_captions(captions)
    feats = mc_scorer(texts, index, tiny_lm, seed=0, device="cpu")(np.ones(2, bool))
    assert feats.shape == (2, 3) and np.isnan(feats[1, 2])
    order = shuffled_order(3, 0, seed=0)
    prompt = mc_prompt(captions[0], order)
    for j in range(3):
        assert feats[0, j] == pytest.approx(
            _reference(tiny_lm, prompt, f" {int(order[j]) + 1}"), abs=1e-5)


def test_prompt_longer_than_the_model_is_refused(tiny_lm):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from foilbench.errors import ModelError

    tok = AutoTokenizer.from_pretrained(tiny_lm)
    model = AutoModelForCausalLM.from_pretrained(tiny_lm).eval()
    prompt = mc_prompt(["a red cube"] * 60, np.arange(60))
    with pytest.raises(ModelError, match="more than the language model's 256"):
        label_logprobs(tok, model, prompt, [" 1"], "cpu")
