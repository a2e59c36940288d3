"""Whether a process still runs: for the leftovers a killed process leaves (a spend claim,
an export's staging folder) that the next process may remove only once their owner is gone.
A cross-cutting module; it imports nothing of foilbench."""

from __future__ import annotations

import os
import sys


def pid_alive(pid: int) -> bool:
    """True when a process with this PID exists on this machine (POSIX and Windows)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it there
        import ctypes

        kernel = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return kernel.GetLastError() == 5  # access denied: it exists
        code = ctypes.c_ulong()
        ok = kernel.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel.CloseHandle(handle)
        return bool(ok) and code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
