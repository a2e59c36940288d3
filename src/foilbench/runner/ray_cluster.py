"""Connecting to Ray, and what each model's worker asks of it.

``foilbench sweep --ray [ADDRESS]``: without ``ADDRESS`` (the CLI passes ``"local"``) a local
Ray instance is started with the machine's CPUs and GPUs and shut down at the end; with one
(``auto``, ``HOST:6379``, ``ray://HOST:10001``) the driver joins that running cluster. A Ray
session the caller started already (``ray.init(...)`` in a notebook or a test) is used as it
is and left running.

Ray is an optional dependency (``pip install 'foilbench[ray]'``); nothing here imports it at
module level, so ``foilbench`` without Ray works unchanged. Usage statistics are off unless
the user set ``RAY_USAGE_STATS_ENABLED`` themselves.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from foilbench.runner.settings import RunnerError

LOCAL = "local"
# variables a worker needs to find the same files and models as the driver; forwarded to the
# workers of a cluster this process connects to (a local instance inherits them anyway)
FORWARDED_ENV = ("FOILBENCH_HOME", "FOILBENCH_CACHE", "FOILBENCH_CACHE_DIR",
                 "FOILBENCH_DATA_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
                 "TORCH_HOME", "OPENCLIP_CACHE_DIR")


@dataclass(frozen=True)
class RayOptions:
    """How a run or sweep uses Ray.

    ``retries``: how often a cell whose worker died (killed, out of memory) is retried, on a
    restarted worker, before it is reported failed (Ray's ``max_restarts`` and
    ``max_task_retries`` of the model's actor). ``cpus_per_model`` / ``gpus_per_model``: what
    each model worker reserves (GPU default: 1 when the device is ``cuda``/``cuda:N``, or
    ``auto`` on a cluster that has GPUs; else 0). ``max_workers``: at most this many model
    workers at once (default: as many as the cluster's resources hold). ``shard_size``: a
    dual-encoder cell with more unique images + texts than this is split into shards of that
    many inputs, encoded by several workers of the model (0: never split).
    ``shared_cache``: workers read and write the embedding cache folder themselves (it must
    be on storage every node mounts); otherwise one cache process on the driver's node
    writes it.
    """

    address: str = LOCAL
    retries: int = 2
    cpus_per_model: float = 1.0
    gpus_per_model: float | None = None
    max_workers: int | None = None
    shard_size: int = 0
    shared_cache: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.retries, int) or self.retries < 0:
            raise RunnerError(f"ray retries must be an integer >= 0, got {self.retries!r}")
        if self.cpus_per_model <= 0:
            raise RunnerError(f"ray cpus_per_model must be > 0, got {self.cpus_per_model!r}")
        if self.gpus_per_model is not None and self.gpus_per_model < 0:
            raise RunnerError(f"ray gpus_per_model must be >= 0, got {self.gpus_per_model!r}")
        if self.max_workers is not None and self.max_workers < 1:
            raise RunnerError(f"ray max_workers must be >= 1, got {self.max_workers!r}")
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


def import_ray() -> Any:
    """The ``ray`` module, or an error that says how to install it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise RunnerError("--ray needs Ray: pip install 'foilbench[ray]' (ray[data] 2.60)") from None
    return ray


def connect(options: RayOptions) -> bool:
    """Join or start Ray as ``options.address`` says; True when this call started it (the
    caller then shuts it down)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True,
                              "runtime_env": {"env_vars": env} if env else None}
    try:
        if options.address == LOCAL:
            ray.init(**kwargs)
        else:
            ray.init(address=options.address, **kwargs)
    except ConnectionError as e:
        raise RunnerError(f"cannot reach the Ray cluster at {options.address!r}: {e} (start it "
                          "with `ray start --head`, or drop the address for a local one)") from None
    return True


def resources(options: RayOptions, device: str, cluster: dict[str, float]) -> dict[str, float]:
    """``{"num_cpus": ..., "num_gpus": ...}`` of one model worker (see :class:`RayOptions`)."""
    gpus = options.gpus_per_model
    if gpus is None:
        wants_gpu = device.startswith("cuda") or (device == "auto" and cluster.get("GPU", 0) > 0)
        gpus = 1.0 if wants_gpu else 0.0
    if gpus > 0 and cluster.get("GPU", 0) < gpus:
        raise RunnerError(f"each model worker asks for {gpus:g} GPU(s) but the Ray cluster has "
                          f"{cluster.get('GPU', 0):g} (use --device cpu, or add GPU nodes)")
    if cluster.get("CPU", 0) < options.cpus_per_model:
        raise RunnerError(f"each model worker asks for {options.cpus_per_model:g} CPU(s) but the "
                          f"Ray cluster has {cluster.get('CPU', 0):g}")
    return {"num_cpus": float(options.cpus_per_model), "num_gpus": float(gpus)}


def worker_slots(options: RayOptions, per_worker: dict[str, float],
                 cluster: dict[str, float]) -> int:
    """How many model workers the cluster holds at once (at least 1)."""
    fits = [math.floor(cluster.get("CPU", 0) / per_worker["num_cpus"] + 1e-9)]
    if per_worker["num_gpus"] > 0:
        fits.append(math.floor(cluster.get("GPU", 0) / per_worker["num_gpus"] + 1e-9))
    slots = max(1, min(fits))
    return min(slots, options.max_workers) if options.max_workers else slots


def worker_device(device: str, num_gpus: float) -> str:
    """The device a worker passes to the model: Ray shows a GPU worker only its own GPU(s)
    (``CUDA_VISIBLE_DEVICES``), so ``cuda:N`` becomes ``cuda`` there."""
    if num_gpus > 0 and device.startswith("cuda"):
        return "cuda"
    if num_gpus > 0 and device == "auto":
        return "cuda"
    if num_gpus == 0 and device == "auto":
        return "cpu"  # a worker without a GPU reservation must not grab one it sees
    return device
