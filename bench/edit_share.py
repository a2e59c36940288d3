"""Edit-region share of the embedded pair benchmark, to compare with CompoSET's §4 / App. F.1
("edits change a median 4.8% (mean 8.3%) of the image").

Renders the planned pairs (the first ``--foils`` edits of each of ``--scenes`` scenes, seed 0)
at ``--size`` px and prints the share of the image inside the edit mask (the union of the
edited objects' footprints in base and foil) and the share of pixels that actually change,
overall and per edit type. ``--unit`` overrides ``foilbench.world.layout.UNIT`` (a pilot of
object scales; the shipped value is the default).

    PYTHONPATH=src python bench/edit_share.py [--unit 0.2] [--scenes 80]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np


def measure(scenes: int, foils: int, size: int) -> dict:
    from foilbench.construct.composet.pair_plan import plan_benchmark
    from foilbench.construct.composet.pairs import edit_mask
    from foilbench.world.render import render_layers

    mask_share, changed_share = defaultdict(list), defaultdict(list)
    for planned in plan_benchmark(0, scenes, foils):
        base = render_layers(planned.scene, size)
        base_px = np.asarray(base.image, dtype=np.int16)
        for edit in planned.edits[:foils]:
            foil = render_layers(edit.foil, size)
            mask = edit_mask(edit, base, foil)
            changed = (np.abs(np.asarray(foil.image, dtype=np.int16) - base_px).max(-1) > 0)
            for key in (edit.edit_type, "all"):
                mask_share[key].append(float(mask.mean()))
                changed_share[key].append(float(changed.mean()))
    out = {}
    for key in sorted(mask_share):
        m, c = np.asarray(mask_share[key]) * 100, np.asarray(changed_share[key]) * 100
        out[key] = {"n": len(m), "mask_median": round(float(np.median(m)), 2),
                    "mask_q1": round(float(np.percentile(m, 25)), 2),
                    "mask_q3": round(float(np.percentile(m, 75)), 2),
                    "mask_mean": round(float(m.mean()), 2),
                    "changed_median": round(float(np.median(c)), 2),
                    "changed_mean": round(float(c.mean()), 2)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--unit", type=float, default=None)
    ap.add_argument("--scenes", type=int, default=80)
    ap.add_argument("--foils", type=int, default=16)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.unit is not None:
        from foilbench.world import layout
        layout.UNIT = args.unit
    res = measure(args.scenes, args.foils, args.size)
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print(f"{'edit type':22s} {'n':>5s} {'mask med':>9s} {'q1':>6s} {'q3':>6s} {'mean':>6s} "
          f"{'changed med':>12s} {'mean':>6s}")
    for key, r in res.items():
        print(f"{key:22s} {r['n']:5d} {r['mask_median']:9.2f} {r['mask_q1']:6.2f} "
              f"{r['mask_q3']:6.2f} {r['mask_mean']:6.2f} {r['changed_median']:12.2f} "
              f"{r['changed_mean']:6.2f}")


if __name__ == "__main__":
    main()
