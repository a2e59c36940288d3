"""The stage engine: backends, cached and retried calls, bounded concurrency, progress.

A pipeline holds one :class:`Context` per run. Stages ask it for calls in batches
(:meth:`Context.call_many`); for each call it

1. hashes the call (:func:`~foilbench.construct.backends.base.call_key`: backend fingerprint,
   method, every argument) and answers from the stage cache when it can (no call, no cost);
2. otherwise calls the backend (an API backend reserves and settles each request in the
   folder's ledger, :mod:`.ledger`), checks the reply's type, and stores it durably before
   counting it done;
3. a failed call is dropped at once with its cause: the API transport is the one retry layer
   (429 / 5xx / network), and a local backend's error or a prompt longer than the context
   fails the same way again. Only an error whose class says ``retryable = True`` is tried
   again (``retries`` more times, exponential backoff); then a :class:`Failure` is returned
   and the stage drops that candidate with the error as its reason. A spend-cap refusal
   stops the run. A VQA model's ``UnanswerableError`` (its answer names no single choice) is
   an answer, not a failure: it is stored as :class:`~foilbench.construct.backends.base.
   Unanswerable` (cached like any answer) and the stage counts it as a failed check.

Calls to one backend run in a thread pool of ``backend.max_concurrency`` workers (1 means in
line), so API backends work within their rate limits while local models stay serial.
Identical calls within a batch are made once. One progress bar per stage batch (tqdm; off with
``progress=False``), and :meth:`Context.track` for long work between calls.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from foilbench.construct.backends.base import (
    Backend,
    Detection,
    EditResult,
    TextRequest,
    Unanswerable,
    UnanswerableError,
    call_key,
)
from foilbench.construct.engine.cache import CallCache
from foilbench.construct.engine.ledger import SpendLedger
from foilbench.construct.engine.log import ConstructionLog, StageRun
from foilbench.construct.engine.prompts import load_prompt
from foilbench.errors import FoilbenchError, SpendCapReached

METHODS = {"text": "complete", "image": "generate", "edit": "edit", "detector": "detect",
           "vqa": "answer"}


class ConstructError(FoilbenchError):
    """A construction run cannot start or go on as asked (missing backend, bad input)."""

    #: set by the runner when a run fails part way: the survival table and the drop causes
    survival: list[dict] | None = None
    drop_causes: list[dict] | None = None


@dataclass(frozen=True)
class CallResult:
    value: Any
    key: str
    cached: bool

    def describe(self) -> dict:
        return {"call_key": self.key, "cached": self.cached}


@dataclass(frozen=True)
class Failure:
    """A call that failed on every attempt; ``error`` is the last exception, in words."""

    error: str
    key: str
    attempts: int


def _check_reply(role: str, value: Any, args: tuple) -> None:
    ok = {"text": lambda v: isinstance(v, str),
          "image": lambda v: isinstance(v, Image.Image),
          "edit": lambda v: isinstance(v, EditResult),
          "detector": lambda v: isinstance(v, list) and all(isinstance(d, Detection) for d in v),
          "vqa": lambda v: isinstance(v, Unanswerable) or (isinstance(v, str)
                                                           and v in list(args[2]))}[role]
    if not ok(value):
        raise TypeError(f"{role} backend returned {type(value).__name__} {str(value)[:80]!r}, "
                        "not a valid reply")


def call_backend(backend: Backend, role: str, method: str, args: tuple) -> Any:
    """One attempt of one call, as both the threaded engine and the Ray workers
    (:mod:`.ray_calls`) make it: a VQA model's ``UnanswerableError`` becomes an
    :class:`Unanswerable` answer, any other error propagates (the caller's retry loop decides),
    and a reply of the wrong type is a ``TypeError``."""
    try:
        value = getattr(backend, method)(*args)
    except UnanswerableError as e:
        if role != "vqa":
            raise
        value = Unanswerable(str(e)[:400])
    _check_reply(role, value, args)
    return value


def drop_failed(st: Any, cand: Any, res: CallResult | Failure) -> bool:
    """Drop ``cand`` from stage ``st`` when its call failed (after the retries), recording the
    error and the attempts; True when dropped. Every stage of every pipeline records a failed
    call this one way, so the construction log reads alike across pipelines."""
    if isinstance(res, Failure):
        st.drop(cand, "call failed", error=res.error, attempts=res.attempts)
        return True
    return False


def answered(st: Any, cands: Sequence[Any], results: dict[str, CallResult | Failure]):
    """``(candidate, result)`` for each candidate whose call (keyed by its id) succeeded, in
    the candidates' order; the others are dropped by :func:`drop_failed`."""
    for cand in cands:
        res = results[cand.id]
        if not drop_failed(st, cand, res):
            yield cand, res


class Context:
    """Everything a pipeline run shares (see the module docstring)."""

    def __init__(self, out_dir: str | Path, backends: dict[str, Backend], *,
                 budget: SpendLedger | None = None, retries: int = 2, backoff_s: float = 1.0,
                 progress: bool = True, pipeline: str = "") -> None:
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.backends = dict(backends)
        self.budget = budget or SpendLedger(self.out)  # the folder's one spend ledger
        self.retries, self.backoff_s = int(retries), float(backoff_s)
        self.progress = progress
        self.pipeline = pipeline
        self.cache = CallCache(self.out)
        for b in self.backends.values():  # API backends pay into it; nothing else pays
            caller = getattr(getattr(b, "impl", b), "caller", None)
            if caller is not None:
                caller.bind_ledger(self.budget)
        self.log = ConstructionLog(self.out)
        self.stats: dict[str, Counter] = {}
        self._stats_lock = threading.Lock()  # workers count their calls concurrently
        self.prompts_used: set[str] = set()
        self.prompt_hashes: dict[str, str] = {}  # name@version -> SHA-256 of the prompt file
        self.notes: dict[str, Any] = {}  # pipeline findings for the manifest (e.g. refinement)

    def backend(self, role: str) -> Backend:
        if role not in self.backends:
            raise ConstructError(f"{self.pipeline}: this pipeline needs a {role} backend "
                                 f"(give --{role} SPEC)")
        return self.backends[role]

    def has(self, role: str) -> bool:
        return role in self.backends

    def close(self) -> None:
        self.log.close()

    def track(self, items: Sequence, stage: str, unit: str = "item"):
        """``items`` with a progress bar named after the stage, for long work between calls
        (pixel checks over many images); calls get theirs from :meth:`call_many`."""
        from tqdm.auto import tqdm

        return tqdm(items, desc=f"{self.pipeline} {stage}".strip(), unit=unit,
                    disable=not self.progress or len(items) < 2, leave=False)

    # -- prompts ----------------------------------------------------------------------------
    def render_prompt(self, name: str, **fields: object) -> str:
        """A packaged prompt's user text (for image and edit prompts); records its id."""
        prompt = self._use_prompt(name)
        return prompt.render(**fields)

    def _use_prompt(self, name: str):
        prompt = load_prompt(name)
        self.prompts_used.add(prompt.id)
        self.prompt_hashes[prompt.id] = prompt.sha256
        return prompt

    def text_request(self, name: str, task: Any, *, seed: int = 0,
                     temperature: float | None = None, max_tokens: int = 512,
                     images: tuple = (), top_p: float | None = None,
                     **fields: object) -> TextRequest:
        """A text request from packaged prompt ``name``; ``task`` is the structured input the
        ``template`` backend answers from (language models read only the prompt and
        ``images``, which the caller attaches only for a backend that ``accepts_images``)."""
        prompt = self._use_prompt(name)
        return TextRequest(prompt=prompt.render(**fields), system=prompt.system,
                           temperature=prompt.temperature if temperature is None else temperature,
                           max_tokens=max_tokens, seed=seed, prompt_id=prompt.id, task=task,
                           images=tuple(images), top_p=top_p)

    # -- calls ------------------------------------------------------------------------------
    def call_many(self, stage: StageRun | str, role: str,
                  jobs: Sequence[tuple[str, tuple]]) -> dict[str, CallResult | Failure]:
        """Run ``backend(role).<method>(*args)`` for each ``(job_id, args)``; results by job id."""
        name = stage if isinstance(stage, str) else stage.name
        backend = self.backend(role)
        method = METHODS[role]
        stats = self.stats.setdefault(name, Counter())
        keyed = [(job_id, args, call_key(backend, method, *args)) for job_id, args in jobs]
        todo: dict[str, tuple] = {}
        done: dict[str, CallResult | Failure] = {}
        for _, args, key in keyed:
            if key in done or key in todo:
                continue
            hit, value = self.cache.lookup(key)  # a damaged entry is a miss (warned)
            if hit:
                done[key] = CallResult(value, key, True)
            else:
                todo[key] = args
        stats["jobs"] += len(keyed)
        stats["cached"] += len(done)
        if todo:
            done.update(self._run(name, role, backend, method, todo, stats))
        return {job_id: done[key] for job_id, _, key in keyed}

    def _run(self, stage: str, role: str, backend: Backend, method: str,
             todo: dict[str, tuple], stats: Counter) -> dict[str, CallResult | Failure]:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc=f"{self.pipeline} {stage}".strip(), unit="call",
                   disable=not self.progress, leave=False)
        results: dict[str, CallResult | Failure] = {}
        workers = max(1, int(getattr(backend, "max_concurrency", 1)))
        try:
            if workers == 1 or len(todo) == 1:
                for key, args in todo.items():
                    results[key] = self._attempt(stage, role, backend, method, key, args, stats)
                    bar.update(1)
            else:
                with ThreadPoolExecutor(max_workers=min(workers, len(todo))) as pool:
                    futures = {pool.submit(self._attempt, stage, role, backend, method, key,
                                           args, stats): key for key, args in todo.items()}
                    try:
                        for fut in as_completed(futures):
                            results[futures[fut]] = fut.result()
                            bar.update(1)
                    except BaseException:
                        for fut in futures:
                            fut.cancel()
                        raise
        finally:
            bar.close()
        return results

    def _attempt(self, stage: str, role: str, backend: Backend, method: str, key: str,
                 args: tuple, stats: Counter) -> CallResult | Failure:
        error = ""
        attempts = 0
        for attempt in range(self.retries + 1):
            attempts = attempt + 1
            try:
                value = call_backend(backend, role, method, args)
            except SpendCapReached:  # any layer's cap (budget, API tracker, ledger) stops the run
                raise
            except Exception as e:  # any backend failure is retried, then reported
                error = f"{type(e).__name__}: {e}"[:400]
                final = attempt >= self.retries or not getattr(e, "retryable", False)
                with self._stats_lock:
                    stats["failed" if final else "retried"] += 1
                if final:
                    break
                if self.backoff_s > 0:
                    time.sleep(self.backoff_s * 2 ** attempt)
                continue
            self.cache.put(key, value, meta={"stage": stage, "role": role,
                                             "backend": backend.fingerprint,
                                             "bound_usd": float(backend.cost_per_call_usd)})
            with self._stats_lock:
                stats["called"] += 1
            return CallResult(value, key, False)
        return Failure(error, key, attempts)
