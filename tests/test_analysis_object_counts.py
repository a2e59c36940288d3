"""CompoSET App. F.3 object counts: class-agnostic NMS, people excluded after NMS, Table 7
summary, seeded samples, a fake detector end to end."""

from __future__ import annotations

import numpy as np
import pytest

from foilbench.analysis.object_counts import (
    class_agnostic_nms,
    count,
    object_counts,
    sample_images,
    summary,
)
from foilbench.construct.backends.base import Detection

D = [Detection("chair", 0.9, (0, 0, 10, 10)),
     Detection("table", 0.8, (1, 0, 11, 10)),    # IoU with the chair 90/110 = 0.82: suppressed
     Detection("chair", 0.7, (20, 20, 30, 30)),  # no overlap: kept (three chairs count 3)
     Detection("person", 0.6, (20, 25, 30, 35)),  # IoU 50/150 = 0.33 <= 0.5: kept
     Detection("cup", 0.25, (50, 50, 60, 60))]   # below 0.3


def test_class_agnostic_nms_and_count_by_hand():
    kept = class_agnostic_nms([d for d in D if d.score >= 0.3], 0.5)
    assert [d.label for d in kept] == ["chair", "chair", "person"]
    assert count(D, 0.3, 0.5) == {"including_people": 3, "excluding_people": 2}
    assert count(D, 0.2, 0.5) == {"including_people": 4, "excluding_people": 3}
    # per-label NMS would keep the table; class-agnostic does not
    assert count(D, 0.3, 0.9)["including_people"] == 4


def test_summary_by_hand():
    s = summary([1, 2, 3, 10])
    assert (s["mean"], s["median"], s["max"], s["n_images"]) == (4.0, 2.5, 10.0, 4)
    assert s["std"] == pytest.approx(np.std([1, 2, 3, 10], ddof=1))
    assert (s["p25"], s["p75"]) == (1.75, 4.75)  # linear: 1 + 0.75, 3 + 0.25 * 7
    with pytest.raises(ValueError, match="no image"):
        summary([])


class FakeDetector:
    def __init__(self):
        self.calls = []

    def detect(self, image, labels, threshold=0.1):
        assert labels == ["chair", "table", "person", "cup"] and threshold == 0.2
        self.calls.append(image.size)
        return D


def test_object_counts_end_to_end_on_tiny_builtin():
    from foilbench.data.tiny import tiny_benchmark

    bench = tiny_benchmark()
    refs = sample_images(bench, 3, seed=42)
    assert len(refs) == 3 and sample_images(bench, 3, seed=42) == refs
    assert len(set(refs)) == 3
    det = FakeDetector()
    per_image, table = object_counts(bench, det, ["chair", "table", "person", "cup"], n=3,
                                     thresholds=(0.2, 0.3))
    assert len(det.calls) == 3  # detected once per image, re-counted per threshold
    t = table.set_index(["threshold", "people"])
    assert t.loc[(0.3, "excluding_people"), "mean"] == 2.0
    assert t.loc[(0.2, "including_people"), "mean"] == 4.0
    with pytest.raises(ValueError, match="class list"):
        object_counts(bench, det, [], n=3)


@pytest.mark.parametrize("kwargs,needle", [
    ({"thresholds": ()}, "at least one score threshold"),
    ({"thresholds": (0.3, 1.5)}, r"in \[0, 1\]"),
    ({"iou": 0.0}, r"iou=0.0"),
    ({"n": 0}, "at least one image"),
])
def test_object_counts_refuses_bad_settings_by_name(kwargs, needle):
    from foilbench.data.tiny import tiny_benchmark

    with pytest.raises(ValueError, match=needle):
        object_counts(tiny_benchmark(), FakeDetector(), ["chair"], **{"n": 3, **kwargs})


def test_object_counts_refuses_an_inverted_box_naming_the_image():
    from foilbench.data.tiny import tiny_benchmark

    class Bad:
        def detect(self, image, labels, threshold=0.1):
            return [Detection("chair", 0.9, (10.0, 10.0, 5.0, 20.0))]

    with pytest.raises(ValueError, match=r"box \(10.0, 10.0, 5.0, 20.0\)"):
        object_counts(tiny_benchmark(), Bad(), ["chair"], n=1)
