"""The response cache: a backend wrapper that answers a request it has seen before from the history file.

The key is a SHA-256 over everything that shapes a request: the backend, its
base URL (credentials removed), what the server says it serves (its kind,
build and model file), the model, the effort and the parameters it becomes,
the sampling settings (temperature, seed, token limit, backend options, the
backend's own recorded facts), the messages and the tools. Only
answers are stored; a request that fails is never cached, so it is asked again
next time.
"""

from __future__ import annotations

import hashlib
import json
import queue
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from tsuka_core.backends.base import Backend, ChatRequest, ChatResponse, ServerFacts
from tsuka_core.backends.delegating import DelegatingBackend, seen_as
from tsuka_core.backends.masked_answers import masked_response
from tsuka_core.errors import StoreError
from tsuka_core.storage.answer_json import bounded_response_json
from tsuka_core.storage.history import connect, response_from_json
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
_GATHER_SECONDS = 0.05
"""How long the writer waits after an answer for more, so that answers are written many to a transaction."""
_INSERT = "INSERT OR REPLACE INTO responses (key, model, response, created_at) VALUES (?, ?, ?, ?)"


def request_key(backend: Backend, request: ChatRequest, facts: ServerFacts | None = None) -> str:
    """The cache key of ``request`` sent through ``backend``: hex SHA-256 of its canonical JSON.

    ``facts``, what the server said of itself and the model, makes its kind, build and model file part of the key:
    an answer another model file gave behind the same URL is never replayed.
    """
    config = backend.config
    shape = {
        "format": CACHE_FORMAT,
        "backend": backend.name,
        "provider": redact_url(backend.provider),
        "modelPath": config.model_path,
        "server": facts.identity if facts is not None else {},
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
    """Answers by key, in the ``responses`` table of a history file; read from the event loop.

    Answers are written by a thread of their own, in batches (one transaction each), so keeping every
    answer costs the event loop nothing; :meth:`close` writes what is still waiting before it returns.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None
        """Opened on first use: a run refused before its first request creates no history file."""
        self._closed = False
        self._pending: queue.SimpleQueue[tuple[str, str, str, str] | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._failed: BaseException | None = None
        self.problem: str | None = None
        """Set by :meth:`close` when answers could not be written (a full disk): a note, never the run's failure."""

    def get(self, key: str, since: str | None = None) -> ChatResponse | None:
        """The answer stored under ``key`` (kept at ``since`` or later, a stored time, when given), or None."""
        query, args = "SELECT response FROM responses WHERE key = ?", [key]
        if since is not None:
            query, args = query + " AND created_at >= ?", [key, since]
        row = self._conn().execute(query, args).fetchone()
        if row is None:
            return None
        try:
            return response_from_json(json.loads(row[0]))
        except (ValueError, TypeError, RecursionError):  # a row changed by hand: ask the model again
            return None

    def put(self, key: str, model: str, response: ChatResponse) -> None:
        """Keep ``response`` under ``key`` (the last answer for a key wins), written by the writer thread."""
        moment = format_tested_at(datetime.now(UTC))
        text, cut = bounded_response_json(response)
        if cut:  # an answer too large to keep whole is asked again, never replayed cut
            return
        if self._closed:
            raise RuntimeError(f"the response cache {self.path} is closed")
        if self._writer is None:
            self._writer = threading.Thread(target=self._write, name="tsuka-answers", daemon=True)
            self._writer.start()
        self._pending.put((key, model, text, moment))

    def _write(self) -> None:
        """Write what is waiting, a transaction per batch, until :meth:`close` says stop."""
        try:
            db = connect(self.path)
        except (StoreError, OSError) as exc:  # the file cannot be opened: answers are taken and dropped, said at close
            self._failed = exc
            while self._pending.get() is not None:
                pass
            return
        try:
            done = False
            while not done:
                batch = [self._pending.get()]
                if batch[0] is not None:
                    time.sleep(_GATHER_SECONDS)  # gather what arrives meanwhile: one transaction for many answers
                while not self._pending.empty():
                    batch.append(self._pending.get())
                done = batch[-1] is None
                rows = [row for row in batch if row is not None]
                if rows and self._failed is None:
                    try:
                        with db:
                            db.execute("BEGIN")
                            db.executemany(_INSERT, rows)
                    except (sqlite3.Error, OSError) as exc:  # a full disk: said at close, never raised here
                        self._failed = exc
        finally:
            db.close()

    def count(self) -> int:
        """How many answers are stored."""
        return int(self._conn().execute("SELECT count(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Write every answer still waiting, then close the file; what went wrong writing them is in :attr:`problem`."""
        if self._writer is not None:
            self._pending.put(None)
            self._writer.join()
            self._writer = None
        self._closed = True
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._failed is not None:
            self.problem = f"answers could not be kept in {self.path} ({self._failed}): a rerun asks them all again"

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError(f"the response cache {self.path} is closed")
        if self._db is None:
            self._db = connect(self.path)
        return self._db


class CachingBackend(DelegatingBackend):
    """A backend that answers from a :class:`ResponseCache` when it can, else asks the backend it wraps.

    Everything but :meth:`complete` is the wrapped backend's (:class:`DelegatingBackend`): its name,
    provider, effort parameters and recorded facts, so profiles read exactly as without the cache. Answers
    served from the cache keep the duration and usage first measured, so they score and time identically.
    """

    name: ClassVar[str] = "cache"

    def __init__(self, inner: Backend, store: ResponseCache, *, read: bool = True) -> None:
        super().__init__(inner)
        self.store = store
        self.read = read
        """False: every request is asked and its answer kept (a run that may be resumed), none is replayed."""
        self.since: str | None = None
        """Replay only answers kept at this stored time or later (those of the run being resumed)."""
        self.hits = 0
        self.misses = 0
        self._served: dict[int, ChatResponse] = {}
        self._facts: dict[str, ServerFacts] = {}

    @property
    def served(self) -> frozenset[int]:
        """The ``id()`` of every answer this run took from the cache."""
        return frozenset(self._served)

    async def server_facts(self, model: str) -> ServerFacts:
        """The wrapped backend's facts, remembered: the server's kind, build and model file are part of each key."""
        facts = await self.inner.server_facts(model)
        self._facts[model] = facts
        return facts

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The stored answer for this request, or the wrapped backend's (stored when it succeeds)."""
        key = request_key(self.inner, request, self._facts.get(request.model))
        found = self.store.get(key, self.since) if self.read else None
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


def with_cache(inner: Backend, path: Path, *, read: bool = True) -> CachingBackend:
    """``inner`` wrapped in a cache stored in the history file ``path``, under ``inner``'s own name.

    ``read`` False only keeps each answer (so that a run cut short can be resumed), replaying none.
    """
    return seen_as(CachingBackend, type(inner))(inner, ResponseCache(path), read=read)


def served_from_cache(backend: Backend) -> frozenset[int]:
    """The ``id()`` of every answer a caching backend took from its cache; empty for any other backend."""
    return backend.served if isinstance(backend, CachingBackend) else frozenset()


def cache_stats(backend: Backend) -> dict[str, int] | None:
    """``{"hits": n, "misses": n}`` for a caching backend that replays answers, None for any other."""
    if isinstance(backend, CachingBackend) and backend.read:
        return {"hits": backend.hits, "misses": backend.misses}
    return None
