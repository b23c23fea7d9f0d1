"""Live progress of a sweep: a rich bar per model@effort on a terminal, plain lines elsewhere."""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from tsuka_core.cli.safe_console import SafeConsole

if TYPE_CHECKING:
    from tsuka_core.engine.results import TestResult
    from tsuka_core.terms import Effort

__all__ = ["PlainProgress", "RichProgress", "eta", "make_progress", "run_name"]


QUIET_AFTER = 30.0
"""Seconds without a progress line after which plain progress says what is still running."""


def run_name(result: TestResult) -> str:
    """The test's name, with ``#K`` for run K > 1 of a repeated test."""
    return f"{result.test.name} #{result.repeat}" if result.repeat > 1 else result.test.name


class PlainProgress:
    """One line per finished test on stderr, for logs and pipes: the time so far and an estimate of what is left."""

    def __init__(self, quiet_after: float = QUIET_AFTER) -> None:
        self.started = time.monotonic()
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.level_started_at: dict[str, float] = {}
        self.quiet_after = quiet_after
        self._last_line = self.started
        self._lock = threading.Lock()
        self._ended = threading.Event()
        self._watch: threading.Thread | None = None

    def __enter__(self) -> PlainProgress:
        self._watch = threading.Thread(target=self._still_running, name="tsuka-progress", daemon=True)
        self._watch.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._ended.set()

    def _still_running(self) -> None:
        """After ``quiet_after`` seconds without a line, one saying what is still running (a slow model looks hung)."""
        while not self._ended.wait(min(self.quiet_after, 5.0)):
            with self._lock:
                now = time.monotonic()
                quiet = now - self._last_line
                open_levels = [k for k, total in self.totals.items() if self.done.get(k, 0) < total]
                if quiet < self.quiet_after or not open_levels:
                    continue
                for key in open_levels:
                    click.echo(
                        f"{key} {self.done.get(key, 0)}/{self.totals[key]} still running: no answer for {quiet:.0f}s "
                        f"[{now - self.started:.1f}s]",
                        err=True,
                    )
                self._last_line = now

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Note a level's size (test runs: tests times repeats)."""
        key = f"{model}@{effort}"
        with self._lock:
            self.totals[key], self.done[key] = total, 0
            self.level_started_at[key] = self._last_line = time.monotonic()
            click.echo(f"{key}: {total} test runs{'' if applied else ' (effort not applied)'}", err=True)

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """Print the finished test with the level's count and the time so far."""
        key = f"{model}@{effort}"
        outcome = f"ERROR {result.error}" if result.status == "error" else f"{result.score:.2f}"
        with self._lock:
            self.done[key] = self.done.get(key, 0) + 1
            now = self._last_line = time.monotonic()
            left = eta(now - self.level_started_at.get(key, self.started), self.done[key], self.totals.get(key, 0))
            click.echo(
                f"{key} {self.done[key]}/{self.totals.get(key, '?')} {run_name(result)} {outcome} "
                f"[{now - self.started:.1f}s{left}]",
                err=True,
            )

    def note(self, message: str) -> None:
        """Print a note."""
        with self._lock:
            self._last_line = time.monotonic()
            click.echo(f"note: {message}", err=True)


def eta(spent: float, done: int, total: int) -> str:
    """``, ~2m10s left`` for the rest of a level at the pace so far; empty until a test is done, or at the end.

    A pace from the first answers is rough (short answers come first); a silent stretch after it is said by the
    still-running line, so a wrong estimate is never the last word for long.
    """
    if done <= 0 or done >= total or spent <= 0:
        return ""
    seconds = round(spent / done * (total - done))
    minutes, seconds = divmod(seconds, 60)
    return f", ~{minutes}m{seconds:02d}s left" if minutes else f", ~{seconds}s left"


class RichProgress:
    """A bar per model@effort with tests done, elapsed time and ETA."""

    def __init__(self) -> None:
        self.console = SafeConsole(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),  # model and test names are not markup
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[last]}", markup=False),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> RichProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.progress.__exit__(kind, exc, tb)

    def level_started(self, model: str, effort: Effort, applied: bool, total: int) -> None:
        """Add a bar for the level."""
        label = f"{model}@{effort}" + ("" if applied else " (effort not applied)")
        self.tasks[f"{model}@{effort}"] = self.progress.add_task(label, total=total, last="")

    def test_done(self, model: str, effort: Effort, result: TestResult) -> None:
        """Advance the level's bar."""
        last = "error" if result.status == "error" else f"{run_name(result)} {result.score:.2f}"
        self.progress.update(self.tasks[f"{model}@{effort}"], advance=1, last=last)

    def note(self, message: str) -> None:
        """Print a note above the bars."""
        self.progress.console.print(Text.assemble(("note:", "yellow"), f" {message}"))


def make_progress() -> PlainProgress | RichProgress:
    """Rich bars when stderr is a terminal, plain lines otherwise."""
    return RichProgress() if sys.stderr.isatty() else PlainProgress()
