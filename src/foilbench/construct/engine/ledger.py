"""The spend ledger of one construction output folder: the one place a paid call is counted.

Why (issue 24): a cap per process restarts at zero on every resume, and a cap that counts
fixed per-call estimates is not what the provider bills. Here every paid HTTP request is

1. *reserved* at its worst case (:mod:`foilbench.models.api.prices`) before it is sent; a
   reservation that would take the folder's committed spend past the cap is refused with
   :class:`~foilbench.models.api.spend.SpendCapError`, naming the option that set the cap;
2. *settled* with the cost billed by the provider (its ``usage``) once the reply is in, before
   the call's result counts; or *released* when the provider answered with an error status
   (not billed). A request that got no reply stays counted at its worst case.

Committed spend = settled costs + open reservations. A reservation never settled (the process
was killed mid-call) stays counted at its worst case until the user releases it, so no kill,
resume or second process can take the folder past its cap.

Storage: ``OUT/.construct/spend.jsonl``, append-only JSON lines, each written with ``fsync``
while holding the folder lock (:mod:`.ledger_lock`: ``filelock``, so POSIX and Windows);
before each decision the holder reads what other processes appended since its last look.
Every process on one ``--out`` therefore shares one cap. A process that cannot get the lock
within ``lock_timeout_s`` stops naming the PID and host that hold it.

What a record keeps (issue 40): a settlement names the model and the token counts billed
(``usage``, and ``at_bound``: the fields the reply did not report, settled at their reserved
bound), so a price given later re-prices it (``reprice`` records, :meth:`SpendLedger.reprice`).
A reservation left open by a kill is listed by :meth:`SpendLedger.open_reservations` and
released only on the user's word (``release`` with ``manual``, after checking the provider's
dashboard: :meth:`SpendLedger.release_open`). ``claim`` / ``unclaim`` records hold a request's
cache key while one process pays for it, so no other process on the folder pays for the same
request again (:mod:`.claims`).

A torn last line (a writer killed inside its ``write``) is found by the next lock holder: no
one else can be writing then, so the unterminated bytes are moved to ``spend.torn`` (kept for
the record) and cut from the ledger, with a warning, before anything is appended. That never
undercounts: a torn *reserve* was written before its request could be sent (the request goes
out only after the write returns), and a torn *settle* or *release* leaves its reservation
open, counted at the worst case.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path

from foilbench.construct.engine.claims import STALE_CLAIM_S, claim_dead
from foilbench.construct.engine.ledger_lock import FolderLock, LedgerBusyError, host
from foilbench.errors import FoilbenchError
from foilbench.models.api.prices import PriceBook, token_cost
from foilbench.models.api.spend import SpendCapError, cap_from_env

__all__ = ["LedgerBusyError", "LedgerError", "SpendLedger", "check_cap"]

LEDGER = "spend.jsonl"
TORN = "spend.torn"
OPS = ("reserve", "settle", "release", "reprice", "claim", "unclaim")


class LedgerError(FoilbenchError):
    """The ledger file is damaged in a way that could hide spend, or a ledger command names
    a reservation that is not open."""


def check_cap(value: float, option: str) -> float:
    """A cap must be a finite, non-negative number of USD.

    >>> check_cap(0.3, "--max-spend")
    0.3
    """
    try:
        cap = float(value)
    except (TypeError, ValueError):
        cap = math.nan
    if not math.isfinite(cap) or cap < 0:
        raise SpendCapError(f"{option}={value!r}: a spend cap must be a finite number of USD "
                            ">= 0 (e.g. --max-spend 5)")
    return cap


class SpendLedger:
    """Reserve / settle / release paid requests against the folder's cap (module docstring)."""

    def __init__(self, folder: str | Path, cap: float | None = None, *,
                 option: str = "--max-spend", prices: PriceBook | None = None,
                 lock_timeout_s: float = 30.0, stale_claim_s: float = STALE_CLAIM_S) -> None:
        if cap is None:
            cap, option = cap_from_env(), "FOILBENCH_API_SPEND_CAP (default 5)"
        self.cap = check_cap(cap, option)
        self.option = option
        self.prices = prices or PriceBook()
        self.dir = Path(folder) / ".construct"
        self.path = self.dir / LEDGER
        self.lock_timeout_s = float(lock_timeout_s)
        self.stale_claim_s = float(stale_claim_s)
        self.spent = 0.0  # billed by this process
        self.calls = 0  # billed requests of this process
        self._settled: dict[str, dict] = {}  # folder-wide settled requests by id
        self._open: dict[str, dict] = {}  # folder-wide open reservations (their records)
        self._claims: dict[str, dict] = {}  # request cache key -> its open claim record
        self._released_by_hand = 0.0
        self._offset = 0
        self._mine: set[str] = set()
        self._lock = threading.Lock()
        self._folder_lock = FolderLock(self.dir, self.lock_timeout_s)
        self.refresh()

    # -- reading ----------------------------------------------------------------------------
    def _apply(self, row: dict) -> None:
        op, rid = row.get("op"), row.get("id", "")
        if op == "reserve":
            self._open[rid] = {**row, "usd": float(row["usd"])}
        elif op == "settle":
            self._open.pop(rid, None)
            self._settled[rid] = {**row, "usd": float(row["usd"])}
        elif op == "release":
            gone = self._open.pop(rid, None)
            if gone is not None and row.get("manual"):
                self._released_by_hand += gone["usd"]
        elif op == "reprice":
            if rid in self._settled:
                self._settled[rid]["usd"] = float(row["usd"])
        elif op == "claim":
            self._claims[str(row["key"])] = row
        elif op == "unclaim":
            held = self._claims.get(str(row["key"]))
            if held is not None and held.get("id") == rid:
                del self._claims[str(row["key"])]
        else:
            raise LedgerError(f"{self.path}: unknown ledger record {row!r}")

    def refresh(self) -> None:
        """Apply the lines appended since the last look (a torn last line waits for its end)."""
        if not self.path.is_file():
            return
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            chunk = f.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        for n, line in enumerate(complete.decode("utf-8").splitlines()):
            try:
                self._apply(json.loads(line))
            except (json.JSONDecodeError, KeyError, ValueError, TypeError) as e:
                raise LedgerError(f"{self.path}: line after byte {self._offset} (#{n + 1}) is "
                                  f"damaged ({e}); it may hide spend, so the run stops. Move the "
                                  "folder aside or repair the line by hand.") from None
        self._offset += len(complete)

    @property
    def settled(self) -> float:
        return sum(r["usd"] for r in self._settled.values())

    @property
    def reserved(self) -> float:
        return sum(r["usd"] for r in self._open.values())

    @property
    def total(self) -> float:
        """Committed spend of the folder: billed plus open reservations (all processes)."""
        return self.settled + self.reserved

    @property
    def requests(self) -> int:
        """Paid requests settled in this folder, by every process."""
        return len(self._settled)

    @property
    def open_elsewhere(self) -> float:
        """Reservations not made by this process: in flight elsewhere or left by a kill."""
        return sum(r["usd"] for k, r in self._open.items() if k not in self._mine)

    def open_reservations(self, *, others_only: bool = True) -> list[dict]:
        """The open reservations (``id``, ``usd``, ``what``, ``pid``, ``t``), oldest first;
        by default those of other processes (in flight elsewhere or left by a kill)."""
        self.refresh()
        rows = [r for k, r in self._open.items() if not (others_only and k in self._mine)]
        return sorted(rows, key=lambda r: r.get("t", 0))

    def left_open(self) -> list[dict]:
        """Open reservations whose process is gone (a kill): each still counts at its worst
        case until the user releases it (:meth:`release_open`)."""
        now, here = time.time(), host()
        return [r for r in self.open_reservations()
                if claim_dead({**r, "t": now}, here, self._mine)]

    # -- writing ----------------------------------------------------------------------------
    @contextmanager
    def _locked(self):
        with self._lock, self._folder_lock.held():
            self.refresh()
            self._cut_torn_tail()
            yield

    def _cut_torn_tail(self) -> None:
        """Under the lock: move an unterminated last line to ``spend.torn`` (module docstring),
        so that the next record starts on a line of its own and offsets stay true."""
        if not self.path.is_file() or self.path.stat().st_size <= self._offset:
            return
        with open(self.path, "r+b") as f:
            f.seek(self._offset)
            tail = f.read()
            with open(self.dir / TORN, "ab") as torn:
                torn.write(tail + b"\n")
                torn.flush()
                os.fsync(torn.fileno())
            f.truncate(self._offset)
            f.flush()
            os.fsync(f.fileno())
        warnings.warn(f"{self.path}: a torn last line ({len(tail)} bytes, a writer killed "
                      f"mid-write) was moved to {self.dir / TORN}; no spend is hidden by it "
                      "(an unsent reservation, or a reservation still counted at its worst "
                      "case)", stacklevel=4)

    def _append(self, row: dict) -> None:
        line = (json.dumps(row, sort_keys=True) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self._apply(row)
        self._offset += len(line)

    def reserve(self, usd: float, what: str) -> str:
        """Hold ``usd`` (the request's worst case) for ``what``; refused past the cap."""
        usd = float(usd)
        with self._locked():
            if self.total + usd > self.cap:
                elsewhere = self.open_elsewhere
                extra = (f" (${elsewhere:.4f} of it reserved by calls in flight in other "
                         "processes or left open by a killed run: foilbench construct spend "
                         f"{self.dir.parent} lists them)") if elsewhere else ""
                raise SpendCapError(
                    f"spend cap reached for {self.dir.parent}: ${self.total:.4f} committed"
                    f"{extra}; the next request ({what}, at most ${usd:.4f}) would pass the "
                    f"cap of ${self.cap:.2f} set by {self.option}. Rerun with a higher "
                    f"{self.option} to go on: finished calls are cached and cost nothing again.")
            rid = uuid.uuid4().hex
            self._mine.add(rid)
            self._append({"op": "reserve", "id": rid, "usd": usd, "what": what,
                          "pid": os.getpid(), "host": host(), "t": round(time.time(), 3)})
            return rid

    def settle(self, rid: str, usd: float, **billing: object) -> None:
        """Replace reservation ``rid`` by the billed ``usd``; the call counts only after this.
        ``billing`` is kept in the record: ``model`` (``provider:model``), ``usage`` (token
        counts, ``{"in": n, "out": m}``) and ``at_bound`` (fields settled at their bound)."""
        with self._locked():
            extra = {k: v for k, v in billing.items() if v is not None}
            self._append({"op": "settle", "id": rid, "usd": float(usd), **extra})
            self.spent += float(usd)
            self.calls += 1

    def release(self, rid: str) -> None:
        """Drop reservation ``rid``: the provider answered with an error and billed nothing."""
        with self._locked():
            self._append({"op": "release", "id": rid})

    # -- the user's word: release and re-price ---------------------------------------------
    def release_open(self, ids: list[str] | None, note: str = "") -> list[dict]:
        """Release open reservations by id (``None``: all open ones) on the user's word that
        the provider billed nothing for them; each release is recorded (``manual``). Only
        reservations whose process is gone should be released: a live one is refused."""
        with self._locked():
            if ids is None:
                chosen = list(self._open.values())
            else:
                unknown = [i for i in ids if i not in self._open]
                if unknown:
                    raise LedgerError(f"{self.path}: no open reservation {unknown[0]!r} (open: "
                                      f"{', '.join(sorted(self._open)) or 'none'})")
                chosen = [self._open[i] for i in ids]
            here = host()
            live = [r for r in chosen if r.get("host", here) == here and r.get("id") not in
                    self._mine and not claim_dead({**r, "t": time.time()}, here, set())]
            if live:
                r = live[0]
                raise LedgerError(f"reservation {r['id']} ({r.get('what', '')}) belongs to "
                                  f"process {r.get('pid')}, which is still running; wait for "
                                  "it to finish before releasing its reservations")
            for r in chosen:
                self._append({"op": "release", "id": r["id"], "manual": True,
                              "note": note[:200], "t": round(time.time(), 3)})
            return chosen

    def reprice(self, prices: PriceBook) -> list[dict]:
        """Re-price settled requests that kept their token counts at ``prices`` (a ``--price``
        given after the run); one ``reprice`` record per changed request, returned."""
        changed = []
        with self._locked():
            for rid, row in list(self._settled.items()):
                usage, model = row.get("usage"), row.get("model")
                if not isinstance(usage, dict) or not model or ":" not in str(model):
                    continue
                provider, name = str(model).split(":", 1)
                price = prices.token_price(provider, name, int(usage.get("in", 0)))
                if price is None or prices.token_entry(provider, name) is None:
                    continue
                usd = token_cost(price, int(usage.get("in", 0)), int(usage.get("out", 0)))
                if abs(usd - row["usd"]) > 1e-12:
                    changed.append({"id": rid, "model": model, "was": row["usd"], "usd": usd})
                    self._append({"op": "reprice", "id": rid, "usd": usd, "was": row["usd"],
                                  "price": list(price), "t": round(time.time(), 3)})
        return changed

    # -- claims: one request, one payment ---------------------------------------------------
    def claim(self, key: str) -> dict | None:
        """Claim request ``key`` for this process: None when it is now ours, else the live
        claim of another process (or thread) that is paying for it (:mod:`.claims`)."""
        with self._locked():
            held = self._claims.get(key)
            if held is not None and not claim_dead(held, host(), self._mine,
                                                    self.stale_claim_s):
                return held
            cid = uuid.uuid4().hex
            self._mine.add(cid)
            self._append({"op": "claim", "key": key, "id": cid, "pid": os.getpid(),
                          "host": host(), "t": round(time.time(), 3),
                          **({"took_over": held["id"]} if held else {})})
            return None

    def unclaim(self, key: str) -> None:
        """End this process's claim on ``key`` (its reply is cached, or the call failed)."""
        with self._locked():
            held = self._claims.get(key)
            if held is not None and held.get("id") in self._mine:
                self._append({"op": "unclaim", "key": key, "id": held["id"]})
                self._mine.discard(held["id"])

    def describe(self) -> dict:
        """The cap and the folder-wide totals (every process, from the ledger), then this
        process's own."""
        self.refresh()
        return {"cap_usd": self.cap, "cap_option": self.option,
                "folder_committed_usd": round(self.total, 6),
                "folder_billed_usd": round(self.settled, 6),
                "folder_requests": self.requests,
                "folder_open_reservations_usd": round(self.reserved, 6),
                "folder_released_by_hand_usd": round(self._released_by_hand, 6),
                "this_run_billed_usd": round(self.spent, 6), "this_run_requests": self.calls}
