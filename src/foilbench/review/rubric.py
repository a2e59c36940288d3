"""CompoSET's three QC phases and their criteria (CompoSET App. B.4 and §3), as data.

The paper's protocol, quoted:

    "A single author of this paper reviewed every scene in three phases."

    "Phase 1 (base review). The base caption is reviewed before any foil is generated;
    ambiguous anchors and missing-object captions are corrected at this point. A failure here
    invalidates the entire scene and triggers re-generation."

    "Phase 2 (instance review). Each instance's images and short captions are reviewed against
    four criteria: (i) the count of the named object is preserved across base and foil; (ii) no
    other object is added, removed, moved, or fully occluded; (iii) the visual edit matches the
    textual edit; (iv) when two objects could plausibly match the edit description, the caption
    disambiguates by location or appearance. Failure on any criterion discards the instance.
    Phase-two discard rate is 22.4% (511 of 2,287 attempts), highest on modify_presence (41%),
    swap_material (35%), and modify_transparency (31%)."

    "Phase 3 (verbosity review). Medium and long captions for each kept instance are reviewed
    for fidelity to the short edit phrase. The edit phrase must appear unchanged across the
    three tiers; surrounding context grows around it without rewording."

Where we differ or the paper is silent:

- Phase 1 in the paper *corrects* captions and regenerates failed scenes; our review runs after
  construction, so a base failure cannot trigger regeneration here: it invalidates every
  instance of the scene (they are excluded from export and from the phase-2 denominators and
  counted as "invalidated"). The paper names no phase-1 criteria; ours are its two named
  failure kinds (missing objects, ambiguous anchors) plus the content filter of its ethics
  statement ("any image with unintentional artifacts, partial nudity, or otherwise
  objectionable content was discarded before release").
- Phase 3 in the paper does not say what happens to an instance whose medium or long caption
  rewords the edit phrase. We discard the whole instance (all tiers), so every exported
  instance keeps its three tiers and tier comparisons stay paired.
- A reject must name at least one failed criterion, so the report can give discard rates per
  criterion; a reject may name several, so per-criterion rates can sum above the discard rate.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER_DISCARD_RATE = 511 / 2287  # CompoSET App. B.4: phase-two discard rate, 22.4%
PAPER_REFERENCE = ("CompoSET App. B.4: phase-two discard rate 22.4% (511 of 2,287 attempts); "
                   "highest on modify_presence (41%), swap_material (35%), "
                   "modify_transparency (31%)")


@dataclass(frozen=True)
class Criterion:
    key: str  # stored in the decision log; never rename (old decisions refer to it)
    short: str  # button label
    question: str  # what the reviewer checks (shown in the app)


@dataclass(frozen=True)
class Phase:
    key: str
    title: str
    unit: str  # what one decision covers
    criteria: tuple[Criterion, ...]
    description: str


PHASES: tuple[Phase, ...] = (
    Phase("base", "Base review", "scene", (
        Criterion("objects_present", "objects present",
                  "Every object the base caption names is in the base image, with the stated "
                  "attributes (no missing-object captions)."),
        Criterion("anchors_unambiguous", "anchors clear",
                  "Each object a caption anchors on can be told apart from the others "
                  "(no ambiguous anchors)."),
        Criterion("image_clean", "image clean",
                  "The base image has no rendering artifacts or objectionable content."),
    ), "Base caption against the base image. A reject invalidates every instance of the scene."),
    Phase("instance", "Instance review", "instance", (
        Criterion("count_preserved", "count preserved",
                  "(i) The count of the named object is preserved across base and foil."),
        Criterion("nothing_else_changed", "nothing else changed",
                  "(ii) No other object is added, removed, moved, or fully occluded."),
        Criterion("edit_matches_caption", "edit matches caption",
                  "(iii) The visual edit matches the textual edit."),
        Criterion("target_disambiguated", "target disambiguated",
                  "(iv) When two objects could plausibly match the edit description, the "
                  "caption disambiguates by location or appearance."),
    ), "Base and foil images and short captions against the four-criterion rubric."),
    Phase("verbosity", "Verbosity review", "instance", (
        Criterion("medium_keeps_phrase", "medium keeps phrase",
                  "The medium caption contains the short edit phrase unchanged; context grows "
                  "around it without rewording."),
        Criterion("long_keeps_phrase", "long keeps phrase",
                  "The long caption contains the short edit phrase unchanged; context grows "
                  "around it without rewording."),
    ), "Medium and long tiers of each kept instance keep the short edit phrase unchanged."),
)

PHASE_KEYS: tuple[str, ...] = tuple(p.key for p in PHASES)
VERDICTS: tuple[str, ...] = ("accept", "reject")


def phase(key: str) -> Phase:
    for p in PHASES:
        if p.key == key:
            return p
    raise KeyError(f"unknown review phase {key!r}; expected one of {', '.join(PHASE_KEYS)}")


def criterion_keys(phase_key: str) -> tuple[str, ...]:
    return tuple(c.key for c in phase(phase_key).criteria)
