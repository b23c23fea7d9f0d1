"""Resuming a run cut short: the answers it got are kept as they come, and the same command asks only the rest.

Every live run (one run per test, a history kept) keeps each answer in its
history file's response cache as soon as it arrives. Run again, the same
command finds the newest run of that history: when it did not finish
(interrupted, abandoned by a process that is gone, or failed) and was the same
measurement (suite, backend, server, models, efforts and settings; the
concurrency may differ), the answers it got (those kept since it started) are
replayed and only the requests it never got an answer to are sent. ``--resume`` replays kept answers whatever
ran last; ``--no-resume`` asks every request again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tsuka_core.backends.base import Backend
from tsuka_core.errors import StoreError
from tsuka_core.storage.cache import CachingBackend, with_cache
from tsuka_core.storage.history_query import StoredRun, list_runs
from tsuka_core.storage.recorder import RunInfo
from tsuka_core.urls import redact_url

__all__ = ["UNFINISHED", "answers_kept", "resumable_run", "same_measurement", "take_up"]

UNFINISHED = ("interrupted", "abandoned", "failed")
"""Statuses of a run whose answers a rerun of the same command takes up."""
_FREE = ("concurrency", "cache")
"""Settings a resumed run may change."""


def resumable_run(history: Path, info: RunInfo) -> StoredRun | None:
    """The newest run of ``history`` when it did not finish and measured what ``info`` is about to; else None."""
    if not history.is_file():
        return None
    try:
        found = list_runs(history, limit=1)
    except StoreError:
        return None  # a damaged history is said when the run records into it
    if not found:
        return None
    last = found[0][0]
    return last if last.status in UNFINISHED and same_measurement(last, info) else None


def same_measurement(run: StoredRun, info: RunInfo) -> bool:
    """Whether ``run`` measured exactly what ``info`` describes (the concurrency aside)."""
    return (
        run.kind == info.kind
        and run.suite_hash == info.suite_hash
        and run.backend == info.backend
        and run.provider == redact_url(info.provider)
        and list(run.models) == list(info.models)
        and list(run.efforts) == list(info.efforts)
        and _settings(run.options) == _settings(info.options)
    )


def _settings(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k not in _FREE}


def take_up(backend: CachingBackend, history: Path, info: RunInfo, note: Callable[[str], None]) -> None:
    """Replay the answers of the history's newest run when it was this measurement and did not finish (said)."""
    found = resumable_run(history, info)
    if found is None:
        return
    backend.read, backend.since = True, found.started_at
    note(
        f"resuming run {found.id} ({found.status}): the answers it got are reused and only the rest is asked "
        "(--no-resume asks every request again)"
    )


def answers_kept(
    backend: Backend,
    history: Path | None,
    cache: Path | None,
    repeats: int,
    resume: bool | None,
    note: Callable[[str], None],
) -> Backend:
    """``backend`` keeping each answer as it comes (so a run cut short can resume), replaying kept ones when asked.

    ``cache`` (``--cache``) or ``resume`` True replay kept answers from the start; else, with a ``history``,
    answers are only kept until :func:`take_up` finds a run to resume. Repeats need fresh answers: they bypass
    the cache (said).
    """
    same = backend.repeats_note() if repeats > 1 else None
    if same:
        note(f"--repeats {repeats}: {same}")
    if cache is not None and repeats > 1:
        note(f"--repeats {repeats} bypasses the response cache: every run asks the model for a fresh answer")
    elif cache is not None or (resume and history is not None):
        return with_cache(backend, cache or history or Path())
    elif history is not None and repeats == 1 and resume is not False:
        return with_cache(backend, history, read=False)
    return backend
