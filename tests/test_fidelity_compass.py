"""COMPASS as the paper states it: Table 3 marks and units, exactly K = 4 skill negatives,
Table 2 aggregation across complexities, App. B perplexity tables per level x negative type.
Each test quotes the passage it follows; expectations are computed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from foilbench.analysis.compass_gap import caption_outcomes, gap_table, table2
from foilbench.analysis.compass_skill_load import skill_load, stars, table3, table3_note
from foilbench.audit.perplexity import compass_perplexity_tables
from foilbench.construct.compass.captions import compass_rows, make_caption
from foilbench.construct.compass.negatives import PrimitivePools
from foilbench.construct.compass.realise import TemplateRealiser
from foilbench.construct.compass.sampling import CaptionSpec
from foilbench.construct.compass.scene_graph import scene_graph_from_dict


def test_table3_marks_units_and_se_type():
    """COMPASS Table 3: "Values represent change in R@1 (percentage points) per unit increase
    in primitive count (Eq. 4) ... * and ** denote statistical significance at p < 0.005 and
    p < 0.001, respectively." """
    assert [stars(p) for p in (0.0009, 0.001, 0.0049, 0.005, 0.01)] == ["**", "*", "*", "",
                                                                          ""]
    long = pd.DataFrame({
        "level": "L3-OAR", "skill": "O", "term": ["b_O", "b_A", "b_R", "a"],
        "estimate": [-0.025, 0.0121, 0.0232, 0.9], "se": [0.004, 0.003, 0.02, 0.01],
        "p": [0.0004, 0.004, 0.3, 0.0], "se_type": "hc3",
        "se_classical": [0.002, 0.002, 0.01, 0.01], "p_classical": [0.0001, 0.0001, 0.02, 0.0],
        "se_hc3": [0.004, 0.003, 0.02, 0.01], "p_hc3": [0.0004, 0.004, 0.3, 0.0],
        "n": 100, "r2": 0.1})
    row = table3(long).iloc[0]
    # -0.025 R@1 per object = -2.50 pp; se 0.004 = 0.40 pp; p = 0.0004 < 0.001 -> **
    assert row["b_O"] == "-2.50** (0.40)"
    assert row["b_A"] == "+1.21* (0.30)"  # p = 0.004 < 0.005 -> *
    assert row["b_R"] == "+2.32 (2.00)"  # p = 0.3: no mark
    assert row["se_type"] == "hc3"
    classical = table3(long, se_type="classical").iloc[0]
    assert classical["b_R"] == "+2.32 (1.00)" and classical["se_type"] == "classical"
    note = table3_note("hc3")
    assert "percentage points" in note and "p < 0.005" in note and "HC3" in note


def test_skill_load_keeps_only_k4_items():
    """COMPASS §6.1: "We generate K = 4 hard negatives per caption"; older benchmarks with
    fewer are left out of Eq. 4 and counted."""
    rng = np.random.default_rng(0)
    rows = []
    for k in range(30):
        n_o = int(rng.integers(1, 5))
        rows.append({"role": "skill", "level": "L1", "skill": "O", "n_o": n_o, "n_a": 0,
                     "n_r": 0, "r1": float(rng.random() < 0.8 - 0.1 * n_o),
                     "captions": ["c"] + ["n"] * (4 if k < 27 else 2)})
    out = skill_load(pd.DataFrame(rows))
    assert out.attrs["dropped_k"] == 3
    assert set(out["n"]) == {27}


def _sofa_graph():
    return scene_graph_from_dict({
        "image_id": 7,
        "objects": [{"object_id": 1, "names": ["sofa"], "attributes": ["brown"]},
                    {"object_id": 2, "names": ["room"]}],
        "relationships": [{"subject_id": 1, "predicate": "in", "object_id": 2}]})


# open-world pools: 4 object names and 4 colours absent from the graph; only 2 predicates
POOLS = PrimitivePools(("sofa", "room", "dog", "cat", "chair", "table"),
                       {"brown": "c", "red": "c", "green": "c", "blue": "c", "white": "c"},
                       {"in": "in", "on": "on", "under": "under"})


def test_exactly_four_skill_negatives_or_dropped_and_counted():
    """COMPASS §6.1: "We generate K = 4 hard negatives per caption ... we enforce that no two
    negatives for the same caption are identical". The relation "in" has only two absent
    replacements (on, under): two relation negatives exist, so the caption gets no relation
    skill item (not one with K = 2); objects (dog, cat, chair, table) reach four."""
    g = _sofa_graph()
    spec = CaptionSpec("7", "L2-OR", ((1, "sofa"), (2, "room")), (), ((1, "in", 2),))
    cap = make_caption(g, spec, POOLS, np.random.default_rng(0), TemplateRealiser(), "c0")
    assert cap is not None
    assert set(cap.skill_negatives) == {"O"} and len(cap.skill_negatives["O"]) == 4
    assert cap.skill_dropped == {"R": 2}
    stats: dict = {}
    rows = compass_rows([(g, "img.png")], POOLS, seed=0, stats=stats)
    skill_rows = [r for r in rows if r["role"] == "skill"]
    assert all(len(r["captions"]) == 5 for r in skill_rows)  # positive + K = 4
    assert {r["skill"] for r in skill_rows} == {"O", "A"}
    # one caption per level: L1, L2-OA, L2-OR, L3-OAR; R dropped at L2-OR and L3-OAR
    assert stats["skill_items_dropped_fewer_than_k"] == {"O": 0, "A": 0, "R": 2}
    assert stats["skill_items_kept"] == {"O": 4, "A": 2, "R": 0}
    assert compass_rows([(g, "img.png")], POOLS, seed=0) == rows  # deterministic


def _captions(cid, level, n, composed, decomposed):
    base = {"run_id": "r", "caption_id": cid, "level": level, "n_o": n, "n_a": 0, "n_r": 0,
            "n_primitives": n}
    return ([{**base, "role": "composed", "r1": composed}]
            + [{**base, "role": "decomposed", "r1": d} for d in decomposed])


def test_integration_gap_table2_across_complexities():
    """COMPASS Table 2: "We report the mean +- standard deviation of the difference between
    decomposed and composed accuracy (Delta) aggregated across all complexities." """
    items = pd.DataFrame(
        _captions("a", "L1", 2, 1.0, [1.0, 1.0]) + _captions("b", "L1", 2, 0.0, [1.0, 1.0])
        + _captions("c", "L1", 3, 1.0, [1.0] * 3) + _captions("d", "L1", 3, 1.0, [1.0] * 3)
        + _captions("e", "L1", 3, 1.0, [1.0, 0.0, 1.0]))
    gap = gap_table(caption_outcomes(items))
    # Delta_2 = 1 - 1/2 = 0.5; Delta_3 = 2/3 - 1 = -1/3
    row = gap[gap.N == "all"].iloc[0]
    assert row["gap"] == pytest.approx((0.5 - 1 / 3) / 2)  # 1/12, each N once
    assert row["gap_std"] == pytest.approx((0.5 + 1 / 3) / np.sqrt(2))  # ddof = 1 over N
    assert row["n_complexities"] == 2 and row["spread_over"] == "complexities"
    pooled = gap[gap.N == "pooled"].iloc[0]  # foilbench's: captions pooled
    assert pooled["gap"] == pytest.approx((0 + 1 + 0 + 0 - 1) / 5)
    assert table2(gap)["delta_pp"].item() == "8.33 ± 58.93"


def test_perplexity_tables_per_level_and_negative_type():
    """COMPASS App. B.4 Table 4 (rows "L3 (OAR) | Object", ... "evaluated on the hardest
    negative subset"), Table 5 ("effect sizes for composed captions across structural
    levels") and B.5: "decomposed perplexity results are therefore not informative for
    benchmark validity" (excluded)."""
    nan = np.nan
    items = pd.DataFrame({
        "role": ["skill", "skill", "skill", "skill", "composed", "composed"],
        "level": "L2-OA", "skill": ["O", "O", "A", "A", "", ""]})
    ppl = np.array([
        [10, 12, 30], [20, 25, 40],  # O: hardest 12, 25
        [10, 9, 50], [20, 21, 60],  # A: hardest 9, 21
        [10, 30, nan], [20, 19, nan]])  # composed: hardest 30, 19
    out = compass_perplexity_tables(ppl, items)
    rows = {r["negative_type"]: r for r in out["skill"]}
    # O: x = [10, 20], y = [12, 25]: x > y only (20, 12): U = 1, r = 1 - 2/4 = 0.5
    assert rows["Object"]["rank_biserial"] == pytest.approx(0.5)
    # A: y = [9, 21]: (10, 9), (20, 9) -> U = 2, r = 0
    assert rows["Attribute"]["rank_biserial"] == pytest.approx(0.0)
    assert rows["Attribute"]["effect"] == "negligible"
    (comp,) = out["composed"]
    # y = [30, 19]: (20, 19) -> U = 1, r = 0.5
    assert comp["level"] == "L2-OA" and comp["rank_biserial"] == pytest.approx(0.5)
    assert out["decomposed_excluded"] == 0
    assert "overall" not in out  # no pooled number, as the paper


def test_perplexity_benchmark_never_scores_decomposed_items(tmp_path, monkeypatch):
    """End to end on a built COMPASS-style set with a tiny local LM: the result has the
    Table-4/5 layout and decomposed captions are not sent to the LM."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    import foilbench.audit.neural as neural
    from foilbench.audit.perplexity import perplexity_audit_benchmark
    from foilbench.construct.compass.build import build_compass_benchmark

    torch.manual_seed(0)
    vocab = ["<pad>", "<bos>", "<unk>", "a", "there", "is", "the"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", pad_token="<pad>",
                            unk_token="<unk>").save_pretrained(tmp_path / "lm")
    GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_positions=160, n_embd=16, n_layer=1,
                               n_head=2, bos_token_id=1, eos_token_id=1,
                               pad_token_id=0)).save_pretrained(tmp_path / "lm")
    bench = build_compass_benchmark(tmp_path / "c", seed=0, n_scenes=3, size=32)
    seen: list[str] = []
    real = neural.causal_lm_logprobs
    monkeypatch.setattr(neural, "causal_lm_logprobs",
                        lambda texts, *a, **k: seen.extend(texts) or real(texts, *a, **k))
    out = perplexity_audit_benchmark(bench, tmp_path / "lm", device="cpu")["compass"]
    items = bench.items
    decomposed = items[items.role == "decomposed"]
    assert out["decomposed_excluded"] == len(decomposed) > 0
    d_only = {c for caps in decomposed["captions"] for c in caps} - {
        c for caps in items[items.role != "decomposed"]["captions"] for c in caps}
    assert d_only and not d_only & set(seen)
    levels = set(items[items.role == "composed"]["level"])
    assert {r["level"] for r in out["composed"]} == levels
    assert {r["negative_type"] for r in out["skill"]} <= {"Object", "Attribute", "Relation"}


def test_causal_lm_refuses_a_text_longer_than_its_context(tmp_path):
    """GPT-2 indexes past its position table on a long text (an IndexError traceback): the
    audit names the text and the limit instead of scoring a truncated caption."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    from foilbench.audit.neural import causal_lm_logprobs
    from foilbench.errors import ModelError

    vocab = ["<pad>", "<bos>", "<unk>", "a", "cube"]
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", pad_token="<pad>",
                            unk_token="<unk>").save_pretrained(tmp_path)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_positions=8, n_embd=8, n_layer=1,
                               n_head=2, bos_token_id=1, eos_token_id=1,
                               pad_token_id=0)).save_pretrained(tmp_path)
    assert causal_lm_logprobs(["a cube"] * 2, tmp_path, device="cpu").shape == (2,)
    with pytest.raises(ModelError, match=r"text 1 is 9 tokens long, over the 8 positions"):
        causal_lm_logprobs(["a cube", "a cube " * 4], tmp_path, device="cpu")
