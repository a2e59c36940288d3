"""POST JSON with retries: exponential backoff with jitter on 429 / 5xx, honouring Retry-After.

Retried: HTTP 408, 409, 429, 500, 502, 503, 504, 529 (Anthropic "overloaded") and connection
errors. Delay before retry r (0-based): the server's ``Retry-After`` seconds when given,
else ``base * 2**r * (1 + U[0, 1))``; both capped at ``max_delay``. Other 4xx fail at once.
Nothing here logs headers, and error text has the key blanked out should a server echo it.
"""

from __future__ import annotations

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
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


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
                pass  # an HTTP date: fall back to backoff
        return min(self.base * 2 ** attempt * (1 + self.rng.random()), self.max_delay)


def _redact(text: str, secrets: list[str]) -> str:
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


def post_json(url: str, body: dict, headers: dict[str, str], secret_headers: dict[str, str],
              policy: RetryPolicy) -> tuple[dict, int]:
    """(decoded JSON reply, number of HTTP requests made). ``secret_headers`` carry the key."""
    return post_body(url, json.dumps(body).encode(), "application/json", headers,
                     secret_headers, policy)


def post_body(url: str, data: bytes, content_type: str, headers: dict[str, str],
              secret_headers: dict[str, str], policy: RetryPolicy) -> tuple[dict, int]:
    """``post_json`` for a body already encoded (e.g. multipart/form-data); the reply is JSON."""
    all_headers = {"content-type": content_type, **headers, **secret_headers}
    secrets = list(secret_headers.values()) + [v.split()[-1] for v in secret_headers.values()]
    requests = 0
    for attempt in range(policy.max_retries + 1):
        requests += 1
        req = urllib.request.Request(url, data=data, headers=all_headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=policy.timeout) as resp:
                return json.loads(resp.read().decode("utf-8")), requests
        except urllib.error.HTTPError as e:
            detail = _redact(e.read().decode("utf-8", "replace")[:300], secrets)
            if e.code not in RETRY_STATUS or attempt == policy.max_retries:
                raise ModelError(f"POST {url} failed with HTTP {e.code} after {requests} "
                                 f"request(s): {detail}") from None
            wait = policy.delay(attempt, e.headers.get("Retry-After"))
            log.warning("HTTP %s from %s; retry %d in %.1f s", e.code, url, attempt + 1, wait)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            if attempt == policy.max_retries:
                raise ModelError(f"POST {url} failed after {requests} request(s): "
                                 f"{_redact(str(e), secrets)}") from None
            wait = policy.delay(attempt, None)
            log.warning("connection error to %s; retry %d in %.1f s", url, attempt + 1, wait)
        except json.JSONDecodeError:
            raise ModelError(f"POST {url}: the reply is not JSON") from None
        policy.sleep(wait)
    raise AssertionError("unreachable")
