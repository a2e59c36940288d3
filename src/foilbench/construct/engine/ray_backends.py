"""Construction backends that live on Ray workers, seen from the driver.

With ``foilbench construct ... --ray``, the roles whose backends do heavy local work (image
generation and editing with diffusers, detection, VQA and language models, the world
renderer) run on Ray workers (:mod:`.ray_calls`); API backends (I/O bound, one shared spend
cap) and the ``template`` text backend stay on the driver as before. The driver never loads
those models: one Ray task with the stage's resources builds each backend once, on a worker,
and reports what the pipeline needs to know about it (fingerprint, provenance, flags), which a
:class:`RemoteBackend` stands in with. Cache keys are computed on the driver from that
fingerprint, and every worker that later builds the backend checks it gets the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilbench.construct.backends.base import Backend
from foilbench.construct.engine.stages import ConstructError
from foilbench.errors import FoilbenchError
from foilbench.ray_session import LOCAL, connect, import_ray, worker_device, worker_resources

ON_DRIVER = ("template",)
CPU_ONLY = ("world",)  # the renderer: CPU work, never a GPU
PROFILE_FLAGS = ("reads_structure", "accepts_images", "cost_per_call_usd", "max_concurrency")


@dataclass(frozen=True)
class RayConstructOptions:
    """Where and with what the heavy stages run. ``gpus``: per worker of a model backend
    (default: 1 when ``device`` is cuda, or auto on a cluster with GPUs); ``max_workers``:
    workers per stage at most (default: what the cluster holds); ``batch_size``: calls per
    Ray Data batch."""

    address: str = LOCAL
    device: str = "auto"
    dtype: str = "float32"
    cpus: float = 1.0
    gpus: float | None = None
    max_workers: int | None = None
    batch_size: int = 4


def runs_on_ray(spec: str) -> bool:
    """Whether a backend spec's calls go to Ray workers (see the module docstring)."""
    return not spec.startswith("api:") and spec not in ON_DRIVER


def stage_resources(spec: str, options: RayConstructOptions,
                    cluster: dict[str, float]) -> dict[str, float]:
    """``num_cpus`` / ``num_gpus`` of one worker of this backend."""
    gpus = 0.0 if spec in CPU_ONLY else options.gpus
    return worker_resources(options.cpus, gpus, options.device, cluster,
                            what=f"worker of {spec}")


def profile(role: str, spec: str, build: dict[str, Any]) -> dict[str, Any]:
    """Build the backend (on a worker) and report what the driver needs of it."""
    from foilbench.construct.backends.registry import resolve_backend

    backend = resolve_backend(role, spec, **build)
    flags = {k: getattr(backend, k) for k in PROFILE_FLAGS if hasattr(backend, k)}
    return {"fingerprint": backend.fingerprint, "describe": backend.describe(), **flags}


class RemoteBackend(Backend):
    """Stands in on the driver for a backend built on Ray workers; its calls never run here
    (the :class:`~.ray_calls.RayContext` sends them to workers)."""

    def __init__(self, role: str, spec: str, info: dict[str, Any], resources: dict[str, float],
                 build: dict[str, Any]) -> None:
        self.role = role  # type: ignore[misc]  # a stand-in takes the role it stands for
        self.spec, self.info, self.resources, self.build = spec, info, resources, build
        for key in PROFILE_FLAGS:
            if key in info:
                setattr(self, key, info[key])

    @property
    def fingerprint(self) -> str:
        return self.info["fingerprint"]

    def describe(self) -> dict[str, Any]:
        return dict(self.info["describe"])


def unwrap(err: BaseException) -> BaseException:
    """The error a Ray task raised (a foilbench error prints as itself)."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, FoilbenchError) else err


def resolve_backends_on_ray(specs: dict[str, str | None], options: RayConstructOptions,
                            **driver_options: Any) -> dict[str, Backend]:
    """One backend per role, like :func:`~.resolve.resolve_backends`: driver roles built here
    (with ``driver_options``: max_spend, max_concurrency, cache_dir), Ray roles profiled on a
    worker each. Joins or starts Ray (``options.address``) if no session is running."""
    from foilbench.construct.engine.resolve import resolve_backends

    connect(options.address)
    ray = import_ray()
    wanted = {role: spec for role, spec in specs.items() if spec}
    here = {r: s for r, s in wanted.items() if not runs_on_ray(s)}
    backends = resolve_backends(here, device=options.device, dtype=options.dtype,
                                **driver_options)
    cluster = ray.cluster_resources()
    task = ray.remote(profile)
    pending = {}
    for role, spec in wanted.items():
        if role in here:
            continue
        res = stage_resources(spec, options, cluster)
        build: dict[str, Any] = {"device": worker_device(options.device, res["num_gpus"]),
                 "dtype": options.dtype}
        if driver_options.get("cache_dir") is not None:
            build["cache_dir"] = Path(driver_options["cache_dir"])
        pending[role] = (spec, res, build, task.options(**res, max_retries=1).remote(
            role, spec, build))
    for role, (spec, res, build, ref) in pending.items():
        try:
            info = ray.get(ref)
        except ray.exceptions.RayError as e:
            cause = unwrap(e)
            if isinstance(cause, FoilbenchError):
                raise cause from None
            raise ConstructError(f"{role} backend {spec!r} could not be built on a Ray "
                                 f"worker: {e}") from None
        backends[role] = RemoteBackend(role, spec, info, res, build)
    return dict(sorted(backends.items(), key=lambda kv: list(wanted).index(kv[0])))
