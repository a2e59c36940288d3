"""A real two-node Ray cluster on one machine, for the node-loss test: a head and a second
node started with ``ray start`` (one CPU each), and the second node's raylet to kill.

Both nodes run under a temp dir of their own, and every process they start inherits a
marker variable, so :meth:`TwoNodes.stop` ends exactly the processes these ``ray start``
calls began (``ray stop`` would end every Ray instance on the machine).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
# node death is declared after about period x threshold: short, so the test stays short
FAST_DETECTION = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "4",
                  "RAY_health_check_timeout_ms": "1000",
                  "RAY_health_check_initial_delay_ms": "1000"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TwoNodes:
    """``ray start --head`` and ``ray start --address`` with one CPU each (see the module)."""

    def __init__(self, temp: Path, env: dict[str, str]) -> None:
        self.marker = f"FOILBENCH_TEST_CLUSTER={os.getpid()}-{time.time_ns()}"
        self.temp = temp
        self.env = {**os.environ, **env, **self.auth(temp),
                    "FOILBENCH_TEST_CLUSTER": self.marker.split("=")[1]}
        self.port, self.node_port = free_port(), free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.seen: dict[int, int] = {}

    @staticmethod
    def auth(temp: Path) -> dict[str, str]:
        """Token authentication on every node and the driver, with a token of this cluster's
        own (docs/scale-out.md): the recipe users follow, and no dependence on whether a
        ``~/.ray/auth_token`` happens to exist on this machine."""
        temp.mkdir(parents=True, exist_ok=True)
        token = temp / "auth_token"
        if not token.exists():
            token.write_text(secrets.token_hex(32))
            token.chmod(0o600)
        return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}

    def _start(self, *args: str) -> None:
        done = subprocess.run([RAY, "start", "--num-cpus=1", "--disable-usage-stats", *args],
                              env=self.env, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{done.stdout}\n"
                               f"{done.stderr}")

    def start(self) -> TwoNodes:
        self._start("--head", f"--port={self.port}", "--include-dashboard=false",
                    f"--temp-dir={self.temp}", "--node-ip-address=127.0.0.1")
        self._start(f"--address={self.address}", f"--node-manager-port={self.node_port}",
                    "--node-ip-address=127.0.0.1")
        self.seen = self._tree()
        return self

    def raylet(self) -> int:
        """The pid of the second node's raylet (found by its node manager port)."""
        for pid, cmd in processes().items():
            if cmd and cmd[0].endswith("raylet") and \
                    f"--node_manager_port={self.node_port}" in cmd:
                return pid
        raise LookupError(f"no raylet with node manager port {self.node_port}")

    def second_pids(self) -> set[int]:
        """The second node's raylet and every process under it (its workers)."""
        try:
            raylet = self.raylet()
        except LookupError:
            return set()
        parents = {pid: parent_of(pid) for pid in processes()}
        tree = {raylet}
        while more := {pid for pid, parent in parents.items() if parent in tree} - tree:
            tree |= more
        return tree

    def kill_second(self) -> None:
        os.kill(self.raylet(), signal.SIGKILL)

    def stop(self) -> None:
        """End every process the two ``ray start`` calls began: those that carry the marker,
        their descendants, and those seen at start (a raylet's agents rewrite their command
        line and environment, and outlive a killed raylet)."""
        mine = {pid: t for pid, t in self._tree().items()}
        mine.update({pid: t for pid, t in self.seen.items() if start_time(pid) == t})
        for pid in mine:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        wait_for(lambda: not [p for p in mine if environ(p)], 10)

    def _tree(self) -> dict[int, int]:
        """pid -> start time of the marked processes and all their descendants."""
        parents = {pid: parent_of(pid) for pid in processes()}
        tree = {pid for pid in parents if pid != os.getpid() and self._marked(pid)}
        grew = True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in tree} - tree
            tree |= more
            grew = bool(more)
        return {pid: start_time(pid) for pid in tree}

    def _marked(self, pid: int) -> bool:
        return self.marker.encode() in environ(pid)


def parent_of(pid: int) -> int:
    return int(_stat(pid)[1]) if _stat(pid) else 0


def start_time(pid: int) -> int:
    return int(_stat(pid)[19]) if _stat(pid) else -1


def _stat(pid: int) -> list[str]:
    """Fields of /proc/PID/stat after the command name (state, ppid, ...)."""
    try:
        raw = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return []
    return raw[raw.rindex(")") + 2:].split()


def environ(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "environ").read_bytes()
    except OSError:
        return b""


def processes() -> dict[int, list[str]]:
    """pid -> command line of every process this user can read (from /proc)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                raw = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            out[int(entry.name)] = [a for a in raw.decode(errors="replace").split("\0") if a]
    return out


def wait_for(predicate, timeout: float, step: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return False
