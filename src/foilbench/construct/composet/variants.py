"""``composet`` bias-mitigation prompt variants, run beside the main prompts (an option).

CompoSET App. B.3: "A bias-mitigation variant of each captioning prompt (*.bias.txt) is run in
parallel as a sanity check; outputs from the two variants are reconciled by the verification
pass." The released repository does not publish these files; ours are written from that
sentence (``prompts/composet.<step>.bias.txt``): the same task and reply format, plus
instructions against a model's default values and stereotypes. With
``ComposetConfig.bias_variants`` on:

- step 4 (foil enumeration): both variants propose; the proposals are pooled, and the
  self-check pass (step 5) reconciles them: it judges every proposal of the scene together and
  rejects repeats as ``duplicate``;
- step 7 (verbosity): both variants write tiers; the tier checks reconcile them: the main
  variant's tiers are kept when they pass, else the bias variant's when they pass, else the foil
  is dropped; the log records each variant's verdict and which was kept.

- step 3 (instance captions): both variants caption every object; per object the main
  variant's caption is kept when it names the object (its spec ``name``), else the bias
  variant's when that one does, else the main one (counted as ``neither``).

Off by default (``--bias-variants`` turns them on): they double the text calls of steps 3, 4
and 7. That is a departure from B.3, so a run without them says so where a user sees it: the
``construct composet`` output and ``manifest.extras["bias_variants"]`` (:func:`departure`).

Step 1 runs the main prompt only (we choose so: the base image is rendered from one spec, so
two specs cannot be reconciled after the fact); the caption QC after step 2 is itself the
check of step 1's output.
"""

from __future__ import annotations

MAIN, BIAS = "main", "bias"
PAPER_B3 = ("CompoSET App. B.3: \"A bias-mitigation variant of each captioning prompt "
            "(*.bias.txt) is run in parallel as a sanity check\"")


def departure() -> str:
    """What a run without the variants says (manifest, ``construct composet`` output):
    off by default because they double the text calls of steps 3, 4 and 7."""
    return ("bias-mitigation prompt variants not run (App. B.3 runs them in parallel); "
            "--bias-variants runs them, doubling the text calls of steps 3, 4 and 7")
BIAS_SEED_STREAM = 0xB1A5  # the template backend draws the bias variant's proposals apart


def variants(name: str, on: bool) -> list[tuple[str, str]]:
    """``[(prompt name, variant tag)]``: the main prompt, and ``<name>.bias`` when ``on``."""
    return [(name, MAIN), (f"{name}.bias", BIAS)] if on else [(name, MAIN)]


def variant_seed(seed: int, tag: str) -> int:
    return int(seed) if tag == MAIN else int(seed) * 7 + BIAS_SEED_STREAM


def reconcile(checked: dict[str, tuple[str | None, object]]) -> tuple[str | None, dict]:
    """The variant to keep from ``{tag: (problem or None, value)}`` (main first), and the
    verdicts to log: ``(tag or None, {"variants": {tag: problem or "ok"}, "kept": tag,
    "agree": both passed with equal values})``."""
    order = [t for t in (MAIN, BIAS) if t in checked]
    kept = next((t for t in order if checked[t][0] is None), None)
    verdicts: dict = {"variants": {t: checked[t][0] or "ok" for t in order}, "kept": kept}
    if len(order) == 2:
        verdicts["agree"] = (checked[MAIN][0] is None and checked[BIAS][0] is None
                             and checked[MAIN][1] == checked[BIAS][1])
    return kept, verdicts


def reconcile_instances(spec: dict, main: dict[str, str], bias: dict[str, str] | None
                        ) -> tuple[dict[str, str], dict]:
    """Per object id, the caption to keep (module docstring) and the counts to log:
    ``{"main": n, "bias": n, "neither": n, "agree": n}``."""
    names = {str(o.get("id", "")): str(o.get("name", "")).lower() for o in spec["objects"]}
    out, tally = dict(main), {MAIN: 0, BIAS: 0, "neither": 0, "agree": 0}
    for oid, name in names.items():
        m, b = main.get(oid, ""), (bias or {}).get(oid, "")
        tally["agree"] += bool(m) and m == b
        if name and name in m.lower():
            tally[MAIN] += 1
        elif name and name in b.lower():
            out[oid] = b
            tally[BIAS] += 1
        else:
            tally["neither"] += 1
    return out, tally
