"""What every API construction backend shares: spec parsing, the on-disk image and reply
caches and one paid call path (cache -> ledger reservation -> HTTP -> settle -> cache).

The HTTP layer is :mod:`foilbench.models.api` (wire formats, the one retry layer with backoff on
429/5xx/network honouring ``Retry-After``, prices). Keys come from the environment at send time
only; nothing here stores, caches, logs or fingerprints them.

Concurrency. A pipeline stage may call one backend from ``max_concurrency`` threads at once
(option ``concurrency=N`` in the spec, the ``max_concurrency`` option, or
``FOILBENCH_API_CONCURRENCY``; default 4). Every request is reserved at its worst case in the
output folder's :class:`~foilbench.construct.engine.ledger.SpendLedger` before it is sent and
settled with the billed cost after, so N calls in flight, resumes and other processes on the
same ``--out`` can never jointly pass the cap. A backend pays only once a ledger is bound
(the ``ledger`` option, or :meth:`GuardedCaller.bind_ledger` by the stage engine).

One request, one payment (issue 40). Before paying, a backend claims the request's cache key in
the folder's ledger (:meth:`GuardedCaller.obtain`); another process (or thread) that needs the
same key waits for the claimant's reply and reads it from the shared cache, or takes the claim
over when the claimant is dead (:mod:`foilbench.construct.engine.claims`). Two processes on
one ``--out`` therefore never pay twice for one request, provided they share the API cache
(the same ``--cache-dir`` / ``FOILBENCH_HOME``); with different caches the waiter finds no
reply once the claim ends and pays for its own.

Replies. A text reply cut at its output limit is asked again once with twice the budget
(thinking included); an empty, refused or safety-blocked reply, or a second cut, is never
cached: the call fails with :class:`UnusableReplyError` naming the reason.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from foilbench.errors import ModelError
from foilbench.models.api.cache import ResponseCache
from foilbench.models.api.transport import APIStatusError, RetryPolicy
from foilbench.models.api.wire import PROVIDERS, Reply
from foilbench.models.fingerprint import cache_root
from foilbench.models.spec_options import int_option, split_options

log = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = 4
#: Options every backend factory accepts, so a pipeline can pass one set to all of them.
COMMON_OPTIONS = ("device", "dtype", "ledger", "max_concurrency", "policy", "cache_dir")


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
        # The offset stays where it is: lines other processes appended before ours must still
        # be read (jumping to the end skipped them, and their requests were paid for again);
        # rereading our own line later only sets the same value again.
        super().put(key, reply)


class UnusableReplyError(ModelError):
    """The provider answered, but not with a usable answer (cut, empty, refused, blocked)."""

    retryable = False


def missing_keys(providers: set[str]) -> list[str]:
    """The environment variables to set, one per provider whose key is absent."""
    out = []
    for name in sorted(providers):
        envs = PROVIDERS[name].key_envs
        if not any(os.environ.get(e) for e in envs):
            out.append(" or ".join(envs))
    return out


class GuardedCaller:
    """Cache lookup, the ledger's reservation, the HTTP request, the ledger's settlement, in
    that order; safe to use from several threads. Counts requests and hits for the log."""

    def __init__(self, ledger: Any, policy: Any, cache_dir: str | Path | None) -> None:
        self.ledger = ledger
        self.policy = policy or RetryPolicy()
        self.cache_dir = Path(cache_dir) if cache_dir else cache_root()
        self.http_requests = 0
        self.cache_hits = 0
        self.billed_usd = 0.0
        self.unusable: dict[str, int] = {}
        self.waited_for_others = 0  # replies another process (or thread) paid for
        self.claim_poll_s = 0.05
        self._lock = threading.Lock()

    def bind_ledger(self, ledger: Any) -> None:
        self.ledger = ledger

    def lookup(self, key: str, get: Callable[[str], Any]) -> Any:
        with self._lock:
            hit = get(key)
            if hit is not None:
                self.cache_hits += 1
            return hit

    def obtain(self, key: str, get: Callable[[str], Any], make: Callable[[], Any]) -> Any:
        """The cached value of ``key``, else ``make()`` (which pays and caches) under this
        process's claim on ``key`` in the folder's ledger; while another live process holds
        the claim, wait for its reply in the cache (module docstring)."""
        hit = self.lookup(key, get)
        if hit is not None:
            return hit
        ledger = self.ledger
        claim = getattr(ledger, "claim", None)
        if claim is None:
            return make()
        while claim(key) is not None:
            time.sleep(self.claim_poll_s)
            hit = self.lookup(key, get)
            if hit is not None:
                with self._lock:
                    self.waited_for_others += 1
                return hit
        try:
            hit = self.lookup(key, get)  # cached by the claimant just before we claimed
            if hit is not None:
                with self._lock:
                    self.waited_for_others += 1
                return hit
            return make()
        finally:
            ledger.unclaim(key)

    def paid(self, what: str, worst_usd: float,
             post: Callable[[Callable[[], None]], tuple[dict, int]],
             bill: Callable[[dict], float | None]) -> dict:
        """One paid request: ``post(on_resend) -> (reply JSON, HTTP requests)``; ``bill(reply)``
        is the billed USD from the reply's usage (None: unknown, counted at the worst case),
        or ``(usd, billing)`` with ``billing`` kept in the ledger's settlement (model, token
        counts, fields settled at their bound)."""
        if self.ledger is None:
            raise ModelError(f"{what}: no spend ledger is bound, so no paid call may start "
                             "(run it through foilbench construct or pass ledger=)")
        ledger = self.ledger
        ids = [ledger.reserve(worst_usd, what)]

        def resend() -> None:  # the last attempt got no reply; it may have been billed
            ids.append(ledger.reserve(worst_usd, what))

        try:
            data, n = post(resend)
        except APIStatusError as e:  # an error reply: not billed
            self._count(e.requests, 0.0)
            for rid in ids[:-1]:
                ledger.settle(rid, worst_usd, at_bound=["no reply"])
            ledger.release(ids[-1])
            raise
        except BaseException as e:  # no reply (or killed): counted at the worst case
            self._count(getattr(e, "requests", 0), worst_usd * len(ids))
            for rid in ids:
                ledger.settle(rid, worst_usd, at_bound=["no reply"])
            raise
        try:
            cost = bill(data)
        except (ModelError, KeyError, TypeError, ValueError):
            cost = None
        billing: dict = {}
        if isinstance(cost, tuple):
            cost, billing = cost
        if cost is None:
            cost, billing = worst_usd, {**billing, "at_bound": ["usage"]}
        elif cost > worst_usd * (1 + 1e-9):
            log.warning("%s: billed $%.6f, above its reserved worst case $%.6f; check the "
                        "price list", what, cost, worst_usd)
        for rid in ids[:-1]:
            ledger.settle(rid, worst_usd, at_bound=["no reply"])
        ledger.settle(ids[-1], cost, **billing)
        self._count(n, cost + worst_usd * (len(ids) - 1))
        return data

    def _count(self, requests: int, usd: float) -> None:
        with self._lock:
            self.http_requests += int(requests)
            self.billed_usd += usd

    def dropped(self, reason: str) -> None:
        with self._lock:
            self.unusable[reason] = self.unusable.get(reason, 0) + 1

    def usage(self) -> dict:
        return {"http_requests": self.http_requests, "cache_hits": self.cache_hits,
                "waited_for_others": self.waited_for_others,
                "spend_usd": round(self.billed_usd, 6), "unusable_replies": dict(self.unusable)}
