"""Which process is writing a run, and whether it still is: a run left ``running`` by a killed process reads as ended.

A run row records the writer's pid, host name and a start marker (Linux: the
boot id and the process's start time, so a pid used again by another process
is not taken for the writer). A reader on the same host finds the writer gone
when no process has that pid, or the one that has it started at another time.
On another host, or without a pid (a file of an older layout), nothing is known
and the run reads as recorded.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

__all__ = ["ABANDONED", "Owner", "gone", "this_process"]

ABANDONED = "abandoned"
"""The status a ``running`` run reads with once its process is gone (killed, or the machine stopped)."""

Owner = tuple[int, str, str | None]
"""pid, host name, start marker (None where the system does not tell)."""


def this_process() -> Owner:
    """The owner to record for a run this process writes."""
    pid = os.getpid()
    return pid, socket.gethostname(), start_marker(pid)


def start_marker(pid: int) -> str | None:
    """``BOOT_ID:START_TICKS`` of process ``pid`` (Linux), None when unknown or the process does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the command name, in parentheses, may hold spaces
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def gone(pid: object, host: object, marker: object) -> bool:
    """True when the process recorded as writing a run surely no longer runs; False when it may."""
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 2**31 or host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        pass  # a process of another user has the pid: the marker tells whether it is the writer
    if isinstance(marker, str) and marker:
        now = start_marker(pid)
        return now is not None and now != marker
    return False
