"""The driver's loop: a pool of model workers on Ray, cells fed to them, results to the writer.

The driver starts as many worker actors (:class:`~foilbench.runner.ray.worker.ModelWorker`)
as the cluster holds with a model's resources (``num_cpus``, ``num_gpus``) and gives each
slot a model: first every model that has no worker yet (its first call loads it and returns
its fingerprint, which the resume check needs: a finished cell is reused, never recomputed),
then, at the tail of a sweep, a second worker to the model with the most cells waiting. A
worker keeps its model while that model has cells queued (cells grouped by model: one load
per worker that serves a model), then moves to the next model; its process and imports are
paid once per slot.

Failures: an error inside a cell (a :class:`~foilbench.errors.FoilbenchError` such as an
unreadable image, or any exception) fails that cell only. A worker that is lost (its process
died, or its node) is released and its call waits in :mod:`.recover` for the cause: a
lost node's calls move to live workers without using a retry; a dead process's call is
retried on a new worker, ``retries`` times, then the cell is reported failed and the model's
other cells go on. The worker slots are recomputed from the live nodes on every tick (a
lost node shrinks the pool), and a worker that the cluster cannot place within
``start_timeout`` seconds is released and its call handed on. Every finished cell is handed
to ``on_cell`` on the driver at once (the single writer of the results store), so a run
killed midway keeps every cell already done.
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
from foilbench.runner.ray.cache import CacheServer
from foilbench.runner.ray.cluster import RayOptions, resources, worker_device, worker_slots
from foilbench.runner.ray.payload import from_payload
from foilbench.runner.ray.plan import Gather, ModelState, Work, shard_cell
from foilbench.runner.ray.progress import Progress
from foilbench.runner.ray.recover import Lost, Recovering, detection_seconds, probe
from foilbench.runner.ray.worker import ModelWorker
from foilbench.runner.settings import RunSettings
from foilbench.store.cache import EmbeddingCache

OnCell = Callable[[str, int, CellResult], None]
OnFailed = Callable[[str, int, str], None]
Finished = Callable[[str, Benchmark], "str | None"]
OnReused = Callable[[str, int, str], None]


@dataclass(eq=False)
class Worker:
    """One worker slot: its actor, the model it holds, whether a call is out."""

    actor: Any
    model: ModelState | None = None
    busy: bool = False
    node_ref: Any = None  # its first call: the node it runs on (answers once it started)
    node: str | None = None
    born: float = field(default_factory=time.perf_counter)


@dataclass
class RayStats:
    """What the scheduler did, for the bench script and the logs."""

    slots: int = 0
    actors: int = 0  # worker processes started (slots, plus replacements of dead ones)
    cache_servers: int = 0  # embedding cache processes started (0 when nothing computed)
    model_loads: int = 0
    works: int = 0
    worker_seconds: float = 0.0
    roundtrip_seconds: float = 0.0
    driver_seconds: float = 0.0
    startup_seconds: float = 0.0
    cells: int = 0
    moved: int = 0  # calls lost with their node and handed to a live worker
    retried: int = 0  # calls retried after their worker process died
    wall_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    @property
    def overhead_per_work(self) -> float:
        """Seconds per cell (or shard) call spent outside the worker's own computation:
        dispatch, argument and result transfer. A new actor's start-up (process, imports,
        model load) is counted apart, in ``startup_seconds`` and the model load times."""
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


class Scheduler(Recovering):
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
        self.workers: list[Worker] = []
        self.inflight: dict[Any, tuple[Worker, ModelState, Work | None, float]] = {}
        self.lost: list[Lost] = []
        self.no_room_since: float | None = None
        self.attempts: dict[Any, int] = {}  # retries used, per call (work, or a model's load)
        self.home: str | None = None  # the driver's node (set when Ray is joined)

    # -- setup ------------------------------------------------------------------------------
    def _start(self) -> None:
        ray = self.ray
        cluster = ray.cluster_resources()
        self.detection = detection_seconds(ray)
        self.home = ray.get_runtime_context().get_node_id()  # the driver's node
        self.per_actor = resources(self.options, self.settings.device, cluster)
        self.stats.slots = worker_slots(self.options, self.per_actor, cluster)
        device = worker_device(self.settings.device, self.per_actor["num_gpus"])
        self.worker_settings = {**self.settings.to_dict(), "device": device}
        self.cache_server = None  # its name; the actor starts with the first cell sent
        self._cache_actor = None
        if self.settings.use_cache and not self.options.shared_cache:
            self.cache_server = f"foilbench-cache-{uuid.uuid4().hex[:12]}"
        self.worker_class = ray.remote(ModelWorker)
        self.bench_refs = [ray.put(b) for b in self.benches]
        self.log("info", f"[ray] {len(self.models)} model(s) x {len(self.benches)} "
                         f"benchmark(s) on {self.stats.slots} worker slot(s) of "
                         f"{self.per_actor['num_cpus']:g} CPU / "
                         f"{self.per_actor['num_gpus']:g} GPU each")

    def _cache_up(self) -> None:
        """Start the cache actor (on the driver's node) before the first call that computes:
        a run whose every cell is reused never starts that process, and the workers'
        start-ups do not share the machine with it. Named actors are registered before
        ``.remote()`` returns, so a worker finds it by name at its first lookup."""
        if self.cache_server is None or self._cache_actor is not None:
            return
        assert self.home is not None  # set when Ray was joined, before any work is sent
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        root = str(EmbeddingCache(self.settings.cache_dir).root)
        self._cache_actor = self.ray.remote(CacheServer).options(
            name=self.cache_server, num_cpus=0, max_restarts=3, max_task_retries=3,
            scheduling_strategy=NodeAffinitySchedulingStrategy(self.home, soft=False),
        ).remote(root)
        self.stats.cache_servers += 1

    def _new_worker(self) -> Worker:
        actor = self.worker_class.options(
            num_cpus=self.per_actor["num_cpus"], num_gpus=self.per_actor["num_gpus"],
            max_restarts=0, max_task_retries=0,  # retried here: see ray.recover
        ).remote(self.worker_settings, cache_server=self.cache_server, revision=self.revision,
                 threads=max(1, int(self.per_actor["num_cpus"])))
        self.stats.actors += 1
        worker = Worker(actor, node_ref=actor.node.remote())
        self.workers.append(worker)
        return worker

    def _release(self, worker: Worker) -> None:
        if worker in self.workers:
            self.workers.remove(worker)
        self._leave(worker)
        self.ray.kill(worker.actor, no_restart=True)

    def _leave(self, worker: Worker) -> None:
        if worker.model is not None:
            worker.model.workers -= 1
            worker.model = None

    # -- dispatch ---------------------------------------------------------------------------
    def _pick_model(self) -> ModelState | None:
        """The model a free worker goes to: first a model no worker holds (in order), then
        the described model with the most works waiting."""
        for m in self.models:
            if m.queue and not m.workers and not m.describing:
                return m
        waiting = [m for m in self.models if m.queue and m.info is not None]
        return max(waiting, key=lambda m: len(m.queue), default=None)

    def _fill(self) -> None:
        """Start workers up to the slots while there is work for them; give idle ones work."""
        for worker in [w for w in self.workers if not w.busy]:
            self._assign(worker)
        while len(self.workers) < self.stats.slots and self._pick_model() is not None:
            self._assign(self._new_worker())

    def _assign(self, worker: Worker) -> None:
        """Next work for an idle worker: its model's, else another model's (switching)."""
        model = worker.model
        if model is None or not model.queue or model.info is None:
            model = self._pick_model()
            if model is None:
                return
            self._leave(worker)
            worker.model = model
            model.workers += 1
            if model.info is None:
                model.describing = True
                self._send(worker, model, None, worker.actor.describe.remote(model.spec))
                return
        work = model.queue.popleft()
        self._cache_up()
        bench = self.bench_refs[work.bench]
        actor, spec = worker.actor, model.spec
        if work.kind == "cell":
            self.progress.started((spec, work.bench))
            ref = actor.evaluate.remote(spec, bench)
        elif work.kind == "shard":
            self.progress.started((spec, work.bench))
            ref = actor.encode_shard.remote(spec, bench, work.side, work.refs)
        else:
            ref = actor.evaluate.remote(spec, bench, work.embeddings)
        self._send(worker, model, work, ref)

    def _send(self, worker: Worker, model: ModelState, work: Work | None, ref: Any) -> None:
        worker.busy = True
        self.inflight[ref] = (worker, model, work, time.perf_counter())

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
        worker, model, work, sent = self.inflight.pop(ref)
        worker.busy = False
        try:
            reply = self.ray.get(ref)
        except Exception as err:  # the call's own error, or its worker died for good
            self._failed_call(worker, model, work, err)
            return
        roundtrip = time.perf_counter() - sent
        if work is None:  # a worker's first call for a model: (start-up and) the load
            model.describing = False
            self.stats.startup_seconds += roundtrip - reply["load_seconds"]
            self._described(model, reply)
        else:
            self.stats.works += 1
            self.stats.roundtrip_seconds += roundtrip
            self.stats.worker_seconds += reply["worker_seconds"]
            if work.kind == "shard":
                self._shard_done(model, work, reply)
            else:
                self._cell_done(model, work, reply)
        self._assign(worker)

    def _failed_call(self, worker: Worker, model: ModelState, work: Work | None,
                     err: BaseException) -> None:
        if not isinstance(err, self.ray.exceptions.RayTaskError):  # the worker is lost
            self._started(worker)
            lost = Lost(model, work, worker.node, time.perf_counter(), error=err)
            if worker.node is not None and worker.node != self.home:  # see ray.recover
                lost.probe = probe(self.ray, worker.node)
            self.lost.append(lost)
            self._release(worker)
            return
        self._give_up(worker, model, work, err)

    def _give_up(self, worker: Worker | None, model: ModelState, work: Work | None,
                 err: BaseException) -> None:
        message = error_text(err, self.options.retries)
        if work is None:  # the model could not be loaded: every cell of it fails
            model.describing = False
            self.log("error", f"{model.spec}: {message}")
            for bench in sorted(model.cells_left()):
                self._fail(model, bench, message)
        else:
            self.log("error", f"{model.spec} x {self.benches[work.bench].name}: {message}")
            self._fail(model, work.bench, message)
        if worker is not None:  # the call's own error: the worker lives on
            if work is None:
                self._leave(worker)
            self._assign(worker)

    def _release_all(self) -> None:
        for worker in list(self.workers):
            self._release(worker)
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
            while self.inflight or self.lost or self._waiting():
                if self.inflight:
                    ready, _ = self.ray.wait(list(self.inflight), num_returns=1, timeout=1.0)
                else:
                    ready = []
                    time.sleep(0.2)
                for ref in ready:
                    self._handle(ref)
                self._recover()
                self._resize()
                self._fill()
                self.progress.show()
            self.progress.show(force=True)
        finally:
            self._release_all()
            if started:
                self.ray.shutdown()
        self.stats.wall_seconds = time.perf_counter() - t0
        return self.stats

