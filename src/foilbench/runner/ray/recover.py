"""What the Ray driver does when a worker is lost: was it the process or its whole node?

A worker whose call ends without the cell's own error (``ActorDiedError`` and kin) is lost.
Its work waits here, not yet retried and not yet failed, until the cause is known:

- its node is gone (Ray lists it dead, or a zero-CPU probe task pinned to that node cannot
  run): the work moves to a live worker and uses no retry (a lost node is not the cell's
  fault);
- its node is alive (the probe answered, or it is the driver's own node, which Ray lists
  alive: the driver runs there, so no probe is sent and nothing waits for one): the process
  died (killed, out of memory), so the work is retried on a new worker, ``retries`` times,
  then fails;
- neither is known after Ray's node-death detection time (health-check period x failure
  threshold + timeout, read from Ray's config) and a margin: a retry is used.

Ray's own actor restarts are off for model workers (``max_restarts=0``): a restarted actor
that the cluster can no longer place would wait forever with the cell. Slots are recomputed
from the live nodes' resources on every tick of the driver's loop, so a lost node also
shrinks the pool.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from foilbench.runner.ray.cluster import worker_slots
from foilbench.runner.ray.plan import ModelState, Work

# Ray's defaults (src/ray/common/ray_config_def.h), used when its config cannot be read
DEFAULT_DETECTION = {"period_ms": 3000, "threshold": 5, "timeout_ms": 10000}
MARGIN_S = 2.0


def detection_seconds(ray: Any) -> float:
    """About how long Ray takes to declare a node dead after its raylet stops answering."""
    try:
        cfg = ray._config  # noqa: SLF001 (Ray's config of this process: its RAY_* settings)
        period = cfg.health_check_period_ms()
        threshold = cfg.health_check_failure_threshold()
        timeout = cfg.health_check_timeout_ms()
    except (AttributeError, TypeError):
        period, threshold, timeout = DEFAULT_DETECTION.values()
    return (period * threshold + timeout) / 1000.0


def live_resources(ray: Any) -> dict[str, float]:
    """CPU and GPU totals of the nodes Ray lists alive now."""
    total: dict[str, float] = {}
    for node in ray.nodes():
        if node.get("Alive"):
            for key, value in node.get("Resources", {}).items():
                total[key] = total.get(key, 0.0) + float(value)
    return total


def alive_nodes(ray: Any) -> set[str]:
    return {n["NodeID"] for n in ray.nodes() if n.get("Alive")}


def _ping() -> bool:
    return True


def probe(ray: Any, node: str) -> Any:
    """A zero-CPU task that must run on ``node``: it answers if the node is alive, and fails
    (unschedulable) once Ray declares the node dead."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return ray.remote(_ping).options(
        num_cpus=0, max_retries=0,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote()


@dataclass(eq=False)
class Lost:
    """A call whose worker was lost, waiting for the verdict."""

    model: Any  # ModelState
    work: Any  # Work, or None for a model's first call (its load)
    node: str | None
    since: float
    probe: Any = None
    error: BaseException | None = None


def verdict(ray: Any, lost: Lost, alive: set[str], detection: float,
            home: str | None = None) -> str | None:
    """``"node"`` (its node is gone), ``"process"`` (only the process died) or ``None``
    (not known yet). ``home``: the driver's node; a worker lost there died alone, since that
    node lives while the driver runs on it (a probe there would only start a process to say
    so, seconds on a busy machine, beside the retry it holds up)."""
    if lost.node is not None and lost.node not in alive:
        return "node"
    if lost.node is not None and lost.node == home:
        return "process"
    if lost.probe is not None:
        ready, _ = ray.wait([lost.probe], timeout=0)
        if ready:
            try:
                ray.get(ready[0])
            except Exception:  # unschedulable: the node is gone
                return "node"
            return "process"
    if time.perf_counter() - lost.since > detection + MARGIN_S:
        return "process"
    return None


def node_of(ray: Any, ref: Any) -> str | None:
    """The node a worker runs on, when its ``node`` call has answered."""
    if ref is None:
        return None
    ready, _ = ray.wait([ref], timeout=0)
    if not ready:
        return None
    try:
        return ray.get(ready[0])
    except Exception:
        return None


class Recovering:
    """The :class:`~foilbench.runner.ray.schedule.Scheduler`'s part that hands on the calls
    of lost workers and keeps the pool within the live nodes (see the module docstring)."""

    # state and steps of the Scheduler this part is mixed into (declared for type checking)
    ray: Any
    models: list[ModelState]
    benches: Any
    closed: set[tuple[str, int]]
    stats: Any
    workers: list[Any]
    inflight: dict[Any, tuple[Any, ModelState, Work | None, float]]
    lost: list[Any]
    no_room_since: float | None
    attempts: dict[Any, int]
    detection: float
    home: str | None
    per_actor: dict[str, Any]
    options: Any
    log: Any
    _fail: Any
    _give_up: Any
    _release: Any

    def _retire(self, worker: Any, why: str) -> None:
        """Release a worker that has not started (or is no longer wanted) and put its call
        back in its model's queue; it used no retry."""
        for ref, (w, model, work, _) in list(self.inflight.items()):
            if w is worker:
                del self.inflight[ref]
                self._requeue(model, work)
        self.log("warning", f"[ray] released a worker: {why}")
        self._release(worker)

    def _requeue(self, model: ModelState, work: Work | None) -> None:
        if work is None:  # a model's load: the next free worker describes it again
            model.describing = False
        elif (model.spec, work.bench) not in self.closed:
            model.queue.appendleft(work)

    def _resize(self) -> None:
        """Slots from the live nodes' resources now; workers over them, and workers the
        cluster could not place within ``start_timeout``, are released (idle first)."""
        live = live_resources(self.ray)
        room = live.get("CPU", 0) >= self.per_actor["num_cpus"] and \
            live.get("GPU", 0) >= self.per_actor["num_gpus"]
        self.stats.slots = worker_slots(self.options, self.per_actor, live) if room else 0
        now = time.perf_counter()
        if room or self.inflight:
            self.no_room_since = None
        elif self.no_room_since is None:
            self.no_room_since = now
        elif now - self.no_room_since > self.options.start_timeout:  # no node left for us
            for model in self.models:
                for bench in sorted(model.cells_left()):
                    self._fail(model, bench, "no live Ray node can hold a model worker")
        for worker in list(self.workers):
            if self._started(worker):
                continue
            if now - worker.born > self.options.start_timeout:
                self._retire(worker, f"not placed by the cluster within "
                                     f"{self.options.start_timeout:g} s")
        excess = len(self.workers) - self.stats.slots
        for worker in sorted(self.workers, key=lambda w: (w.busy, self._started(w))):
            if excess <= 0:
                break
            if worker.busy and self._started(worker):
                break  # a running call is never taken away from a live worker
            self._retire(worker, "more workers than the live nodes hold")
            excess -= 1

    def _started(self, worker: Any) -> bool:
        if worker.node is None:
            worker.node = node_of(self.ray, worker.node_ref)
        return worker.node is not None

    def _recover(self) -> None:
        """Hand on the calls of lost workers whose cause is known (see :mod:`.recover`)."""
        if not self.lost:
            return
        alive = alive_nodes(self.ray)
        for lost in list(self.lost):
            cause = verdict(self.ray, lost, alive, self.detection, self.home)
            if cause is None:
                continue
            self.lost.remove(lost)
            what = (f"{lost.model.spec} x {self.benches[lost.work.bench].name}"
                    if lost.work is not None else f"{lost.model.spec} (load)")
            if cause == "node":
                self.stats.moved += 1
                self.log("warning", f"[ray] node {lost.node} lost: {what} moves to a live "
                                    f"worker")
                self._requeue(lost.model, lost.work)
                continue
            key = id(lost.work) if lost.work is not None else (lost.model.spec, "load")
            used = self.attempts.get(key, 0)
            if used >= self.options.retries:
                self._give_up(None, lost.model, lost.work, lost.error)
                continue
            self.attempts[key] = used + 1
            self.stats.retried += 1
            self.log("warning", f"[ray] worker died; retry {used + 1} of "
                                f"{self.options.retries}: {what}")
            self._requeue(lost.model, lost.work)

    def _waiting(self) -> bool:
        """Work queued that a worker can take (a model whose load failed has none left)."""
        return any(m.queue for m in self.models)

