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
was killed mid-call) stays counted at its worst case for ever, so no kill, resume or second
process can take the folder past its cap.

Storage: ``OUT/.construct/spend.jsonl``, append-only JSON lines, each written with ``fsync``
while holding an exclusive ``flock`` on ``OUT/.construct/spend.lock``; before each decision
the holder reads what other processes appended since its last look. Every process on one
``--out`` therefore shares one cap. The lock file names the PID holding it; a process that
cannot get the lock within ``lock_timeout_s`` stops with that PID in the message.

A torn last line (a writer killed inside its ``write``) is found by the next lock holder: no
one else can be writing then, so the unterminated bytes are moved to ``spend.torn`` (kept for
the record) and cut from the ledger, with a warning, before anything is appended. That never
undercounts: a torn *reserve* was written before its request could be sent (the request goes
out only after the write returns), and a torn *settle* or *release* leaves its reservation
open, counted at the worst case.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import threading
import time
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path

from foilbench.errors import FoilbenchError
from foilbench.models.api.prices import PriceBook
from foilbench.models.api.spend import SpendCapError, cap_from_env

LEDGER = "spend.jsonl"
LOCK = "spend.lock"
TORN = "spend.torn"


class LedgerBusyError(FoilbenchError):
    """Another process held the folder's spend lock for too long."""


class LedgerError(FoilbenchError):
    """The ledger file is damaged in a way that could hide spend."""


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
                 lock_timeout_s: float = 30.0) -> None:
        if cap is None:
            cap, option = cap_from_env(), "FOILBENCH_API_SPEND_CAP (default 5)"
        self.cap = check_cap(cap, option)
        self.option = option
        self.prices = prices or PriceBook()
        self.dir = Path(folder) / ".construct"
        self.path = self.dir / LEDGER
        self.lock_timeout_s = float(lock_timeout_s)
        self.spent = 0.0  # billed by this process
        self.calls = 0  # billed requests of this process
        self._settled = 0.0  # folder-wide
        self._open: dict[str, float] = {}  # folder-wide open reservations
        self._offset = 0
        self._mine: set[str] = set()
        self._lock = threading.Lock()
        self.refresh()

    # -- reading ----------------------------------------------------------------------------
    def _apply(self, row: dict) -> None:
        op, rid = row.get("op"), row.get("id", "")
        if op == "reserve":
            self._open[rid] = float(row["usd"])
        elif op == "settle":
            self._open.pop(rid, None)
            self._settled += float(row["usd"])
        elif op == "release":
            self._open.pop(rid, None)
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
        return self._settled

    @property
    def reserved(self) -> float:
        return sum(self._open.values())

    @property
    def total(self) -> float:
        """Committed spend of the folder: billed plus open reservations (all processes)."""
        return self._settled + self.reserved

    @property
    def open_elsewhere(self) -> float:
        """Reservations not made by this process: in flight elsewhere or left by a kill."""
        return sum(v for k, v in self._open.items() if k not in self._mine)

    # -- writing ----------------------------------------------------------------------------
    @contextmanager
    def _locked(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        lock_path = self.dir / LOCK
        with self._lock, open(lock_path, "a+") as lf:
            deadline = time.monotonic() + self.lock_timeout_s
            while True:
                try:
                    fcntl.flock(lf.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        lf.seek(0)
                        holder = lf.read().strip() or "unknown"
                        raise LedgerBusyError(
                            f"{self.dir}: the spend ledger is held by PID {holder} for more "
                            f"than {self.lock_timeout_s:.0f} s; wait for that process or stop "
                            "it, then rerun (two processes may share one --out).") from None
                    time.sleep(0.01)
            try:
                lf.seek(0)
                lf.truncate()
                lf.write(str(os.getpid()))
                lf.flush()
                self.refresh()
                self._cut_torn_tail()
                yield
            finally:
                fcntl.flock(lf.fileno(), fcntl.LOCK_UN)

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
                      "case)", stacklevel=3)

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
                         "processes or left open by a killed run)") if elsewhere else ""
                raise SpendCapError(
                    f"spend cap reached for {self.dir.parent}: ${self.total:.4f} committed"
                    f"{extra}; the next request ({what}, at most ${usd:.4f}) would pass the "
                    f"cap of ${self.cap:.2f} set by {self.option}. Rerun with a higher "
                    f"{self.option} to go on: finished calls are cached and cost nothing again.")
            rid = uuid.uuid4().hex
            self._mine.add(rid)
            self._append({"op": "reserve", "id": rid, "usd": usd, "what": what,
                          "pid": os.getpid(), "t": round(time.time(), 3)})
            return rid

    def settle(self, rid: str, usd: float) -> None:
        """Replace reservation ``rid`` by the billed ``usd``; the call counts only after this."""
        with self._locked():
            self._append({"op": "settle", "id": rid, "usd": float(usd)})
            self.spent += float(usd)
            self.calls += 1

    def release(self, rid: str) -> None:
        """Drop reservation ``rid``: the provider answered with an error and billed nothing."""
        with self._locked():
            self._append({"op": "release", "id": rid})

    def describe(self) -> dict:
        return {"cap_usd": self.cap, "cap_option": self.option,
                "folder_billed_usd": round(self._settled, 6),
                "folder_open_reservations_usd": round(self.reserved, 6),
                "this_run_billed_usd": round(self.spent, 6), "this_run_requests": self.calls}
