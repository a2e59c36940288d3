"""The web page of Auto-Comp's concordance study (:mod:`foilbench.review.concepts`).

Built on :func:`foilbench.review.study_app.create_study_app` (its protections are listed
there). The page is blind to the validator: a unit carries the image, the concept and its
caption, never the verdict, and the page shows progress, not agreement (App. A.10: "evaluators
who were blinded to the model generation process"). Keys: m match, x mismatch, u unsure,
j/k next/previous.
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.applications import Starlette

from foilbench.review.concepts import ConceptChecks
from foilbench.review.study_app import create_study_app
from foilbench.review.web import image_files


def create_concepts_app(checks: ConceptChecks, host: str = "127.0.0.1") -> Starlette:
    files = image_files(checks.bench.root, [u.image for u in checks.units])

    def state() -> dict:
        verdicts = checks.current()
        return {"units": [{"key": u.key, "image": f"/file?path={quote(u.image)}",
                           "concept": u.concept_text(), "caption": u.caption,
                           "group": u.group, "verdict": verdicts.get(u.key)}
                          for u in checks.units],
                "progress": checks.progress()}

    def decide(body: dict) -> dict:
        checks.decide(str(body.get("key", "")), str(body.get("verdict", "")))
        return {"progress": checks.progress()}

    return create_study_app(page="concepts", title=f"concept check · {checks.bench.name}",
                            csrf_secret=checks.log.csrf_secret(), files=files, state=state,
                            decide=decide, host=host)
