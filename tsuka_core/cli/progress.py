"""Live progress of a sweep: a rich display on a terminal, plain lines elsewhere."""

from __future__ import annotations

import asyncio
import importlib
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from tsuka_core.cli.progress_rich import RichProgress
    from tsuka_core.engine.results import TestResult
    from tsuka_core.engine.sweep import SweepObserver
    from tsuka_core.terms import Effort

__all__ = ["PlainProgress", "Prefetching", "make_progress", "run_name"]


def run_name(result: TestResult) -> str:
    """The test's name, with ``#K`` for run K > 1 of a repeated test."""
    return f"{result.test.name} #{result.repeat}" if result.repeat > 1 else result.test.name


class PlainProgress:
    """One line per finished test on stderr, for logs and pipes."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Note a level's size (test runs: tests times repeats)."""
        key = f"{model}@{effort}"
        self.totals[key], self.done[key] = total, 0
        click.echo(f"{key}: {total} test runs{'' if applied else ' (effort not applied)'}", err=True)

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """Print the finished test with the level's count and the time so far."""
        key = f"{model}@{effort}"
        self.done[key] = self.done.get(key, 0) + 1
        outcome = f"ERROR {result.error}" if result.status == "error" else f"{result.score:.2f}"
        elapsed = time.monotonic() - self.started
        click.echo(
            f"{key} {self.done[key]}/{self.totals.get(key, '?')} {run_name(result)} {outcome} [{elapsed:.1f}s]",
            err=True,
        )

    def note(self, message: str) -> None:
        """Print a note."""
        click.echo(f"note: {message}", err=True)


def make_progress() -> PlainProgress | RichProgress:
    """Rich bars when stderr is a terminal, plain lines otherwise (rich is not even loaded then)."""
    if not sys.stderr.isatty():
        return PlainProgress()
    from tsuka_core.cli.progress_rich import RichProgress

    return RichProgress()


class Prefetching:
    """A sweep observer that forwards to ``observer`` and, once the first test is done, imports ``modules``.

    By then the next request is already on its way (the runner lets it go
    before judging an answer), so what the end of the run needs (the summary's
    modules, rich) is loaded while the process waits for the server instead of
    after the last answer. One module per turn of the event loop, so answers
    that arrive meanwhile are not held up for the whole list.
    """

    def __init__(self, observer: SweepObserver, modules: Sequence[str]) -> None:
        self.observer = observer
        self.modules = list(modules)
        self.started = False

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Forward."""
        self.observer.level_started(model, effort, applied, total)

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """Forward; after the first test, start importing."""
        self.observer.test_done(model, effort, result)
        if not self.started:
            self.started = True
            asyncio.get_running_loop().call_soon(self._import_next)

    def note(self, message: str) -> None:
        """Forward."""
        self.observer.note(message)

    def _import_next(self) -> None:
        if self.modules:
            importlib.import_module(self.modules.pop(0))
        if self.modules:
            asyncio.get_running_loop().call_soon(self._import_next)
