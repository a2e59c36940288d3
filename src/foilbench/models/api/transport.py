"""POST with the one retry layer: backoff with jitter on 429 / 5xx / network errors only.

Why one layer: retries stacked in several places multiply (a 429 storm used to send 18
requests per call: 3 engine attempts x 6 transport attempts). Only this module retries; every
error it gives up on is final (``retryable = False``), and the stage engine drops the call with
the cause.

Retried: HTTP 429, any 5xx (529 is Anthropic "overloaded"), and connection errors / timeouts.
Never retried: other 4xx (a malformed request, a missing key, a prompt longer than the context
fail the same way again). Delay before retry r (0-based): the server's ``Retry-After`` (seconds
or an HTTP date) when given, else ``base * 2**r * (1 + U[0, 1))``; both capped at ``max_delay``.

Money: a request that got no reply (network error, timeout) may still have been billed, so
before re-sending it the caller's ``on_resend`` hook runs (the construction ledger reserves
the next attempt's worst case there, and keeps the lost one counted). An HTTP error reply is
not billed by the providers.

Keys: error text has every secret masked *before* it is cut to length, so no prefix of a key
can survive the cut; nothing here logs headers.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field

from foilbench.errors import ModelError

log = logging.getLogger(__name__)
ERROR_TEXT_CHARS = 300


def retry_status(code: int) -> bool:
    """429 and the 5xx range are transient; every other status is final.

    >>> [retry_status(c) for c in (400, 401, 408, 429, 500, 529)]
    [False, False, False, True, True, True]
    """
    return code == 429 or 500 <= code <= 599


class APIError(ModelError):
    """A request failed for good; the stage engine drops its call with this cause."""

    retryable = False

    def __init__(self, message: str, requests: int) -> None:
        super().__init__(message)
        self.requests = requests


class APIStatusError(APIError):
    """The provider answered with an HTTP error status (not billed)."""

    def __init__(self, message: str, requests: int, status: int) -> None:
        super().__init__(message, requests)
        self.status = status


class APINetworkError(APIError):
    """No reply came back (connection error, timeout): the provider may have billed it."""


@dataclass
class RetryPolicy:
    max_retries: int = 5
    base: float = 1.0
    max_delay: float = 60.0
    timeout: float = 120.0
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), self.max_delay)
            except ValueError:
                when = email.utils.parsedate_to_datetime(retry_after) if retry_after else None
                if when is not None:
                    return min(max(when.timestamp() - time.time(), 0.0), self.max_delay)
        return min(self.base * 2 ** attempt * (1 + self.rng.random()), self.max_delay)


def mask_secrets(text: str, secrets: list[str], limit: int = ERROR_TEXT_CHARS) -> str:
    """``text`` with each secret replaced by ``***``, then cut to ``limit`` characters.

    >>> mask_secrets("x" * 290 + "sk-abcdefgh", ["sk-abcdefgh"], 300)[-5:]
    'xx***'
    """
    for s in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(s, "***")
    return text[:limit]


def _secrets(secret_headers: dict[str, str]) -> list[str]:
    return [v for h in secret_headers.values() for v in (h, h.split()[-1] if h.split() else h)]


def post_json(url: str, body: dict, headers: dict[str, str], secret_headers: dict[str, str],
              policy: RetryPolicy, on_resend: Callable[[], None] | None = None
              ) -> tuple[dict, int]:
    """(decoded JSON reply, number of HTTP requests made). ``secret_headers`` carry the key."""
    return post_body(url, json.dumps(body).encode(), "application/json", headers,
                     secret_headers, policy, on_resend)


def post_body(url: str, data: bytes, content_type: str, headers: dict[str, str],
              secret_headers: dict[str, str], policy: RetryPolicy,
              on_resend: Callable[[], None] | None = None) -> tuple[dict, int]:
    """``post_json`` for a body already encoded (e.g. multipart/form-data); the reply is JSON."""
    all_headers = {"content-type": content_type, **headers, **secret_headers}
    secrets = _secrets(secret_headers)
    requests = 0
    lost = False  # the previous attempt got no reply: it may have been billed
    for attempt in range(policy.max_retries + 1):
        if lost and on_resend is not None:
            on_resend()
        requests += 1
        req = urllib.request.Request(url, data=data, headers=all_headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=policy.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            detail = mask_secrets(e.read().decode("utf-8", "replace"), secrets)
            if not retry_status(e.code) or attempt == policy.max_retries:
                raise APIStatusError(f"POST {url} failed with HTTP {e.code} after {requests} "
                                     f"request(s): {detail}", requests, e.code) from None
            wait = policy.delay(attempt, e.headers.get("Retry-After"))
            lost = False
            log.warning("HTTP %s from %s; retry %d in %.1f s", e.code, url, attempt + 1, wait)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            if attempt == policy.max_retries:
                raise APINetworkError(f"POST {url} failed after {requests} request(s): "
                                      f"{mask_secrets(str(e), secrets)}", requests) from None
            wait = policy.delay(attempt, None)
            lost = True
            log.warning("connection error to %s; retry %d in %.1f s", url, attempt + 1, wait)
        else:
            try:
                return json.loads(raw.decode("utf-8")), requests
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise APIError(f"POST {url}: the reply is not JSON", requests) from None
        policy.sleep(wait)
    raise AssertionError("unreachable")
