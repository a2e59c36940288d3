"""CompoSET App. F.3 object-count comparison: how many objects a detector finds per image.

CompoSET App. F.3: "We run OWLv2-base (google/owlv2-base-patch16-ensemble) with score
threshold 0.3 and class-agnostic NMS at IoU 0.5, prompted with a 116-class open-vocabulary
list [...] We apply the detector identically to CompoSET (50-scene subsample), Winoground,
BiVLC, and SugarCrepe (200-image samples each, seed 42). We count detected instances after
class-agnostic NMS, so repeated objects are rewarded (three chairs counts as three). We report
two summaries: excluding people (primary, since person-density varies across benchmarks) and
including people." Table 7 columns: mean, median, std, p25, p75, max. "Threshold sensitivity:
re-evaluating the stored raw detections at thresholds 0.2 and 0.4 preserves the benchmark
ordering."

foilbench's choices where the text is silent:

* the 116-class list is not printed in our copy; the caller gives the classes (one per line);
* "people": detections whose label is one of ``people`` (default ``person``) are removed
  *after* class-agnostic NMS (so a person box still suppresses an overlapping box);
* the sample: ``n`` distinct images drawn with ``numpy.random.default_rng(seed)``; for pair
  benchmarks with ``scene_id`` one base image per scene (a "50-scene subsample");
* std is the sample standard deviation (ddof = 1); percentiles interpolate linearly.

Raw detections are taken once at the lowest threshold asked for and re-counted at each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from foilbench.construct.backends.base import Detection


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def class_agnostic_nms(dets: Sequence[Detection], iou: float = 0.5) -> list[Detection]:
    """Greedy NMS over all labels at once: a box is suppressed by any kept box of higher
    score overlapping it with IoU > ``iou`` (equal scores: the earlier one is kept)."""
    kept: list[Detection] = []
    for d in sorted(dets, key=lambda d: -d.score):
        if all(_iou(k.box, d.box) <= iou for k in kept):
            kept.append(d)
    return kept


def count(dets: Sequence[Detection], threshold: float = 0.3, iou: float = 0.5,
          people: Sequence[str] = ("person",)) -> dict[str, int]:
    """Objects in one image: ``including_people`` and ``excluding_people`` after
    thresholding (score >= threshold) and class-agnostic NMS."""
    kept = class_agnostic_nms([d for d in dets if d.score >= threshold], iou)
    persons = {p.lower() for p in people}
    return {"including_people": len(kept),
            "excluding_people": sum(d.label.lower() not in persons for d in kept)}


def summary(counts: Sequence[float]) -> dict[str, float]:
    """Table 7's columns over per-image counts."""
    x = np.asarray(counts, dtype=float)
    if len(x) == 0:
        raise ValueError("no image counted")
    return {"n_images": len(x), "mean": float(x.mean()), "median": float(np.median(x)),
            "std": float(x.std(ddof=1)) if len(x) > 1 else float("nan"),
            "p25": float(np.percentile(x, 25)), "p75": float(np.percentile(x, 75)),
            "max": float(x.max())}


def sample_images(bench, n: int, seed: int = 42) -> list[str]:
    """``n`` distinct image refs of ``bench`` (one base image per scene for pair benchmarks
    with ``scene_id``), drawn with ``default_rng(seed)``; all of them when fewer."""
    items = bench.items
    if "image_base" in items.columns and "scene_id" in items.columns:
        refs = list(dict.fromkeys(items.drop_duplicates("scene_id")["image_base"]))
    else:
        refs = list(dict.fromkeys(bench.image_refs()))
    if n >= len(refs):
        return refs
    rng = np.random.default_rng(seed)
    return [refs[i] for i in sorted(rng.choice(len(refs), n, replace=False))]


def object_counts(bench, detector, classes: Sequence[str], n: int = 200, seed: int = 42,
                  thresholds: Sequence[float] = (0.3,), iou: float = 0.5,
                  people: Sequence[str] = ("person",)) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per image and threshold: counts; per threshold and people setting: Table 7 row)."""
    from PIL import Image

    if not classes:
        raise ValueError("object counts need the class list the detector is prompted with")
    if not thresholds or not all(0.0 <= float(t) <= 1.0 for t in thresholds):
        raise ValueError(f"thresholds {list(thresholds)}: give at least one score threshold "
                         "in [0, 1] (App. F.3 uses 0.3)")
    if not 0.0 < float(iou) <= 1.0:
        raise ValueError(f"iou={iou}: the NMS overlap must be in (0, 1] (App. F.3 uses 0.5)")
    if n < 1:
        raise ValueError(f"n={n}: sample at least one image")
    low = min(thresholds)
    rows = []
    for ref in sample_images(bench, n, seed):
        with Image.open(bench.image_path(ref)) as im:
            dets = detector.detect(im.convert("RGB"), list(classes), threshold=low)
        for d in dets:
            x0, y0, x1, y1 = d.box
            if not (x1 >= x0 and y1 >= y0):
                raise ValueError(f"{ref}: the detector returned a box {tuple(d.box)} that is "
                                 "not (x0, y0, x1, y1) with x1 >= x0 and y1 >= y0")
        for t in thresholds:
            rows.append({"image": ref, "threshold": t, **count(dets, t, iou, people)})
    per_image = pd.DataFrame(rows)
    table = []
    for t, sub in per_image.groupby("threshold", sort=True):
        for key in ("excluding_people", "including_people"):
            table.append({"benchmark": bench.name, "threshold": t, "people": key,
                          **summary(sub[key])})
    return per_image, pd.DataFrame(table)
