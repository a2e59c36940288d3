"""Whether the process that claimed a request is still alive (one request, one payment).

A process about to pay for a request first claims its cache key in the folder's ledger
(:meth:`~.ledger.SpendLedger.claim`, with its PID and host); another process needing the same
key waits for the reply instead of paying again, unless the claimant is dead. Dead means: on
this host and no process has that PID (or the PID is ours, left by an earlier run of this
process number: a container that restarts often reuses PIDs), or the claim is older than
``stale_s`` (a PID reused by an unrelated process would otherwise hold it for ever). A claim
from another host is trusted until it goes stale.
"""

from __future__ import annotations

import os
import time

from foilbench.processes import pid_alive

__all__ = ["STALE_CLAIM_S", "claim_dead", "pid_alive"]

#: a claim older than this is taken over whatever its PID says (longer than any one request
#: with its retries and backoff takes)
STALE_CLAIM_S = 1800.0


def claim_dead(row: dict, here: str, mine: set[str], stale_s: float = STALE_CLAIM_S,
               now: float | None = None) -> bool:
    """Whether the claim ``row`` (``pid``, ``host``, ``id``, ``t``) may be taken over by a
    process on host ``here`` whose own open claim ids are ``mine``.

    >>> claim_dead({"pid": os.getpid(), "host": "h", "id": "a", "t": 0}, "h", {"a"}, now=1)
    False
    >>> claim_dead({"pid": os.getpid(), "host": "h", "id": "b", "t": 0}, "h", {"a"}, now=1)
    True
    >>> claim_dead({"pid": 1, "host": "other", "id": "c", "t": 0}, "h", set(), now=1)
    False
    """
    now = time.time() if now is None else now
    if now - float(row.get("t", 0)) > stale_s:
        return True
    if row.get("host") != here:
        return False
    pid = int(row.get("pid", 0))
    if pid == os.getpid():
        return row.get("id") not in mine
    return not pid_alive(pid)
