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


# Auto-Comp App. A.8: "We tasked Gemma-3-12b-it with selecting the correct caption from
# shuffled positive/negative sets without visual input"; §5: the blind LLM "performs at
# near-random chance (51.2% on Swap)". The score is the LLM's own choice, not a fitted sign.

def _anti_oracle(n_items: int, n_options: int):
    """An LLM that never picks the positive: its option scores put the positive last."""
    from foilbench.audit.blind_mc import choice_features

    feats = np.tile(np.arange(n_options, dtype=np.float64)[::-1], (n_items, 1))
    feats[:, 0] = -100.0  # the positive: always the lowest log-probability
    return lambda texts, index: choice_features(feats)


def _items(n_items: int, n_options: int):
    captions = [[f"p{i}"] + [f"n{i} {k}" for k in range(n_options - 1)]
                for i in range(n_items)]
    return captions, np.full(n_items, "swap"), np.arange(n_items)


def test_anti_oracle_llm_scores_zero_under_the_papers_rule():
    from foilbench.audit.blind import blind_audit_captions

    caps, types, clusters = _items(40, 50)
    res = blind_audit_captions(caps, types, clusters, ["mc:anti"],
                               factories={"mc:anti": _anti_oracle(40, 50)})
    stat = res["scorers"]["mc:anti"]["overall"]
    assert stat["accuracy"] == 0.0 and stat["n"] == 40
    assert stat["chance"] == pytest.approx(1 / 50)
    assert res["scorers"]["mc:anti"]["rule"] == "own choice (Auto-Comp App. A.8)"


def test_anti_oracle_cross_fitted_reading_is_available_and_labelled():
    from foilbench.audit.blind import blind_audit_captions

    caps, types, clusters = _items(40, 50)
    res = blind_audit_captions(caps, types, clusters, ["mc:anti"], mc_reading="crossfit",
                               factories={"mc:anti": _anti_oracle(40, 50)})
    assert res["scorers"]["mc:anti"]["overall"]["accuracy"] == 1.0  # the sign turned round
    assert res["scorers"]["mc:anti"]["rule"] == "cross-fitted sign"


def test_own_choice_needs_no_folds_and_a_tie_fails():
    """Three items in one cluster: no fold split exists, yet the paper's rule scores them."""
    from foilbench.audit.blind import blind_audit_captions
    from foilbench.audit.blind_mc import choice_features

    feats = np.array([[-1.0, -2.0, -3.0], [-2.0, -1.0, -3.0], [-1.0, -1.0, -3.0]])
    caps = [["p", "a", "b"], ["q", "c", "d"], ["r", "e", "f"]]
    res = blind_audit_captions(caps, np.full(3, "swap"), np.zeros(3), ["mc:x"],
                               factories={"mc:x": lambda t, i: choice_features(feats)})
    assert res["scorers"]["mc:x"]["overall"]["accuracy"] == pytest.approx(1 / 3)
    assert res["flags"]["ties:mc:x"] == {"swap": 1}
    with pytest.raises(ValueError, match="mc_reading must be one of choice, crossfit"):
        blind_audit_captions(caps, np.full(3, "swap"), np.zeros(3), ["mc:x"],
                             mc_reading="sign",
                             factories={"mc:x": lambda t, i: choice_features(feats)})


def test_mc_scorer_is_marked_own_choice(tiny_lm):
    texts, index = pad_captions([["a red cube", "a blue cube"]])
    assert mc_scorer(texts, index, tiny_lm, seed=0, device="cpu").own_choice is True


def test_cli_scores_mc_by_own_choice_and_prints_the_rule(tiny_lm, tmp_path):
    """Through the CLI on a small Auto-Comp Swap benchmark: the model's own choice, computed
    here by hand, is the accuracy; ``--mc-reading crossfit`` prints the other label."""
    import json

    from click.testing import CliRunner
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from foilbench.audit.text import choice_captions
    from foilbench.cli.main import cli
    from foilbench.construct.autocomp.bench import build_autocomp
    from foilbench.data.format import load_benchmark, write_benchmark

    benches = build_autocomp(tmp_path / "src", seed=0, n_concepts=4, size=32, ns=(2,),
                             tasks=("color",), progress=False)
    path = write_benchmark(benches["swap"], tmp_path / "swap")
    caps = choice_captions(load_benchmark(path))
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["audit", "blind", str(path), "--scorer", f"mc:{tiny_lm}",
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert "own choice (Auto-Comp App. A.8)" in res.output
    tok = AutoTokenizer.from_pretrained(tiny_lm)
    model = AutoModelForCausalLM.from_pretrained(tiny_lm).eval()
    picks = []
    for i, c in enumerate(caps):  # the model's own choice, by hand
        order = shuffled_order(len(c), i, seed=0)
        lp = label_logprobs(tok, model, mc_prompt(c, order),
                            [f" {int(order[j]) + 1}" for j in range(len(c))], "cpu")
        picks.append(lp[0] > lp[1:].max())
    got = json.loads(out.read_text())["scorers"][f"mc:{tiny_lm}"]
    assert got["overall"]["accuracy"] == pytest.approx(np.mean(picks))
    assert got["overall"]["n"] == len(caps)
    res = CliRunner().invoke(cli, ["audit", "blind", str(path), "--scorer", f"mc:{tiny_lm}",
                                   "--mc-reading", "crossfit", "--folds", "2"])
    assert res.exit_code == 0, res.output
    assert "cross-fitted sign" in res.output
