"""Native work in daemon threads: a cancelled caller returns at once, and the process need not wait for it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading

import pytest

from tsuka_core.backends.native_calls import in_daemon, running


def test_the_result_and_the_error_reach_the_caller() -> None:
    def fail() -> None:
        raise ValueError("native failure")

    async def both() -> int:
        with pytest.raises(ValueError, match="native failure"):
            await in_daemon(fail)
        return await in_daemon(lambda a, b: a + b, 2, 3)

    assert asyncio.run(both()) == 5
    assert running() == 0


def test_a_cancelled_caller_returns_at_once_and_asyncio_run_does_not_wait_for_the_call() -> None:
    """asyncio.to_thread's executor is joined by asyncio.run; a daemon call is not: the loop ends while it runs."""
    release, started = threading.Event(), threading.Event()

    def blocked() -> str:
        started.set()
        release.wait()
        return "late"

    async def cancel_it() -> None:
        task = asyncio.create_task(in_daemon(blocked))
        await asyncio.to_thread(started.wait)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_it())  # returns although the call is still blocked
    assert running() == 1
    release.set()
    for _ in range(1000):
        if running() == 0:
            break
        threading.Event().wait(0.01)
    assert running() == 0  # its late result went nowhere, and nothing raised


def test_the_command_ends_with_its_status_while_a_native_call_still_runs() -> None:
    """What main() does after an interrupted run: everything written, the process ends now with its status."""
    script = textwrap.dedent(
        """
        import asyncio, threading
        from tsuka_core.backends.native_calls import in_daemon
        from tsuka_core.cli.main import _end_now_if_native_work_runs

        async def start():
            task = asyncio.create_task(in_daemon(threading.Event().wait))
            await asyncio.sleep(0.05)
            task.cancel()

        asyncio.run(start())
        print("written", flush=True)
        _end_now_if_native_work_runs(130)
        print("not reached")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 130, done.stderr
    assert done.stdout.split() == ["written"]
