"""Joining or starting Ray, for every command that takes ``--ray [ADDRESS]``.

Without ``ADDRESS`` (the CLI passes ``"local"``) a local Ray instance is started with the
machine's CPUs and GPUs and shut down at the end; with one (``auto``, ``HOST:6379``,
``ray://HOST:10001``) the driver joins that running cluster. A Ray session the caller started
already (``ray.init(...)`` in a notebook or a test) is used as it is and left running.

Ray is an optional dependency (``pip install 'foilbench[ray]'``); nothing imports it at module
level, so foilbench without Ray works unchanged. Usage statistics are off unless the user set
``RAY_USAGE_STATS_ENABLED`` themselves. A cross-cutting module: the runner and the
construction pipelines both use it, and it imports no layer of foilbench.
"""

from __future__ import annotations

import math
import os
from contextlib import contextmanager
from typing import Any

from foilbench.errors import FoilbenchError

LOCAL = "local"
# variables a worker needs to find the same files and models as the driver; forwarded to the
# workers of a cluster this process connects to (a local instance inherits them anyway)
FORWARDED_ENV = ("FOILBENCH_HOME", "FOILBENCH_CACHE", "FOILBENCH_CACHE_DIR",
                 "FOILBENCH_DATA_CACHE", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
                 "TORCH_HOME", "OPENCLIP_CACHE_DIR")


class RaySetupError(FoilbenchError):
    """Ray is missing, or the cluster at the given address cannot be reached."""


def import_ray() -> Any:
    """The ``ray`` module, or an error that says how to install it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise RaySetupError("--ray needs Ray: pip install 'foilbench[ray]' (ray[data] >= 2.52)"
                            ) from None
    return ray


def connect(address: str = LOCAL) -> bool:
    """Join or start Ray as ``address`` says; True when this call started it (the caller then
    shuts it down)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True,
                              "runtime_env": {"env_vars": env} if env else None}
    try:
        if address == LOCAL:
            ray.init(**kwargs)
        else:
            ray.init(address=address, **kwargs)
    except ConnectionError as e:
        raise RaySetupError(f"cannot reach the Ray cluster at {address!r}: {e} (start it with "
                            "`ray start --head`, or drop the address for a local one)") from None
    return True


@contextmanager
def session(address: str = LOCAL):
    """Ray joined or started for the ``with`` block (shut down after only if started here);
    yields the ``ray`` module."""
    started = connect(address)
    try:
        yield import_ray()
    finally:
        if started:
            import_ray().shutdown()


def worker_resources(cpus: float, gpus: float | None, device: str, cluster: dict[str, float],
                     *, what: str = "worker") -> dict[str, float]:
    """``{"num_cpus": ..., "num_gpus": ...}`` of one worker. ``gpus=None``: 1 when ``device``
    is ``cuda``/``cuda:N``, or ``auto`` on a cluster that has GPUs; else 0. A request the
    cluster cannot hold is an error now rather than a task that waits forever."""
    if gpus is None:
        wants_gpu = device.startswith("cuda") or (device == "auto" and cluster.get("GPU", 0) > 0)
        gpus = 1.0 if wants_gpu else 0.0
    if gpus > 0 and cluster.get("GPU", 0) < gpus:
        raise RaySetupError(f"each {what} asks for {gpus:g} GPU(s) but the Ray cluster has "
                            f"{cluster.get('GPU', 0):g} (use --device cpu, or add GPU nodes)")
    if cluster.get("CPU", 0) < cpus:
        raise RaySetupError(f"each {what} asks for {cpus:g} CPU(s) but the Ray cluster has "
                            f"{cluster.get('CPU', 0):g}")
    return {"num_cpus": float(cpus), "num_gpus": float(gpus)}


def slots(per_worker: dict[str, float], cluster: dict[str, float],
          max_workers: int | None = None) -> int:
    """How many such workers the cluster holds at once (at least 1, at most ``max_workers``)."""
    fits = [math.floor(cluster.get("CPU", 0) / per_worker["num_cpus"] + 1e-9)]
    if per_worker["num_gpus"] > 0:
        fits.append(math.floor(cluster.get("GPU", 0) / per_worker["num_gpus"] + 1e-9))
    n = max(1, min(fits))
    return min(n, max_workers) if max_workers else n


def worker_device(device: str, num_gpus: float) -> str:
    """The device a worker passes to its model: Ray shows a GPU worker only its own GPU(s)
    (``CUDA_VISIBLE_DEVICES``), so ``cuda:N`` becomes ``cuda`` there, and a worker without a
    GPU reservation must not take one it happens to see."""
    if num_gpus > 0 and (device.startswith("cuda") or device == "auto"):
        return "cuda"
    if num_gpus == 0 and device == "auto":
        return "cpu"
    return device
