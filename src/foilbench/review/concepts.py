"""Auto-Comp's concordance study: people judge a sample of the images the validator judged.

Auto-Comp §6, Human Validation: "four graduate-level evaluators assessed 200 concepts balanced
across all configurations. (1) Concordance: our automated VLM judge achieved >94% agreement
with humans on every task family and complexity, supporting its use as a scalable proxy";
App. A.10: "We recruited four graduate-level evaluators who were blinded to the model
generation process. Each evaluator assessed a balanced subset of 200 concepts (resulting in
400 images across Minimal and Contextual settings)".

A unit is one image (a concept in one condition). The sample is drawn before the validator's
verdict: from every image the validator judged, passed or rejected
(:mod:`foilbench.review.concept_frame`), ``n`` concepts (200 by default) balanced across task
family x N (:mod:`foilbench.review.study_sample`), each with both its images when it has both
(400 images). The reviewer, blind to the verdict (the page shows no verdict and no running
agreement), sees the image and the concept and answers "match" (every object there, in its
number, with its attribute or relation), "mismatch", or "unsure". Then

    agreement = #(human verdict = validator verdict) / #decided

where match agrees with a pass and mismatch with a reject, over decided units (match or
mismatch; unsure counted apart), with a Wilson 95% interval, overall and per task x N x
condition (Table 11's breakdown), beside the confusion counts (validator pass/reject x human
match/mismatch/unsure) and the precision of passes (match / decided passes) and of rejects
(mismatch / decided rejects). The paper reports only agreement; it does not say whether its
sample held rejects or in what share: ours holds them at the share the validator produced.

Decisions live in ``concept_checks.sqlite`` in the review folder
(:class:`foilbench.review.study_log.StudyLog`); the sample (design, seed, size, every unit with
its verdict) is fixed there on first use, so a resumed review sees the same images and scores
against the same verdicts. A folder made before this design (its sample holds only keys of
images that passed, drawn from the benchmark's items) still resumes: every unit is a pass, the
report is the same agreement over them, which there is the precision of passes, and says so
(``design: "passes-only"``).
"""

from __future__ import annotations

from pathlib import Path

from foilbench.data.format import Benchmark
from foilbench.review.concept_frame import VALIDATOR, ConceptUnit, judged_units
from foilbench.review.study_log import LoggedStudy
from foilbench.review.study_sample import SAMPLE_SIZE, rate, sample_concepts
from foilbench.review.units import ReviewError

__all__ = ["ConceptChecks", "ConceptUnit", "agreement", "balanced_sample", "concept_units"]

DB_FILE = "concept_checks.sqlite"
VERDICTS = ("match", "mismatch", "unsure")
AGREES = {"pass": "match", "reject": "mismatch"}
DESIGN = "before-verdict"  # the sample is drawn from passes and rejects alike
LEGACY = "passes-only"  # review folders made before: validated images only
NEEDED = ("concept_id", "condition", "image", "task", "objects", "values", "n_objects")


def concept_units(bench: Benchmark) -> list[ConceptUnit]:
    """One unit per validated image (concept x condition) of the benchmark's items: the frame
    of a passes-only sample made before this design (module docstring)."""
    items = bench.items
    missing = [c for c in NEEDED if c not in items.columns]
    if missing:
        raise ReviewError(f"{bench.name}: not an Auto-Comp benchmark built by `foilbench "
                          f"construct autocomp` (items lack {', '.join(missing)})")
    out: dict[str, ConceptUnit] = {}
    for row in items.itertuples(index=False):
        key = f"{row.concept_id}/{row.condition}"
        if key not in out:
            out[key] = ConceptUnit(key, str(row.image), str(row.task), int(row.n_objects),
                                   str(row.condition), tuple(row.objects), tuple(row.values),
                                   str(row.captions[0]))
    return sorted(out.values(), key=lambda u: u.key)


def balanced_sample(units: list[ConceptUnit], n: int, seed: int) -> list[ConceptUnit]:
    """``n`` concepts round-robin over (task, N), each with all its units (module
    docstring), in sample order, Minimal before Contextual."""
    order = {"minimal": 0, "contextual": 1}
    return [u for us in sample_concepts(units, n, seed)
            for u in sorted(us, key=lambda u: (order.get(u.condition, 2), u.key))]


class ConceptChecks(LoggedStudy):
    """The sample and the decisions of one reviewer (module docstring)."""

    DB_FILE = DB_FILE

    def draw(self, n: int, seed: int) -> dict:
        frame, left_out = judged_units(self.bench.root)
        units = balanced_sample(frame, n, seed)
        return {"design": DESIGN, "seed": seed, "n": n, "benchmark": self.bench.name,
                "frame": {"images": len(frame), "left_out": left_out,
                          **{v: sum(u.validator == v for u in frame) for v in VALIDATOR}},
                "keys": [u.key for u in units], "units": [u.to_json() for u in units]}

    def units_of(self, meta: dict) -> list[ConceptUnit]:
        self.design = meta.get("design", LEGACY)
        if self.design == LEGACY:
            by_key = {u.key: u for u in concept_units(self.bench)}
            gone = [k for k in meta["keys"] if k not in by_key]
            if gone:
                raise ReviewError(f"{self.path}: the benchmark no longer has sampled image "
                                  f"{gone[0]!r}; use another --review-dir")
            self.frame: dict = {"images": None, "left_out": {}, "pass": len(by_key),
                                "reject": None}
            return [by_key[k] for k in meta["keys"]]
        self.frame = meta["frame"]
        return [ConceptUnit.from_json(d) for d in meta["units"]]

    def decide(self, key: str, verdict: str) -> None:
        if key not in self.unit_by_key:
            raise ReviewError(f"{key!r} is not an image of this sample")
        if verdict not in VERDICTS:
            raise ReviewError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        self.log.decide(key, verdict)

    def current(self) -> dict[str, str]:
        """The latest verdict per unit."""
        return self.log.current()

    def progress(self) -> dict:
        """What the blinded page may show: how many are decided, nothing about agreement."""
        got = self.current()
        done = sum(1 for u in self.units if u.key in got)
        return {"images": len(self.units), "decided": done, "pending": len(self.units) - done}

    def report(self) -> dict:
        """Agreement of the human verdicts with the validator (module docstring)."""
        rep = agreement(self.units, self.current())
        rep["design"], rep["frame"] = self.design, self.frame
        rep["sample"] = (
            "drawn before the validator's verdict: passes and rejects alike"
            if self.design == DESIGN else
            "made before foilbench sampled rejects: validated images only, so agreement here "
            "is the precision of passes; start a new --review-dir for the study of §6")
        return rep



def agreement(units: list[ConceptUnit], verdicts: dict[str, str]) -> dict:
    """Overall and per task x N x condition: agreement, confusion counts, the precision of
    passes and of rejects, each rate with its Wilson 95% interval (module docstring)."""

    def tally(us: list[ConceptUnit]) -> dict:
        confusion = {v: {h: 0 for h in (*VERDICTS, "pending")} for v in VALIDATOR}
        for u in us:
            confusion[u.validator][verdicts.get(u.key) or "pending"] += 1
        agree = confusion["pass"]["match"] + confusion["reject"]["mismatch"]
        decided = sum(confusion[v]["match"] + confusion[v]["mismatch"] for v in VALIDATOR)
        return {"images": len(us),
                **{h: sum(confusion[v][h] for v in VALIDATOR) for h in (*VERDICTS, "pending")},
                "confusion": confusion,
                "agreement": rate(agree, decided),
                "pass_precision": rate(confusion["pass"]["match"], confusion["pass"]["match"]
                                       + confusion["pass"]["mismatch"]),
                "reject_precision": rate(confusion["reject"]["mismatch"],
                                         confusion["reject"]["match"]
                                         + confusion["reject"]["mismatch"])}

    groups: dict[str, list[ConceptUnit]] = {}
    for u in units:
        groups.setdefault(u.group, []).append(u)
    return {"overall": tally(units),
            "by_group": {g: tally(us) for g, us in sorted(groups.items())},
            "validator": "the automatic checks of Auto-Comp §3 Stage 2 (objects and counts, "
                         "white background for Minimal, VQA); match agrees with a pass, "
                         "mismatch with a reject"}


STEM = "concept_checks"  # concept_checks_report.json, concept_checks_decisions.parquet


def concepts_report(bench_dir: str | Path, review_dir: str | Path | None = None,
                    n: int = SAMPLE_SIZE, seed: int = 0) -> dict:
    """The concordance report for a construction folder (the sample is fixed on first use)."""
    from foilbench.review.study_export import study_report

    return study_report(ConceptChecks, bench_dir, review_dir, n, seed)


def export_concepts(checks: ConceptChecks, out_dir: str | Path) -> dict:
    """Write ``concept_checks_report.json`` and ``concept_checks_decisions.parquet`` (every
    verdict in order beside the validator's) to a new or empty ``out_dir``; the report."""
    from foilbench.review.study_export import export_study

    def row(seq: int, u: ConceptUnit, verdict: str, at: str) -> dict:
        return {"seq": seq, "unit": u.key, "task": u.task, "n_objects": u.n_objects,
                "condition": u.condition, "validator": u.validator,
                "validator_reason": u.reason, "human": verdict,
                "agrees": None if verdict == "unsure" else verdict == AGREES[u.validator],
                "at": at}

    return export_study(checks, out_dir, STEM, row, ["seq", "unit", "task", "n_objects",
                                                     "condition", "validator",
                                                     "validator_reason", "human", "agrees",
                                                     "at"])
