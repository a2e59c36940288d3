"""Neural blind scorers: a local causal LM (tiny, built from a config) and MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.audit.blind import blind_audit_captions
from foilbench.audit.neural import causal_lm_logprobs, minilm_scorer
from foilbench.audit.text import pad_captions

VOCAB = ["<pad>", "<bos>", "<unk>", "a", "red", "blue", "cube", "ball", "on", "the", "table"]


@pytest.fixture(scope="module")
def tiny_lm_dir(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny_lm")
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", pad_token="<pad>",
                                   unk_token="<unk>")
    fast.save_pretrained(path)
    cfg = GPT2Config(vocab_size=len(VOCAB), n_positions=32, n_embd=16, n_layer=1, n_head=2,
                     bos_token_id=1, eos_token_id=1, pad_token_id=0)
    GPT2LMHeadModel(cfg).save_pretrained(path)
    return path


def manual_mean_logprob(path, text):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    ids = torch.tensor([[1] + tok(text, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=ids).logits[0, :-1], -1)
    return float(logp.gather(-1, ids[0, 1:, None]).mean())


def test_batched_logprobs_match_one_at_a_time(tiny_lm_dir):
    texts = ["a red cube", "a blue ball on the table", "cube"]
    got = causal_lm_logprobs(texts, tiny_lm_dir, device="cpu", batch_size=2)
    want = [manual_mean_logprob(tiny_lm_dir, t) for t in texts]
    assert got == pytest.approx(want, abs=1e-5)


def test_lm_scorer_runs_in_the_blind_audit(tiny_lm_dir):
    """Each pair is ordered so its positive is the text the LM scores higher (computed one
    text at a time, independently of the scorer): the cross-fitted sign is then +1 in every
    fold and every held-out item is right. A scorer that mixed up which text got which
    log-probability, or an audit that mis-oriented the sign, would miss some."""
    pairs = [("a red cube", "a cube red"), ("a blue ball", "ball a blue"),
             ("the red table", "table the red")]
    caps = []
    for x, y in pairs:
        lx, ly = manual_mean_logprob(tiny_lm_dir, x), manual_mean_logprob(tiny_lm_dir, y)
        assert abs(lx - ly) > 1e-4  # the random LM tells them apart (no tie)
        caps.append([x, y] if lx > ly else [y, x])
    caps = caps * 2
    name = f"lm:{tiny_lm_dir}"
    res = blind_audit_captions(caps, np.full(6, "t"), np.arange(6), [name], folds=3)
    stat = res["scorers"][name]["overall"]
    assert stat["n"] == 6 and stat["accuracy"] == 1.0
    assert res["flags"][f"ties:{name}"] == {"t": 0}
    # the same captions with positive and negative swapped: the sign is fitted as -1
    flipped = [[n, p] for p, n in caps]
    res = blind_audit_captions(flipped, np.full(6, "t"), np.arange(6), [name], folds=3)
    assert res["scorers"][name]["overall"]["accuracy"] == 1.0


def test_minilm_direction_uses_only_training_items():
    """Fake 2-D embeddings: positives at +x, negatives at -x for training items; the probe
    direction must come from the masked items only."""
    texts, index = pad_captions([["p1", "n1"], ["p2", "n2"]])
    emb = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    feats = minilm_scorer(texts, index, embeddings=emb)(np.array([True, False]))
    # direction = e(p1) - e(n1) = (2, 0): item 2 lies on the orthogonal axis -> a tie
    assert feats.tolist() == [[2.0, -2.0], [0.0, 0.0]]


@pytest.mark.slow
def test_minilm_finds_a_planted_negation_bias():
    rng = np.random.default_rng(0)
    things = ["dog", "cat", "car", "tree", "house", "boat", "bird", "horse", "chair", "lamp"]
    caps = []
    for _ in range(60):
        a, b = rng.choice(things, 2, replace=False)
        caps.append([f"a {a} next to a {b}", f"there is no {a} and not a single {b}"])
    res = blind_audit_captions(caps, np.full(60, "t"), np.arange(60), ["minilm"], folds=3)
    assert res["scorers"]["minilm"]["overall"]["accuracy"] > 0.9


def test_perplexity_cli_on_a_tiny_lm(tiny_lm_dir, tmp_path):
    import json

    import pandas as pd
    from click.testing import CliRunner

    from _core_helpers import write_folder
    from foilbench.cli.main import cli

    rows = [{"item_id": str(i), "image": f"{i}.jpg", "edit_type": "swap",
             "captions": ["a red cube on the table", "a cube red on the table",
                          "table the on cube red a"]} for i in range(6)]
    bench = write_folder(tmp_path / "b", "choice", pd.DataFrame(rows))
    out = tmp_path / "ppl.json"
    res = CliRunner().invoke(cli, ["audit", "perplexity", str(bench), "--lm", str(tiny_lm_dir),
                                   "--device", "cpu", "--json", str(out)])
    assert res.exit_code == 0, res.output
    overall = json.loads(out.read_text())["b"]["overall"]
    # identical items: every positive has one perplexity, every chosen negative another
    assert overall["n"] == 6 and abs(overall["rank_biserial"]) == 1.0
    assert overall["effect"] == "large"
