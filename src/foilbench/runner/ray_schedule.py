"""The driver's loop: model actors on Ray, cells fed to them, results handed to the writer.

Per model (cells grouped by model, :mod:`.ray_plan`) the driver starts an actor
(:class:`~foilbench.runner.ray_worker.ModelWorker`) with the model's resources as soon as the
cluster has room; the actor's first call loads the model and returns its fingerprint, which
the resume check needs (a finished cell is reused, never recomputed). Then the actor takes the
model's cells one at a time; a model with cells waiting while its actors are busy gets another
actor when a slot is free (at the tail of a sweep), and an actor whose model has nothing left
is released, freeing its slot for the next model.

Failures: an error inside a cell (a :class:`~foilbench.errors.FoilbenchError` such as an
unreadable image, or any exception) fails that cell only. A worker process that dies is
restarted by Ray and the cell retried, ``retries`` times (Ray's ``max_restarts`` and
``max_task_retries``); after that the cell is reported failed and the model's other cells go
to a fresh actor. Every finished cell is handed to ``on_cell`` on the driver at once (the
single writer of the results store), so a run killed midway keeps every cell already done.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from foilbench.data.format import Benchmark
from foilbench.errors import FoilbenchError
from foilbench.ray_session import connect, import_ray
from foilbench.runner.cell import CellResult
from foilbench.runner.log import Log
from foilbench.runner.ray_cache import CacheServer
from foilbench.runner.ray_cluster import RayOptions, resources, worker_device, worker_slots
from foilbench.runner.ray_payload import from_payload
from foilbench.runner.ray_plan import Gather, ModelState, Work, shard_cell
from foilbench.runner.ray_progress import Progress
from foilbench.runner.ray_worker import ModelWorker
from foilbench.runner.settings import RunSettings
from foilbench.store.cache import EmbeddingCache

OnCell = Callable[[str, int, CellResult], None]
OnFailed = Callable[[str, int, str], None]
Finished = Callable[[str, Benchmark], "str | None"]
OnReused = Callable[[str, int, str], None]


@dataclass
class RayStats:
    """What the scheduler did, for the bench script and the logs."""

    slots: int = 0
    actors: int = 0
    model_loads: int = 0
    works: int = 0
    worker_seconds: float = 0.0
    roundtrip_seconds: float = 0.0
    driver_seconds: float = 0.0
    cells: int = 0
    wall_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    @property
    def overhead_per_work(self) -> float:
        """Seconds per actor call spent outside the worker's own computation (dispatch,
        argument and result transfer, waiting for a starting actor)."""
        return (self.roundtrip_seconds - self.worker_seconds) / self.works if self.works else 0.0


def error_text(err: BaseException, retries: int) -> str:
    """One line for a failed call: the cell's own error, or that its worker died."""
    ray = import_ray()
    if isinstance(err, ray.exceptions.RayTaskError):
        cause = err.cause if err.cause is not None else err
        if isinstance(cause, FoilbenchError):
            return str(cause)
        return f"{type(cause).__name__}: {cause}"
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return f"worker died ({retries} retr{'y' if retries == 1 else 'ies'} used): {first}"


class Scheduler:
    """One Ray run over ``specs`` x ``benches`` (see the module docstring)."""

    def __init__(self, specs: list[str], benches: list[Benchmark], settings: RunSettings,
                 options: RayOptions, *, log: Log, on_cell: OnCell, on_failed: OnFailed,
                 finished: Finished | None = None, on_reused: OnReused | None = None,
                 revision: str | None = None) -> None:
        self.ray = import_ray()
        self.benches, self.settings, self.options = benches, settings, options
        self.log, self.on_cell, self.on_failed = log, on_cell, on_failed
        self.finished, self.on_reused, self.revision = finished, on_reused, revision
        self.models = [ModelState(spec, deque(Work("cell", b) for b in range(len(benches))))
                       for spec in specs]
        self.closed: set[tuple[str, int]] = set()  # cells done, reused or failed
        self.progress = Progress(len(specs) * len(benches), log)
        self.stats = RayStats()
        self.inflight: dict[Any, tuple[ModelState, Any, Work | None, float]] = {}

    # -- setup ------------------------------------------------------------------------------
    def _start(self) -> None:
        ray = self.ray
        cluster = ray.cluster_resources()
        self.per_actor = resources(self.options, self.settings.device, cluster)
        self.stats.slots = worker_slots(self.options, self.per_actor, cluster)
        device = worker_device(self.settings.device, self.per_actor["num_gpus"])
        self.worker_settings = {**self.settings.to_dict(), "device": device}
        self.cache_server = None
        if self.settings.use_cache and not self.options.shared_cache:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            root = str(EmbeddingCache(self.settings.cache_dir).root)
            self.cache_server = f"foilbench-cache-{uuid.uuid4().hex[:12]}"
            self._cache_actor = ray.remote(CacheServer).options(
                name=self.cache_server, num_cpus=0, max_restarts=3, max_task_retries=3,
                scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
            ).remote(root)
        self.worker_class = ray.remote(ModelWorker)
        self.bench_refs = [ray.put(b) for b in self.benches]
        self.log("info", f"[ray] {len(self.models)} model(s) x {len(self.benches)} "
                         f"benchmark(s) on {self.stats.slots} worker slot(s) of "
                         f"{self.per_actor['num_cpus']:g} CPU / "
                         f"{self.per_actor['num_gpus']:g} GPU each")

    def _new_actor(self, model: ModelState) -> Any:
        actor = self.worker_class.options(
            num_cpus=self.per_actor["num_cpus"], num_gpus=self.per_actor["num_gpus"],
            max_restarts=self.options.retries, max_task_retries=self.options.retries,
        ).remote(model.spec, self.worker_settings, cache_server=self.cache_server,
                 revision=self.revision, threads=max(1, int(self.per_actor["num_cpus"])))
        model.actors.append(actor)
        self.stats.actors += 1
        return actor

    def _live(self) -> int:
        return sum(len(m.actors) for m in self.models)

    def _release(self, model: ModelState, actor: Any) -> None:
        if actor in model.actors:
            model.actors.remove(actor)
        self.ray.kill(actor, no_restart=True)

    # -- dispatch ---------------------------------------------------------------------------
    def _pick_model(self) -> ModelState | None:
        """The model a free slot goes to: first a model without an actor, then the model
        with the most works waiting while its actors are busy."""
        for m in self.models:
            if m.queue and not m.actors and not m.describing:
                return m
        waiting = [m for m in self.models if m.queue and m.info is not None
                   and not m.describing and m.busy >= len(m.actors)]
        return max(waiting, key=lambda m: len(m.queue), default=None)

    def _fill(self) -> None:
        while self._live() < self.stats.slots:
            model = self._pick_model()
            if model is None:
                return
            actor = self._new_actor(model)
            if model.info is None:
                model.describing = True
                model.busy += 1
                self._send(model, actor, None, actor.describe.remote())
            else:
                self._next(model, actor)

    def _send(self, model: ModelState, actor: Any, work: Work | None, ref: Any) -> None:
        self.inflight[ref] = (model, actor, work, time.perf_counter())

    def _next(self, model: ModelState, actor: Any) -> None:
        """Give ``actor`` its model's next work, or release it when there is none."""
        if not model.queue:
            self._release(model, actor)
            return
        work = model.queue.popleft()
        model.busy += 1
        bench = self.bench_refs[work.bench]
        if work.kind == "cell":
            self.progress.started((model.spec, work.bench))
            ref = actor.evaluate.remote(bench)
        elif work.kind == "shard":
            self.progress.started((model.spec, work.bench))
            ref = actor.encode_shard.remote(bench, work.side, work.refs)
        else:
            ref = actor.evaluate.remote(bench, work.embeddings)
        self._send(model, actor, work, ref)

    # -- results ----------------------------------------------------------------------------
    def _described(self, model: ModelState, reply: dict[str, Any]) -> None:
        model.info = reply["info"]
        model.load_seconds.append(reply["load_seconds"])
        self.stats.model_loads += 1
        kept = []
        for work in model.queue:
            bench = self.benches[work.bench]
            run_id = self.finished(model.info["fingerprint"], bench) if self.finished else None
            if run_id is not None:
                self.closed.add((model.spec, work.bench))
                self.progress.reuse((model.spec, work.bench))
                if self.on_reused:
                    self.on_reused(model.spec, work.bench, run_id)
                continue
            shards = (shard_cell(bench, work.bench, self.options.shard_size,
                                 self.settings.batch_size)
                      if model.info["family"] == "dual" else None)
            if shards:
                model.gathers[work.bench] = Gather(len(shards))
                kept += shards
            else:
                kept.append(work)
        model.queue.clear()
        model.queue.extend(kept)

    def _cell_done(self, model: ModelState, work: Work, payload: dict[str, Any]) -> None:
        t0 = time.perf_counter()
        cell = from_payload(payload, self.benches[work.bench])
        self.on_cell(model.spec, work.bench, cell)
        self.stats.driver_seconds += time.perf_counter() - t0
        self.stats.cells += 1
        self.closed.add((model.spec, work.bench))
        model.gathers.pop(work.bench, None)
        self.progress.finished((model.spec, work.bench), len(self.benches[work.bench]))

    def _shard_done(self, model: ModelState, work: Work, payload: dict[str, Any]) -> None:
        gather = model.gathers.get(work.bench)
        if gather is None or gather.failed:
            return
        gather.rows.update(zip(payload["hashes"], payload["embeddings"], strict=True))
        gather.waiting -= 1
        self.progress.encoded(len(payload["hashes"]))
        if gather.waiting == 0:
            model.queue.appendleft(Work("finish", work.bench,
                                        embeddings=self.ray.put(gather.rows)))

    def _fail(self, model: ModelState, bench: int, message: str) -> None:
        if (model.spec, bench) in self.closed:  # e.g. a second shard of a failed cell
            return
        self.closed.add((model.spec, bench))
        model.drop_bench(bench)
        self.stats.failures.append(f"{model.spec} x {self.benches[bench].name}")
        self.progress.fail((model.spec, bench))
        self.on_failed(model.spec, bench, message)

    def _handle(self, ref: Any) -> None:
        model, actor, work, sent = self.inflight.pop(ref)
        model.busy -= 1
        try:
            reply = self.ray.get(ref)
        except Exception as err:  # the call's own error, or its worker died for good
            self._failed_call(model, actor, work, err)
            return
        self.stats.works += 1
        self.stats.roundtrip_seconds += time.perf_counter() - sent
        self.stats.worker_seconds += reply.get("worker_seconds", reply.get("load_seconds", 0))
        if work is None:
            model.describing = False
            self._described(model, reply)
        elif work.kind == "shard":
            self._shard_done(model, work, reply)
        else:
            self._cell_done(model, work, reply)
        self._next(model, actor)

    def _failed_call(self, model: ModelState, actor: Any, work: Work | None,
                     err: BaseException) -> None:
        message = error_text(err, self.options.retries)
        died = not isinstance(err, self.ray.exceptions.RayTaskError)
        if work is None:  # the model could not be loaded: every cell of it fails
            model.describing = False
            self.log("error", f"{model.spec}: {message}")
            for bench in sorted(model.cells_left()):
                self._fail(model, bench, message)
        else:
            self.log("error", f"{model.spec} x {self.benches[work.bench].name}: {message}")
            self._fail(model, work.bench, message)
        if died or work is None:
            self._release(model, actor)
        else:
            self._next(model, actor)

    def _release_all(self) -> None:
        for m in self.models:
            for actor in list(m.actors):
                self._release(m, actor)
        if getattr(self, "_cache_actor", None) is not None:
            self.ray.kill(self._cache_actor, no_restart=True)
            self._cache_actor = None

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> RayStats:
        t0 = time.perf_counter()
        started = connect(self.options.address)
        try:
            self._start()
            self._fill()
            while self.inflight:
                ready, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=5.0)
                for ref in ready:
                    self._handle(ref)
                self._fill()
                self.progress.show()
            self.progress.show(force=True)
        finally:
            self._release_all()
            if started:
                self.ray.shutdown()
        self.stats.wall_seconds = time.perf_counter() - t0
        return self.stats

