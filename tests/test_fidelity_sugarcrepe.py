"""SugarCrepe App. D.3 refinement on the paper's 100 x 100 grid, and any local Hugging Face
model as a blind scorer (the paper's grammar model and Vera, when the user has them), tested
on tiny models built from configs. Expectations are computed by hand."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from foilbench.audit.refinement import paper_grid_cells, refine
from foilbench.errors import ModelError

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "red", "blue", "cube", "ball",
         "on", "the", "table", "dog", "runs"]


def test_default_grid_is_the_papers_100_by_100():
    """App. D.3: "we split the 2D space of the joint range of g(1) and g(2) into 100 x 100
    equal grids, and for each pair of symmetric grids, e.g., {(g(1), g(2)) | g(1) in (0.02,
    0.04] ...}, we preserve the same number of data for both grids"."""
    from foilbench.cli.audit_cmd import refine as refine_cmd
    from foilbench.construct.sugarcrepe.pipeline import SugarcrepeConfig

    assert inspect.signature(refine).parameters["k"].default == 100
    assert next(p for p in refine_cmd.params if p.name == "k").default == 100
    from foilbench.construct.sugarcrepe.refine import GRID_LADDER

    # the pipeline's default is auto: the paper's 100 first, coarser only where 100 x 100
    # cannot keep half of a type (small caption sets, issue 29)
    assert SugarcrepeConfig().grid is None and GRID_LADDER[0] == 100
    assert SugarcrepeConfig().zero_bin is False
    # (0.02, 0.04] is bin 51 of 100 over [-1, 1]; its point reflection (-0.04, -0.02] is 48;
    # a blind tie (0) lies in (-0.02, 0] = bin 49, the mirror of (0, 0.02] = bin 50
    assert paper_grid_cells(np.array([0.03, 0.04, -0.03, -0.02, 0.0, 0.01]), 100).tolist() == [
        51, 51, 48, 48, 49, 50]


def test_symmetric_cells_are_balanced_by_hand():
    """Three items in cell (51, 51), one in its reflection (48, 48): one of the three is kept,
    so each scorer prefers the positive on exactly half the kept items (E = 0.5). Two ties
    (0, 0) in cell (49, 49) face one item in (50, 50): one tie is kept."""
    a = np.array([0.03, 0.035, 0.025, -0.03, 0.0, 0.0, 0.01])
    b = np.array([0.03, 0.035, 0.025, -0.03, 0.0, 0.0, 0.01])
    res = refine(a, b, seed=0)
    kept = set(res.kept.tolist())
    assert len(kept & {0, 1, 2}) == 1 and 3 in kept
    assert len(kept & {4, 5}) == 1 and 6 in kept
    assert res.after["a"] == 0.5 and res.after["b"] == 0.5
    assert res.grid_before.shape == (100, 100) and res.grid_before[51, 51] == 3


def tiny_classifier_dir(folder, num_labels=2):
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    torch.manual_seed(1)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    cfg = BertConfig(vocab_size=len(WORDS), hidden_size=16, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=32,
                     num_labels=num_labels)
    BertForSequenceClassification(cfg).save_pretrained(folder)
    return folder


def hand_probability(folder, text, label=1):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = model(**tok([text], return_tensors="pt")).logits[0].double()
    if logits.numel() == 1:
        return float(torch.sigmoid(logits[0]))
    return float(torch.softmax(logits, -1)[label])


def test_hf_classifier_scorer_gaps_are_probability_differences(tmp_path):
    """SugarCrepe §3: "a grammar-check model that assigns high scores to grammatically correct
    texts"; App. D.3: g = M(p) - M(n) with "the range of both g(1) and g(2) is [-1, 1]". A
    sequence classifier's label-1 probability is the score; its gaps are not rescaled."""
    from foilbench.audit.blind import oriented_gaps
    from foilbench.audit.hf_scorer import classifier_scores

    folder = tiny_classifier_dir(tmp_path / "grammar")
    texts = ["a red cube", "cube red a", "the dog runs", "runs dog the", "a blue ball",
             "ball blue a", "the red table", "table the red"]
    probs = [hand_probability(folder, t) for t in texts]
    np.testing.assert_allclose(classifier_scores(texts, folder), probs, atol=1e-6)
    pairs = []
    for k in range(0, len(texts), 2):  # positive = the text the model scores higher
        x, y = texts[k:k + 2]
        px, py = probs[k], probs[k + 1]
        pairs.append(([x, y], px - py) if px > py else ([y, x], py - px))
    caps = [c for c, _ in pairs]
    gaps = oriented_gaps(caps, np.full(4, "t"), np.arange(4), f"hf:{folder}", folds=2)
    np.testing.assert_allclose(gaps, [g for _, g in pairs], atol=1e-6)  # raw, in [-1, 1]


def test_hf_scorer_labels_and_one_label_head(tmp_path):
    from foilbench.audit.hf_scorer import classifier_scores, parse_spec

    assert parse_spec("/m?label=0") == (tmp_path.__class__("/m"), "0")
    three = tiny_classifier_dir(tmp_path / "three", num_labels=3)
    with pytest.raises(ModelError, match=r"3 labels; say which one.*label=N"):
        classifier_scores(["a red cube"], three)
    got = classifier_scores(["a red cube"], three, label="2")
    assert got[0] == pytest.approx(hand_probability(three, "a red cube", 2), abs=1e-6)
    got = classifier_scores(["a red cube"], three, label="LABEL_2")  # a name of id2label
    assert got[0] == pytest.approx(hand_probability(three, "a red cube", 2), abs=1e-6)
    one = tiny_classifier_dir(tmp_path / "one", num_labels=1)  # e.g. a plausibility head
    assert classifier_scores(["a red cube"], one)[0] == pytest.approx(
        hand_probability(one, "a red cube"), abs=1e-6)


def test_hf_causal_lm_scorer_is_mean_token_logprob(tmp_path):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from foilbench.audit.neural import causal_lm_logprobs
    from foilbench.audit.scorers import resolve_scorer
    from foilbench.audit.text import pad_captions

    torch.manual_seed(0)
    vocab = ["<pad>", "<bos>", "<unk>", *WORDS[5:]]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", pad_token="<pad>",
                            unk_token="<unk>").save_pretrained(tmp_path / "lm")
    GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_positions=32, n_embd=16, n_layer=1,
                               n_head=2, bos_token_id=1, eos_token_id=1,
                               pad_token_id=0)).save_pretrained(tmp_path / "lm")
    texts, index = pad_captions([["a red cube", "cube red a"]])
    fn = resolve_scorer(f"hf:{tmp_path / 'lm'}")(texts, index)
    assert fn.bounded is False
    np.testing.assert_allclose(fn(np.ones(1, bool))[0],
                               causal_lm_logprobs(texts, tmp_path / "lm", device="cpu"),
                               atol=1e-6)


def test_hf_scorer_errors_are_clear(tmp_path):
    import json

    from foilbench.audit.hf_scorer import architecture

    with pytest.raises(ModelError, match="no config.json"):
        architecture(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    with pytest.raises(ModelError, match="neither a sequence classifier nor a causal LM"):
        architecture(tmp_path)
