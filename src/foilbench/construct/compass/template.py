"""Template answers for the ``compass`` pipeline: the deterministic COMPASS realiser.

The text backend is asked to word a caption spec; the template answers with
:class:`foilbench.construct.compass.realise.TemplateRealiser`, the wording ``foilbench compass``
uses offline, so a template run reproduces the existing COMPASS construction exactly.
"""

from __future__ import annotations

import json


def realise(task: dict, request) -> str:
    from foilbench.construct.compass.pipeline import spec_from_dict
    from foilbench.construct.compass.realise import TemplateRealiser

    return json.dumps({"caption": TemplateRealiser().composed(spec_from_dict(task["spec"]))})
