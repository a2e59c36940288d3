"""A small scorecard of an embedded model on the embedded suite (for the model card).

Scores come from the engine (:func:`foilbench.scoring.engine.evaluate`, strict ``>``), so the
numbers are the ones ``foilbench run`` reports; this module only slices them: pair metrics
overall, by tier and for modify_color at the short tier (CompoSET Eq. 1-3), R@1 of the Auto-Comp
Swap and Confusion parts by N, and an Auto-Comp-style N = 1 colour probe built here, since
the suite has no N = 1 items (Swap and Confusion sets are empty at N = 1): one rendered object,
the positive "a <colour> <object>" against the other 13 colours (chance 1/14).
"""

from __future__ import annotations

import numpy as np

from foilbench.scoring.protocols import choice_outcomes

N1_SEED = 0x0001_C010  # own stream for the N = 1 probe scenes


def _rate(values) -> dict:
    values = np.asarray(values, dtype=np.float64)
    return {"n": int(len(values)), "mean": float(values.mean()) if len(values) else float("nan")}


def pair_scorecard(result) -> dict:
    """I2T, T2I, Group overall, per tier, and for modify_color x short."""
    items = result.benchmark.items
    out = {"overall": {m: _rate(result.outcomes[m]) for m in ("i2t", "t2i", "group")}}
    for tier in sorted(items["tier"].unique()):
        mask = (items["tier"] == tier).to_numpy()
        out[f"tier={tier}"] = {m: _rate(result.outcomes[m][mask]) for m in ("i2t", "t2i", "group")}
    mask = ((items["edit_type"] == "modify_color") & (items["tier"] == "short")).to_numpy()
    out["modify_color/short"] = {m: _rate(result.outcomes[m][mask])
                                 for m in ("i2t", "t2i", "group")}
    out["ties"] = {m: int(np.asarray(t).sum()) for m, t in result.ties.items()}
    return out


def choice_scorecard(result) -> dict:
    """R@1 overall and by N (``n_objects``) and task, with mean chance."""
    items = result.benchmark.items
    r1 = result.outcomes["r1"]
    out = {"overall": _rate(r1)}
    out["chance"] = float(np.mean(result.chance["r1"]))
    for col in ("n_objects", "task"):
        if col in items:
            for value in sorted(items[col].unique()):
                mask = (items[col] == value).to_numpy()
                out[f"{col}={value}"] = _rate(r1[mask])
    return out


def n1_colour_probe(adapter, n_objects_per_colour: int = 4, size: int = 160) -> dict:
    """R@1 of "a <colour> <object>" against the 13 other colours, on rendered N = 1 scenes.

    Scenes come from :func:`foilbench.world.autocomp.concept_scene` (task ``color``, N = 1)
    in both conditions; categories cycle through the colour task's objects.
    """
    from dataclasses import replace

    from foilbench.world.autocomp import TASK_OBJECTS, concept_scene
    from foilbench.world.render import render
    from foilbench.world.vocab import COLORS, CONDITIONS

    colours = list(COLORS)
    objects = list(TASK_OBJECTS["color"])
    images, rows = [], []
    for c, colour in enumerate(colours):
        for k in range(n_objects_per_colour):
            category = objects[(c * n_objects_per_colour + k) % len(objects)]
            rng = np.random.default_rng([N1_SEED, c, k])
            scene = concept_scene(rng, "color", [category], [colour])
            for condition in CONDITIONS:
                images.append(render(replace(scene, condition=condition), size))
                rows.append((category, colour, condition))
    texts = [f"{'an' if col[0] in 'aeiou' else 'a'} {col} {cat}" for cat in objects
             for col in colours]
    index = {t: k for k, t in enumerate(texts)}
    img = adapter.embed_images(images)
    txt = adapter.embed_texts(texts)
    scores = []
    for k, (category, colour, _) in enumerate(rows):
        order = [colour] + [c for c in colours if c != colour]
        cand = [index[f"{'an' if c[0] in 'aeiou' else 'a'} {c} {category}"] for c in order]
        scores.append(adapter.pair_scores(np.repeat(img[k:k + 1], len(cand), 0), txt[cand]))
    ok = choice_outcomes(np.stack(scores))
    cond = np.array([r[2] for r in rows])
    return {"overall": _rate(ok), "chance": 1 / len(colours),
            **{f"condition={c}": _rate(ok[cond == c]) for c in CONDITIONS}}


def scorecard(adapter, benchmarks, progress: bool = False) -> dict:
    """Engine results on each suite part, sliced as above, plus the N = 1 probe."""
    from foilbench.scoring.engine import evaluate

    out = {}
    for bench in benchmarks:
        result = evaluate(adapter, bench, cache=None, progress=progress)
        if bench.item_kind.is_edit_pair:
            out[bench.name] = pair_scorecard(result)
        else:
            out[bench.name] = choice_scorecard(result)
    out["n1-colour-probe"] = n1_colour_probe(adapter)
    out["text_stats"] = adapter.stats()
    return out


def main(argv: list[str] | None = None) -> None:
    """``python -m foilbench.train.evaluate WEIGHTS_DIR SUITE_DIR [VARIANT...]`` -> JSON."""
    import json
    import sys
    from pathlib import Path

    from foilbench.construct.suite import load_suite
    from foilbench.models.embedded import VARIANTS, load_variant

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        raise SystemExit(main.__doc__)
    weights, suite = Path(args[0]), Path(args[1])
    benchmarks = load_suite(suite)
    for variant in args[2:] or VARIANTS:
        card = scorecard(load_variant(variant, device="cpu", directory=weights), benchmarks)
        print(json.dumps({"variant": variant, "suite": str(suite), **card}), flush=True)


if __name__ == "__main__":
    main()
