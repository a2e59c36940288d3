"""The Ray options of a run or sweep, and what each model's worker asks of the cluster.

Joining or starting Ray is :mod:`foilbench.ray_session` (shared with the construction
pipelines); Ray is an optional dependency, imported only when ``--ray`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from foilbench.ray_session import LOCAL, slots, worker_device, worker_resources
from foilbench.runner.settings import RunnerError

__all__ = ["LOCAL", "RayOptions", "as_options", "resources", "worker_device", "worker_slots"]


@dataclass(frozen=True)
class RayOptions:
    """How a run or sweep uses Ray.

    ``retries``: how often a cell whose worker process died (killed, out of memory) is
    retried, on a new worker, before it is reported failed; a cell whose node was lost
    moves to a live worker without using one (:mod:`foilbench.runner.ray.recover`). ``cpus_per_model`` / ``gpus_per_model``: what
    each model worker reserves (GPU default: 1 when the device is ``cuda``/``cuda:N``, or
    ``auto`` on a cluster that has GPUs; else 0). ``max_workers``: at most this many model
    workers at once (default: as many as the cluster's resources hold). ``shard_size``: a
    dual-encoder cell with more unique images + texts than this is split into shards of that
    many inputs, encoded by several workers of the model (0: never split).
    ``shared_cache``: workers read and write the embedding cache folder themselves (it must
    be on storage every node mounts); otherwise one cache process on the driver's node
    writes it. ``start_timeout``: seconds a new worker may wait to be placed and started
    before it is released and its cell handed on (a cluster that lost a node may hold
    fewer workers than it did; the slots are recomputed anyway).
    """

    address: str = LOCAL
    retries: int = 2
    cpus_per_model: float = 1.0
    gpus_per_model: float | None = None
    max_workers: int | None = None
    shard_size: int = 0
    shared_cache: bool = False
    start_timeout: float = 120.0

    def __post_init__(self) -> None:
        if not isinstance(self.retries, int) or self.retries < 0:
            raise RunnerError(f"ray retries must be an integer >= 0, got {self.retries!r}")
        if self.cpus_per_model <= 0:
            raise RunnerError(f"ray cpus_per_model must be > 0, got {self.cpus_per_model!r}")
        if self.gpus_per_model is not None and self.gpus_per_model < 0:
            raise RunnerError(f"ray gpus_per_model must be >= 0, got {self.gpus_per_model!r}")
        if self.max_workers is not None and self.max_workers < 1:
            raise RunnerError(f"ray max_workers must be >= 1, got {self.max_workers!r}")
        if self.start_timeout <= 0:
            raise RunnerError(f"ray start_timeout must be > 0, got {self.start_timeout!r}")
        if not isinstance(self.shard_size, int) or self.shard_size < 0:
            raise RunnerError(f"ray shard_size must be an integer >= 0, got {self.shard_size!r}")


def as_options(ray: RayOptions | str | bool | None) -> RayOptions | None:
    """``None``/``False``: no Ray; ``True``: a local instance; a string: that address."""
    if ray is None or ray is False:
        return None
    if ray is True:
        return RayOptions()
    if isinstance(ray, str):
        return RayOptions(address=ray or LOCAL)
    if isinstance(ray, RayOptions):
        return ray
    raise RunnerError(f"ray must be an address, True or RayOptions, got {ray!r}")


def resources(options: RayOptions, device: str, cluster: dict[str, float]) -> dict[str, float]:
    """``{"num_cpus": ..., "num_gpus": ...}`` of one model worker (see :class:`RayOptions`)."""
    return worker_resources(options.cpus_per_model, options.gpus_per_model, device, cluster,
                            what="model worker")


def worker_slots(options: RayOptions, per_worker: dict[str, float],
                 cluster: dict[str, float]) -> int:
    """How many model workers the cluster holds at once (at least 1)."""
    return slots(per_worker, cluster, options.max_workers)
