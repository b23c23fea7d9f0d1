"""Running a measurement so that SIGTERM and SIGHUP stop it as Ctrl-C does: complete levels kept, history closed."""

from __future__ import annotations

import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["STOP_SIGNALS", "exit_status", "run_stoppable", "signal_name"]

T = TypeVar("T")

STOP_SIGNALS = ("SIGTERM", "SIGHUP")
"""Signals that cancel a run like Ctrl-C (SIGINT, which asyncio itself turns into a cancellation)."""


def run_stoppable(coro: Coroutine[Any, Any, T]) -> tuple[T, int | None]:
    """Run ``coro`` to its end; a stop signal cancels it as Ctrl-C would. Returns its result and that signal, if any.

    The coroutine sees the signal as a cancellation of its task, which the run
    turns into an interrupted report. A second stop signal raises SystemExit at
    once with the signal's exit status (asyncio still cancels what is left).
    """
    import asyncio

    received: list[int] = []

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def stop(signum: int) -> None:
            if received:
                raise SystemExit(exit_status(signum))
            received.append(signum)
            task.cancel()

        installed = _install(loop, stop)
        try:
            return await coro
        finally:
            for number in installed:
                loop.remove_signal_handler(number)

    return asyncio.run(main()), (received[0] if received else None)


def _install(loop: Any, stop: Any) -> list[int]:
    """Add ``stop`` as the loop's handler of each stop signal this platform has; the numbers it was added for."""
    installed: list[int] = []
    for name in STOP_SIGNALS:
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            loop.add_signal_handler(number, stop, int(number))
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            continue
        installed.append(int(number))
    return installed


def exit_status(signum: int | None) -> int:
    """The shell's exit status for a process stopped by ``signum`` (128 + its number); 130 for Ctrl-C (None)."""
    return 128 + (signum if signum is not None else int(signal.SIGINT))


def signal_name(signum: int) -> str:
    """``SIGTERM`` for 15, and so on."""
    return signal.Signals(signum).name
