"""Running coroutines at once with ``asyncio.TaskGroup``: all results or none, or each one's outcome kept."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

__all__ = ["all_or_none", "each_outcome"]

T = TypeVar("T")


async def all_or_none(jobs: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Every job's result, in order; when one fails or the caller is cancelled, the others are cancelled and awaited.

    The first failure is raised as itself, not wrapped in an exception group,
    so callers catch the errors they know.
    """
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(job) for job in jobs]
    except BaseExceptionGroup as failed:
        raise _first(failed) from None
    return [task.result() for task in tasks]


async def each_outcome(jobs: Sequence[Coroutine[Any, Any, T]]) -> tuple[list[T | BaseException], bool]:
    """Every job's result or exception, in order, and whether the caller was stopped (Ctrl-C) while they ran.

    One job's failure does not end the others. A stop cancels every job; each
    keeps what it completed, and the caller reports the run as interrupted
    rather than ending with a traceback.
    """
    tasks: list[asyncio.Task[T | BaseException]] = []
    stopped = False
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_outcome(job)) for job in jobs]
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is None or current.uncancel() > 0:
            raise
        stopped = True
    return [asyncio.CancelledError() if task.cancelled() else task.result() for task in tasks], stopped


async def _outcome(job: Coroutine[Any, Any, T]) -> T | BaseException:
    try:
        return await job
    except Exception as exc:
        return exc


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first
