"""A small ``construct autocomp`` folder whose validator rejects some images (tests of the
Auto-Comp human studies, ``review concepts`` and ``review solvability``)."""

from __future__ import annotations

import hashlib

from foilbench.construct.backends.base import DetectorBackend


class PickyDetector(DetectorBackend):
    """The world's detections, except none for one image in three (chosen by its bytes, so
    the same on every run): those images fail the object presence and count check."""

    def __init__(self) -> None:
        from foilbench.construct.backends.registry import resolve_backend

        self.inner = resolve_backend("detector", "world")

    @property
    def fingerprint(self) -> str:
        return "picky:" + self.inner.fingerprint

    def detect(self, image, labels, threshold: float = 0.1):
        if hashlib.sha256(image.tobytes()).digest()[0] % 3 == 0:
            return []
        return self.inner.detect(image, labels, threshold)


def build_study_folder(out, n_concepts: int = 3):
    """Colour and position concepts at N = 2, both conditions, some rejected."""
    from foilbench.construct.autocomp.pipeline import AutocompConfig
    from foilbench.construct.backends.registry import resolve_backend
    from foilbench.construct.engine.runner import run_pipeline

    backends = {"text": resolve_backend("text", "template"),
                "image": resolve_backend("image", "world"), "detector": PickyDetector(),
                "vqa": resolve_backend("vqa", "world")}
    config = AutocompConfig(tasks=("color", "position"), ns=(2,), n_concepts=n_concepts,
                            size=48, vocab="paper")
    return run_pipeline("autocomp", config, backends, out, progress=False).benchmark
