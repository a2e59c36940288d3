"""The web page of Auto-Comp's solvability study (:mod:`foilbench.review.solvability`).

Built on :func:`foilbench.review.study_app.create_study_app` (its protections are listed
there). An item shows its image and its options (text as JSON, inserted with ``textContent``);
the page never says which option is true nor the running accuracy (App. A.10: evaluators
"blinded to the model generation process"). Keys: 1-9 pick one of the first nine options (a
click picks any), j/k next/previous.
"""

from __future__ import annotations

from urllib.parse import quote

from starlette.applications import Starlette

from foilbench.review.solvability import SolvabilityStudy
from foilbench.review.study_app import create_study_app
from foilbench.review.web import image_files


def create_solvability_app(study: SolvabilityStudy, host: str = "127.0.0.1") -> Starlette:
    files = image_files(study.bench.root, [u.image for u in study.units])

    def state() -> dict:
        picks = study.current()
        return {"units": [{"key": u.key, "image": f"/file?path={quote(u.image)}",
                           "options": list(u.options), "pick": picks.get(u.key)}
                          for u in study.units],
                "progress": study.progress()}

    def decide(body: dict) -> dict:
        study.decide(str(body.get("key", "")), body.get("choice"))
        return {"progress": study.progress()}

    return create_study_app(page="solvability",
                            title=f"pick the true caption · {study.bench.name}",
                            csrf_secret=study.log.csrf_secret(), files=files, state=state,
                            decide=decide, host=host)
