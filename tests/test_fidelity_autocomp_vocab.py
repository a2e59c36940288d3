"""Auto-Comp as the paper states it (issue 25): §4's relation and size words accepted end to
end with converses and synonyms normalised, App. A.2's Contextual prompt as printed, App. A.6's
sampling and validator settings. Each test quotes its passage."""

from __future__ import annotations

import pytest

from foilbench.construct.autocomp.negatives import ConceptError
from foilbench.construct.autocomp.vocab import (
    PAPER_RELATIONS,
    PAPER_SIZE_RELATIONS,
    canonical_relation,
)
from foilbench.negatives import Concept, caption, equivalent_indices, true_negatives


def test_paper_relation_words_are_accepted_and_normalised():
    """Auto-Comp §4: "Spatial Relation Vocabulary. 4 fundamental binary spatial relations ...:
    above, under, to the left of, to the right of." and "Size-Relation Vocabulary ... (larger
    than, smaller than, bigger than)"."""
    for rel in PAPER_RELATIONS:
        assert caption(Concept("position", ["cup", "table"], [rel])) == f"a cup {rel} a table"
    for rel in PAPER_SIZE_RELATIONS:
        Concept("relative_size", ["lamp", "book"], [rel])
    assert [canonical_relation(r) for r in PAPER_RELATIONS] == ["above", "below", "left of",
                                                                 "right of"]
    assert canonical_relation("Larger  than") == "bigger than"
    with pytest.raises(ConceptError, match="unknown relation 'on top of' for task 'position'"):
        Concept("position", ["cup", "table"], ["on top of"])
    with pytest.raises(ConceptError, match="larger than"):  # the message lists §4's words
        Concept("relative_size", ["cup", "table"], ["taller than"])


def test_true_negatives_are_found_with_the_paper_words():
    """Auto-Comp §3 Swap: "permuting the N objects themselves (e.g., "a table on top of a chair"
    from "a chair on top of a table")": with converses, some permutations state the positive's
    facts. "a lamp larger than a book, and the book smaller than a cup" says {lamp > book,
    cup > book}; the object swap lamp <-> cup says the same, so it is a true negative, exactly
    as with the world's words."""
    paper = Concept("relative_size", ["lamp", "book", "cup"], ["larger than", "smaller than"])
    world = Concept("relative_size", ["lamp", "book", "cup"], ["bigger than", "smaller than"])
    assert true_negatives(paper, "swap") == [
        "a cup larger than a book, and the book smaller than a lamp"]
    assert equivalent_indices(paper, "swap") == equivalent_indices(world, "swap") != []
    # "under" is "above" reversed: in the Confusion set of "a cup under a table" no caption
    # is a paraphrase (N = 2 has one relation slot), but "larger than" and "bigger than" in one
    # concept are synonyms: swapping the two relation slots says the same thing.
    mixed = Concept("relative_size", ["lamp", "book", "cup"], ["larger than", "bigger than"])
    assert "a lamp bigger than a book, and the book larger than a cup" in true_negatives(mixed)


def test_paper_vocabulary_end_to_end_offline(tmp_path):
    """An offline ``construct autocomp --vocab paper`` build: concepts drawn from §4's words,
    world images drawn from the canonical words, VQA answers compared on canonical words,
    negatives and true negatives built (before issue 25 such concepts were refused)."""
    from foilbench.construct.autocomp.pipeline import AutocompConfig
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.engine.runner import run_pipeline

    config = AutocompConfig(tasks=("position", "relative_size"), ns=(2, 3), n_concepts=3,
                            vocab="paper", size=64)
    backends = {"text": resolve_backend("text", "template"),
                **{r: resolve_backend(r, "world") for r in ("image", "detector", "vqa")}}
    summary = run_pipeline("autocomp", config, backends, tmp_path / "ac", progress=False)
    items = summary.benchmark.items
    used = {v for vals in items["values"] for v in vals}
    assert used and used <= set(PAPER_RELATIONS) | set(PAPER_SIZE_RELATIONS)
    assert used - {"above", "smaller than", "bigger than"}  # §4-only words made it through
    assert set(items.condition) == {"minimal", "contextual"}
    for _, row in items.iterrows():
        assert all(v in row.captions[0] for v in row["values"])
    assert (items.n_true_negatives > 0).any()


def test_contextual_prompt_is_a2_as_printed_and_json_is_an_option():
    """Auto-Comp App. A.2, System Prompt: "You are an expert image caption writer. ... Generate
    ONLY the caption text without any preamble, explanations, or markdown formatting."; App.
    A.6: "temperature=0.7 ... max_new_tokens was set to 150"."""
    from foilbench.construct.autocomp.pipeline import (
        MAX_NEW_TOKENS,
        AutocompConfig,
        contextual_prompt_name,
    )
    from foilbench.construct.engine.prompts import load_prompt

    printed = ("You are an expert image caption writer. Your task is to generate a single, "
               "natural-sounding sentence accurately describing a scene with specific objects "
               "and their colors. You MUST include ALL specified objects and their colors. "
               "Generate ONLY the caption text without any preamble, explanations, or markdown "
               "formatting.")
    colour = Concept("color", ["cup", "lamp"], ["red", "blue"])
    rel = Concept("position", ["cup", "lamp"], ["under"])
    paper = AutocompConfig()
    assert paper.contextual_prompt == "paper"
    prompt = load_prompt(contextual_prompt_name(paper, colour))
    assert prompt.system == printed and prompt.temperature == 0.7
    assert "JSON" not in prompt.system + prompt.render(concept="x")
    relational = load_prompt(contextual_prompt_name(paper, rel)).system
    assert relational == printed.replace("colors", "relations")
    json_prompt = load_prompt(contextual_prompt_name(AutocompConfig(contextual_prompt="json"),
                                                     colour))
    assert json_prompt.name == "autocomp.contextual-json" and "JSON" in json_prompt.system
    assert MAX_NEW_TOKENS == 150


def test_validator_settings_of_a6():
    """Auto-Comp App. A.6: "We set the box_threshold=0.4 and text_threshold=0.3"; a detector
    with another text threshold is refused with the fix named."""
    from foilbench.construct.autocomp.pipeline import AutocompConfig, build
    from foilbench.construct.engine.stages import ConstructError

    config = AutocompConfig()
    assert (config.detector_threshold, config.text_threshold) == (0.4, 0.3)

    class Detector:
        spec = "hf-det:./gdino"
        text_threshold = 0.25

    class Ctx:
        def backend(self, role):
            return Detector()

    with pytest.raises(ConstructError, match="text_threshold=0.3' to the detector spec"):
        build(Ctx(), config)
