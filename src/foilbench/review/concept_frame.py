"""The sampling frame of Auto-Comp's concordance study: every image the validator judged.

Auto-Comp §6, Human Validation: "(1) Concordance: our automated VLM judge achieved >94%
agreement with humans on every task family and complexity, supporting its use as a scalable
proxy." Agreement with a judge needs the images it rejected as well as those it passed: a
sample of passes alone measures how often a pass is right (the precision of passes), not how
often the judge and the people agree.

A ``foilbench construct autocomp`` folder keeps both. Every rendered image is written to
``images/<concept>-<condition>.png`` before the checks run, and ``construction_log.jsonl``
records each image's path (the text-to-image event), the concept (the ``concepts`` event) and
the validator's verdict: a drop at one of the three checks of §3 Stage 2 (object presence and
count; the Minimal background check; the attribute/relation VQA check), with its reason, or a
pass of the last check. Nothing about the built benchmark changes: the frame is read from what
the construction already wrote.

Left out of the frame (counted in ``left_out``): an image whose check could not be made (a call
that failed after its retries, a check passed unchecked, a run stopped before it), since the
validator gave no verdict on it; and a concept not rendered at all (dropped at the caption
check).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from foilbench.review.units import ReviewError

LOG_FILE = "construction_log.jsonl"  # foilbench.construct.engine.log.LOG_FILE
CHECKS = ("object presence and count [", "background check [", "attribute/relation check [")
LAST_CHECK = "attribute/relation check ["
NO_VERDICT = "call failed"
VALIDATOR = ("pass", "reject")


@dataclass(frozen=True)
class ConceptUnit:
    """One image (a concept in one condition) with the validator's verdict on it."""

    key: str  # "<concept_id>/<condition>"
    image: str
    task: str
    n_objects: int
    condition: str
    objects: tuple[str, ...]
    values: tuple[str, ...]
    caption: str
    validator: str = "pass"  # "pass" or "reject"
    reason: str = ""  # the check and reason of a reject

    def concept_text(self) -> str:
        """The concept as the reviewer reads it: "cup: red; lamp: blue" or "cup under lamp"."""
        if len(self.values) == len(self.objects):
            return "; ".join(f"{o}: {v}" for o, v in zip(self.objects, self.values, strict=True))
        parts = [self.objects[0]]
        for i, rel in enumerate(self.values):
            parts.append(f"{rel} {self.objects[i + 1]}")
        return " ".join(parts)

    @property
    def concept_id(self) -> str:
        return self.key.rsplit("/", 1)[0]

    @property
    def group(self) -> str:
        return f"{self.task} N={self.n_objects} {self.condition}"

    def to_json(self) -> dict:
        return {"key": self.key, "image": self.image, "task": self.task,
                "n_objects": self.n_objects, "condition": self.condition,
                "objects": list(self.objects), "values": list(self.values),
                "caption": self.caption, "validator": self.validator, "reason": self.reason}

    @classmethod
    def from_json(cls, d: dict) -> ConceptUnit:
        return cls(str(d["key"]), str(d["image"]), str(d["task"]), int(d["n_objects"]),
                   str(d["condition"]), tuple(d["objects"]), tuple(d["values"]),
                   str(d["caption"]), str(d["validator"]), str(d.get("reason", "")))


def _records(root: Path) -> list[dict]:
    from foilbench.construct.engine.log import read_log

    path = root / LOG_FILE
    if not path.is_file():
        raise ReviewError(
            f"{root} has no {LOG_FILE}: the concordance study samples the images the validator "
            "passed and rejected, which only a `foilbench construct autocomp` folder records; "
            "point DIR at the construction's --out folder")
    try:
        return read_log(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ReviewError(f"{path}: cannot read the construction log ({e})") from None


def _minimal_caption(task: str, objects: tuple, values: tuple) -> str:
    from foilbench.construct.autocomp.negatives import Concept, caption
    from foilbench.construct.autocomp.pipeline import MINIMAL_SUFFIX

    return caption(Concept(task, objects, values)) + MINIMAL_SUFFIX


def judged_units(root: str | Path) -> tuple[list[ConceptUnit], dict[str, int]]:
    """Every image with a validator verdict, sorted by key, and why others were left out
    (module docstring)."""
    root = Path(root)
    concepts: dict[str, dict] = {}
    parent: dict[str, str] = {}
    contextual: dict[str, str] = {}
    image: dict[str, str] = {}
    passed: set[str] = set()
    rejected: dict[str, str] = {}
    unchecked: set[str] = set()
    for r in _records(root):
        item, stage = str(r.get("item", "")), str(r.get("stage", ""))
        if r.get("event") == "created":
            if r.get("kind") == "concept" and isinstance(r.get("inputs"), dict):
                concepts[item] = r["inputs"]
            elif r.get("kind") == "track" and r.get("parent"):
                parent[item] = str(r["parent"])
        elif r.get("event") == "outcome":
            if r.get("outcome") == "dropped" and stage.startswith(CHECKS) \
                    and r.get("reason") != NO_VERDICT:
                rejected[item] = f"{stage}: {r.get('reason')}"
        elif stage.startswith("captions") and (r.get("verdicts") or {}).get("preserved"):
            contextual[item] = str((r.get("outputs") or {}).get("contextual", ""))
        elif stage.startswith("text-to-image [") and (r.get("outputs") or {}).get("image"):
            image[item] = str(r["outputs"]["image"])
        elif stage.startswith(CHECKS) and "not_checked" in r:
            unchecked.add(item)
        elif stage.startswith(LAST_CHECK) and "verdicts" in r:
            passed.add(item)
    units: list[ConceptUnit] = []
    left_out: Counter[str] = Counter()
    for track, path in sorted(image.items()):
        cid = parent.get(track)
        concept = concepts.get(cid or "")
        if cid is None or concept is None or not track.startswith(cid + "-"):
            left_out["image without its concept in the log"] += 1
            continue
        condition = track[len(cid) + 1:]
        if track in unchecked:
            left_out["a check was passed unchecked"] += 1
            continue
        if track in rejected:
            verdict, reason = "reject", rejected[track]
        elif track in passed:
            verdict, reason = "pass", ""
        else:
            left_out["no verdict (a check call failed, or the run stopped first)"] += 1
            continue
        objects = tuple(str(o) for o in concept["objects"])
        values = tuple(str(v) for v in concept["values"])
        task = str(concept["task"])
        caption = (contextual.get(cid, "") if condition == "contextual"
                   else _minimal_caption(task, objects, values))
        units.append(ConceptUnit(f"{cid}/{condition}", path, task, len(objects), condition,
                                 objects, values, caption, verdict, reason))
    if not units:
        raise ReviewError(f"{root / LOG_FILE}: no image has a validator verdict, so there is "
                          "nothing to sample")
    return units, dict(sorted(left_out.items()))
