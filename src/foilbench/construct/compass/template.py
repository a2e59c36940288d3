"""Template answers for the ``compass`` pipeline: the deterministic COMPASS realiser.

The text backend is asked to word a caption spec (the template answers with
:class:`foilbench.construct.compass.realise.TemplateRealiser`, the wording ``foilbench compass``
uses offline) and to propose same-category replacements (the template answers from the
shipped category table), so a template run reproduces the offline COMPASS construction.
"""

from __future__ import annotations

import json


def realise(task: dict, request) -> str:
    from foilbench.construct.compass.pipeline import spec_from_dict
    from foilbench.construct.compass.realise import TemplateRealiser

    return json.dumps({"caption": TemplateRealiser().composed(spec_from_dict(task["spec"]))})


def propose(task: dict, request) -> str:
    """Same-category candidates from the shipped table (``null``: no known category)."""
    from foilbench.construct.compass.categories import CategoryTable

    got = CategoryTable.shipped().candidates(task["primitive"], task["word"],
                                             task.get("synset"))
    return json.dumps({"candidates": got})
