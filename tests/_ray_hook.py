"""Ray ``worker_process_setup_hook`` of the Ray tests: registers ``faulty-tiny``
(:mod:`_ray_models`) by name only. It must import nothing heavy: a worker's BLAS reads its
thread count (``OMP_NUM_THREADS``, which Ray sets to the actor's CPUs) when numpy is first
imported, and this hook runs before that variable is set."""

from __future__ import annotations


def register() -> None:
    from foilbench.models.registry import model_names

    names = model_names()
    if "faulty-tiny" not in names:
        names.register("faulty-tiny", "_ray_models:build_faulty", "tiny-random, dies on demand")
