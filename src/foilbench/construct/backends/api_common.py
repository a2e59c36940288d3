"""What every API construction backend shares: spec parsing, a thread-safe spend budget, an
on-disk image cache and one guarded call path (cache -> budget -> HTTP -> cache).

The HTTP layer is :mod:`foilbench.models.api` (wire formats, retries with backoff on 429/5xx
honouring ``Retry-After``, the text response cache, prices). Keys come from the environment at
send time only; nothing here stores, caches, logs or fingerprints them.

Concurrency. A pipeline stage may call one backend from ``max_concurrency`` threads at once
(option ``concurrency=N`` in the spec, the ``max_concurrency`` option, or
``FOILBENCH_API_CONCURRENCY``; default 4). The budget therefore *reserves* a call's estimated
cost before the request and settles it with the billed cost after, so N calls in flight can
never jointly pass the cap.

Budget sharing. Each backend has its own budget (cap ``FOILBENCH_API_SPEND_CAP``, USD, default
5) unless the caller passes one ``SpendBudget`` as the ``budget`` option to every backend of a
run, which makes the cap hold for the run as a whole.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.api.cache import ResponseCache
from foilbench.models.api.spend import SpendCapError, cap_from_env, price_for
from foilbench.models.api.transport import RetryPolicy, post_json
from foilbench.models.api.wire import PROVIDERS, Reply, auth_headers, build_request, parse_reply
from foilbench.models.fingerprint import cache_root
from foilbench.models.spec_options import int_option, split_options

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 4
#: Options every backend factory accepts, so a pipeline can pass one set to all of them.
COMMON_OPTIONS = ("device", "dtype", "budget", "max_concurrency", "policy", "cache_dir")


class SpendBudget:
    """A hard USD cap shared by concurrent calls: reserve an estimate, then settle."""

    def __init__(self, cap: float | None = None) -> None:
        self.cap = cap_from_env() if cap is None else float(cap)
        self.spent = 0.0
        self.reserved = 0.0
        self.calls = 0
        #: largest billed cost per model so far: the next call's estimate (as in spend.py)
        self.largest: dict[str, float] = {}
        self._lock = threading.Lock()

    def estimate(self, name: str, before_first: float) -> float:
        """The largest cost billed for ``name`` so far, or ``before_first`` until one was."""
        with self._lock:
            return self.largest.get(name, before_first)

    def reserve(self, estimate: float) -> None:
        with self._lock:
            if self.spent + self.reserved + estimate > self.cap:
                raise SpendCapError(
                    f"API spend cap reached: spent ${self.spent:.4f} in {self.calls} call(s) "
                    f"(${self.reserved:.4f} more in flight); the next call (about "
                    f"${estimate:.4f}) would pass the cap of ${self.cap:.2f}. Raise "
                    "FOILBENCH_API_SPEND_CAP to go on (cached answers cost nothing).")
            self.reserved += estimate

    def settle(self, estimate: float, cost: float | None, name: str = "") -> None:
        """Release the reservation; ``cost`` None means the call failed and billed nothing."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - estimate)
            if cost is not None:
                self.spent += cost
                self.calls += 1
                self.largest[name] = max(self.largest.get(name, 0.0), cost)


def check_options(where: str, options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - set(COMMON_OPTIONS))
    if unknown:
        raise ModelError(f"{where}: unknown backend option(s) {', '.join(unknown)}; "
                         f"possible: {', '.join(COMMON_OPTIONS)}")


def concurrency(opts: dict, option_value: int | None) -> int:
    """Spec ``concurrency=N`` wins, then the ``max_concurrency`` option, then the env."""
    if "concurrency" in opts:
        return int_option(opts, "concurrency", DEFAULT_CONCURRENCY)
    if option_value is not None:
        return int_option({"max_concurrency": option_value}, "max_concurrency",
                          DEFAULT_CONCURRENCY)
    raw = os.environ.get("FOILBENCH_API_CONCURRENCY", "")
    return int_option({"FOILBENCH_API_CONCURRENCY": raw}, "FOILBENCH_API_CONCURRENCY",
                      DEFAULT_CONCURRENCY) if raw else DEFAULT_CONCURRENCY


def parse_api_spec(rest: str, providers: tuple[str, ...], role: str,
                   extra: dict[str, tuple[str, ...] | None]) -> tuple[str, str, dict]:
    """``PROVIDER:MODEL[?k=v...]`` -> (provider, model, options); bad input names the spec."""
    body, opts = split_options(rest, {"concurrency": None, **extra})
    provider, _, model = body.partition(":")
    if provider not in providers:
        import difflib

        close = difflib.get_close_matches(provider, providers, n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise ModelError(f"api:{rest}: unknown {role} provider {provider!r}.{hint} Known: "
                         f"{', '.join(providers)} (spec: api:PROVIDER:MODEL)")
    if not model:
        raise ModelError(f"api:{provider}: name the model, e.g. api:{provider}:MODEL")
    return provider, model, opts


def content_key(*parts: Any) -> str:
    """sha256 over the canonical JSON of ``parts`` (bytes enter as their own sha256)."""
    def enc(v: Any) -> Any:
        if isinstance(v, (bytes, bytearray)):
            return {"sha256": hashlib.sha256(v).hexdigest()}
        if isinstance(v, (list, tuple)):
            return [enc(x) for x in v]
        if isinstance(v, dict):
            return {str(k): enc(x) for k, x in v.items()}
        return v
    blob = json.dumps(enc(list(parts)), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


class ImageCache:
    """Generated images on disk as ``<root>/<key[:2]>/<key>.png``, written atomically (a crash
    mid-write leaves no half file), so a repeated request makes no HTTP call."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.png"

    def get(self, key: str) -> Image.Image | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            with Image.open(path) as im:
                return im.convert("RGB")
        except OSError:
            return None  # an unreadable file is regenerated, never trusted

    def put(self, key: str, png: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(png)
        tmp.replace(path)


class TailingResponseCache(ResponseCache):
    """The API text cache (one JSON line per reply), re-reading lines other backends or
    processes appended since the last look: a miss checks the file's size before asking the
    provider, so two backends on one cache file never pay twice for one request."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self._offset = path.stat().st_size if path.is_file() else 0

    def get(self, key: str) -> Reply | None:
        hit = super().get(key)
        if hit is None and self.path.is_file() and self.path.stat().st_size > self._offset:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                chunk = f.read()
            complete = chunk[: chunk.rfind(b"\n") + 1]  # a torn last line waits for its end
            self._offset += len(complete)
            for line in complete.decode("utf-8", "replace").splitlines():
                try:
                    row = json.loads(line)
                    self._table[row["key"]] = Reply(row["text"], row["input_tokens"],
                                                    row["output_tokens"])
                except (json.JSONDecodeError, KeyError):
                    continue
            hit = super().get(key)
        return hit

    def put(self, key: str, reply: Reply) -> None:
        super().put(key, reply)
        # our own line is in the table already; skipping past it is safe because a reread
        # of a line we hold only sets the same value again
        self._offset = self.path.stat().st_size


class GuardedCaller:
    """Cache lookup, budget reservation, the HTTP call and the cache write, in that order,
    safe to use from several threads. Counts requests, hits and billed calls for the log."""

    def __init__(self, budget: SpendBudget | None, policy: RetryPolicy | None,
                 cache_dir: str | Path | None) -> None:
        self.budget = budget or SpendBudget()
        self.policy = policy or RetryPolicy()
        self.cache_dir = Path(cache_dir) if cache_dir else cache_root()
        self.http_requests = 0
        self.cache_hits = 0
        self._lock = threading.Lock()

    def call(self, key: str, lookup: Callable[[str], Any], name: str, first_estimate: float,
             send: Callable[[], tuple[Any, int, float]], store: Callable[[str, Any], None]
             ) -> Any:
        """``send() -> (result, http_requests, billed_usd)``; cached results cost nothing.
        ``name`` (provider:model) keys the budget's estimate of the next call's cost."""
        with self._lock:
            hit = lookup(key)
            if hit is not None:
                self.cache_hits += 1
                return hit
        estimate = self.budget.estimate(name, first_estimate)
        self.budget.reserve(estimate)
        cost = None
        try:
            result, n, cost = send()
            with self._lock:
                self.http_requests += n
                store(key, result)
            return result
        finally:
            self.budget.settle(estimate, cost, name)

    def usage(self) -> dict:
        return {"http_requests": self.http_requests, "cache_hits": self.cache_hits,
                "spend_usd": round(self.budget.spent, 6), "billed_calls": self.budget.calls}


class TokenPricedAPI:
    """The part of a text-reply API backend that does not depend on its role: the text
    generator (:mod:`.api_text`) and the API VQA validator (:mod:`.vqa`) send the same kind of
    request (image and text parts, one reply), priced per token, through one
    :class:`GuardedCaller` and the shared ``construct_text_responses.jsonl`` cache. Kept in one
    place so the two roles price, cache and bill a call the same way."""

    def _connect(self, provider: str, model: str, spec: str, max_concurrency: int,
                 budget: SpendBudget | None, policy: RetryPolicy | None,
                 cache_dir: str | Path | None) -> None:
        self.provider, self.model, self.spec = provider, model, spec
        self.max_concurrency = max_concurrency
        self.price = price_for(provider, model)
        self.caller = GuardedCaller(budget, policy, cache_dir)
        self.cache = TailingResponseCache(self.caller.cache_dir / "construct_text_responses.jsonl")

    def _cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.price[0] + tokens_out * self.price[1]) / 1e6

    def _reply(self, key: str, role: str, first_estimate: float, parts: list,
               max_tokens: int, **wire: Any) -> Reply:
        """The cached reply for ``key``, else one guarded request billed at the reply's
        token counts. ``role`` prefixes the budget's estimate name (``text``, ``vqa``)."""

        def send():
            path, body = build_request(self.provider, self.model, parts, max_tokens, **wire)
            url = PROVIDERS[self.provider].base_url() + path
            data, n = post_json(url, body, {}, auth_headers(self.provider), self.caller.policy)
            reply = parse_reply(self.provider, data)
            return reply, n, self._cost(reply.input_tokens, reply.output_tokens)

        return self.caller.call(key, self.cache.get, f"{role}:{self.provider}:{self.model}",
                                first_estimate, send, self.cache.put)

    def usage(self) -> dict:
        return self.caller.usage()
