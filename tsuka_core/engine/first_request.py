"""A model's first request goes alone: an answer that refuses the model outright stops it after one request."""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

from tsuka_core.errors import BackendError, RequestError

__all__ = ["REFUSING_STATUSES", "FirstAlone", "ModelRefused", "refuses_model"]

REFUSING_STATUSES = frozenset({401, 403, 404})
"""Answers that say every request for the model would fail alike: no key or a wrong one, no access, no such model."""

_HINTS = {401: "check the API key", 403: "check the API key's access to this model"}


class ModelRefused(BackendError):  # noqa: N818  (a condition the sweep acts on, raised by the runner)
    """The server refused the model outright (401, 403, 404): no further request is sent for it."""


def refuses_model(error: RequestError) -> ModelRefused | None:
    """The :class:`ModelRefused` that ``error`` stands for, or None for an error that may not repeat."""
    if error.status not in REFUSING_STATUSES:
        return None
    hint = None if error.explains_refusal else _HINTS.get(error.status)
    return ModelRefused(f"{error}{f' ({hint})' if hint else ''}")


class FirstAlone:
    """A limiter that lets a model's first request go alone, then every request through ``limiter``.

    Until one answer has come back without refusing the model, requests wait
    here, so a refused key or an unknown model costs one request, not one per test.
    With ``first_alone`` False (a model the server listed) every request goes
    through ``limiter`` from the start. Once an answer refuses the model, no
    request waiting for its turn is sent.
    """

    def __init__(self, limiter: AbstractAsyncContextManager[Any], *, first_alone: bool = True) -> None:
        self.limiter = limiter
        self._first = asyncio.Lock()
        self._open = not first_alone
        self._holder: asyncio.Task[Any] | None = None
        self._refusal: RequestError | None = None

    async def __aenter__(self) -> None:
        if not self._open:
            await self._first.acquire()
            if self._open or self._refusal is not None:
                self._first.release()
            else:
                self._holder = asyncio.current_task()
        self._raise_refused()
        try:
            await self.limiter.__aenter__()
        except BaseException:
            self._let_go(None)
            raise
        if self._refusal is not None:  # refused while this request waited for its turn
            await self.limiter.__aexit__(None, None, None)
            self._let_go(None)
            self._raise_refused()

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._refusal is None and isinstance(error, RequestError) and error.status in REFUSING_STATUSES:
            self._refusal = error
        try:
            await self.limiter.__aexit__(kind, error, trace)
        finally:
            self._let_go(error)

    def _raise_refused(self) -> None:
        """Fail alike, sending nothing, once the model was refused."""
        if self._refusal is not None:
            refused = RequestError(str(self._refusal), status=self._refusal.status)
            refused.explains_refusal = self._refusal.explains_refusal
            raise refused

    def _let_go(self, error: BaseException | None) -> None:
        """Release the first request's turn, if this task holds it; open the gate unless the model was refused."""
        if self._holder is None or self._holder is not asyncio.current_task():
            return
        self._holder = None
        if self._refusal is None:
            self._open = error is None or isinstance(error, Exception)
        self._first.release()
