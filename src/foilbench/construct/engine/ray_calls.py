"""A stage's calls on Ray Data: ``map_batches`` over the calls, with the stage's resources.

:class:`RayContext` is the stage engine's :class:`~.engine.Context` with one change: the
calls of a stage whose backend lives on Ray workers (:mod:`.ray_backends`) that are not
already in the stage cache run as a Ray Data dataset of calls through ``map_batches`` with a
pool of :class:`CallWorker` actors (``num_gpus`` for diffusion, detection and VQA models,
``num_cpus`` for the renderer), each building the backend once. Everything else is the
engine's own and unchanged: cache lookups and call keys before, identical calls made once,
and on the driver, as each result streams back, the reply check, the durable stage-cache
record (so a run killed midway resumes with every finished call) and the counters. The
construction log is written by the stages from those results, in job order, so it is the
same log a sequential run writes. Retries of a failing call happen on the worker, with the
engine's policy (``retries`` more attempts with backoff, only for an error marked
``retryable = True``, a VQA ``UnanswerableError`` stored as an answer); a worker process
that dies is replaced by Ray Data and its batch redone.

A spend cap (:class:`~foilbench.errors.SpendCapReached`, from any layer: the folder's ledger,
an API tracker) is not a failed call: the worker returns it as the call's outcome and makes no
further call, and the driver, once the calls already in flight have come back (their paid
results are stored), raises it, so the run stops as the threaded engine stops.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from foilbench.construct.engine.ray_backends import RayConstructOptions, RemoteBackend
from foilbench.construct.engine.stages import (
    CallResult,
    ConstructError,
    Context,
    Failure,
    call_backend,
)
from foilbench.errors import SpendCapReached
from foilbench.ray_session import import_ray, slots


class Boxed:
    """Holds a value so that Ray Data keeps it one opaque Python object (a request tuple or a
    reply stays what it is, not an Arrow list or struct)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def attempt(backend: Any, role: str, method: str, args: tuple, retries: int,
            backoff_s: float) -> dict[str, Any]:
    """One call with the engine's retry policy; ``{"ok", "value" | "error", "attempts"}``, or
    ``{"ok": False, "cap": error, ...}`` when a spend cap refused it (never retried)."""
    error = ""
    for n in range(retries + 1):
        try:
            value = call_backend(backend, role, method, args)
            return {"ok": True, "value": value, "attempts": n + 1}
        except SpendCapReached as e:  # stops the run (the driver raises it), not a drop
            return {"ok": False, "cap": e, "error": f"{type(e).__name__}: {e}",
                    "attempts": n + 1}
        except Exception as e:  # any backend failure is retried, then reported
            error = f"{type(e).__name__}: {e}"[:400]
            if n >= retries or not getattr(e, "retryable", False):
                return {"ok": False, "error": error, "attempts": n + 1}
            if backoff_s > 0:
                time.sleep(backoff_s * 2 ** n)
    return {"ok": False, "error": error, "attempts": retries + 1}


class CallWorker:
    """``map_batches`` actor: builds the role's backend once, then makes calls."""

    def __init__(self, role: str, spec: str, build: dict[str, Any], fingerprint: str,
                 method: str, retries: int, backoff_s: float) -> None:
        from foilbench.construct.backends.registry import resolve_backend

        self.backend = resolve_backend(role, spec, **build)
        if self.backend.fingerprint != fingerprint:
            raise ConstructError(f"{spec}: this worker's backend has fingerprint "
                                 f"{self.backend.fingerprint}, the driver's {fingerprint} "
                                 "(different model files on this node?)")
        self.role, self.method, self.retries, self.backoff_s = role, method, retries, backoff_s
        self.capped: dict[str, Any] | None = None  # once a cap refused a call, no more calls

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        keys, results = [], []
        for key, args in zip(batch["key"], batch["args"], strict=True):
            keys.append(str(key))
            if self.capped is None:
                out = attempt(self.backend, self.role, self.method, args.value, self.retries,
                              self.backoff_s)
                self.capped = out if "cap" in out else None
            else:
                out = {**self.capped, "attempts": 0}
            results.append(Boxed(out))
        return {"key": keys, "result": results}


def quiet_data() -> None:
    """No Ray Data progress bars or per-dataset log lines (the stage has its own bar)."""
    import ray.data  # the submodule, loaded on first use

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)


class RayContext(Context):
    """The stage engine with Ray-resident backends' calls on Ray Data (module docstring)."""

    def __init__(self, out_dir: Any, backends: dict, *, ray_options: RayConstructOptions,
                 **kwargs: Any) -> None:
        super().__init__(out_dir, backends, **kwargs)
        self.ray_options = ray_options
        self.ray_calls = 0

    def _run(self, stage: str, role: str, backend: Any, method: str,
             todo: dict[str, tuple], stats: Any) -> dict[str, CallResult | Failure]:
        if not isinstance(backend, RemoteBackend):
            return super()._run(stage, role, backend, method, todo, stats)
        from tqdm.auto import tqdm

        ray = import_ray()
        quiet_data()
        options = self.ray_options
        workers = min(slots(backend.resources, ray.cluster_resources(), options.max_workers),
                      len(todo))
        batch = max(1, min(options.batch_size, -(-len(todo) // workers)))
        rows = [{"key": key, "args": Boxed(args)} for key, args in todo.items()]
        data = ray.data.from_items(rows).map_batches(
            CallWorker, batch_size=batch,  # a fixed pool (concurrency= is deprecated)
            compute=ray.data.ActorPoolStrategy(size=workers), **backend.resources,
            fn_constructor_kwargs={"role": role, "spec": backend.spec, "build": backend.build,
                                   "fingerprint": backend.fingerprint, "method": method,
                                   "retries": self.retries, "backoff_s": self.backoff_s})
        bar = tqdm(total=len(todo), desc=f"{self.pipeline} {stage} (ray)".strip(), unit="call",
                   disable=not self.progress, leave=False)
        try:
            return self._collect(stage, role, backend, data.iter_rows(), stats, bar.update)
        finally:
            bar.close()

    def _collect(self, stage: str, role: str, backend: Any, rows: Any, stats: Any,
                 tick: Any = None) -> dict[str, CallResult | Failure]:
        """Record each returned call; a spend cap met by any call is raised once every call
        has come back (so the paid replies in flight are stored first)."""
        results: dict[str, CallResult | Failure] = {}
        cap: SpendCapReached | None = None
        for row in rows:
            out = row["result"].value
            if "cap" in out:
                cap = cap or out["cap"]
            else:
                results[row["key"]] = self._record(stage, role, backend, row["key"], out, stats)
            if tick is not None:
                tick(1)
        self.ray_calls += len(results)
        if cap is not None:
            raise cap
        return results

    def _record(self, stage: str, role: str, backend: RemoteBackend, key: str,
                out: dict[str, Any], stats: Any) -> CallResult | Failure:
        """Count one returned call and, when it succeeded, store it as the engine does."""
        with self._stats_lock:  # as the engine counts: each extra attempt, then the verdict
            if out["attempts"] > 1:
                stats["retried"] += out["attempts"] - 1
            if not out["ok"]:
                stats["failed"] += 1
        if not out["ok"]:
            return Failure(out["error"], key, out["attempts"])
        self.cache.put(key, out["value"], meta={"stage": stage, "role": role,
                                                "backend": backend.fingerprint,
                                                "bound_usd": float(backend.cost_per_call_usd)})
        with self._stats_lock:
            stats["called"] += 1
        return CallResult(out["value"], key, False)
