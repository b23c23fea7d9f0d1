"""Run one command and write its wall time, CPU time, peak RSS and exit status as JSON.

``python _launch.py RESULT STDOUT STDERR TIMEOUT -- COMMAND...``

Started from a small process of its own so that the peak RSS is the command's:
a child's ``ru_maxrss`` starts from the memory of the process it was forked
from, and the benchmark's own process is large. The wall time is taken around
the spawn and the wait, so this launcher's own start-up is not in it. Standard
library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Spawn the command, wait for it, write the result file."""
    result, stdout, stderr, timeout = argv[:4]
    if argv[4] != "--" or len(argv) < 6:
        print("usage: _launch.py RESULT STDOUT STDERR TIMEOUT -- COMMAND...", file=sys.stderr)
        return 2
    command = argv[5:]
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, stdout, flags, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, stderr, flags, 0o644),
    ]
    started = time.perf_counter()
    pid = os.posix_spawnp(command[0], command, dict(os.environ), file_actions=actions)
    watchdog = threading.Timer(float(timeout), _kill, (pid,))
    watchdog.start()
    try:
        _pid, status, usage = os.wait4(pid, 0)
    finally:
        watchdog.cancel()
    wall = time.perf_counter() - started
    data = {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mb": usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024),
        "returncode": os.waitstatus_to_exitcode(status),
    }
    with open(result, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
