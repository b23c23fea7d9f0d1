"""Native work an interrupted run need not wait for: a call in a daemon thread, and how many are still running.

``asyncio.to_thread`` runs on the loop's default executor, which ``asyncio.run``
joins before it returns: after Ctrl-C, a run waited for every llama.cpp
generation to reach its next token (seconds on a busy machine, a prompt's
whole evaluation at worst) before it could say what it kept. :func:`in_daemon`
runs the call in a daemon thread instead; a cancelled caller returns at once
and the thread's result is dropped. The command line, once everything is
written, ends the process without the interpreter's teardown while such calls
are still running (:func:`running`), so that no native code is pulled from
under them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["in_daemon", "running"]

T = TypeVar("T")

_lock = threading.Lock()
_running = 0


def running() -> int:
    """How many calls started by :func:`in_daemon` have not returned yet."""
    with _lock:
        return _running


async def in_daemon(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` in a daemon thread; cancelling the caller does not wait for it (its result is dropped)."""
    import asyncio  # here: importing the backends must not load the event loop (tsuka validate needs none)

    global _running
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        global _running
        try:
            outcome: tuple[Any, BaseException | None] = (call(*args), None)
        except BaseException as exc:  # handed to the caller, as to_thread hands it
            outcome = (None, exc)
        finally:
            with _lock:
                _running -= 1
        with suppress(RuntimeError):  # the loop is closed: nobody waits for this result any more
            loop.call_soon_threadsafe(_settle, future, *outcome)

    with _lock:
        _running += 1
    try:
        threading.Thread(target=work, name="tsuka-native-call", daemon=True).start()
    except BaseException:
        with _lock:
            _running -= 1
        raise
    return await future


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # the caller was cancelled
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
