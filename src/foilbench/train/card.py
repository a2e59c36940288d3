"""The model card's score tables, measured on the embedded suite and written into the card.

For each embedded model the engine (:func:`foilbench.scoring.engine.evaluate`, strict ``>``,
the numbers ``foilbench run`` reports) scores every part of the suite; this module only slices
the outcomes and attaches intervals (:func:`foilbench.stats.breakdown.summarise`: percentile
bootstrap clustered by ``scene_id`` with B = 10,000, as ``foilbench run``; the few-scene and
0%/100% intervals where ``ci_method="auto"`` chooses them) and chance:

- world-pairs: I2T, T2I, Group (CompoSET Eq. 1-3) over all tiers, and Group per edit type at
  the short tier (CompoSET Table 9 pools the tiers; the issue's targets are per type at short);
- autocomp-n1 R@1 (foilbench's N = 1 recognition baseline), autocomp-swap R@1 (Auto-Comp Swap),
  autocomp-confusion (Auto-Comp Confusion: ``r1_valid``, positive above the false negatives
  only, where the suite records it, else the paper's ``r1``), compass-synth R@1.

:func:`write_card` replaces the text between ``BEGIN`` and ``END`` in ``MODEL_CARD.md`` and
keeps the rest of the card (prose written by hand) as it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from foilbench.stats.bootstrap import DEFAULT_N_BOOT
from foilbench.stats.breakdown import summarise

BEGIN = "<!-- scores:begin (written by `foilbench train --card`; edits here are lost) -->"
END = "<!-- scores:end -->"
SCALE_BEGIN = "<!-- scale:begin (written by `foilbench train --card`; edits here are lost) -->"
SCALE_END = "<!-- scale:end -->"
PILOT_FILE = "pilot-scale.json"  # bench/pilot_scale.py --json, kept beside the weights
# the B `foilbench run` uses, so the card's (and the README's) intervals are the ones a fresh
# run prints, digit for digit
N_BOOT = DEFAULT_N_BOOT
HEADLINE = (("world-pairs", "i2t", "pairs I2T"), ("world-pairs", "t2i", "pairs T2I"),
            ("world-pairs", "group", "pairs Group"), ("world-pairs/short", "group",
                                                      "Group, short tier"),
            ("autocomp-n1", "r1", "autocomp-n1 R@1"), ("autocomp-swap", "r1", "Swap R@1"),
            ("autocomp-confusion", "confusion", "Confusion R@1"),
            ("compass-synth", "r1", "COMPASS R@1"))


def _summary(outcomes, chance, clusters) -> dict:
    row = summarise(np.asarray(outcomes, dtype=np.float64), chance=np.asarray(chance),
                    clusters=np.asarray(clusters), method="auto", n_boot=N_BOOT)
    return {k: row[k] for k in ("value", "k", "n", "ci_low", "ci_high", "ci_method", "chance")}


def _sliced(result, metric: str, mask=None) -> dict:
    items = result.benchmark.items
    mask = np.ones(len(items), bool) if mask is None else np.asarray(mask)
    chance = np.broadcast_to(np.asarray(result.chance[metric], dtype=np.float64), mask.shape)
    return _summary(np.asarray(result.outcomes[metric])[mask], chance[mask],
                    items["scene_id"].to_numpy()[mask])


def score_model(adapter, benchmarks, progress: bool = False) -> dict:
    """``{part: {metric: summary}}`` for one model; per edit type under ``world-pairs/<type>``
    (short tier)."""
    from foilbench.scoring.engine import evaluate

    out: dict[str, dict] = {}
    for bench in benchmarks:
        result = evaluate(adapter, bench, cache=None, progress=progress)
        items = result.benchmark.items
        if bench.item_kind.is_edit_pair:
            out[bench.name] = {m: _sliced(result, m) for m in ("i2t", "t2i", "group")}
            short = (items["tier"] == "short").to_numpy()
            out[f"{bench.name}/short"] = {m: _sliced(result, m, short)
                                          for m in ("i2t", "t2i", "group")}
            for edit in sorted(items["edit_type"].unique()):
                mask = short & (items["edit_type"] == edit).to_numpy()
                out[f"{bench.name}/{edit}"] = {m: _sliced(result, m, mask)
                                               for m in ("i2t", "t2i", "group")}
        else:
            metrics = {m: _sliced(result, m) for m in result.outcomes}
            # Confusion's primary metric: r1_valid where the suite records it (issue 12)
            metrics["confusion"] = metrics.get("r1_valid", metrics["r1"])
            metrics["confusion"] = {**metrics["confusion"],
                                    "metric": "r1_valid" if "r1_valid" in metrics else "r1"}
            out[bench.name] = metrics
    return out


def _cell(s: dict | None) -> str:
    if s is None:
        return "n/a"
    return f"{100 * s['value']:.1f} [{100 * s['ci_low']:.1f}, {100 * s['ci_high']:.1f}]"


def _chance(s: dict | None) -> str:
    return "n/a" if s is None else f"{100 * s['chance']:.1f}"


def _get(scores: dict, part: str, metric: str) -> dict | None:
    return scores.get(part, {}).get(metric)


def card_tables(scores: dict[str, dict], suite_label: str) -> str:
    """Markdown: the headline table (models x parts) and the per-edit-type table."""
    models = list(scores)
    first = scores[models[0]]
    lines = [f"Suite `{suite_label}`. Percent, 95% interval [low, high] by percentile "
             f"bootstrap over scenes (B = {N_BOOT}, seed 42; Wilson where a value is 0% or "
             f"100%, the few-scene Wilson below 30 scenes: `foilbench run`'s rule), strict "
             f"`>` (ties fail).", ""]
    head = [label for _, _, label in HEADLINE]
    lines += ["| model | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    lines.append("| chance | " + " | ".join(_chance(_get(first, p, m))
                                             for p, m, _ in HEADLINE) + " |")
    for name in models:
        lines.append(f"| {name} | " + " | ".join(_cell(_get(scores[name], p, m))
                                                 for p, m, _ in HEADLINE) + " |")
    conf = _get(first, "autocomp-confusion", "confusion")
    n = {label: (_get(first, p, m) or {}).get("n") for p, m, label in HEADLINE}
    lines += ["", "Items per cell: " + ", ".join(f"{k} {v}" for k, v in n.items() if v) + ". "
              "The pair cells pool the three tiers; `foilbench run` states the pairs in "
              "CompoSET's unit, instances (n = items / 3, each instance's tiers averaged): "
              "the same values and scene-bootstrap intervals, a smaller n. "
              f"Confusion is scored by `{(conf or {}).get('metric', 'r1')}`.", ""]
    edits = sorted(k.split("/", 1)[1] for k in first
                   if k.startswith("world-pairs/") and k != "world-pairs/short")
    lines += ["World-pairs Group per edit type at the short tier (chance 16.7; I2T and T2I "
              "in the summary JSON):", "",
              "| edit type | n | " + " | ".join(models) + " |",
              "|---|---|" + "---|" * len(models)]
    for edit in edits:
        cells = [_cell(_get(scores[m], f"world-pairs/{edit}", "group")) for m in models]
        n_items = (_get(first, f"world-pairs/{edit}", "group") or {}).get("n")
        lines.append(f"| {edit} | {n_items} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_card(card_path: Path, tables: str, begin: str = BEGIN, end: str = END,
               heading: str = "Scores on the embedded suite") -> None:
    """Put ``tables`` between the markers of ``card_path`` (appended when it has none)."""
    card_path = Path(card_path)
    text = card_path.read_text() if card_path.exists() else ""
    block = f"{begin}\n{tables}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip() + f"\n\n## {heading}\n\n" + block + "\n"
    card_path.write_text(text)


def mask_shares(pairs) -> np.ndarray:
    """The share of the image inside each pair's edit mask (the ``mask`` column's PNGs)."""
    from PIL import Image

    if "mask" not in pairs.items.columns:
        return np.asarray([np.nan])
    refs = pairs.items.drop_duplicates(["image_base", "image_foil"])["mask"]
    out = []
    for ref in refs:
        with Image.open(pairs.image_path(ref)) as im:
            out.append(float((np.asarray(im.convert("L")) > 127).mean()))
    return np.asarray(out)


def scale_tables(pairs, pilot: dict | None) -> str:
    """Markdown: the world-pairs edit-region share (CompoSET App. F.1's fraction of pixels
    affected, beside the paper's figures: "The mean fraction of pixels changed between base and
    foil is 0.083 on CompoSET (median 0.048)", §4; F.1 measures it "after σ=1.0 Gaussian blur"
    as the "fraction of pixels with channel-max difference above 10/255" at 512 x 512) and the
    edit-mask share (the issue's own measure, not the paper's), and the scale pilot's table
    (``bench/pilot_scale.py``), so the card says at what scale the models were trained and why."""
    from foilbench.analysis.controls import audit_controls

    px = audit_controls(pairs, minilm=False)["summary"]["pixels"]
    masks = mask_shares(pairs)
    lines = [f"World-pairs edit-region share over {px['n_pairs']} pairs: the edit mask (the "
             f"edited objects' footprints in base and foil) covers a median "
             f"{100 * float(np.median(masks)):.1f}% of the image (mean "
             f"{100 * float(np.mean(masks)):.1f}%); CompoSET App. F.1's fraction of pixels "
             f"affected (512 px, blur 1, > 10/255), the measure of the paper's \"median 0.048\" "
             f"(§4), is median {100 * px['fraction_affected_median']:.1f}%, mean "
             f"{100 * px['fraction_affected']:.1f}% (CompoSET: median 4.8%, mean 8.3%).", ""]
    if pilot:
        rows = pilot["rows"]
        cols = [("unit", "object unit"), ("final_loss", "final loss"),
                ("pairs_group_short", "pairs Group, short"),
                *[(f"{t}_short_group", f"{t} short Group") for t in
                  ("modify_color", "modify_shape", "modify_object", "modify_material")],
                ("autocomp-n1_r1", "autocomp-n1 R@1"), ("autocomp-swap_r1", "Swap R@1")]
        first = rows[0]
        lines += [f"Scale pilot (`{pilot.get('command', 'bench/pilot_scale.py')}`): the plain "
                  f"recipe for {first['steps']} steps on {first['scenes']:,} scenes and "
                  f"{first['twin_pairs']:,} twin pairs rendered at each object unit (image "
                  "fraction of a medium object), scored on a suite built at the same unit "
                  "(percent, strict `>`; no intervals: a pilot, one seed).", "",
                  "| " + " | ".join(label for _, label in cols) + " |",
                  "|---" * len(cols) + "|"]
        for r in rows:
            lines.append("| " + " | ".join(str(r.get(k, "n/a")) for k, _ in cols) + " |")
    return "\n".join(lines)


def make_card(weights_dir: Path, suite_dir: Path | None = None, card_path: Path | None = None,
              variants=None, progress: bool = False) -> dict:
    """Score the embedded models in ``weights_dir`` on the suite (built or cached when
    ``suite_dir`` is None), write the tables into the card and ``card-scores.json`` beside it;
    returns the scores."""
    from foilbench.construct.suite import cache_dir, embedded_suite, load_suite
    from foilbench.models.embedded import VARIANTS, load_variant, model_name

    if suite_dir is None:
        benchmarks = embedded_suite()
        suite_dir = cache_dir()
    else:
        benchmarks = load_suite(Path(suite_dir))
    scores = {}
    for variant in variants or VARIANTS:
        adapter = load_variant(variant, device="cpu", directory=Path(weights_dir))
        scores[model_name(variant)] = score_model(adapter, benchmarks, progress)
    label = json.loads((Path(suite_dir) / "suite.json").read_text()).get("version", "?")
    card_path = Path(card_path or Path(weights_dir) / "MODEL_CARD.md")
    write_card(card_path, card_tables(scores, label))
    pairs = next((b for b in benchmarks if b.item_kind.is_edit_pair), None)
    pilot_path = Path(weights_dir) / PILOT_FILE
    if pairs is not None:
        pilot = json.loads(pilot_path.read_text()) if pilot_path.exists() else None
        write_card(card_path, scale_tables(pairs, pilot), SCALE_BEGIN, SCALE_END,
                   "Object scale")
    card_path.with_name("card-scores.json").write_text(json.dumps(scores, indent=1) + "\n")
    return scores
