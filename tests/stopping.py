"""Start ``tsuka`` as a real process, wait for a point in its run, send it a signal and collect how it ended."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

TSUKA = Path(sys.executable).with_name("tsuka")
READY_WITHIN = 60.0
"""Seconds a run may take to reach the point where the signal is sent."""


def clean_env() -> dict[str, str]:
    """This process's environment without the variables that would point ``tsuka`` elsewhere."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TSUKA_"))}


def stored_level(store: Path, key: str) -> Callable[[], bool]:
    """A readiness test: the profile store holds ``key`` (``model@effort``)."""

    def ready() -> bool:
        return store.exists() and key in store.read_text(encoding="utf-8")

    return ready


def signalled_run(
    args: Sequence[str],
    ready: Callable[[], bool],
    signum: int = signal.SIGINT,
    *,
    settle: float = 0.3,
    exit_within: float = 30.0,
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``tsuka ARGS``; once ``ready()`` and ``settle`` seconds more, ``signum``; the result and seconds to exit.

    The child starts with SIGINT at its default action, as from a terminal (a shell may start us with it
    ignored). The test fails if the run ends before it is ready or is not ready within :data:`READY_WITHIN`.
    """
    command = [str(TSUKA), *args]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    try:
        deadline = time.monotonic() + READY_WITHIN
        while not ready() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, process.communicate()
        assert ready(), "the run never reached the point where the signal is sent"
        time.sleep(settle)
        process.send_signal(signum)
        sent = time.monotonic()
        out, err = process.communicate(timeout=exit_within)
        return subprocess.CompletedProcess(command, process.returncode, out, err), time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
