"""Public, stable API for Auto-Comp concepts and their negative captions.

Users script benchmark construction against these names; the logic lives in
:mod:`foilbench.construct.autocomp.negatives` and this facade only re-exports it.

>>> from foilbench.negatives import Concept, caption, swap_negatives, confusion_negatives
>>> c = Concept("color", ["cube", "sphere"], ["red", "blue"])
>>> caption(c)
'a red cube and a blue sphere'
>>> swap_negatives(c)
['a blue cube and a red sphere']
>>> len(confusion_negatives(c))
15
>>> r = Concept("position", ["cube", "sphere"], ["left of"])
>>> caption(r), swap_negatives(r)
('a cube left of a sphere', ['a sphere left of a cube'])

Some negatives are true of the concept (same meaning, another order;
:mod:`foilbench.construct.autocomp.truth`):

>>> true_negatives(c)
['a blue sphere and a red cube']

Auto-Comp §4's relation words are accepted and read by meaning ("under" is "below"):

>>> canonical_relation("to the left of"), canonical_relation("larger than")
('left of', 'bigger than')

Captions as the suite words them per condition (:mod:`foilbench.construct.autocomp.captions`):

>>> apply_frame(MINIMAL_FRAME, caption(c))
'a red cube and a blue sphere on a white background'
"""

from foilbench.construct.autocomp.captions import (
    MINIMAL_FRAME,
    AutoCompRealiser,
    LLMRealiser,
    SceneContext,
    TemplateRealiser,
    apply_frame,
    unframe,
)
from foilbench.construct.autocomp.negatives import (
    MAX_OBJECTS,
    MIN_OBJECTS,
    TASKS,
    Concept,
    ConceptError,
    NegativeReport,
    TaskSpec,
    caption,
    confusion_negatives,
    expected_counts,
    negatives_with_report,
    swap_negatives,
)
from foilbench.construct.autocomp.truth import (
    equivalent_indices,
    negative_arrangements,
    same_meaning,
    true_negatives,
)
from foilbench.construct.autocomp.vocab import (
    PAPER_RELATIONS,
    PAPER_SIZE_RELATIONS,
    canonical_relation,
)

__all__ = [
    "PAPER_RELATIONS",
    "PAPER_SIZE_RELATIONS",
    "canonical_relation",
    "MAX_OBJECTS",
    "MINIMAL_FRAME",
    "AutoCompRealiser",
    "LLMRealiser",
    "SceneContext",
    "TemplateRealiser",
    "apply_frame",
    "equivalent_indices",
    "negative_arrangements",
    "same_meaning",
    "true_negatives",
    "unframe",
    "MIN_OBJECTS",
    "TASKS",
    "Concept",
    "ConceptError",
    "NegativeReport",
    "TaskSpec",
    "caption",
    "confusion_negatives",
    "expected_counts",
    "negatives_with_report",
    "swap_negatives",
]
