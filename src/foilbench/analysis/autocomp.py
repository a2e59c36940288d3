"""Auto-Comp analyses: the Swap-vs-Confusion gap, the Confusion error taxonomy, and
Minimal-vs-Contextual deltas on paired concepts.

Paired deltas: per model, each concept's mean outcome under condition A and under B (items of
one concept averaged), over the concepts that have both; delta = mean_c (B_c - A_c) with a
percentile bootstrap over concepts (each concept one resampled unit, i.e. clustered by
concept; ``foilbench.stats.paired_delta_ci``).

* Swap-vs-Confusion gap = R@1 on Swap items - R@1 on Confusion items (same concepts).
* Minimal-vs-Contextual delta = R@1 contextual - R@1 minimal (same concepts).

Confusion taxonomy of a wrong answer (the highest-scoring negative, first on equal scores).
Every Confusion negative is an arrangement (objects o'_1..o'_N, values v'_1..v'_k) of the
concept's own words; it is recovered by rendering all arrangements with
``foilbench.negatives.caption`` and matching the text. Its bindings are the (object, value)
pairs (attribute tasks) or (object, relation, next object) triples (relational tasks).
Compared with the positive, as multisets:

* ``paraphrase``: every caption that means what the positive means
  (:func:`foilbench.negatives.same_meaning`): the same bindings in another phrase order ("a
  blue sphere and a red cube" for "a red cube and a blue sphere") or an equivalent relational
  chain, converse relations normalised ("a sphere bigger than a cube, and the cube smaller than
  a pyramid" for "a pyramid bigger than a cube, and the cube smaller than a sphere"); true of
  the image, so not an error of binding;
* ``swap``: the same objects and the same values, bound differently;
* ``shared_objects``: the same objects, other values (a value repeated: "a red cube and a red
  sphere");
* ``shared_attributes``: the same values (attributes or relations), other objects ("a red
  cube and a blue cube");
* ``other``: objects and values both differ; ``unmatched``: the text is no arrangement of
  the concept's words.

Captions worded with a frame (Minimal "... on a white background", Contextual rewrites; the
item's ``caption_frame``) are matched on the template text inside the frame.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import pandas as pd

from foilbench.analysis.frame import choice_scores, require
from foilbench.negatives import Concept, caption, same_meaning, unframe
from foilbench.stats import paired_delta_ci

TAXONOMY = ("paraphrase", "swap", "shared_objects", "shared_attributes", "other", "unmatched")


def paired_condition_delta(df: pd.DataFrame, metric: str, column: str, a: str, b: str,
                           pair_on: str = "concept_id", n_boot: int = 10_000,
                           seed: int = 42) -> pd.DataFrame:
    """Per model: concepts paired, mean ``metric`` under ``column == a`` and ``== b``,
    delta = b - a with its concept-bootstrap interval (see the module docstring)."""
    require(df, ["model", metric, column, pair_on], f"{b}-vs-{a} delta")
    sub = df[df[column].isin([a, b])]
    rows = []
    for model, msub in sub.groupby("model", sort=True):
        wide = msub.groupby([pair_on, column])[metric].mean().unstack(column)
        if a not in wide or b not in wide:
            continue
        wide = wide.dropna(subset=[a, b])
        if wide.empty:
            continue
        stat = paired_delta_ci(wide[b].to_numpy(), wide[a].to_numpy(), n_boot=n_boot,
                               seed=seed)
        rows.append({"model": model, "n_concepts": len(wide), a: float(wide[a].mean()),
                     b: float(wide[b].mean()), "delta": stat["delta"],
                     "ci_low": stat["ci_low"], "ci_high": stat["ci_high"],
                     "p_value": stat["p_value"]})
    return pd.DataFrame(rows)


def swap_confusion_gap(df: pd.DataFrame, metric: str = "r1", column: str = "negative_set",
                       swap: str = "swap", confusion: str = "confusion",
                       **kw) -> pd.DataFrame:
    """Swap minus Confusion accuracy on the same concepts (``delta`` column)."""
    return paired_condition_delta(df, metric, column, confusion, swap, **kw)


def minimal_contextual_delta(df: pd.DataFrame, metric: str = "r1", column: str = "condition",
                             **kw) -> pd.DataFrame:
    """Contextual minus Minimal accuracy on the same concepts (``delta`` column)."""
    return paired_condition_delta(df, metric, column, "minimal", "contextual", **kw)


def bindings(concept: Concept) -> Counter:
    """Multiset of (object, value) pairs, or (object, relation, next object) triples."""
    o, v = concept.objects, concept.values
    if concept.spec.binds == "attribute":
        return Counter(zip(o, v, strict=True))
    return Counter((o[i], v[i], o[i + 1]) for i in range(len(v)))


@lru_cache(maxsize=4096)
def _arrangements(concept: Concept) -> dict[str, Concept]:
    """Every arrangement of the concept's words, keyed by its rendered text (first wins)."""
    out: dict[str, Concept] = {}
    for objs in itertools.product(concept.objects, repeat=len(concept.objects)):
        for vals in itertools.product(concept.values, repeat=len(concept.values)):
            arranged = Concept(concept.task, objs, vals)
            out.setdefault(caption(arranged), arranged)
    return out


def classify_confusion(concept: Concept, chosen: str) -> str:
    """The taxonomy class of a chosen wrong caption (see the module docstring)."""
    if chosen == caption(concept):
        raise ValueError(f"{chosen!r} is the concept's positive caption, not an error")
    other = _arrangements(concept).get(chosen)
    if other is None:
        return "unmatched"
    if same_meaning(concept.task, (concept.objects, concept.values),
                    (other.objects, other.values)):
        return "paraphrase"
    same_objects = Counter(other.objects) == Counter(concept.objects)
    same_values = Counter(other.values) == Counter(concept.values)
    if same_objects and same_values:
        return "swap"
    if same_objects:
        return "shared_objects"
    return "shared_attributes" if same_values else "other"


def concepts_from_frame(df: pd.DataFrame) -> list[Concept]:
    """Concepts from the Auto-Comp builder's columns ``task``, ``objects``, ``values``."""
    require(df, ["task", "objects", "values"], "Confusion taxonomy")
    return [Concept(t, tuple(o), tuple(v))
            for t, o, v in zip(df["task"], df["objects"], df["values"], strict=True)]


def chosen_negatives(df: pd.DataFrame) -> list[str | None]:
    """Per row, the highest-scoring negative caption if it ties or beats the positive (a
    failure under strict >), else None."""
    require(df, ["captions", "scores"], "chosen negatives")
    s = choice_scores(df)
    neg = s[:, 1:]  # ragged K is padded with -inf, which never wins
    best = neg.argmax(axis=1)  # first on equal scores
    wrong = neg.max(axis=1) >= s[:, 0]
    return [list(caps)[1 + j] if w else None
            for caps, j, w in zip(df["captions"], best, wrong, strict=True)]


def confusion_taxonomy(df: pd.DataFrame, concepts: Sequence[Concept] | None = None
                       ) -> pd.DataFrame:
    """Per model: items n, wrong items n_wrong, and the count and share (of n_wrong; NaN when
    nothing was wrong) of each taxonomy class."""
    concepts = concepts_from_frame(df) if concepts is None else list(concepts)
    chosen = chosen_negatives(df)
    if "caption_frame" in df.columns:
        chosen = [c if c is None else unframe(c, f)
                  for c, f in zip(chosen, df["caption_frame"], strict=True)]
    labels = [None if c is None else classify_confusion(k, c)
              for k, c in zip(concepts, chosen, strict=True)]
    frame = pd.DataFrame({"model": df["model"].to_numpy(), "label": labels})
    rows = []
    for model, sub in frame.groupby("model", sort=True):
        counts = sub["label"].value_counts()  # None (a right answer) is not counted
        n_wrong = int(counts.sum())
        row = {"model": model, "n": len(sub), "n_wrong": n_wrong}
        for name in TAXONOMY:
            row[name] = int(counts.get(name, 0))
            row[f"{name}_share"] = row[name] / n_wrong if n_wrong else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
