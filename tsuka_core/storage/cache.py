"""The response cache: a backend wrapper that answers a request it has seen before from the history file.

The key is a SHA-256 over everything that shapes a request: the backend, its
base URL (credentials removed), the model, the effort and the parameters it
becomes, the sampling settings (temperature, seed, token limit, backend
options, the backend's own recorded facts), the messages and the tools. Only
answers are stored; a request that fails is never cached, so it is asked again
next time.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, cast

from tsuka_core.backends.base import Backend, ChatRequest, ChatResponse, masked_response
from tsuka_core.storage.answer_json import bounded_response_json
from tsuka_core.storage.history import connect, response_from_json
from tsuka_core.terms import Effort
from tsuka_core.timestamps import format_tested_at
from tsuka_core.urls import redact_url

__all__ = [
    "CACHE_FORMAT",
    "CachingBackend",
    "ResponseCache",
    "cache_stats",
    "request_key",
    "served_from_cache",
    "with_cache",
]

CACHE_FORMAT = 1
"""Part of every key: a change of what is cached, or how, retires every earlier entry."""


def request_key(backend: Backend, request: ChatRequest) -> str:
    """The cache key of ``request`` sent through ``backend``: hex SHA-256 of its canonical JSON."""
    config = backend.config
    shape = {
        "format": CACHE_FORMAT,
        "backend": backend.name,
        "provider": redact_url(backend.provider),
        "modelPath": config.model_path,
        "model": request.model,
        "effort": request.effort,
        "effortParams": backend.effort_params(request.effort) if request.effort is not None else None,
        "sampling": {
            "temperature": config.temperature,
            "seed": config.seed,
            "maxTokens": config.max_tokens,
            "options": dict(sorted(config.options.items())),
            "extra": backend.profile_extra(request.model, request.effort),
        },
        "messages": [dict(m) for m in request.messages],
        "tools": [dict(t) for t in request.tools],
    }
    text = json.dumps(shape, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers by key, in the ``responses`` table of a history file; opened once, used from the event loop."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = connect(self.path)

    def get(self, key: str) -> ChatResponse | None:
        """The answer stored under ``key``, or None."""
        row = self._conn().execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return response_from_json(json.loads(row[0]))
        except (ValueError, TypeError, RecursionError):  # a row changed by hand: ask the model again
            return None

    def put(self, key: str, model: str, response: ChatResponse) -> None:
        """Store ``response`` under ``key`` (the last answer for a key wins)."""
        moment = format_tested_at(datetime.now(UTC))
        text, cut = bounded_response_json(response)
        if cut:  # an answer too large to keep whole is asked again, never replayed cut
            return
        self._conn().execute(
            "INSERT OR REPLACE INTO responses (key, model, response, created_at) VALUES (?, ?, ?, ?)",
            (key, model, text, moment),
        )

    def count(self) -> int:
        """How many answers are stored."""
        return int(self._conn().execute("SELECT count(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the file."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError(f"the response cache {self.path} is closed")
        return self._db


class CachingBackend(Backend):
    """A backend that answers from a :class:`ResponseCache` when it can, else asks the backend it wraps.

    Everything but :meth:`complete` is the wrapped backend's: its name, provider,
    effort parameters and recorded facts, so profiles read exactly as without
    the cache. Answers served from the cache keep the duration and usage first
    measured, so they score and time identically.
    """

    name: ClassVar[str] = "cache"

    def __init__(self, inner: Backend, store: ResponseCache) -> None:
        super().__init__(inner.config, inner.client)
        self.inner = inner
        self.store = store
        self.hits = 0
        self.misses = 0
        self._served: dict[int, ChatResponse] = {}

    @property
    def provider(self) -> str:
        """The wrapped backend's provider."""
        return self.inner.provider

    @property
    def served(self) -> frozenset[int]:
        """The ``id()`` of every answer this run took from the cache."""
        return frozenset(self._served)

    def effort_params(self, effort: Effort) -> dict[str, Any]:
        """The wrapped backend's effort parameters."""
        return self.inner.effort_params(effort)

    def repeats_note(self) -> str | None:
        """The wrapped backend's note."""
        return self.inner.repeats_note()

    def take_notes(self) -> list[str]:
        """The wrapped backend's notes."""
        return self.inner.take_notes()

    async def effort_ignored(self, model: str) -> str | None:
        """The wrapped backend's answer (never cached)."""
        return await self.inner.effort_ignored(model)

    def profile_extra(self, model: str, effort: Effort | None) -> dict[str, Any]:
        """The wrapped backend's recorded facts."""
        return self.inner.profile_extra(model, effort)

    def secrets(self) -> tuple[str, ...]:
        """The wrapped backend's secrets."""
        return self.inner.secrets()

    async def list_models(self) -> list[str]:
        """The wrapped backend's models (never cached)."""
        return await self.inner.list_models()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The stored answer for this request, or the wrapped backend's (stored when it succeeds)."""
        key = request_key(self.inner, request)
        found = self.store.get(key)
        if found is not None:
            self.hits += 1
            self._served[id(found)] = found
            return found
        # An exception is never cached; an answer is stored with every secret the server echoed masked.
        response = masked_response(await self.inner.complete(request), self.inner.secrets())
        self.misses += 1
        self.store.put(key, request.model, response)
        return response

    async def aclose(self) -> None:
        """Close the wrapped backend, then the cache."""
        try:
            await self.inner.aclose()
        finally:
            self.store.close()


@cache
def _wrapper_class(name: str, applies_effort: bool, env_vars: tuple[str, ...]) -> type[CachingBackend]:
    attributes: dict[str, Any] = {"name": name, "applies_effort": applies_effort, "env_vars": env_vars}
    return cast("type[CachingBackend]", type("CachingBackend", (CachingBackend,), attributes))


def with_cache(inner: Backend, path: Path) -> CachingBackend:
    """``inner`` wrapped in a cache stored in the history file ``path``, under ``inner``'s own name."""
    cls = _wrapper_class(inner.name, inner.applies_effort, tuple(inner.env_vars))
    return cls(inner, ResponseCache(path))


def served_from_cache(backend: Backend) -> frozenset[int]:
    """The ``id()`` of every answer a caching backend took from its cache; empty for any other backend."""
    return backend.served if isinstance(backend, CachingBackend) else frozenset()


def cache_stats(backend: Backend) -> dict[str, int] | None:
    """``{"hits": n, "misses": n}`` for a caching backend, None for any other."""
    if isinstance(backend, CachingBackend):
        return {"hits": backend.hits, "misses": backend.misses}
    return None
